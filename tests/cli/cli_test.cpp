// The acesim binary, run as a user would: bad input must give exit status 2
// and exactly one stderr line "acesim: error: ..." naming what is wrong;
// good runs print what they promise, identically every time.
#include <gtest/gtest.h>

#include "cli_runner.h"
#include "test_data.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

namespace fs = std::filesystem;

using acesim::test::kCustom;
using acesim::test::kData;
using acesim::test::kNet;
using acesim::test::kSys;

class Cli : public acesim::test::CliTest {
 protected:

};

// ------------------------------------------------------------ command line

TEST_F(Cli, HelpAndVersion) {
  acesim::test::CliRun r = run({"--help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("collective"), std::string::npos) << r.out;
  r = run({"collective", "--help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("--network"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--bytes"), std::string::npos) << r.out;
  r = run({"--version"});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("acesim"), std::string::npos) << r.out;
}

// Only the subcommands the command line names register their options
// (start-up cost); help still lists every one, and each named one works.
TEST_F(Cli, SubcommandsRegisteredOnlyWhenNamed) {
  acesim::test::CliRun r = run({"--help"});
  EXPECT_EQ(r.status, 0);
  for (const char* s : {"Time one collective", "The endpoint characterization", "Simulate training iterations",
                        "Reproduce a study", "Fit the NPU model", "List what can be named"}) {
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  }
  r = run({"run", "--help"});  // help for one subcommand: its own options
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("--workload"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("--bytes"), std::string::npos) << r.out;
  r = run({"--version", "collective"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "acesim 0.1.0\n");
  r = run({"list", "backends"});
  EXPECT_EQ(r.status, 0) << r.err;
  expect_bad_input({"run", "list"}, {"list"});
  expect_bad_input({"list", "run"}, {"unknown family 'run'"});
}

TEST_F(Cli, NoSubcommand) { expect_bad_input({}, {"subcommand"}); }

TEST_F(Cli, UnknownSubcommandOrFlag) {
  expect_bad_input({"simulate"}, {});
  expect_bad_input({"collective", "--bogus"}, {"--bogus"});
  expect_bad_input({"collective", "--byte", "1MiB"}, {"--byte"});
  expect_bad_input({"collective", "stray"}, {"stray"});
  expect_bad_input({"collective", "--bytes"}, {"--bytes"});  // value missing
  expect_bad_input({"collective", "--bytes", "1MiB", "--bytes", "2MiB"}, {"--bytes"});
}

TEST_F(Cli, ConflictingSizeFlags) {
  expect_bad_input({"collective", "--bytes", "1MiB", "--min-bytes", "1KiB"}, {"--bytes", "--min-bytes"});
  expect_bad_input({"collective", "--bytes", "1MiB", "--max-bytes", "1GiB"}, {"--bytes", "--max-bytes"});
  expect_bad_input({"collective", "--min-bytes", "2MiB", "--max-bytes", "1MiB"}, {"--min-bytes", "larger than", "--max-bytes"});
  expect_bad_input({"collective", "--min-bytes", "0"}, {"--min-bytes", "> 0"});
  expect_bad_input({"collective", "--step-factor", "1"}, {"--step-factor", ">= 2"});
  // Used to wrap round to a huge unsigned factor and run one size.
  expect_bad_input({"collective", "--step-factor", "-1"}, {"--step-factor"});
  expect_bad_input({"collective", "--step-factor", "two"}, {"--step-factor"});
}

TEST_F(Cli, BadSizes) {
  expect_bad_input({"collective", "--bytes", "12XB"}, {"--bytes", "'12XB'", "unknown unit 'XB'"});
  expect_bad_input({"collective", "--bytes", "64M"}, {"--bytes", "'64M'", "ambiguous", "MiB", "MB"});
  expect_bad_input({"collective", "--min-bytes", "1k"}, {"--min-bytes", "ambiguous"});
  expect_bad_input({"collective", "--max-bytes", "lots"}, {"--max-bytes", "'lots'"});
  expect_bad_input({"collective", "--bytes", "-1"}, {"--bytes", "not a size"});
  expect_bad_input({"collective", "--bytes", "1.5"}, {"--bytes", "whole number"});
  // An empty value is refused, not taken as "no --bytes" (a default sweep).
  expect_bad_input({"collective", "--bytes", ""}, {"--bytes"});
}

TEST_F(Cli, PairedAstraFlags) {
  expect_bad_input({"collective", "--network", kNet + "Ring_8npus.yml", "--bytes", "1MiB"}, {"--network", "--system"});
  expect_bad_input({"collective", "--system", kSys + "Ring_4chunks.json", "--bytes", "1MiB"}, {"--system", "--network"});
  expect_bad_input({"collective", "--platform", kData + "/platforms/ring8.yaml", "--network", kNet + "Ring_8npus.yml",
                    "--system", kSys + "Ring_4chunks.json"},
                   {"--platform", "--network"});
}

// An empty value must not read as "option not given" and fall back to a default.
TEST_F(Cli, EmptyValuesAreRefused) {
  expect_bad_input({"collective", "--platform", "", "--bytes", "1MiB"}, {"--platform"});
  expect_bad_input({"collective", "--network", "", "--system", "", "--bytes", "1MiB"}, {"--network"});
  expect_bad_input({"collective", "--backend", "", "--bytes", "1MiB"}, {"--backend"});
  expect_bad_input({"collective", "--granularity", "", "--bytes", "1MiB"}, {"--granularity"});
  expect_bad_input({"collective", "--op", "", "--bytes", "1MiB"}, {"--op"});
}

TEST_F(Cli, UnknownNames) {
  expect_bad_input({"collective", "--op", "allreduc", "--bytes", "1MiB"},
                   {"--op", "'allreduc'", "did you mean 'all-reduce'"});
  expect_bad_input({"collective", "--op", "bcast", "--bytes", "1MiB"},
                   {"--op", "'bcast'", "all-reduce, reduce-scatter, all-gather, all-to-all, broadcast, reduce, gather, scatter"});
  expect_bad_input({"collective", "--backend", "fluidd", "--bytes", "1MiB"}, {"--backend", "'fluidd'"});
  expect_bad_input({"collective", "--granularity", "chunk", "--bytes", "1MiB"}, {"--granularity", "'chunk'"});
}

TEST_F(Cli, ChunksAndDims) {
  // --chunks 0 used to be ignored silently; a huge value ran out of memory.
  expect_bad_input({"collective", "--chunks", "0", "--bytes", "1MiB"}, {"--chunks", "got 0"});
  expect_bad_input({"collective", "--chunks", "-2", "--bytes", "1MiB"}, {"--chunks"});
  expect_bad_input({"collective", "--chunks", "2000000000", "--bytes", "1MiB"}, {"--chunks", "1..1000000"});
  expect_bad_input({"collective", "--chunks", "abc", "--bytes", "1MiB"}, {"--chunks"});
  expect_bad_input({"collective", "--dims", "3", "--bytes", "1MiB"}, {"--dims", "'3'", "0..2"});
  expect_bad_input({"collective", "--dims", "0,x", "--bytes", "1MiB"}, {"--dims", "'x'"});
  expect_bad_input({"collective", "--dims", "0,,1", "--bytes", "1MiB"}, {"--dims"});
  expect_bad_input({"collective", "--dims", "0,", "--bytes", "1MiB"}, {"--dims"});
  expect_bad_input({"collective", "--dims", "", "--bytes", "1MiB"}, {"--dims"});
  expect_bad_input({"collective", "--dims", "1,1", "--bytes", "1MiB"}, {"--dims", "twice"});
}

// --------------------------------------------------------- bad input files

TEST_F(Cli, MissingAndUnreadableFiles) {
  const std::string missing = kData + "/platforms/does_not_exist.yaml";
  expect_bad_input({"collective", "--platform", missing}, {missing, "cannot open"});
  expect_bad_input({"collective", "--platform", dir_.string()}, {dir_.string(), "is a directory"});
  expect_bad_input({"collective", "--network", kNet + "nope.yml", "--system", kSys + "Ring_4chunks.json"},
                   {kNet + "nope.yml", "cannot open"});
  expect_bad_input({"collective", "--network", kNet + "Ring_8npus.yml", "--system", kSys + "nope.json"},
                   {kSys + "nope.json", "cannot open"});
  expect_bad_input({"collective", "--network", kNet + "Ring_8npus.yml", "--system", dir_.string()},
                   {dir_.string(), "is a directory"});
  // An endless file used to be read until memory ran out.
  expect_bad_input({"collective", "--platform", "/dev/zero"}, {"/dev/zero: more than 64.0 MiB of bytes: not an input file"});
}

TEST_F(Cli, EmptyAndWrongShapeFiles) {
  const std::string empty = write("empty.yaml", "");
  expect_bad_input({"collective", "--platform", empty}, {empty, "file is empty"});
  const std::string list = write("list.yaml", "- kind: ring\n- npus: 8\n");
  expect_bad_input({"collective", "--platform", list}, {list + ":1:", "expected a map"});
  const std::string empty_json = write("empty.json", "");
  expect_bad_input({"collective", "--network", kNet + "Ring_8npus.yml", "--system", empty_json},
                   {empty_json + ":1:", "malformed JSON"});
  const std::string array_json = write("array.json", "[]\n");
  expect_bad_input({"collective", "--network", kNet + "Ring_8npus.yml", "--system", array_json},
                   {array_json + ":1:", "expected a JSON object"});
}

TEST_F(Cli, MalformedFiles) {
  const std::string yaml = write("bad.yaml", "topology:\n  - {kind: ring, npus: 8\n");
  expect_bad_input({"collective", "--platform", yaml}, {yaml + ":", "malformed YAML"});
  const std::string json = write("trailing.json", "{\n  \"endpoint-delay\": 0,\n  \"preferred-dataset-splits\": 1,\n}\n");
  expect_bad_input({"collective", "--network", kNet + "Ring_8npus.yml", "--system", json},
                   {json + ":4:", "malformed JSON"});
  const std::string huge = write("huge.json", "{\n  \"endpoint-delay\": 1e400\n}\n");
  expect_bad_input({"collective", "--network", kNet + "Ring_8npus.yml", "--system", huge},
                   {huge + ":2:", "malformed JSON"});
}

TEST_F(Cli, UnknownKeysSuggest) {
  const std::string p = write("typo.yaml",
                              "topology:\n"
                              "  - kind: ring\n"
                              "    npus: 8\n"
                              "    bandwith_GBps: 50\n"
                              "    latency_ns: 500\n");
  expect_bad_input({"collective", "--platform", p},
                   {p + ":4: topology[0].bandwith_GBps: unknown key", "did you mean 'bandwidth_GBps'"});
  const std::string s = write("typo.json", "{\n  \"endpoint-delay\": 1,\n  \"scheduling-polcy\": \"LIFO\"\n}\n");
  expect_bad_input({"collective", "--network", kNet + "Ring_8npus.yml", "--system", s},
                   {s + ":3: scheduling-polcy: unknown key", "did you mean 'scheduling-policy'"});
}

TEST_F(Cli, UnknownAlgorithm) {
  const std::string p = write("alg.yaml",
                              "topology:\n"
                              "  - {kind: ring, npus: 8, bandwidth_GBps: 50, latency_ns: 500}\n"
                              "collectives:\n"
                              "  all-reduce:\n"
                              "    algorithm: rign\n");
  expect_bad_input({"collective", "--platform", p},
                   {p + ":5: collectives.all-reduce.algorithm: unknown algorithm 'rign'", "did you mean 'ring'"});
  const std::string s = write("alg.json", "{\"all-to-all-implementation\": [\"drect\"]}\n");
  expect_bad_input({"collective", "--network", kNet + "Ring_8npus.yml", "--system", s},
                   {s + ":1: all-to-all-implementation: unknown implementation 'drect'", "did you mean 'direct'"});
}

TEST_F(Cli, NonPositiveNpusAndBandwidth) {
  const std::string p0 = write("npus0.yaml", "topology:\n  - {kind: ring, npus: 0, bandwidth_GBps: 50, latency_ns: 5}\n");
  expect_bad_input({"collective", "--platform", p0}, {p0 + ":2: topology[0].npus:", "got 0"});
  const std::string pneg = write("bwneg.yaml", "topology:\n  - kind: ring\n    npus: 8\n    bandwidth_GBps: -5\n    latency_ns: 5\n");
  expect_bad_input({"collective", "--platform", pneg}, {pneg + ":4: topology[0].bandwidth_GBps:", "must be in 1e-6..1e9 GB/s"});
  const std::string n0 = write("n0.yml", "topology: [ Ring ]\nnpus_count: [ 0 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n");
  expect_bad_input({"collective", "--network", n0, "--system", kSys + "Ring_4chunks.json"}, {n0 + ":2: npus_count[0]:", "got 0"});
  const std::string b0 = write("b0.yml", "topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 0 ]\nlatency: [ 500 ]\n");
  expect_bad_input({"collective", "--network", b0, "--system", kSys + "Ring_4chunks.json"}, {b0 + ":3: bandwidth[0]:", "got 0"});
  const std::string lneg = write("lneg.yml", "topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50 ]\nlatency: [ -1 ]\n");
  expect_bad_input({"collective", "--network", lneg, "--system", kSys + "Ring_4chunks.json"}, {lneg + ":4: latency[0]:", ">= 0"});
  // Used to overflow the picosecond conversion and print a result.
  const std::string lhuge = write("lhuge.yml", "topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50 ]\nlatency: [ 1e300 ]\n");
  expect_bad_input({"collective", "--network", lhuge, "--system", kSys + "Ring_4chunks.json"}, {lhuge + ":4: latency[0]:"});
}

TEST_F(Cli, TbdPlaceholdersInAstraExample) {
  expect_bad_input({"collective", "--network", kNet + "dgx_v100_8gpu.yml", "--system", kSys + "dgx_v100_8gpu.json"},
                   {kNet + "dgx_v100_8gpu.yml:11: bandwidth[0]: expected a number, got 'tbd'"});
}

TEST_F(Cli, NetworkAndSystemDimensionsDisagree) {
  expect_bad_input({"collective", "--network", kNet + "tpu_v3_32_2dtorus.yml", "--system", kSys + "tpu_v3_8.json"},
                   {kSys + "tpu_v3_8.json:", "-implementation: 1 entry, but", "tpu_v3_32_2dtorus.yml has 2 dimensions"});
  expect_bad_input({"collective", "--network", kNet + "Ring_8npus.yml", "--system", kSys + "dgx_v100_8gpu.json"},
                   {kSys + "dgx_v100_8gpu.json:", "-implementation: 3 entries, but", "Ring_8npus.yml has 1 dimension"});
  const std::string s = write("long.json", "{\"all-reduce-implementation\": [\"oneRing\", \"oneRing\"]}\n");
  expect_bad_input({"collective", "--network", kNet + "Ring_8npus.yml", "--system", s},
                   {s + ":1: all-reduce-implementation: 2 entries"});
  const std::string net = write("n.yml", "topology: [ Ring, Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50, 50 ]\nlatency: [ 5, 5 ]\n");
  expect_bad_input({"collective", "--network", net, "--system", kSys + "Ring_4chunks.json"},
                   {net + ":2: npus_count: 1 entry, but topology lists 2 dimensions"});
}

TEST_F(Cli, WarningsDoNotJoinAnErrorLine) {
  // hgx_h100_16gpu.json has keys acesim warns about; a bad flag must still
  // print its error alone.
  expect_bad_input({"collective", "--network", kNet + "hgx_h100_16gpu.yml", "--system", kSys + "hgx_h100_16gpu.json",
                    "--op", "nope"},
                   {"--op"});
  expect_bad_input({"collective", "--network", kNet + "hgx_h100_16gpu.yml", "--system", kSys + "hgx_h100_16gpu.json",
                    "--dims", "0,0", "--bytes", "1MiB"},
                   {"--dims"});
}

// ------------------------------------------------------------- good runs

TEST_F(Cli, AstraPairJson) {
  const acesim::test::CliRun r = expect_ok({"collective", "--network", kNet + "Ring_8npus.yml", "--system", kSys + "Ring_4chunks.json",
                           "--bytes", "1MiB", "--json"});
  const nlohmann::json j = parse_json(r.out);
  ASSERT_TRUE(j.is_object()) << r.out;
  ASSERT_TRUE(j.contains("results") && j["results"].is_array() && j["results"].size() == 1) << r.out;
  const nlohmann::json& res = j["results"][0];
  for (const char* k : {"op", "bytes", "time_ns", "algbw_GBps", "busbw_GBps"}) {
    EXPECT_TRUE(res.contains(k)) << "missing " << k << " in " << res.dump();
  }
  EXPECT_EQ(res["op"], "all-reduce");
  EXPECT_EQ(res["bytes"].get<std::uint64_t>(), 1048576u);
  const double t = res["time_ns"].get<double>();
  const double algbw = res["algbw_GBps"].get<double>();
  const double busbw = res["busbw_GBps"].get<double>();
  EXPECT_GT(t, 0.0);
  EXPECT_NEAR(algbw, 1048576.0 / t, 1e-9 * algbw);  // bytes per ns = GB/s
  EXPECT_NEAR(busbw, algbw * 2.0 * 7.0 / 8.0, 1e-9 * busbw);  // nccl-tests all-reduce factor 2(n-1)/n
  EXPECT_EQ(j["backend"], "fluid");
}

TEST_F(Cli, AstraPairWithIgnoredKeysWarnsOnStderr) {
  const acesim::test::CliRun r = run({"collective", "--network", kNet + "hgx_h100_16gpu.yml", "--system", kSys + "hgx_h100_16gpu.json",
                     "--bytes", "1MiB"});
  EXPECT_EQ(r.status, 0) << r.err;
  const auto lines = r.err_lines();
  EXPECT_EQ(lines.size(), 3u) << r.err;
  for (const std::string& l : lines) EXPECT_EQ(l.rfind("acesim: warning: ", 0), 0u) << l;
  EXPECT_NE(r.out.find("1048576"), std::string::npos) << r.out;
}

TEST_F(Cli, NativePlatformAndDefaultTable) {
  acesim::test::CliRun r = expect_ok({"collective", "--platform", kData + "/platforms/mixed_3d.yaml", "--bytes", "1MiB"});
  EXPECT_NE(r.out.find("# acesim collective: all-reduce"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1048576"), std::string::npos) << r.out;
  r = expect_ok({"collective", "--bytes", "64MiB", "--op", "all-gather"});
  EXPECT_NE(r.out.find("all-gather"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("67108864"), std::string::npos) << r.out;
}

TEST_F(Cli, SizeSweep) {
  const acesim::test::CliRun r = expect_ok({"collective", "--platform", kData + "/platforms/ring8.yaml", "--min-bytes", "1KiB",
                           "--max-bytes", "16KiB", "--step-factor", "4", "--json"});
  const nlohmann::json j = parse_json(r.out);
  ASSERT_TRUE(j.contains("results")) << r.out;
  ASSERT_EQ(j["results"].size(), 3u) << r.out;
  EXPECT_EQ(j["results"][0]["bytes"].get<std::uint64_t>(), 1024u);
  EXPECT_EQ(j["results"][1]["bytes"].get<std::uint64_t>(), 4096u);
  EXPECT_EQ(j["results"][2]["bytes"].get<std::uint64_t>(), 16384u);
  // Decimal and binary units are not confused on the command line.
  const acesim::test::CliRun d = expect_ok({"collective", "--platform", kData + "/platforms/ring8.yaml", "--bytes", "4.1MB", "--json"});
  EXPECT_EQ(parse_json(d.out)["results"][0]["bytes"].get<std::uint64_t>(), 4'100'000u);
}

TEST_F(Cli, OutputIsDeterministic) {
  const std::vector<std::string> json_args = {"collective", "--network", kNet + "hgx_h100_16gpu.yml", "--system",
                                              kSys + "hgx_h100_16gpu.json", "--min-bytes", "1KiB", "--max-bytes",
                                              "4MiB", "--step-factor", "8", "--json"};
  const acesim::test::CliRun a = run(json_args);
  const acesim::test::CliRun b = run(json_args);
  EXPECT_EQ(a.status, 0);
  EXPECT_EQ(a.out, b.out);
  EXPECT_EQ(a.err, b.err);
  const std::vector<std::string> table_args = {"collective", "--op", "all-to-all", "--min-bytes", "1MiB",
                                               "--max-bytes", "4MiB"};
  const acesim::test::CliRun c = expect_ok(table_args);
  const acesim::test::CliRun d = expect_ok(table_args);
  EXPECT_FALSE(c.out.empty());
  EXPECT_EQ(c.out, d.out);
}

// ASTRA-sim cross-check: on Ring_8npus.yml (8 NPUs, 50 GB/s read as ASTRA-sim
// reads it, 50 x 2^30 bytes/s, 500 ns per link)
// with one chunk and no endpoint delay, a ring all-reduce of S bytes takes
// 2(n-1)/n * S/B + 2(n-1) * latency, as ASTRA-sim's congestion-unaware
// analytical backend computes it.
TEST_F(Cli, AstraRingAllReduceClosedForm) {
  const double n = 8, bw_bytes_per_ns = 50.0 * 1073741824.0 / 1e9, lat_ns = 500.0;
  for (const std::string backend : {"fluid", "analytical"}) {
    for (const std::uint64_t s : {std::uint64_t{1000}, std::uint64_t{1} << 20, std::uint64_t{64} << 20,
                                  std::uint64_t{1} << 30}) {
      SCOPED_TRACE(backend + " " + std::to_string(s));
      const acesim::test::CliRun r = expect_ok({"collective", "--network", kNet + "Ring_8npus.yml", "--system",
                               kCustom + "ring_1chunk_nodelay.json", "--backend", backend, "--bytes",
                               std::to_string(s), "--json"});
      const nlohmann::json j = parse_json(r.out);
      ASSERT_TRUE(j.contains("results")) << r.out;
      const double t = j["results"][0]["time_ns"].get<double>();
      const double expected =
          2.0 * (n - 1) / n * static_cast<double>(s) / bw_bytes_per_ns + 2.0 * (n - 1) * lat_ns;
      EXPECT_NEAR(t, expected, 0.01 * expected);
      EXPECT_EQ(j["results"][0]["ranks"].get<long long>(), 8);
    }
  }
}

}  // namespace
