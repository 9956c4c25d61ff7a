// Inputs a hostile or careless user gives (issue 42's findings), each as it
// was found: huge and endless files, names with control characters,
// contradictory degraded hardware, numbers CLI11 alone would misread,
// options that have no effect where they are given, and output paths that
// are not where the user asked. Each is refused with one line (exit 2) or
// written where asked.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "test_data.h"

namespace acesim {
namespace {

class HostileInput : public test::CliTest {
 protected:
  // A cluster file beside the repository's test platforms.
  std::string cluster(const std::string& jobs_and_more) {
    return write("c.yaml", "platform: " + test::kData + "/platforms/fat_tree_nodes.yaml\nnodes: 4\n" + jobs_and_more);
  }
  // A sparse file of `bytes` (nothing is written to disk).
  std::string huge(const std::string& name, off_t bytes) {
    const std::string p = (dir_ / name).string();
    std::ofstream(p).close();
    EXPECT_EQ(::truncate(p.c_str(), bytes), 0);
    return p;
  }
};

const std::string kRing8 = test::kData + "/platforms/ring8.yaml";
const std::vector<std::string> kLlm = {"run", "--platform", "hgx-h100", "--nodes", "4", "--model", "llama3-8b", "--tp", "8"};

std::vector<std::string> with(std::vector<std::string> base, std::initializer_list<std::string> more) {
  base.insert(base.end(), more);
  return base;
}

// F1: every input file is capped before it is read: a 1 GiB file is refused
// by its size, /dev/zero once 64 MiB have come.
TEST_F(HostileInput, HugeAndEndlessInputFilesAreRefusedBeforeTheyAreRead) {
  const std::string big = huge("big", 1LL << 30);
  const char* size_error = "1024.0 MiB, larger than an input file may be (64.0 MiB): not an input file";
  expect_bad_input({"cluster", big}, {big + ": " + size_error});
  expect_bad_input({"cluster", "/dev/zero"}, {"/dev/zero: more than 64.0 MiB of bytes: not an input file"});
  expect_bad_input(with(kLlm, {"--days", "1", "--failures", big}), {"--failures: " + big + ": " + size_error});
  expect_bad_input(with(kLlm, {"--days", "1", "--failures", "/dev/zero"}), {"--failures: /dev/zero: more than 64.0 MiB"});
  expect_bad_input({"run", "--platform", kRing8, "--workload", big}, {big + ": " + size_error});
  expect_bad_input({"run", "--platform", "hgx-h100", "--model", "llama3-8b", "--tp", "8", "--kernel-times", big}, {big + ": " + size_error});
  expect_bad_input({"run", "--platform", "hgx-h100", "--model", "llama3-8b", "--tp", "8", "--kernel-times", "/dev/zero"},
                   {"/dev/zero: more than 64.0 MiB"});
  // F13: a directory as the cluster file.
  expect_bad_input({"cluster", dir_.string()}, {dir_.string() + ": is a directory, expected a file"});
}

// F2: a collective loop is estimated before its graphs grow.
TEST_F(HostileInput, CollectiveLoopsAreEstimatedBeforeTheyAreBuilt) {
  const std::string wide = write("wide.yaml",
                                 "platform: hgx-h100\nnodes: 2048\njobs:\n  - nodes: 2048\n    iterations: 100000\n"
                                 "    collective: {bytes: 1MiB}\n");
  expect_bad_input({"cluster", wide}, {"wide.yaml:5: jobs[0].iterations: a loop of 100000 iterations on 16384 GPUs needs about ",
                                       "GiB (16384 ranks x (2048 B + 64 B x 200000 nodes + 4 B x"});
  const std::string narrow = write("narrow.yaml",
                                   "platform: hgx-h100\nnodes: 256\njobs:\n  - nodes: 256\n    iterations: 100000\n"
                                   "    collective: {bytes: 1MiB}\n");
  expect_bad_input({"cluster", narrow}, {"narrow.yaml:5: jobs[0].iterations: a loop of 100000 iterations on 2048 GPUs needs about 24.4 GiB"});
  // Time: 100,000 iterations of 1e9 ms of compute is past int64 picoseconds.
  expect_bad_input({"cluster", cluster("jobs:\n  - nodes: 1\n    iterations: 100000\n    collective: {bytes: 1KiB, compute_ms: 1e9}\n")},
                   {"c.yaml:5: jobs[0].iterations: this loop would simulate about 1e+11 s"});
}

// F3: --trace FILE writes FILE, with any number of executors, and a path
// that cannot be FILE is refused before the run.
TEST_F(HostileInput, TraceWritesThePathGivenWhateverTheExecutors) {
  const std::string trace = (dir_ / "t.json").string();
  expect_ok({"run", "--platform", kRing8, "--model", "resnet50", "--iterations", "1", "--compare", "sm,ace", "--trace", trace});
  EXPECT_FALSE(std::filesystem::exists(dir_ / "t.sm.json"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "t.ace.json"));
  const nlohmann::json t = parse_json(test::slurp(trace));
  std::map<std::string, int> processes;
  std::set<long long> pids;
  for (const nlohmann::json& e : t["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") processes[e["args"]["name"]] = e["pid"];
    if (e.contains("pid")) pids.insert(e["pid"].get<long long>());
  }
  // A symmetric run traces NPU 0, which stands for all: a process a run.
  ASSERT_EQ(processes.size(), 2u);
  EXPECT_EQ(processes.at("sm: NPU 0"), 0);
  EXPECT_EQ(processes.at("ace: NPU 0"), 1);
  EXPECT_EQ(pids.size(), 2u);
  // A directory, a folder that is a file, and an input of the same run.
  expect_bad_input({"run", "--platform", kRing8, "--trace", dir_.string()}, {"--trace: " + dir_.string() + " is a directory; give a file name"});
  const std::string file = write("f", "x");
  expect_bad_input({"run", "--platform", kRing8, "--trace", file + "/t.json"}, {file + "/t.json: " + file + " is a file, not a folder"});
  const std::string platform = write("p.yaml", test::slurp(kRing8));
  expect_bad_input({"run", "--platform", platform, "--trace", platform},
                   {"--trace: " + platform + " is the file --platform reads; give another file to write"});
  expect_bad_input({"cluster", test::kData + "/clusters/shared-uplink.yaml", "--csv", file}, {"--csv: " + file + " is a file, not a directory"});
}

// F4, F6: links.csv's header is RFC 4180 whatever the job names; a slowdown
// not known (--no-alone) is empty, as JSON's null.
TEST_F(HostileInput, ClusterCsvHeadersAndNulls) {
  const std::string c = cluster(
      "jobs:\n  - {name: 'a,\"1\"', placement: '0,2', iterations: 2, collective: {bytes: 1GB}}\n"
      "  - {name: b, placement: [1, 3], iterations: 2, collective: {bytes: 1GB}}\n");
  expect_ok({"cluster", c, "--csv", (dir_ / "csv").string(), "--no-alone"});
  const auto links = test::read_csv(dir_ / "csv" / "links.csv");
  ASSERT_FALSE(links.empty());
  EXPECT_EQ(links[0].at("bytes_a,\"1\""), "2000000000");  // two iterations of 1 GB
  const auto jobs = test::read_csv(dir_ / "csv" / "jobs.csv");
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].at("job"), "a,\"1\"");
  EXPECT_EQ(jobs[0].at("slowdown"), "");
  EXPECT_EQ(jobs[0].at("alone_iteration_time_ns"), "");
}

// F5: a NUL (or another control character) in a name read from a file.
TEST_F(HostileInput, ControlCharactersInNamesAreRefused) {
  expect_bad_input({"cluster", cluster("jobs:\n  - {name: \"a\\0b\", nodes: 1, collective: {bytes: 1GB}}\n")},
                   {"c.yaml:4: the value 'a\\x00b' holds a control character (U+0000) at byte 1"});
  expect_bad_input({"cluster", cluster("jobs:\n  - {name: \"a\\nb\", nodes: 1, collective: {bytes: 1GB}}\n")},
                   {"c.yaml:4: jobs[0].name: holds a control character (U+000A) at byte 1"});
  expect_bad_input({"cluster", cluster("jobs:\n  - {name: \"a\xe9\", nodes: 1, collective: {bytes: 1GB}}\n")},
                   {"c.yaml:4: the value 'a\\xE9' is not UTF-8 text (byte 0xE9 at byte 1)"});
  // A number cut short by a NUL is no number.
  expect_bad_input({"cluster", cluster("jobs:\n  - {nodes: \"1\\0junk\", collective: {bytes: 1GB}}\n")}, {"holds a control character (U+0000)"});
  // A layer table's layer name.
  const std::string w = write("w.txt", "DATA\n1\nconv\x01 -1 5 NONE 0 5 NONE 0 5 ALLREDUCE 1024 5\n");
  expect_bad_input({"run", "--platform", kRing8, "--workload", w}, {"w.txt:3", "layer name 'conv\\x01' holds a control character (U+0001)"});
}

// F8: contradictory degraded items.
TEST_F(HostileInput, ContradictoryDegradedItemsAreRefused) {
  const std::string jobs = "jobs:\n  - {nodes: 2, collective: {bytes: 1GB}}\n";
  expect_bad_input({"cluster", cluster(jobs + "degraded:\n  - {gpu: 1, compute: 2}\n  - {gpu: 1, compute: 3}\n")},
                   {"c.yaml:7: degraded[1].gpu: GPU 1's compute is degraded by degraded[0] already"});
  expect_bad_input({"cluster", cluster(jobs + "degraded:\n  - {link: 'dim0:leaf0->spine0', share: 0.5}\n  - {link: 'dim0:leaf0->spine0', share: 0.2}\n")},
                   {"degraded[1].link: link dim0:leaf0->spine0 is degraded by degraded[0] already"});
  expect_bad_input({"cluster", cluster(jobs + "degraded:\n  - {link: 'dim0:leaf0->spine0', share: 0.5}\n  - {link: 'dim0:spine0->leaf0', down: true}\n")},
                   {"degraded[1].link: link dim0:leaf0->spine0 is degraded by degraded[0] already"});
}

// F9, and the same for every whole-number option: CLI11 alone clamps past
// 2^63-1 and reads 010 as octal.
TEST_F(HostileInput, WholeNumbersAreDecimalAndInRange) {
  expect_bad_input(with(kLlm, {"--days", "1", "--seed", "18446744073709551616"}),
                   {"--seed: '18446744073709551616' is out of range (-9223372036854775808..9223372036854775807)"});
  expect_bad_input({"run", "--platform", kRing8, "--iterations", "0x10"}, {"--iterations: '0x10' is not a whole number"});
  expect_bad_input({"collective", "--platform", kRing8, "--bytes", "1MiB", "--chunks", "nan"}, {"--chunks"});
  // 010 is ten iterations, not eight.
  const nlohmann::json j = parse_json(expect_ok({"run", "--platform", kRing8, "--model", "resnet50", "--executor", "sm", "--iterations", "010", "--json"}).out);
  EXPECT_EQ(j["iterations"], 10);
}

// F10: the closed forms outside their range, and a run shorter than an
// iteration.
TEST_F(HostileInput, GoodputOutsideTheClosedFormsRange) {
  expect_bad_input(with(kLlm, {"--days", "1e-12"}), {"--days: 1e-12 days (8.64e-08 s) is shorter than one iteration ("});
  expect_bad_input(with(kLlm, {"--days", "1e-320"}), {"--days"});
  // A checkpoint every 10^9 iterations: longer than a day's run.
  const nlohmann::json j = parse_json(expect_ok(with(kLlm, {"--days", "1", "--checkpoint-every", "1000000000", "--trials", "10", "--json"})).out);
  EXPECT_TRUE(j["goodput"]["first_order_ettr"].is_null());
  EXPECT_TRUE(j["goodput"]["daly_ettr"].is_null());
  EXPECT_EQ(j["goodput"]["closed_forms_note"].get<std::string>().find("a checkpoint interval ("), 0u);
  const double mean = j["goodput"]["ettr"]["mean"];
  EXPECT_GT(mean, 0.0);
  EXPECT_LE(mean, 1.0);
  const std::string text = expect_ok(with(kLlm, {"--days", "1", "--checkpoint-every", "1000000000", "--trials", "10"})).out;
  EXPECT_NE(text.find("; closed forms n/a (a checkpoint interval ("), std::string::npos) << text;
}

// F14: options that would have no effect where they are given.
TEST_F(HostileInput, OptionsWithoutEffectAreRefused) {
  expect_bad_input({"run", "--platform", kRing8, "--trace-npus", "2"}, {"--trace-npus applies with --trace FILE"});
  expect_bad_input(with(kLlm, {"--trace", (dir_ / "t.json").string(), "--trace-npus", "2"}),
                   {"--trace-npus does not apply to LLM plans and SimAI files"});
  expect_bad_input({"run", "--platform", kRing8, "--compare", "sm,ace,sm"}, {"--compare: sm is given twice"});
  // F13: --chakra-out on a run that is not an LLM plan blamed --tp.
  expect_bad_input({"run", "--chakra-out", (dir_ / "c").string()}, {"--chakra-out applies to LLM plans"});
  expect_bad_input({"run", "--kineto", test::kData + "/kineto/a100x2_nccl2.17_allreduce.rank0.json.gz", "--platform", "hgx-a100",
                    "--kineto-comm", "measured", "--dp", "4"},
                   {"--dp has no effect with --kineto-comm measured"});
}

// Options a mode would silently ignore (found by running every option in
// every mode and comparing the output with the run without it).
TEST_F(HostileInput, OptionsEveryModeIgnoredAreRefusedOrReported) {
  const std::string kineto = test::kData + "/kineto/a100x2_nccl2.17_allreduce.rank0.json.gz";
  const std::vector<std::string> replay = {"run", "--kineto", kineto, "--platform", "hgx-a100", "--nodes", "1"};
  expect_bad_input(with(replay, {"--format", "simai"}), {"--format applies to --workload FILE, not to --kineto traces"});
  expect_bad_input(with(replay, {"--chakra-flops"}), {"--chakra-flops and --chakra-groups apply to --chakra traces, not to --kineto"});
  expect_bad_input(with(replay, {"--full"}), {"--full does not apply to --kineto"});
  for (const std::vector<std::string>& extra : std::vector<std::vector<std::string>>{
           {"--executor", "ace"}, {"--compare", "sm,ace"}, {"--backend", "analytical"}, {"--chunks", "4"}, {"--placement", "0"}}) {
    std::vector<std::string> a = with(replay, {"--kineto-comm", "measured"});
    a.insert(a.end(), extra.begin(), extra.end());
    expect_bad_input(a, {extra[0] + " has no effect with --kineto-comm measured"});
  }
  const std::string chakra = test::kData + "/chakra-et/all_reduce_8npus_1MB/all_reduce";
  expect_bad_input({"run", "--platform", kRing8, "--chakra", chakra, "--format", "simai"}, {"--format applies to --workload FILE, not to --chakra"});
  // Collectives.
  expect_bad_input({"collective", "--platform", "hgx-h100", "--bytes", "16MiB", "--op", "broadcast", "--algo", "tree"},
                   {"--algo: NCCL's model runs all-reduce, all-gather, reduce-scatter and all-to-all; broadcast keeps acesim's plans"});
  expect_bad_input({"collective", "--platform", "hgx-h100", "--bytes", "16MiB", "--chunks", "4"},
                   {"--chunks: NCCL's model runs all-reduce in its protocol's own chunks"});
  expect_bad_input({"collective", "--platform", kRing8, "--bytes", "1MiB", "--backend", "analytical", "--granularity", "step"},
                   {"--granularity applies to the fluid backend; this run's is analytical"});
  expect_bad_input({"collective", "--platform", kRing8, "--bytes", "1MiB", "--step-factor", "4"},
                   {"--step-factor applies to a size sweep"});
  // SimAI files fix their plan; one of pp 1 has no schedule.
  const std::string simai = test::kData + "/simai/microAllReduce.txt";
  expect_bad_input({"run", "--platform", kRing8, "--workload", simai, "--allow-oom"}, {"--allow-oom: a SimAI file has no memory model"});
  expect_bad_input({"run", "--platform", kRing8, "--workload", simai, "--schedule", "gpipe"}, {"--schedule: ", "has one pipeline stage (pp: 1)"});
  // An LLM plan's options that change nothing of it are reported.
  const test::CliRun zero = run({"run", "--model", "llama3-8b", "--platform", "hgx-h100", "--tp", "8", "--zero", "1", "--schedule", "gpipe",
                                 "--iterations", "1"});
  EXPECT_EQ(zero.status, 0) << zero.err;
  EXPECT_NE(zero.err.find("acesim: warning: --zero 1: with one data-parallel replica (dp 1) there is nothing to shard"), std::string::npos)
      << zero.err;
  EXPECT_NE(zero.err.find("acesim: warning: --schedule gpipe: with one pipeline stage (pp 1) no schedule applies"), std::string::npos)
      << zero.err;
  // sweep options before merge were dropped: the grid never ran.
  expect_bad_input({"sweep", write("g.yaml", "command: collective\ngrid:\n  bytes: [1MiB]\n"), "--out", (dir_ / "o").string(), "merge",
                    (dir_ / "o1").string(), "--out", (dir_ / "m").string()},
                   {"sweep merge: grid is the sweep's, not merge's; run the grid and the merge as two commands"});
  EXPECT_FALSE(std::filesystem::exists(dir_ / "o"));
  // --chunks under NCCL's model in a training run.
  const test::CliRun chunks = run({"run", "--model", "llama3-8b", "--platform", "hgx-h100", "--tp", "8", "--chunks", "4", "--iterations", "1"});
  EXPECT_EQ(chunks.status, 0) << chunks.err;
  EXPECT_NE(chunks.err.find("acesim: warning: --chunks: this platform runs all-reduce, all-gather, reduce-scatter and all-to-all as NCCL does"),
            std::string::npos)
      << chunks.err;
}

// F13: unclear errors.
TEST_F(HostileInput, ClearErrorsForOddFiles) {
  // A huge node count.
  expect_bad_input({"cluster", write("n.yaml", "platform: hgx-h100\nnodes: 99999999999999999999999\njobs: []\n")}, {"n.yaml:2: nodes"});
  // Deep nesting.
  std::string deep = "platform: hgx-h100\nnodes: 2\njobs: ";
  for (int i = 0; i < 2000; ++i) deep += "[";
  expect_bad_input({"cluster", write("d.yaml", deep + "\n")}, {"d.yaml:4: nested 500 levels deep, more than the YAML reader takes"});
}

}  // namespace
}  // namespace acesim
