// Output files (config/output_file.h, report/csv.h): a file that cannot be
// written is an error naming it, whatever option or command writes it; the
// CSV files quote what needs quoting and write numbers that read back
// exactly.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "cli_runner.h"
#include "config/output_file.h"
#include "config/csv.h"
#include "test_data.h"

namespace acesim {
namespace {

namespace fs = std::filesystem;

const std::string kRing8 = test::data_dir() + "/platforms/ring8.yaml";
const std::string kFull = "/dev/full";  // every write: ENOSPC

TEST(Csv, QuotesWhatNeedsQuoting) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"conv1", "conv1"},           {"a,b", "\"a,b\""},          {"say \"hi\"", "\"say \"\"hi\"\"\""},
      {"two\nlines", "\"two\nlines\""}, {"cr\r", "\"cr\r\""}, {"", ""},
  };
  for (const auto& [text, field] : cases) EXPECT_EQ(csv_field(text), field) << text;
}

TEST(Csv, NumbersReadBackExactly) {
  EXPECT_EQ((CsvLine() << 1234567891LL << 1234567891.0 << 0.1 << 43700.203 << 1e20 << -2.5e-7 << 0).text(),
            "1234567891,1234567891,0.1,43700.203,1e+20,-2.5e-07,0\n");
  for (const double v : {1.0 / 3.0, 123456789.123456789, 6.02214076e23, 2.2250738585072014e-308}) {
    const std::string text = (CsvLine() << v).text();
    EXPECT_EQ(std::stod(text), v) << text;
  }
  EXPECT_EQ((CsvLine() << "a,b" << std::string("x") << 7 << "").text(), "\"a,b\",x,7,\n");
}

class OutputFiles : public test::CliTest {
 protected:
  void SetUp() override {
    test::CliTest::SetUp();
    if (!fs::exists(kFull)) GTEST_SKIP() << "no " << kFull;
  }
  // `name` in the scratch directory as a link to /dev/full: a file on a full disk.
  std::string full(const std::string& name) {
    const fs::path p = dir_ / name;
    fs::create_directories(p.parent_path());
    fs::create_symlink(kFull, p);
    return p.string();
  }
  // Exit status 1 and an error line naming `file` and the system's reason.
  void expect_write_error(const std::vector<std::string>& args, const std::string& file) {
    std::string shown;
    for (const std::string& a : args) shown += " " + a;
    SCOPED_TRACE("acesim" + shown);
    const test::CliRun r = run(args);
    EXPECT_EQ(r.status, 1) << r.err;
    // The last line (progress lines may come before it).
    const auto lines = r.err_lines();
    ASSERT_FALSE(lines.empty());
    EXPECT_EQ(lines.back().rfind("acesim: error: ", 0), 0u) << r.err;
    EXPECT_NE(lines.back().find(file + ": cannot write: No space left on device"), std::string::npos) << r.err;
  }
  // `args` under a file-size limit of 0 with SIGXFSZ ignored: every write
  // fails (EFBIG). A sweep writes through names of its own and never follows
  // a link planted in its directory, so no /dev/full stands in for its files.
  // Exit status 1 and a line naming a file that starts with `file`.
  void expect_write_error_without_room(const std::vector<std::string>& args, const std::string& file) {
    // The limit holds in the subshell only; its messages and status reach
    // the file through a pipe, which the limit does not cover.
    std::string cmd = "{ (trap '' XFSZ; ulimit -f 0; exec " + test::shell_quote(test::acesim_binary());
    for (const std::string& a : args) cmd += " " + test::shell_quote(a);
    cmd += ") 2>&1 >/dev/null; echo \"status $?\"; } | cat >" + test::shell_quote((dir_ / "err").string());
    SCOPED_TRACE(cmd);
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    const std::string err = test::slurp(dir_ / "err");
    EXPECT_NE(err.find("\nstatus 1\n"), std::string::npos) << err;
    EXPECT_EQ(err.rfind("acesim: error: " + file, 0), 0u) << err;
    EXPECT_NE(err.find(": cannot write: File too large"), std::string::npos) << err;
  }
  std::string workload() {
    // A layer named with a comma and quotes, and 1234567891 bytes to all-reduce.
    return write("w.txt", "DATA\n1\nconv,\"1\" -1 5 NONE 0 5 NONE 0 5 ALLREDUCE 1234567891 5\n");
  }
};

TEST_F(OutputFiles, RunTraceAndCsvOnAFullDisk) {
  const std::vector<std::string> run = {"run", "--platform", kRing8, "--model", "resnet50", "--executor", "sm", "--iterations", "1"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = run;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  expect_write_error(with({"--trace", kFull}), "--trace: /dev/full");
  for (const std::string name : {"layers.csv", "collectives.csv", "network.csv"}) {
    const std::string dir = (dir_ / name).string() + ".d";
    expect_write_error(with({"--csv", dir}), full(name + ".d/" + name));
  }
  // Two executors: one trace file, both side by side.
  const std::string both = full("t.json");
  expect_write_error({"run", "--platform", kRing8, "--model", "resnet50", "--iterations", "1", "--compare", "sm,ace", "--trace", both}, both);
}

TEST_F(OutputFiles, LlmAndChakraOutputsOnAFullDisk) {
  const std::vector<std::string> llm = {"run", "--platform", "hgx-h100", "--model", "llama3-8b", "--tp", "8", "--global-batch", "1"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = llm;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  expect_write_error(with({"--trace", kFull}), "--trace: /dev/full");
  expect_write_error(with({"--csv", (dir_ / "s").string()}), full("s/stages.csv"));
  expect_write_error(with({"--csv", (dir_ / "t").string(), "--trace", (dir_ / "t.json").string()}), full("t/timeline.csv"));
  full("c.3.et");
  expect_write_error(with({"--chakra-out", (dir_ / "c").string()}), "--chakra-out: " + (dir_ / "c.3.et").string());
  expect_write_error(with({"--chakra-out", (dir_ / "g").string()}), full("g.groups.json"));
  const std::string prefix = test::kData + "/chakra-et/all_reduce_8npus_1MB/all_reduce";
  const std::vector<std::string> chakra = {"run", "--platform", kRing8, "--chakra", prefix};
  std::vector<std::string> a = chakra;
  a.insert(a.end(), {"--csv", (dir_ / "n").string()});
  expect_write_error(a, full("n/nodes.csv"));
  a = chakra;
  a.insert(a.end(), {"--trace", kFull});
  expect_write_error(a, "--trace: /dev/full");
}

TEST_F(OutputFiles, SweepAndReproduceOnAFullDisk) {
  const std::string grid = write("g.yaml", "command: collective\noptions: {platform: " + kRing8 +
                                               ", executor: ideal}\ngrid:\n  bytes: [1MiB, 2MiB]\n");
  expect_write_error_without_room({"sweep", grid, "--out", (dir_ / "s").string()}, "--out: " + (dir_ / "s/sweep.json.").string());
  expect_write_error({"reproduce", "astra-sim-2.0", "--data", test::data_dir(), "--out", (dir_ / "a").string()},
                     full("a/results.csv"));
  expect_write_error({"reproduce", "ace-isca21", "--out", (dir_ / "r").string(), "--sizes", "16", "--workloads", "dlrm",
                      "--no-plots"},
                     full("r/report.md"));
}

TEST_F(OutputFiles, SweepPlotOnAFullDisk) {
  const std::string grid = write("g.yaml", "command: collective\noptions: {platform: " + kRing8 +
                                               ", executor: ideal}\ngrid:\n  bytes: [1MiB, 2MiB]\n");
  const std::string out = (dir_ / "s").string();
  expect_ok({"sweep", grid, "--out", out});
  expect_write_error_without_room({"sweep", "plot", out, "--x", "bytes", "--y", "time_ns"},
                                  "--out: " + (dir_ / "s/plot.json.").string());
  if (std::system("/usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1") != 0) GTEST_SKIP() << "no python3-matplotlib";
  // matplotlib's savefig does not report a failed write; the script writes the PNG itself.
  const std::string png = full("p.png");
  const test::CliRun r = run({"sweep", "plot", out, "--x", "bytes", "--y", "time_ns", "--out", png});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.err.rfind("acesim: error: sweep plot: " + png + ": not made: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
}

TEST_F(OutputFiles, StandardOutputOnAFullDisk) {
  const test::CliRun r = run({"collective", "--platform", kRing8, "--bytes", "1MiB", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string cmd = test::shell_quote(test::acesim_binary()) + " collective --platform " + test::shell_quote(kRing8) +
                          " --bytes 1MiB >/dev/full 2>" + test::shell_quote((dir_ / "err").string());
  const int raw = std::system(cmd.c_str());
  EXPECT_TRUE(WIFEXITED(raw) && WEXITSTATUS(raw) == 1) << raw;
  EXPECT_EQ(test::slurp(dir_ / "err"), "acesim: error: standard output: cannot write: No space left on device\n");
}

TEST_F(OutputFiles, AnUnusablePathIsAUsageError) {
  expect_bad_input({"run", "--platform", kRing8, "--iterations", "1", "--executor", "ideal", "--trace", (dir_ / "no/such/t.json").string()},
                   {"--trace: ", "no/such/t.json: its folder ", "no/such does not exist"});
  write("file", "");
  expect_bad_input({"run", "--platform", kRing8, "--iterations", "1", "--executor", "ideal", "--csv", (dir_ / "file").string()},
                   {"--csv: ", "/file is a file, not a directory to write into"});
  expect_bad_input({"sweep", write("g.yaml", "command: collective\noptions: {platform: " + kRing8 + "}\ngrid:\n  bytes: [1MiB]\n"),
                    "--out", (dir_ / "file").string()},
                   {"--out: ", "/file is a file, not a directory to write into"});
  // A directory under a file: refused before anything runs too.
  expect_bad_input({"run", "--platform", kRing8, "--iterations", "1", "--executor", "ideal", "--csv", (dir_ / "file" / "sub").string()},
                   {"--csv: ", "/file/sub: ", "/file is a file, not a folder"});
}

TEST_F(OutputFiles, CsvNamesAndNumbersReadBack) {
  const std::string csv = (dir_ / "csv").string();
  expect_ok({"run", "--platform", kRing8, "--workload", workload(), "--executor", "sm", "--iterations", "1", "--csv", csv});
  const auto layers = test::read_csv(dir_ / "csv" / "layers.csv");
  ASSERT_EQ(layers.size(), 1u);
  EXPECT_EQ(layers[0].at("layer"), "conv,\"1\"");
  EXPECT_EQ(layers[0].at("weight_grad_comm_bytes"), "1234567891");
  const auto collectives = test::read_csv(dir_ / "csv" / "collectives.csv");
  ASSERT_EQ(collectives.size(), 1u);
  EXPECT_EQ(collectives[0].at("layer"), "conv,\"1\"");
  EXPECT_EQ(collectives[0].at("bytes"), "1234567891");
  EXPECT_EQ(collectives[0].at("op"), "all-reduce");
}

}  // namespace
}  // namespace acesim
