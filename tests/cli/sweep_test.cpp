// `acesim sweep` (docs/sweeps.md) and in-process invocation (cli/invoke.h):
// a point means what the same command line means; the points' order and
// files do not depend on threads, shards or MPI ranks; bad grids are refused
// before any point runs.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/invoke.h"
#include "cli/sweep.h"
#include "cli_runner.h"
#include "config/input_error.h"
#include "registry/quote.h"
#include "test_data.h"

namespace acesim::cli {
namespace {

namespace fs = std::filesystem;
using test::read_csv;
using test::slurp;

const std::string kRing8 = test::data_dir() + "/platforms/ring8.yaml";

class Sweep : public test::CliTest {
 protected:
  // The binary run from another working directory.
  test::CliRun run_in(const fs::path& cwd, const std::vector<std::string>& args) {
    std::string cmd = "cd " + test::shell_quote(cwd.string()) + " && timeout 120 " + test::shell_quote(test::acesim_binary());
    for (const std::string& a : args) cmd += " " + test::shell_quote(a);
    cmd += " </dev/null >" + test::shell_quote((dir_ / "stdout.txt").string()) + " 2>" + test::shell_quote((dir_ / "stderr.txt").string());
    const int raw = std::system(cmd.c_str());
    test::CliRun r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    r.out = slurp(dir_ / "stdout.txt");
    r.err = slurp(dir_ / "stderr.txt");
    return r;
  }
  std::string ring_grid() {
    return write("ring.yaml", "command: collective\n"
                              "options: {platform: " + kRing8 + ", executor: ideal, bytes: 8MiB}\n"
                              "grid:\n"
                              "  topology.0.bandwidth_GBps: [25, 50, 100]\n"
                              "  topology.0.latency_ns: [0, 500]\n");
  }
};

// ---------------------------------------------------------------- grids

TEST(SweepGrid, PointsRunGridAxesInOrderThenTheZipTogether) {
  const sweep::Grid g = sweep::parse_grid("command: collective\n"
                                          "options: {op: all-gather}\n"
                                          "grid:\n  executor: [sm, ace]\n  min_bytes: [1KiB, 2KiB, 4KiB]\n"
                                          "zip:\n  nodes: [1, 2]\n  bytes: [1MiB, 2MiB]\n",
                                          "g.yaml");
  EXPECT_EQ(g.points(), 12u);
  EXPECT_EQ(g.axis_names(), (std::vector<std::string>{"executor", "min-bytes", "nodes", "bytes"}));
  const sweep::Plan plan(g);
  ASSERT_EQ(plan.size(), 12u);
  // The zip group varies fastest, then the last grid axis.
  EXPECT_EQ(plan.params(0), (nlohmann::json{{"executor", "sm"}, {"min-bytes", "1KiB"}, {"nodes", "1"}, {"bytes", "1MiB"}}));
  EXPECT_EQ(plan.params(1), (nlohmann::json{{"executor", "sm"}, {"min-bytes", "1KiB"}, {"nodes", "2"}, {"bytes", "2MiB"}}));
  EXPECT_EQ(plan.params(2)["min-bytes"], "2KiB");
  EXPECT_EQ(plan.params(6)["executor"], "ace");
  EXPECT_EQ(plan.params(11), (nlohmann::json{{"executor", "ace"}, {"min-bytes", "4KiB"}, {"nodes", "2"}, {"bytes", "2MiB"}}));
  EXPECT_EQ(plan.invocation(7).args,
            (std::vector<std::string>{"collective", "--op", "all-gather", "--executor", "ace", "--min-bytes", "1KiB", "--nodes", "2",
                                      "--bytes", "2MiB"}));
}

TEST(SweepGrid, OptionValuesBecomeArgumentsAsTheCommandLineWritesThem) {
  const RegisteredCommand run = register_command("run");
  const CLI::App& c = *run.command;
  EXPECT_EQ(option_arguments(c, "compare", nlohmann::json{"sm", "ace"}, "w"), (std::vector<std::string>{"--compare", "sm,ace"}));
  EXPECT_EQ(option_arguments(c, "straggler", nlohmann::json{"1=2", "3=1.5"}, "w"),
            (std::vector<std::string>{"--straggler", "1=2", "--straggler", "3=1.5"}));
  EXPECT_EQ(option_arguments(c, "allow_oom", true, "w"), (std::vector<std::string>{"--allow-oom"}));
  EXPECT_EQ(option_arguments(c, "allow-oom", "false", "w"), (std::vector<std::string>{}));
  EXPECT_EQ(option_arguments(c, "--tp", 4, "w"), (std::vector<std::string>{"--tp", "4"}));
  EXPECT_EQ(option_arguments(c, "tp", nullptr, "w"), (std::vector<std::string>{}));
  const RegisteredCommand ch = register_command("characterize");
  EXPECT_EQ(option_arguments(*ch.command, "study", "units", "w"), (std::vector<std::string>{"units"}));
  EXPECT_THROW(option_arguments(c, "json", true, "w"), InputError);
  EXPECT_THROW(option_arguments(c, "allow-oom", "maybe", "w"), InputError);
  EXPECT_THROW(option_arguments(c, "tp", nlohmann::json{{"a", 1}}, "w"), InputError);
  try {
    option_arguments(c, "modle", "gpt", "g.yaml: grid.modle");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "g.yaml: grid.modle: 'run' has no option 'modle' (did you mean 'model'?)");
  }
}

// ---------------------------------------------------------------- invoke

TEST_F(Sweep, InvokeReturnsTheCommandLinesJsonAndItsErrors) {
  const std::vector<std::string> args{"collective", "--platform", kRing8, "--bytes", "1MiB", "--op", "all-gather"};
  std::vector<std::string> cli = args;
  cli.push_back("--json");
  const test::CliRun r = expect_ok(cli);
  EXPECT_EQ(invoke({args, std::nullopt}).json, nlohmann::json::parse(r.out));

  const std::vector<std::string> bad{"collective", "--platform", kRing8, "--bytes", "lots"};
  const test::CliRun rb = run(bad);
  ASSERT_EQ(rb.status, 2);
  try {
    invoke({bad, std::nullopt});
    FAIL();
  } catch (const InvokeError& e) {
    EXPECT_EQ(e.error().status, 2);
    EXPECT_EQ("acesim: error: " + e.error().message + "\n", rb.err);
  }
  try {
    invoke({{"collective", "--bogus"}, std::nullopt});
    FAIL();
  } catch (const InvokeError& e) {
    EXPECT_EQ(e.error().status, 2);
    EXPECT_NE(e.error().message.find("--bogus"), std::string::npos) << e.error().message;
  }
}

// Issue 42 F13: a message quotes at most the first 80 bytes of a value
// (quote()), and whatever message quotes more is cut the same way where
// the CLI and Python take it (current_error()).
TEST(Invoke, MessagesQuoteAtMostTheFirst80BytesOfAValue) {
  const std::string x80 = std::string(80, 'x') + "...";
  EXPECT_EQ(quote("short"), "'short'");
  EXPECT_EQ(quote(std::string(80, 'x')), "'" + std::string(80, 'x') + "'");
  EXPECT_EQ(quote(std::string(81, 'x')), "'" + x80 + "'");
  // Never half a UTF-8 character: 79 bytes and a 2-byte character.
  EXPECT_EQ(shortened(std::string(79, 'x') + "\xc3\xa9" + "tail"), std::string(79, 'x') + "...");
  const auto error_of = [](const std::string& message) {
    try {
      throw InputError(message);
    } catch (...) {
      return current_error().message;
    }
  };
  const std::string huge(8 << 20, 'x');
  EXPECT_EQ(error_of("unknown model '" + huge + "' (valid: a, b)"), "unknown model '" + x80 + "' (valid: a, b)");
  EXPECT_EQ(error_of("--bytes: \"" + std::string(2000, 'y') + " z\": no"), "--bytes: \"" + std::string(80, 'y') + "...\": no");
  EXPECT_EQ(error_of(huge + ": cannot open: File name too long"), x80 + " cannot open: File name too long");
  // The platform's 'npu' key: apostrophes are no quotes; short values stay.
  const std::string prose = "the platform's 'npu' is a value, " + std::string(1500, 'a') + " b";
  EXPECT_EQ(error_of(prose), "the platform's 'npu' is a value, " + std::string(80, 'a') + "... b");
  // Long messages of short words keep their first 63 KiB and last 1 KiB.
  std::string words;
  while (words.size() < 200000) words += "word ";
  const std::string cut = error_of(words);
  EXPECT_LT(cut.size(), 66000u);
  EXPECT_NE(cut.find(" bytes left out) ... "), std::string::npos);
  // Messages below 1 KiB are as they were.
  const std::string path = "/tmp/" + std::string(900, 'p') + "/x.yaml: cannot open";
  EXPECT_EQ(error_of(path), path);
}

TEST_F(Sweep, ACommandLineLeavesNothingBehindForTheNext) {
  // invoke() keeps each command registered per thread: options given to one
  // command line must not reach the next.
  const std::vector<std::vector<std::string>> lines{
      {"collective", "--platform", "hgx-h100", "--nodes", "2", "--bytes", "4MiB", "--algo", "ring", "--proto", "ll128"},
      {"collective", "--platform", "hgx-h100", "--bytes", "4MiB"},
      {"collective", "--platform", kRing8, "--bytes", "4MiB", "--straggler", "1=2", "--straggler", "3=4", "--executor", "ace"},
      {"collective", "--platform", kRing8, "--bytes", "4MiB", "--straggler", "2=2"},
      {"collective", "--platform", kRing8, "--min-bytes", "1MiB", "--max-bytes", "4MiB", "--full"},
      {"collective", "--platform", kRing8},
      {"run", "--platform", kRing8, "--iterations", "1", "--compare", "sm,ace", "--batch", "8"},
      {"run", "--platform", kRing8, "--iterations", "1"},
      {"run", "--platform", "hgx-h100", "--model", "llama3-8b", "--tp", "8", "--global-batch", "16", "--sequence-parallel"},
      {"run", "--platform", "hgx-h100", "--model", "llama3-8b", "--global-batch", "16", "--allow-oom"},
      {"characterize", "units", "--platform", kRing8, "--bytes", "1MiB", "--op", "all-gather"},
      {"characterize", "units", "--platform", kRing8},
  };
  for (int pass = 0; pass < 2; ++pass) {
    for (const std::vector<std::string>& args : lines) {
      std::vector<std::string> cli = args;
      cli.push_back("--json");
      const test::CliRun r = run(cli);
      ASSERT_EQ(r.status, 0) << r.err;
      EXPECT_EQ(invoke({args, std::nullopt}).json, nlohmann::json::parse(r.out)) << args[0] << " " << args[2] << " " << args.size();
    }
    // A command line that fails part-way leaves nothing either.
    EXPECT_THROW(invoke({{"collective", "--platform", kRing8, "--algo", "ring", "--bytes", "lots"}, std::nullopt}), InvokeError);
  }
}

// ---------------------------------------------------------------- results

TEST_F(Sweep, PlatformKeysAgainstTheRingsClosedForm) {
  const fs::path out = dir_ / "out";
  const test::CliRun r = expect_ok({"sweep", ring_grid(), "--out", out.string(), "--jobs", "2"});
  EXPECT_NE(r.out.find("sweep: 6 points: 6 run"), std::string::npos) << r.out;
  const auto rows = read_csv(out / "results.csv");
  ASSERT_EQ(rows.size(), 6u);
  // Ring all-reduce of S over 8 NPUs: 2(n-1) steps of (latency + S/n / B).
  const double piece = 8.0 * 1024 * 1024 / 8;
  int i = 0;
  for (double bw : {25.0, 50.0, 100.0}) {
    for (double lat : {0.0, 500.0}) {
      const auto& row = rows[static_cast<std::size_t>(i)];
      EXPECT_EQ(row.at("point"), std::to_string(i));
      EXPECT_EQ(std::stod(row.at("topology.0.bandwidth_GBps")), bw);
      EXPECT_EQ(std::stod(row.at("topology.0.latency_ns")), lat);
      EXPECT_NEAR(std::stod(row.at("time_ns")), 14 * (lat + piece / bw), 1e-6) << "point " << i;
      EXPECT_EQ(row.at("error"), "");
      EXPECT_EQ(row.at("platform"), kRing8 + " with topology.0.bandwidth_GBps=" + row.at("topology.0.bandwidth_GBps") +
                                        "; topology.0.latency_ns=" + row.at("topology.0.latency_ns"));
      ++i;
    }
  }
}

TEST_F(Sweep, EveryPointIsItsCommandLinesJson) {
  const std::string grid = write("g.yaml", "command: collective\n"
                                           "options: {bytes: 4MiB}\n"
                                           "grid:\n  platform: [" + kRing8 + ", hgx-h100]\n  executor: [sm, ace]\n"
                                           "  op: [all-reduce, all-to-all]\n");
  const fs::path out = dir_ / "out";
  expect_ok({"sweep", grid, "--out", out.string()});
  std::ifstream in(out / "results.jsonl");
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    const nlohmann::json rec = nlohmann::json::parse(line);
    const nlohmann::json& p = rec["params"];
    const test::CliRun r = expect_ok({"collective", "--bytes", "4MiB", "--platform", p["platform"], "--executor", p["executor"], "--op",
                                      p["op"], "--json"});
    EXPECT_EQ(rec["result"], nlohmann::json::parse(r.out)) << line.substr(0, 200);
    EXPECT_EQ(rec["point"], n);
    ++n;
  }
  EXPECT_EQ(n, 8);
}

TEST_F(Sweep, FailedPointsAreErrorRowsWithTheCommandLinesMessage) {
  const std::string grid = write("g.yaml", "command: collective\n"
                                           "options: {platform: " + kRing8 + "}\n"
                                           "grid:\n  bytes: [1MiB, 2PiB]\n  topology.0.bandwidth_GBps: [50, -1]\n");
  const fs::path out = dir_ / "out";
  const test::CliRun r = expect_ok({"sweep", grid, "--out", out.string()});
  EXPECT_NE(r.out.find("3 errors"), std::string::npos) << r.out;
  const auto rows = read_csv(out / "results.csv");
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].at("error"), "");
  EXPECT_NE(rows[1].at("error").find("topology.0.bandwidth_GBps"), std::string::npos) << rows[1].at("error");
  const test::CliRun cli = run({"collective", "--platform", kRing8, "--bytes", "2PiB"});
  ASSERT_EQ(cli.status, 2);
  EXPECT_EQ("acesim: error: " + rows[2].at("error") + "\n", cli.err);
  EXPECT_EQ(rows[2].at("time_ns"), "");
}

TEST_F(Sweep, ThreadsResumeShardsMergeAndMpiWriteTheSameFiles) {
  const std::string grid = write("g.yaml", "command: collective\n"
                                           "options: {platform: hgx-h100, op: all-reduce}\n"
                                           "grid:\n  executor: [sm, ace, ideal]\n  npu.hbm_GBps: [1000, 3350]\n"
                                           "zip:\n  nodes: [1, 2, 4]\n  bytes: [16MiB, 64MiB, 256MiB]\n");
  const fs::path one = dir_ / "one";
  expect_ok({"sweep", grid, "--out", one.string(), "--jobs", "1"});
  const std::string csv = slurp(one / "results.csv");
  const std::string jsonl = slurp(one / "results.jsonl");
  EXPECT_EQ(read_csv(one / "results.csv").size(), 18u);

  const fs::path two = dir_ / "two";
  expect_ok({"sweep", grid, "--out", two.string(), "--jobs", "2"});
  EXPECT_EQ(slurp(two / "results.csv"), csv);
  EXPECT_EQ(slurp(two / "results.jsonl"), jsonl);

  // A sweep killed part-way, its last line cut short, started again.
  {
    std::istringstream lines(jsonl);
    std::string l;
    std::string kept;
    for (int i = 0; i < 7 && std::getline(lines, l); ++i) kept += l + "\n";
    std::getline(lines, l);
    kept += l.substr(0, l.size() / 2);
    std::ofstream(two / "results.jsonl", std::ios::binary) << kept;
    fs::remove(two / "results.csv");
  }
  const test::CliRun resumed = expect_ok({"sweep", grid, "--out", two.string()});
  EXPECT_NE(resumed.out.find("18 points: 11 run"), std::string::npos) << resumed.out;
  EXPECT_NE(resumed.out.find("7 done before"), std::string::npos) << resumed.out;
  EXPECT_EQ(slurp(two / "results.csv"), csv);
  EXPECT_EQ(slurp(two / "results.jsonl"), jsonl);

  std::vector<std::string> shards;
  for (int i = 0; i < 4; ++i) {
    shards.push_back((dir_ / ("shard" + std::to_string(i))).string());
    const test::CliRun r = expect_ok({"sweep", grid, "--out", shards.back(), "--shard", std::to_string(i) + "/4"});
    EXPECT_NE(r.out.find(i < 2 ? "5 points (shard" : "4 points (shard"), std::string::npos) << r.out;
  }
  const fs::path merged = dir_ / "merged";
  const test::CliRun m = expect_ok({"sweep", "merge", shards[0], shards[1], shards[2], shards[3], "--out", merged.string()});
  EXPECT_NE(m.out.find("every point"), std::string::npos) << m.out;
  EXPECT_EQ(slurp(merged / "results.csv"), csv);
  const test::CliRun part = expect_ok({"sweep", "merge", shards[1], shards[3], "--out", (dir_ / "part").string()});
  EXPECT_NE(part.out.find("9 points missing (0, 2, 4, 6, 8, 10"), std::string::npos) << part.out;

  if (std::system("command -v mpirun >/dev/null 2>&1") != 0) GTEST_SKIP() << "no mpirun (Debian's openmpi-bin)";
  const fs::path mpi = dir_ / "mpi";
  // Open MPI leaks at exit, in components it has unloaded before
  // LeakSanitizer looks (the sanitizer build); acesim's own memory is
  // checked by the sweeps above. As root Open MPI wants to be told.
  const std::string root = std::string(::geteuid() == 0 ? " --allow-run-as-root" : "") + " -x ASAN_OPTIONS";
  ::setenv("ASAN_OPTIONS", "detect_leaks=0:abort_on_error=1", 1);
  const std::string cmd = "timeout 120 mpirun --oversubscribe" + root + " -n 3 " + test::shell_quote(test::acesim_binary()) +
                          " sweep " + test::shell_quote(grid) + " --out " + test::shell_quote(mpi.string()) + " >" +
                          test::shell_quote((dir_ / "mpi.txt").string()) + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << slurp(dir_ / "mpi.txt");
  EXPECT_EQ(slurp(mpi / "results.csv"), csv);
  EXPECT_EQ(slurp(mpi / "results.jsonl"), jsonl);
  const std::string said = slurp(dir_ / "mpi.txt");
  EXPECT_NE(said.find("sweep: 18 points: 18 run"), std::string::npos) << said;

  // A bad grid under mpirun: rank 0 alone says why, and nothing is written.
  const std::string bad = write("bad.yaml", "command: collective\ngrid:\n  exectuor: [sm]\n");
  const std::string bad_cmd = "timeout 120 mpirun --oversubscribe" + root + " -n 3 " + test::shell_quote(test::acesim_binary()) +
                              " sweep " + test::shell_quote(bad) + " --out " + test::shell_quote((dir_ / "bad").string()) + " >" +
                              test::shell_quote((dir_ / "bad.txt").string()) + " 2>&1";
  EXPECT_NE(std::system(bad_cmd.c_str()), 0);
  const std::string refused = slurp(dir_ / "bad.txt");
  std::size_t lines = 0;
  for (std::size_t at = refused.find("acesim: error: "); at != std::string::npos; at = refused.find("acesim: error: ", at + 1)) ++lines;
  EXPECT_EQ(lines, 1u) << refused;
  EXPECT_NE(refused.find("has no option 'exectuor'"), std::string::npos) << refused;
  EXPECT_FALSE(fs::exists(dir_ / "bad"));
}

TEST_F(Sweep, TheSlurmArrayScriptShardsAndMergeJoins) {
  const std::string grid = ring_grid();
  const fs::path whole = dir_ / "whole";
  expect_ok({"sweep", grid, "--out", whole.string()});
  const std::string script = test::source_dir() + "/scripts/slurm/sweep.sbatch";
  // An array --array=1-3, as Slurm starts its tasks.
  for (int task = 1; task <= 3; ++task) {
    const std::string cmd = "SLURM_ARRAY_TASK_ID=" + std::to_string(task) + " SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_COUNT=3 "
                            "SLURM_CPUS_PER_TASK=2 ACESIM=" + test::shell_quote(test::acesim_binary()) + " bash " +
                            test::shell_quote(script) + " " + test::shell_quote(grid) + " " + test::shell_quote((dir_ / "out").string()) +
                            " >" + test::shell_quote((dir_ / "task.txt").string()) + " 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << slurp(dir_ / "task.txt");
    EXPECT_NE(slurp(dir_ / "task.txt").find("2 points (shard " + std::to_string(task - 1) + "/3)"), std::string::npos)
        << slurp(dir_ / "task.txt");
  }
  expect_ok({"sweep", "merge", (dir_ / "out" / "shard-0").string(), (dir_ / "out" / "shard-1").string(),
             (dir_ / "out" / "shard-2").string(), "--out", (dir_ / "all").string()});
  EXPECT_EQ(slurp(dir_ / "all" / "results.csv"), slurp(whole / "results.csv"));
  // A stepped array (--array=0-4:2) is three shards; a list is refused.
  for (int task : {0, 2, 4}) {
    const std::string cmd = "SLURM_ARRAY_TASK_ID=" + std::to_string(task) + " SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=4 "
                            "SLURM_ARRAY_TASK_STEP=2 SLURM_ARRAY_TASK_COUNT=3 ACESIM=" + test::shell_quote(test::acesim_binary()) +
                            " bash " + test::shell_quote(script) + " " + test::shell_quote(grid) + " " +
                            test::shell_quote((dir_ / "step").string()) + " >" + test::shell_quote((dir_ / "task.txt").string()) + " 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << slurp(dir_ / "task.txt");
    EXPECT_NE(slurp(dir_ / "task.txt").find("(shard " + std::to_string(task / 2) + "/3)"), std::string::npos) << slurp(dir_ / "task.txt");
  }
  const std::string list = "SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=9 SLURM_ARRAY_TASK_COUNT=3 bash " +
                           test::shell_quote(script) + " g o >" + test::shell_quote((dir_ / "list.txt").string()) + " 2>&1";
  EXPECT_NE(std::system(list.c_str()), 0);
  EXPECT_NE(slurp(dir_ / "list.txt").find("must be a range"), std::string::npos) << slurp(dir_ / "list.txt");
  // Outside an array it says so.
  const std::string bare = "bash " + test::shell_quote(script) + " g o >" + test::shell_quote((dir_ / "bare.txt").string()) + " 2>&1";
  EXPECT_NE(std::system(bare.c_str()), 0);
  EXPECT_NE(slurp(dir_ / "bare.txt").find("not a job array task"), std::string::npos) << slurp(dir_ / "bare.txt");
}

TEST_F(Sweep, TheExampleGridsRunAsTheReadmeShows) {
  const fs::path out = dir_ / "allreduce";
  const test::CliRun r = expect_ok({"sweep", test::source_dir() + "/examples/sweeps/allreduce_nvlink.yaml", "--out", out.string()});
  EXPECT_NE(r.out.find("sweep: 36 points: 36 run"), std::string::npos) << r.out;
  const auto rows = read_csv(out / "results.csv");
  ASSERT_EQ(rows.size(), 36u);
  EXPECT_EQ(rows[2].at("algorithm"), "ring");
  EXPECT_EQ(rows[2].at("time_ns"), "42088665.68");
  EXPECT_EQ(rows[35].at("algorithm"), "nvls-tree");
  EXPECT_EQ(rows[35].at("busbw_GBps"), "469.5540112887259");
  const test::CliRun l = expect_ok({"sweep", test::source_dir() + "/examples/sweeps/llama3_8b_plans.yaml", "--out", (dir_ / "l").string()});
  EXPECT_NE(l.out.find("sweep: 32 points: 32 run"), std::string::npos) << l.out;
  EXPECT_NE(l.out.find("13 errors"), std::string::npos) << l.out;
  EXPECT_NE(l.out.find("point 0: the plan does not fit in HBM"), std::string::npos) << l.out;
}

TEST_F(Sweep, PointsReadPlatformsAsTheCommandLineDoes) {
  // An empty file is refused, not taken for the default platform.
  const std::string empty = write("empty.yaml", "");
  // Bytes that are not UTF-8 reach the error message: a row, not a crash.
  const std::string latin1 = write("latin1.yaml", "topology:\n  - {kind: ring, npus: 8, bandwidth_GBps: 50, latency_ns: 5}\n\xff\xfe: 1\n");
  // A workload file relative to the platform's folder, with a key set.
  fs::create_directories(dir_ / "wp");
  fs::copy_file(test::data_dir() + "/astra-sim-1.0/workload/Resnet50_DataParallel.txt", dir_ / "wp" / "w.txt");
  const std::string wp = write("wp/p.yaml", "topology:\n  - {kind: ring, npus: 8, bandwidth_GBps: 50, latency_ns: 500}\n"
                                            "workload: {file: w.txt}\n");
  const std::string grid = write("g.yaml", "command: run\noptions: {iterations: 1, executor: ideal}\n"
                                           "grid:\n  platform: [" + empty + ", " + latin1 + ", " + wp + "]\n"
                                           "  topology.0.bandwidth_GBps: [~, 100]\n");
  const fs::path out = dir_ / "out";
  expect_ok({"sweep", grid, "--out", out.string(), "--jobs", "2"});
  const auto rows = read_csv(out / "results.csv");
  ASSERT_EQ(rows.size(), 6u);
  for (int i : {0, 1}) {
    const test::CliRun e = run({"run", "--platform", empty, "--iterations", "1", "--executor", "ideal"});
    ASSERT_EQ(e.status, 2);
    EXPECT_EQ("acesim: error: " + rows[static_cast<std::size_t>(i)].at("error") + "\n", e.err);
  }
  for (int i : {2, 3}) {
    EXPECT_NE(rows[static_cast<std::size_t>(i)].at("error").find("latin1.yaml:3: the key '\\xFF\\xFE' is not UTF-8 text (byte 0xFF at byte 0)"),
              std::string::npos)
        << rows[static_cast<std::size_t>(i)].at("error");
  }
  // `~` leaves the key as the file has it: the file's own run.
  const test::CliRun plain = expect_ok({"run", "--platform", wp, "--iterations", "1", "--executor", "ideal", "--json"});
  EXPECT_EQ(rows[4].at("error"), "");
  EXPECT_EQ(rows[4].at("iteration_time_ns"), nlohmann::json::parse(plain.out)["iteration_time_ns"].dump());
  EXPECT_EQ(rows[4].at("result.platform"), wp);
  EXPECT_EQ(rows[5].at("error"), "");
  EXPECT_EQ(rows[5].at("result.platform"), wp + " with topology.0.bandwidth_GBps=100");
  EXPECT_NE(rows[5].at("iteration_time_ns"), rows[4].at("iteration_time_ns"));
}

TEST_F(Sweep, WhatAPointCannotMeanIsRefused) {
  const std::string base = "command: run\noptions: {platform: " + kRing8 + "}\n";
  expect_bad_input({"sweep", write("a.yaml", base + "grid:\n  trace: [t.json]\n  batch: [8, 16]\n"), "--out", (dir_ / "a").string()},
                   {"grid.trace: --trace writes files, which every point would write over"});
  expect_bad_input({"sweep", write("b.yaml", "command: collective\noptions: {platform: [hgx-h100]}\ngrid:\n  npu.hbm_GBps: [1]\n"), "--out",
                    (dir_ / "b").string()},
                   {"options.platform: a platform file, a preset's name or a map", "not a list"});
  // Records of points that are not the sweep's.
  const std::string grid = ring_grid();
  const fs::path out = dir_ / "c";
  expect_ok({"sweep", grid, "--out", out.string(), "--shard", "0/2"});
  std::ofstream(out / "results.jsonl", std::ios::app) << R"({"params":{},"point":1,"result":{}})" << "\n";
  expect_bad_input({"sweep", grid, "--out", out.string(), "--shard", "0/2"}, {"point 1 is not a point of this sweep (shard 0/2)"});
}

TEST_F(Sweep, AnotherGridsDirectoryAndShardsOfAnotherGridAreRefused) {
  const std::string a = ring_grid();
  const std::string b = write("b.yaml", "command: collective\noptions: {platform: " + kRing8 + "}\ngrid:\n  bytes: [1MiB, 2MiB]\n");
  expect_ok({"sweep", a, "--out", (dir_ / "a").string(), "--shard", "0/2"});
  expect_ok({"sweep", b, "--out", (dir_ / "b").string(), "--shard", "1/2"});
  expect_bad_input({"sweep", b, "--out", (dir_ / "a").string(), "--shard", "0/2"}, {"holds another sweep"});
  expect_bad_input({"sweep", a, "--out", (dir_ / "a").string()}, {"holds another sweep"});
  expect_bad_input({"sweep", "merge", (dir_ / "a").string(), (dir_ / "b").string(), "--out", (dir_ / "m").string()},
                   {"is a sweep of another grid"});
  expect_bad_input({"sweep", "merge", dir_.string(), "--out", (dir_ / "m").string()}, {"no sweep.json"});
}

TEST_F(Sweep, BadGridsAreRefusedBeforeAnyPointRuns) {
  struct Case {
    std::string grid;
    std::vector<std::string> parts;
  };
  const std::string base = "command: collective\noptions: {platform: hgx-h100}\n";
  const std::vector<Case> cases{
      {base + "grid:\n  exectuor: [sm]\n", {"grid.exectuor", "has no option 'exectuor'", "did you mean 'executor'"}},
      {base + "grid:\n  executor: []\n", {":4: grid.executor: empty axis"}},
      {base + "grid:\n  executor: sm\n", {"grid.executor", "expected a list of values"}},
      {base + "zip:\n  nodes: [1, 2]\n  bytes: [1MiB]\n", {"zip", "lists of different lengths (nodes: 2, bytes: 1)"}},
      {base + "grid:\n  npu.hbm_GBPs: [1000]\n", {"npu.hbm_GBPs: unknown key", "did you mean 'hbm_GBps'"}},
      {base + "grid:\n  topology.2.bandwidth_GBps: [10]\n", {"topology.2.bandwidth_GBps: '2' is not an index", "(0..1)"}},
      {base + "grid:\n  json: [true]\n", {"--json is set by the caller"}},
      {base + "grid:\n  full: [maybe]\n", {"--full is a flag: true or false"}},
      {base + "grid:\n  bytes: [1MiB]\nzip:\n  bytes: [2MiB]\n", {"zip.bytes: given twice"}},
      {"command: colective\n", {"command: unknown command 'colective'", "did you mean 'collective'"}},
      {"command: reproduce\n", {"unknown command 'reproduce' (valid: collective, characterize, run, cluster)"}},
      {base + "grids:\n  bytes: [1MiB]\n", {":3: grids: unknown key", "did you mean 'grid'"}},
      {"options: {}\n", {"command: missing"}},
      {"command: collective\noptions: {platform: hgx-h10}\ngrid:\n  npu.hbm_GBps: [1]\n",
       {"/hgx-h10' and unknown platform preset 'hgx-h10'", "did you mean 'hgx-h100'"}},
      // --nodes sets hgx-h100's topology.1 (`nodes: true`): the npus column would not be what ran.
      {base + "grid:\n  nodes: [1, 2]\n  topology.1.npus: [2, 4]\n",
       {"grid.nodes and grid.topology.1.npus both set the NPUs of presets/hgx-h100.yaml's nodes dimension (topology.1",
        "sweep one of them"}},
      {"command: collective\noptions: {platform: hgx-h100, nodes: 2}\nzip:\n  topology.1.npus: [2, 4]\n  bytes: [1MiB, 2MiB]\n",
       {"options.nodes and zip.topology.1.npus both set"}},
      {"command: collective\noptions: {network: a.yml, system: b.json}\ngrid:\n  npu.hbm_GBps: [1]\n",
       {"platform keys need an acesim platform"}},
      {"command: [collective\n", {"malformed YAML"}},
      {base + "grid:\n" + [] {
         std::string axes;
         for (int i = 0; i < 20; ++i) axes += "  npu.hbm_GBps" + std::string(static_cast<std::size_t>(i), 'x') + ": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n";
         return axes;
       }(),
       {"more than 100,000,000 points"}},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].grid);
    const std::string g = write("bad" + std::to_string(i) + ".yaml", cases[i].grid);
    const fs::path out = dir_ / ("out" + std::to_string(i));
    const test::CliRun r = run({"sweep", g, "--out", out.string()});
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err_lines().size(), 1u) << r.err;
    for (const std::string& p : cases[i].parts) EXPECT_NE(r.err.find(p), std::string::npos) << r.err << "missing: " << p;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_FALSE(fs::exists(out)) << "the output directory was made before the grid was checked";
  }
  const std::string good = ring_grid();
  expect_bad_input({"sweep", good, "--out", (dir_ / "x").string(), "--shard", "3/2"}, {"--shard: '3/2': I must be below N"});
  expect_bad_input({"sweep", good, "--out", (dir_ / "x").string(), "--shard", "1of2"}, {"--shard: '1of2' is not I/N"});
  expect_bad_input({"sweep", good, "--out", (dir_ / "x").string(), "--jobs", "0"}, {"--jobs: must be in 1..1024"});
  expect_bad_input({"sweep", good}, {"--out DIR is required"});
  expect_bad_input({"sweep", (dir_ / "none.yaml").string(), "--out", (dir_ / "x").string()}, {"none.yaml"});
  EXPECT_FALSE(fs::exists(dir_ / "x"));
}

TEST_F(Sweep, PlatformsWrittenInlineAndRunsAndCharacterizations) {
  const std::string grid = write("g.yaml", "command: run\n"
                                           "options:\n"
                                           "  platform: {topology: [{kind: ring, npus: 8, bandwidth_GBps: 50, latency_ns: 500}]}\n"
                                           "  iterations: 1\n"
                                           "grid:\n  compare: [[sm, ace], ~]\n  batch: [16, 32]\n");
  const fs::path out = dir_ / "out";
  expect_ok({"sweep", grid, "--out", out.string()});
  const auto rows = read_csv(out / "results.csv");
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].at("compare"), "sm,ace");
  EXPECT_EQ(rows[0].at("runs.1.executor"), "ace");
  EXPECT_EQ(rows[0].at("runs.0.platform"), "inline platform");
  EXPECT_EQ(rows[2].at("compare"), "");
  EXPECT_EQ(rows[2].at("iterations"), "1");
  EXPECT_NE(rows[2].at("iteration_time_ns"), "");
  // A platform keyed like the file is read like the file.
  const std::string file = write("ring.yaml", "topology: [{kind: ring, npus: 8, bandwidth_GBps: 50, latency_ns: 500}]\n");
  const test::CliRun r = expect_ok({"run", "--platform", file, "--iterations", "1", "--batch", "16", "--json"});
  EXPECT_EQ(rows[2].at("iteration_time_ns"), nlohmann::json::parse(r.out)["iteration_time_ns"].dump());

  const std::string ch = write("c.yaml", "command: characterize\noptions: {platform: hgx-h100, bytes: 16MiB}\ngrid:\n  study: [units, traffic]\n");
  expect_ok({"sweep", ch, "--out", (dir_ / "ch").string()});
  const auto crow = read_csv(dir_ / "ch" / "results.csv");
  ASSERT_EQ(crow.size(), 2u);
  EXPECT_EQ(crow[0].at("result.study"), "units");
  EXPECT_NE(crow[0].at("rows.0.time_ns"), "");
}


// ---------------------------------------------------------------- one directory, one sweep

TEST_F(Sweep, ASecondSweepIntoALockedDirectoryIsRefusedNamingTheHolder) {
  const std::string a = ring_grid();
  const std::string b = write("b.yaml", "command: collective\noptions: {platform: " + kRing8 + "}\ngrid:\n  bytes: [1MiB, 2MiB]\n");
  const fs::path out = dir_ / "out";
  expect_ok({"sweep", a, "--out", out.string()});
  const std::string csv = slurp(out / "results.csv");
  EXPECT_FALSE(fs::exists(out / "sweep.lock"));  // let go at the end
  // Another process holds DIR (this one: flock(2) on its own open file).
  const int fd = ::open((out / "sweep.lock").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  const std::string holder = "pid 4242 on node7, started 2026-01-02 03:04:05 UTC\n";
  ASSERT_EQ(::write(fd, holder.data(), holder.size()), static_cast<ssize_t>(holder.size()));
  for (const std::string& grid : {a, b}) {
    expect_bad_input({"sweep", grid, "--out", out.string()},
                     {"--out: " + out.string() + " is in use by another sweep (pid 4242 on node7, started 2026-01-02 03:04:05 UTC)",
                      "wait for it to end, or give another --out"});
  }
  expect_bad_input({"sweep", "merge", out.string(), "--out", out.string()}, {"is in use by another sweep (pid 4242"});
  EXPECT_EQ(slurp(out / "results.csv"), csv);
  // Its holder killed: the kernel let go, the note it left is stale.
  ::close(fd);
  EXPECT_EQ(slurp(out / "sweep.lock"), holder);
  const test::CliRun r = expect_ok({"sweep", a, "--out", out.string()});
  EXPECT_NE(r.out.find("6 points: 0 run"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out / "sweep.lock"));
}

TEST_F(Sweep, ALockHeldByAKilledProcessIsTakenOver) {
  const fs::path out = dir_ / "out";
  fs::create_directories(out);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const int fd = ::open((out / "sweep.lock").c_str(), O_RDWR | O_CREAT, 0644);
    if (fd < 0 || ::flock(fd, LOCK_EX) != 0 || ::write(fd, "pid 1 on gone\n", 14) != 14) ::_exit(1);
    ::raise(SIGKILL);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));
  ASSERT_TRUE(fs::exists(out / "sweep.lock"));
  const test::CliRun r = expect_ok({"sweep", ring_grid(), "--out", out.string()});
  EXPECT_NE(r.out.find("6 points: 6 run"), std::string::npos) << r.out;
  EXPECT_EQ(read_csv(out / "results.csv").size(), 6u);
}

TEST_F(Sweep, LinksPlantedInTheDirectoryAreNotWrittenThrough) {
  const fs::path out = dir_ / "out";
  fs::create_directories(out);
  const std::string outside = write("outside.txt", "not the sweep's\n");
  // The names the files are written through, then over.
  for (const char* name : {"results.csv", "results.csv.tmp", "results.jsonl.tmp", "sweep.json.tmp"}) {
    fs::create_symlink(outside, out / name);
  }
  expect_ok({"sweep", ring_grid(), "--out", out.string()});
  EXPECT_EQ(slurp(outside), "not the sweep's\n");
  EXPECT_FALSE(fs::is_symlink(out / "results.csv"));
  EXPECT_EQ(read_csv(out / "results.csv").size(), 6u);
  // results.jsonl as a link, when resuming: read, then replaced.
  fs::rename(out / "results.jsonl", dir_ / "records.jsonl");
  fs::create_symlink(dir_ / "records.jsonl", out / "results.jsonl");
  const std::string records = slurp(dir_ / "records.jsonl");
  const test::CliRun r = expect_ok({"sweep", ring_grid(), "--out", out.string()});
  EXPECT_NE(r.out.find("6 done before"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::is_symlink(out / "results.jsonl"));
  EXPECT_EQ(slurp(dir_ / "records.jsonl"), records);
  // The lock file as a link: refused, nothing written there.
  fs::create_symlink(outside, out / "sweep.lock");
  expect_bad_input({"sweep", ring_grid(), "--out", out.string()}, {"--out: " + (out / "sweep.lock").string() + ": cannot open for writing: Too many levels of symbolic links"});
  EXPECT_EQ(slurp(outside), "not the sweep's\n");
}

// A device or a FIFO planted as sweep.json or results.jsonl was read for
// ever (a resume, merge or plot hung, or filled memory with /dev/zero).
TEST_F(Sweep, ADeviceOrAFifoPlantedInTheDirectoryIsRefused) {
  const fs::path out = dir_ / "out";
  expect_ok({"sweep", ring_grid(), "--out", out.string()});
  const fs::path fifo = dir_ / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  fs::rename(out / "results.jsonl", dir_ / "records.jsonl");
  fs::create_symlink(fifo, out / "results.jsonl");
  const std::string not_regular = (out / "results.jsonl").string() + ": not a regular file (written by acesim sweep)";
  expect_bad_input({"sweep", ring_grid(), "--out", out.string()}, {not_regular});
  expect_bad_input({"sweep", "merge", out.string(), "--out", (dir_ / "m").string()}, {not_regular});
  fs::remove(out / "results.jsonl");
  fs::rename(dir_ / "records.jsonl", out / "results.jsonl");
  fs::rename(out / "sweep.json", dir_ / "sweep.json");
  fs::create_symlink("/dev/zero", out / "sweep.json");
  const std::string meta = (out / "sweep.json").string() + ": not a regular file (written by acesim sweep)";
  expect_bad_input({"sweep", "merge", out.string(), "--out", (dir_ / "m").string()}, {meta});
  expect_bad_input({"sweep", "plot", out.string(), "--x", "bytes", "--y", "time_ns"}, {meta});
  expect_bad_input({"sweep", ring_grid(), "--out", out.string()}, {meta});
}

// ---------------------------------------------------------------- changed inputs

TEST_F(Sweep, FilesAreTheGridFoldersAndAChangedFileIsNoticedOnResume) {
  // A grid beside its platforms, run from elsewhere.
  fs::create_directories(dir_ / "g");
  fs::create_directories(dir_ / "elsewhere");
  const std::string ring50 = "topology:\n  - {kind: ring, npus: 8, bandwidth_GBps: 50, latency_ns: 500}\n";
  write("g/p.yaml", ring50);
  write("g/q.yaml", ring50);
  write("g/g.yaml", "command: collective\noptions: {executor: ideal, bytes: 64MiB}\ngrid:\n  platform: [p.yaml, q.yaml]\n"
                    "  op: [all-reduce, all-gather]\n");
  const fs::path out = dir_ / "out";
  const test::CliRun first = run_in(dir_, {"sweep", "g/g.yaml", "--out", out.string()});
  ASSERT_EQ(first.status, 0) << first.err;
  const auto rows = read_csv(out / "results.csv");
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].at("result.platform"), "g/p.yaml");
  const nlohmann::json meta = nlohmann::json::parse(slurp(out / "sweep.json"));
  EXPECT_EQ(meta["inputs"].size(), 2u) << meta.dump();
  EXPECT_EQ(meta["inputs"]["platform: p.yaml"], meta["inputs"]["platform: q.yaml"]);
  // From another directory, the same files: nothing runs again.
  const test::CliRun again = run_in(dir_ / "elsewhere", {"sweep", "../g/g.yaml", "--out", out.string()});
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_NE(again.out.find("4 points: 0 run"), std::string::npos) << again.out;

  // p.yaml edited: four times the bandwidth.
  write("g/p.yaml", "topology:\n  - {kind: ring, npus: 8, bandwidth_GBps: 200, latency_ns: 500}\n");
  const std::string csv_before = slurp(out / "results.csv");
  expect_bad_input({"sweep", (dir_ / "g" / "g.yaml").string(), "--out", out.string()},
                   {"--out: " + out.string() + " was run with other input files (platform: p.yaml changed)",
                    "give --rerun-changed to run again the points that read them"});
  EXPECT_EQ(slurp(out / "results.csv"), csv_before);
  const test::CliRun rerun = run_in(dir_, {"sweep", "g/g.yaml", "--out", out.string(), "--rerun-changed"});
  ASSERT_EQ(rerun.status, 0) << rerun.err;
  EXPECT_NE(rerun.out.find("4 points: 2 run"), std::string::npos) << rerun.out;
  EXPECT_NE(rerun.out.find("2 done before"), std::string::npos) << rerun.out;
  const auto after = read_csv(out / "results.csv");
  ASSERT_EQ(after.size(), 4u);
  // The p.yaml points are those of the new file; q.yaml's kept.
  const test::CliRun fresh = run_in(dir_, {"sweep", "g/g.yaml", "--out", (dir_ / "fresh").string()});
  ASSERT_EQ(fresh.status, 0) << fresh.err;
  EXPECT_EQ(slurp(out / "results.csv"), slurp(dir_ / "fresh" / "results.csv"));
  // Ring all-reduce of 64 MiB over 8 NPUs: 14 steps of (latency + S/8 / B).
  const double piece = 64.0 * 1024 * 1024 / 8;
  EXPECT_NEAR(std::stod(rows[0].at("time_ns")), 14 * (500 + piece / 50), 1e-6);
  EXPECT_NEAR(std::stod(after[0].at("time_ns")), 14 * (500 + piece / 200), 1e-6);
  EXPECT_NEAR(std::stod(after[2].at("time_ns")), 14 * (500 + piece / 50), 1e-6);
  // Started again: the new fingerprints were kept.
  const test::CliRun settled = expect_ok({"sweep", (dir_ / "g" / "g.yaml").string(), "--out", out.string()});
  EXPECT_NE(settled.out.find("4 points: 0 run"), std::string::npos) << settled.out;
}

TEST_F(Sweep, AWorkloadFileAPlatformNamesIsAnInputToo) {
  fs::create_directories(dir_ / "wp");
  fs::copy_file(test::data_dir() + "/astra-sim-1.0/workload/Resnet50_DataParallel.txt", dir_ / "wp" / "w.txt");
  const std::string wp = write("wp/p.yaml", "topology:\n  - {kind: ring, npus: 8, bandwidth_GBps: 50, latency_ns: 500}\n"
                                            "workload: {file: w.txt}\n");
  const std::string grid = write("g.yaml", "command: run\noptions: {platform: wp/p.yaml, iterations: 1, executor: ideal}\n"
                                           "grid:\n  topology.0.bandwidth_GBps: [50, 100]\n");
  const fs::path out = dir_ / "out";
  expect_ok({"sweep", grid, "--out", out.string()});
  EXPECT_EQ(nlohmann::json::parse(slurp(out / "sweep.json"))["inputs"].size(), 2u);
  std::ofstream(dir_ / "wp" / "w.txt", std::ios::app) << "\n";
  expect_bad_input({"sweep", grid, "--out", out.string()}, {"(platform: wp/p.yaml: workload.file w.txt changed)"});
  const test::CliRun r = expect_ok({"sweep", grid, "--out", out.string(), "--rerun-changed"});
  EXPECT_NE(r.out.find("2 points: 2 run"), std::string::npos) << r.out;
}

// Issue 42 F7: every option that names a file is in one list (input or
// output), so that a new one cannot be left out of the sweep's resolving
// and fingerprints. An option whose help speaks of a file, a directory, a
// prefix, a trace or a YAML/JSON/CSV document must be in one of the lists,
// or said here to name none.
TEST(SweepGrid, EveryOptionThatNamesAFileIsAnInputOrAnOutput) {
  std::set<std::string> inputs;
  for (const sweep::InputOption& o : sweep::input_options()) inputs.emplace(o.name);
  std::set<std::string> outputs(sweep::output_options().begin(), sweep::output_options().end());
  // Options whose help mentions such a word but that name no file.
  const std::set<std::string> no_file{"format", "kineto-comm", "trace-npus", "iterations", "chakra-flops", "help", "study"};
  const std::regex file_words("\\b(file|files|FILE|director(y|ies)|PREFIX|prefix|YAML|JSON|CSV|traces?|path)\\b");
  std::set<std::string> seen;
  for (const CommandEntry& e : command_table()) {
    if (!e.reports_json) continue;
    const RegisteredCommand c = register_command(e.name);
    for (const CLI::Option* opt : c.command->get_options()) {
      std::vector<std::string> names = opt->get_lnames();
      if (!opt->nonpositional()) names.push_back(opt->get_name(true));
      for (const std::string& n : names) {
        seen.insert(n);
        if (inputs.count(n) || outputs.count(n) || no_file.count(n) || n == "json" || n == "progress" || n == "no-progress") continue;
        EXPECT_FALSE(std::regex_search(opt->get_description(), file_words))
            << e.name << " --" << n << " (\"" << opt->get_description()
            << "\") may name a file: add it to sweep::input_options() or output_options(), or to no_file here";
      }
    }
  }
  // Every name listed is an option of some command.
  for (const std::string& n : inputs) EXPECT_TRUE(seen.count(n)) << n;
  for (const std::string& n : outputs) EXPECT_TRUE(seen.count(n)) << n;
  for (const std::string& n : no_file) EXPECT_TRUE(seen.count(n)) << n;
  // Values that name no file.
  EXPECT_EQ(sweep::input_kind("model", "llama3-8b"), sweep::InputKind::kNone);
  EXPECT_EQ(sweep::input_kind("model", "m.yaml"), sweep::InputKind::kFile);
  EXPECT_EQ(sweep::input_kind("failures", "meta-llama3"), sweep::InputKind::kNone);
  EXPECT_EQ(sweep::input_kind("failures", "default"), sweep::InputKind::kNone);
  EXPECT_EQ(sweep::input_kind("failures", "f.yaml"), sweep::InputKind::kFile);
  EXPECT_EQ(sweep::input_kind("calibration", "published-runs"), sweep::InputKind::kNone);
  EXPECT_EQ(sweep::input_kind("calibration", "cal.yaml"), sweep::InputKind::kFile);
  EXPECT_EQ(sweep::input_kind("kernel_times", "k.csv"), sweep::InputKind::kFile);
  EXPECT_EQ(sweep::input_kind("kineto", "traces"), sweep::InputKind::kFileOrDir);
  EXPECT_EQ(sweep::input_kind("bytes", "64MiB"), sweep::InputKind::kNone);
}

// Each input option of input_options() names a file beside the grid, from
// whatever directory the sweep starts, and its fingerprint follows the file.
TEST_F(Sweep, EveryInputOptionIsFoundBesideTheGridAndFingerprinted) {
  fs::create_directories(dir_ / "g" / "k");
  struct Case {
    std::string command, option, value, file;  // `file`: what to edit, under g/
  };
  const std::vector<Case> cases{
      {"collective", "platform", "p.yaml", "p.yaml"},
      {"collective", "network", "n.yml", "n.yml"},
      {"collective", "system", "s.json", "s.json"},
      {"run", "workload", "w.txt", "w.txt"},
      {"run", "chakra", "t", "t.0.et"},
      {"run", "chakra-groups", "groups.json", "groups.json"},
      {"run", "kineto", "k", "k/rank0.json"},
      {"run", "kineto", "one.json", "one.json"},
      {"run", "model", "m.yaml", "m.yaml"},
      {"run", "kernel-times", "kt.csv", "kt.csv"},
      {"run", "calibration", "cal.yaml", "cal.yaml"},
      {"run", "failures", "f.yaml", "f.yaml"},
      {"cluster", "file", "c.yaml", "c.yaml"},
  };
  std::set<std::string> covered;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.option + ": " + c.value);
    covered.insert(c.option);
    const std::string path = (dir_ / "g" / c.value).string();
    write("g/" + c.file, c.option == "platform" ? slurp(kRing8) : "1\n");
    const std::string grid = write("g/g.yaml", "command: " + c.command + "\noptions: {" + c.option + ": " + c.value + "}\n");
    const sweep::Plan plan(sweep::load_grid(grid));
    const Invocation inv = plan.invocation(0);
    if (c.option == "platform") {  // read once for every point, passed as its text
      ASSERT_TRUE(inv.platform.has_value());
      EXPECT_EQ(inv.platform->source, path);
    } else {
      EXPECT_NE(std::find(inv.args.begin(), inv.args.end(), path), inv.args.end()) << ::testing::PrintToString(inv.args);
    }
    const std::map<std::string, std::string> before = plan.inputs();
    const std::string name = c.option + ": " + c.value;
    ASSERT_TRUE(before.count(name)) << ::testing::PrintToString(before);
    EXPECT_NE(before.at(name), "missing");
    std::ofstream(dir_ / "g" / c.file, std::ios::app) << "# edited\n";
    EXPECT_NE(sweep::Plan(sweep::load_grid(grid)).inputs().at(name), before.at(name));
  }
  for (const sweep::InputOption& o : sweep::input_options()) EXPECT_TRUE(covered.count(std::string(o.name))) << o.name;
  // A built-in's name is no file.
  const std::string builtins = write("g/b.yaml", "command: run\noptions: {model: llama3-8b, failures: meta-llama3}\n");
  const sweep::Plan plan(sweep::load_grid(builtins));
  EXPECT_EQ(plan.inputs().count("failures: meta-llama3"), 0u);
  EXPECT_EQ(plan.inputs().count("model: llama3-8b"), 0u);
  const std::vector<std::string> args = plan.invocation(0).args;
  EXPECT_NE(std::find(args.begin(), args.end(), "meta-llama3"), args.end());
}

// Issue 42 F7's input: a grid of `run` with --failures and --kernel-times
// files beside it, and one of cluster files naming a platform and a model
// beside them, run from another directory; each file edited is noticed on
// resume, and --rerun-changed runs its points again.
TEST_F(Sweep, AChangedFailuresKernelTimesOrClusterFileIsNoticedOnResume) {
  fs::create_directories(dir_ / "g");
  fs::create_directories(dir_ / "elsewhere");
  fs::copy_file(test::data_dir() + "/failures/busy.yaml", dir_ / "g" / "busy.yaml");
  // llama3-8b's QKV GEMM at tp 8: 8192 tokens x 768 (6144 / 8) x 4096.
  write("g/k.csv", "kind,gpu,dtype,shape,time_us\ngemm,h100-sxm,bf16,8192x768x4096,5000\n");
  write("g/g.yaml", "command: run\n"
                    "options: {platform: hgx-h100, nodes: 4, model: llama3-8b, tp: 8, days: 10, trials: 20, failures: busy.yaml,"
                    " kernel-times: k.csv}\n"
                    "grid:\n  seed: [1, 2]\n");
  const fs::path out = dir_ / "out";
  const test::CliRun first = run_in(dir_ / "elsewhere", {"sweep", "../g/g.yaml", "--out", out.string()});
  ASSERT_EQ(first.status, 0) << first.err;
  EXPECT_NE(first.out.find("2 points: 2 run"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("0 errors"), std::string::npos) << first.out;
  const nlohmann::json meta = nlohmann::json::parse(slurp(out / "sweep.json"));
  EXPECT_TRUE(meta["inputs"].contains("failures: busy.yaml")) << meta["inputs"].dump();
  EXPECT_TRUE(meta["inputs"].contains("kernel-times: k.csv")) << meta["inputs"].dump();
  const auto rows = read_csv(out / "results.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("goodput.failure_model"), "busy");
  EXPECT_EQ(rows[0].at("kernels.measured"), "64");

  std::ofstream(dir_ / "g" / "busy.yaml", std::ios::app) << "planned_per_day: 1\n";
  expect_bad_input({"sweep", (dir_ / "g" / "g.yaml").string(), "--out", out.string()},
                   {"was run with other input files (failures: busy.yaml changed)"});
  std::ofstream(dir_ / "g" / "k.csv", std::ios::app) << "gemm,h100-sxm,bf16,8192x4096x4096,100\n";
  expect_bad_input({"sweep", (dir_ / "g" / "g.yaml").string(), "--out", out.string()},
                   {"(failures: busy.yaml changed; kernel-times: k.csv changed)"});
  const test::CliRun rerun = run_in(dir_ / "elsewhere", {"sweep", "../g/g.yaml", "--out", out.string(), "--rerun-changed"});
  ASSERT_EQ(rerun.status, 0) << rerun.err;
  EXPECT_NE(rerun.out.find("2 points: 2 run"), std::string::npos) << rerun.out;
  // The same as a fresh sweep (from the same directory: reports name the
  // files as found, ../g/k.csv).
  const test::CliRun fresh = run_in(dir_ / "elsewhere", {"sweep", "../g/g.yaml", "--out", (dir_ / "fresh").string()});
  ASSERT_EQ(fresh.status, 0) << fresh.err;
  EXPECT_EQ(slurp(out / "results.csv"), slurp(dir_ / "fresh" / "results.csv"));

  // Cluster files: found beside the grid; the files they name, beside them.
  fs::create_directories(dir_ / "g" / "clusters");
  write("g/clusters/p.yaml", slurp(test::source_dir() + "/presets/hgx-h100.yaml"));
  write("g/clusters/m.yaml", slurp(test::source_dir() + "/tests/fuzz/corpus/model_file/gpt-1.7b.yaml"));
  write("g/clusters/c.yaml", "platform: p.yaml\nnodes: 2\njobs:\n"
                             "  - {name: a, nodes: 1, llm: {model: m.yaml, tp: 8, iterations: 1}}\n"
                             "  - {name: b, nodes: 1, iterations: 2, collective: {op: all-reduce, bytes: 64MiB, compute_ms: 1}}\n");
  write("g/cg.yaml", "command: cluster\ngrid:\n  file: [clusters/c.yaml]\n  no-alone: [true, false]\n");
  const fs::path cout = dir_ / "cout";
  const test::CliRun c1 = run_in(dir_ / "elsewhere", {"sweep", "../g/cg.yaml", "--out", cout.string()});
  ASSERT_EQ(c1.status, 0) << c1.err;
  EXPECT_NE(c1.out.find("2 points: 2 run in"), std::string::npos) << c1.out;
  EXPECT_NE(c1.out.find("0 errors"), std::string::npos) << c1.out;
  const nlohmann::json cmeta = nlohmann::json::parse(slurp(cout / "sweep.json"));
  EXPECT_EQ(cmeta["inputs"].size(), 3u) << cmeta["inputs"].dump();
  for (const char* name : {"file: clusters/c.yaml", "file: clusters/c.yaml: p.yaml", "file: clusters/c.yaml: m.yaml"}) {
    EXPECT_TRUE(cmeta["inputs"].contains(name)) << name << " " << cmeta["inputs"].dump();
    EXPECT_NE(cmeta["inputs"].value(name, "missing"), "missing") << name;
  }
  const test::CliRun c2 = run_in(dir_, {"sweep", "g/cg.yaml", "--out", cout.string()});
  EXPECT_NE(c2.out.find("2 points: 0 run"), std::string::npos) << c2.out << c2.err;
  std::ofstream(dir_ / "g" / "clusters" / "m.yaml", std::ios::app) << "# edited\n";
  expect_bad_input({"sweep", (dir_ / "g" / "cg.yaml").string(), "--out", cout.string()},
                   {"(file: clusters/c.yaml: m.yaml changed)"});
  const test::CliRun c3 = run_in(dir_, {"sweep", "g/cg.yaml", "--out", cout.string(), "--rerun-changed"});
  ASSERT_EQ(c3.status, 0) << c3.err;
  EXPECT_NE(c3.out.find("2 points: 2 run"), std::string::npos) << c3.out;
}

TEST_F(Sweep, FailedPointsRunAgainWhenAskedAndAllFailedIsAnError) {
  const std::string grid = write("g.yaml", "command: collective\noptions: {platform: missing.yaml}\ngrid:\n  bytes: [1MiB, 2MiB]\n");
  const fs::path out = dir_ / "out";
  const test::CliRun r = run({"sweep", grid, "--out", out.string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("sweep: 2 points: 2 run"), std::string::npos) << r.out;
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_EQ(r.err_lines()[0], "acesim: error: sweep: every point failed; the first: point 0: " + (dir_ / "missing.yaml").string() +
                                  ": cannot open: No such file or directory");
  // The file made: its fingerprint changed ("missing" before).
  write("missing.yaml", slurp(kRing8));
  expect_bad_input({"sweep", grid, "--out", out.string()}, {"(platform: missing.yaml changed)"});
  const test::CliRun fixed = expect_ok({"sweep", grid, "--out", out.string(), "--rerun-changed"});
  EXPECT_NE(fixed.out.find("2 points: 2 run"), std::string::npos) << fixed.out;
  EXPECT_NE(fixed.out.find("0 errors"), std::string::npos) << fixed.out;

  // A point's own error, kept on resume unless --retry-errors.
  const std::string sizes = write("s.yaml", "command: collective\noptions: {platform: " + kRing8 + "}\ngrid:\n  bytes: [1MiB, 2PiB]\n");
  const fs::path s = dir_ / "s";
  EXPECT_NE(expect_ok({"sweep", sizes, "--out", s.string()}).out.find("2 run in"), std::string::npos);
  EXPECT_NE(expect_ok({"sweep", sizes, "--out", s.string()}).out.find("0 run in"), std::string::npos);
  const test::CliRun retried = expect_ok({"sweep", sizes, "--out", s.string(), "--retry-errors"});
  EXPECT_NE(retried.out.find("2 points: 1 run"), std::string::npos) << retried.out;
  EXPECT_NE(retried.out.find("1 done before, 1 errors"), std::string::npos) << retried.out;
}

TEST_F(Sweep, ShardsRunWithOtherFilesAreNotMerged) {
  write("p.yaml", slurp(kRing8));
  const std::string grid = write("g.yaml", "command: collective\noptions: {platform: p.yaml}\ngrid:\n  bytes: [1MiB, 2MiB]\n");
  expect_ok({"sweep", grid, "--out", (dir_ / "s0").string(), "--shard", "0/2"});
  write("p.yaml", "topology:\n  - {kind: ring, npus: 8, bandwidth_GBps: 200, latency_ns: 500}\n");
  expect_ok({"sweep", grid, "--out", (dir_ / "s1").string(), "--shard", "1/2"});
  expect_bad_input({"sweep", "merge", (dir_ / "s0").string(), (dir_ / "s1").string(), "--out", (dir_ / "m").string()},
                   {"sweep merge: " + (dir_ / "s1").string() + " was run with other input files than " + (dir_ / "s0").string() +
                    " (platform: p.yaml changed)"});
  expect_ok({"sweep", grid, "--out", (dir_ / "s0").string(), "--shard", "0/2", "--rerun-changed"});
  expect_ok({"sweep", "merge", (dir_ / "s0").string(), (dir_ / "s1").string(), "--out", (dir_ / "m").string()});
}

TEST_F(Sweep, ASweepJsonOfAnotherShapeIsRefusedByMergeAndPlot) {
  // Inputs of fuzz_sweep_resume's corpus: sweep.json, a NUL byte, results.jsonl.
  for (const std::string name : {"points_as_text", "grid_as_list"}) {
    SCOPED_TRACE(name);
    const std::string input = slurp(test::source_dir() + "/tests/fuzz/corpus/sweep_resume/" + name);
    const std::size_t nul = input.find('\0');
    ASSERT_NE(nul, std::string::npos);
    const fs::path d = dir_ / name;
    fs::create_directories(d);
    std::ofstream(d / "sweep.json", std::ios::binary) << input.substr(0, nul);
    std::ofstream(d / "results.jsonl", std::ios::binary) << input.substr(nul + 1);
    const std::string said = (d / "sweep.json").string() + ": not a sweep description (written by acesim sweep)";
    expect_bad_input({"sweep", "merge", d.string(), "--out", (dir_ / "m").string()}, {said});
    expect_bad_input({"sweep", "plot", d.string(), "--x", "bytes", "--y", "time_ns"}, {said});
  }
}

TEST_F(Sweep, NodesBesideTheNpusOfAnotherDimensionRun) {
  // hgx-h100's topology.0 is the board; topology.1 the nodes.
  const std::string grid = write("g.yaml", "command: collective\noptions: {platform: hgx-h100, bytes: 1MiB}\n"
                                           "grid:\n  nodes: [1, 2]\n  topology.0.npus: [4, 8]\n");
  const fs::path out = dir_ / "out";
  expect_ok({"sweep", grid, "--out", out.string()});
  std::vector<std::string> ranks;
  for (const auto& row : read_csv(out / "results.csv")) ranks.push_back(row.at("ranks"));
  EXPECT_EQ(ranks, (std::vector<std::string>{"4", "8", "8", "16"}));
}

TEST_F(Sweep, PlotDrawsAPngAndNamesMissingColumns) {
  const fs::path out = dir_ / "out";
  expect_ok({"sweep", ring_grid(), "--out", out.string()});
  expect_bad_input({"sweep", "plot", out.string(), "--x", "topology.0.bandwidth_GBps", "--y", "time_n"},
                   {"--y: 'time_n' is no axis or metric", "did you mean 'time_ns'"});
  expect_bad_input({"sweep", "plot", out.string(), "--x", "topology.0.bandwidth_GBps", "--y", "time_ns"},
                   {"several points at topology.0.bandwidth_GBps=25", "--where", "topology.0.latency_ns"});
  expect_bad_input({"sweep", "plot", out.string(), "--x", "topology.0.bandwidth_GBps", "--y", "op", "--hue",
                    "topology.0.latency_ns"},
                   {"--y: 'op' is not a number"});
  // --out: what is written is what is said, or a one-line refusal.
  const std::vector<std::string> plot{"sweep", "plot", out.string(), "--x", "topology.0.bandwidth_GBps", "--y", "time_ns", "--where",
                                      "topology.0.latency_ns=500", "--out"};
  auto with = [&](const std::string& o) {
    std::vector<std::string> args = plot;
    args.push_back(o);
    return args;
  };
  expect_bad_input(with(dir_.string()), {"--out: " + dir_.string() + " is a directory; give the PNG's file name (" +
                                         (dir_ / "plot.png").string() + ")"});
  expect_bad_input(with((dir_ / "lat500").string()), {"--out: '" + (dir_ / "lat500").string() + "' is not a .png file name"});
  expect_bad_input(with((dir_ / "lat500.pdf").string()), {"--out: '" + (dir_ / "lat500.pdf").string() + "' is not a .png file name"});
  expect_bad_input(with((dir_ / "no" / "such" / "lat500.png").string()),
                   {"--out: no folder " + (dir_ / "no" / "such").string() + " for " + (dir_ / "no" / "such" / "lat500.png").string()});
  EXPECT_FALSE(fs::exists(dir_ / "lat500.png"));
  EXPECT_FALSE(fs::exists(dir_ / "lat500.pdf"));
  if (std::system("/usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1") != 0) GTEST_SKIP() << "no python3-matplotlib";
  const test::CliRun r = expect_ok(
      {"sweep", "plot", out.string(), "--x", "topology.0.bandwidth_GBps", "--y", "busbw_GBps", "--hue", "topology.0.latency_ns"});
  EXPECT_EQ(r.out, "sweep plot: " + (out / "busbw_GBps-vs-topology_0_bandwidth_GBps.png").string() + "\n");
  EXPECT_GT(fs::file_size(out / "busbw_GBps-vs-topology_0_bandwidth_GBps.png"), 1000u);
  const nlohmann::json data = nlohmann::json::parse(slurp(out / "plot.json"));
  ASSERT_EQ(data["series"].size(), 2u);
  EXPECT_EQ(data["series"][0]["name"], "0");
  EXPECT_EQ(data["series"][0]["x"], (nlohmann::json{25.0, 50.0, 100.0}));
  const fs::path png = dir_ / "lat500.png";
  expect_ok({"sweep", "plot", out.string(), "--x", "topology.0.bandwidth_GBps", "--y", "time_ns", "--where",
             "topology.0.latency_ns=500", "--out", png.string()});
  EXPECT_TRUE(fs::exists(png));
}

}  // namespace
}  // namespace acesim::cli
