// The endpoint model from the command line: `--executor`, the endpoint
// columns and JSON fields of `acesim collective`, and `acesim characterize`.
// Runs the real binary; bad input must exit 2 with one "acesim: error:" line.
#include <gtest/gtest.h>

#include "cli_runner.h"
#include "test_data.h"

#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

namespace fs = std::filesystem;

using acesim::test::kNet;
using acesim::test::kSys;

// Lines of `text` that do not start with '#' (the table's rows).
std::vector<std::string> rows_of(const std::string& text) {
  std::vector<std::string> rows;
  std::istringstream ss(text);
  std::string l;
  while (std::getline(ss, l)) {
    if (!l.empty() && l[0] != '#') rows.push_back(l);
  }
  return rows;
}

// The whitespace-separated fields of a table row.
std::vector<std::string> fields(const std::string& row) {
  std::vector<std::string> f;
  std::istringstream ss(row);
  std::string w;
  while (ss >> w) f.push_back(w);
  return f;
}

class EndpointCli : public acesim::test::CliTest {
 protected:

  // `acesim collective --bytes <bytes> --json <extra...>`: the one result.
  nlohmann::json collective_json(const std::string& bytes, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"collective", "--bytes", bytes, "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const acesim::test::CliRun r = expect_ok(args);
    nlohmann::json j = parse_json(r.out);
    if (!j.contains("results") || j["results"].size() != 1) {
      ADD_FAILURE() << "expected one result:\n" << r.out;
      return nlohmann::json::object();
    }
    return j;
  }
};

// ------------------------------------------------------ acesim collective

TEST_F(EndpointCli, ExecutorFlagReachesTheJson) {
  // The default platform runs ace; --executor overrides it, in any case.
  const nlohmann::json def = collective_json("4MiB");
  EXPECT_EQ(def["executor"], "ace");
  EXPECT_EQ(def["results"][0]["executor"], "ace");
  for (const std::string e : {"sm", "ace", "ideal"}) {
    const nlohmann::json j = collective_json("4MiB", {"--executor", e});
    EXPECT_EQ(j["executor"], e);
    EXPECT_EQ(j["results"][0]["executor"], e);
  }
  EXPECT_EQ(collective_json("4MiB", {"--executor", "SM"})["executor"], "sm");
}

TEST_F(EndpointCli, HbmBytesPerNetworkByteByExecutor) {
  const nlohmann::json sm = collective_json("4MiB", {"--executor", "sm"})["results"][0];
  const nlohmann::json ace = collective_json("4MiB", {"--executor", "ace"})["results"][0];
  const nlohmann::json ideal = collective_json("4MiB", {"--executor", "ideal"})["results"][0];
  // sm all-reduce: half reduce-scatter steps (5), half all-gather steps (2).
  EXPECT_NEAR(sm["hbm_bytes_per_network_byte"].get<double>(), 3.5, 1e-6);
  // ace: 2S of HBM per NPU against 2(n-1)/n S on the links: n/(n-1) = 64/63.
  EXPECT_NEAR(ace["hbm_bytes_per_network_byte"].get<double>(), 64.0 / 63.0, 1e-9);
  EXPECT_NEAR(ace["hbm_bytes"].get<double>(), 2.0 * 4 * 1048576, 1e-3);
  EXPECT_DOUBLE_EQ(ideal["hbm_bytes_per_network_byte"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(ideal["hbm_bytes"].get<double>(), 0.0);
  // Only sm holds compute units.
  EXPECT_GT(sm["comm_unit_seconds"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(ace["comm_unit_seconds"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(ideal["comm_unit_seconds"].get<double>(), 0.0);
  // The executor does not change what goes on the links, and ace keeps up
  // with them here (as fast as ideal); sm is slower.
  for (const nlohmann::json* r : {&sm, &ace}) {
    EXPECT_DOUBLE_EQ((*r)["network_bytes"].get<double>(), ideal["network_bytes"].get<double>());
  }
  EXPECT_DOUBLE_EQ(ace["time_ns"].get<double>(), ideal["time_ns"].get<double>());
  EXPECT_GT(sm["time_ns"].get<double>(), ideal["time_ns"].get<double>());
}

TEST_F(EndpointCli, NetworkFieldsAreConsistent) {
  const nlohmann::json j = collective_json("4MiB", {"--executor", "sm"})["results"][0];
  for (const char* k : {"executor", "chunks", "hbm_bytes", "network_bytes", "network_bytes_per_dim", "network_GBps",
                        "hbm_bytes_per_network_byte", "comm_unit_seconds"}) {
    EXPECT_TRUE(j.contains(k)) << k;
  }
  EXPECT_EQ(j["chunks"], 16);
  const auto per_dim = j["network_bytes_per_dim"].get<std::vector<double>>();
  ASSERT_EQ(per_dim.size(), 3u);
  double sum = 0.0;
  for (double b : per_dim) sum += b;
  EXPECT_NEAR(sum, j["network_bytes"].get<double>(), 1e-6 * sum);
  // Hierarchical ring all-reduce of S on 4x4x4, per NPU sent:
  // 2*(3/4)*S on dim 0, 2*(3/4)*S/4 on dim 1, 2*(3/4)*S/16 on dim 2.
  const double s = 4.0 * 1048576;
  EXPECT_NEAR(per_dim[0], 1.5 * s, 1e-3);
  EXPECT_NEAR(per_dim[1], 1.5 * s / 4, 1e-3);
  EXPECT_NEAR(per_dim[2], 1.5 * s / 16, 1e-3);
  EXPECT_NEAR(j["network_GBps"].get<double>(), j["network_bytes"].get<double>() / j["time_ns"].get<double>(), 1e-9);
  EXPECT_NEAR(j["hbm_bytes_per_network_byte"].get<double>(),
              j["hbm_bytes"].get<double>() / j["network_bytes"].get<double>(), 1e-12);
}

TEST_F(EndpointCli, MaxChunkBytesRaisesTheChunkCountUnlessChunksIsGiven) {
  // 64 MiB in chunks of at most 1 MiB: 64 chunks (the preset asks for 16).
  EXPECT_EQ(collective_json("64MiB")["results"][0]["chunks"], 64);
  // --chunks is taken as given: max_chunk_bytes is off.
  EXPECT_EQ(collective_json("64MiB", {"--executor", "ideal", "--chunks", "4"})["results"][0]["chunks"], 4);
}

TEST_F(EndpointCli, TableHasEndpointColumns) {
  const acesim::test::CliRun sm = expect_ok({"collective", "--bytes", "4MiB", "--executor", "sm"});
  EXPECT_NE(sm.out.find("executor sm (8 of 80 units)"), std::string::npos) << sm.out;
  EXPECT_NE(sm.out.find("net(GB/s)"), std::string::npos) << sm.out;
  EXPECT_NE(sm.out.find("hbm/net"), std::string::npos) << sm.out;
  auto rows = rows_of(sm.out);
  ASSERT_EQ(rows.size(), 1u) << sm.out;
  auto f = fields(rows[0]);
  ASSERT_EQ(f.size(), 7u) << rows[0];
  EXPECT_EQ(f[0], "4194304");
  EXPECT_EQ(f[6], "3.50");
  const acesim::test::CliRun ace = expect_ok({"collective", "--bytes", "4MiB"});
  EXPECT_NE(ace.out.find("executor ace (4 MiB SRAM)"), std::string::npos) << ace.out;
  EXPECT_NE(ace.out.find("16 chunks of at most 1 MiB"), std::string::npos) << ace.out;
  rows = rows_of(ace.out);
  ASSERT_EQ(rows.size(), 1u) << ace.out;
  f = fields(rows[0]);
  ASSERT_EQ(f.size(), 7u) << rows[0];
  EXPECT_EQ(f[6], "1.02");
}

TEST_F(EndpointCli, AstraInputsDefaultToIdealAndTakeTheFlag) {
  const std::vector<std::string> pair = {"--network", kNet + "HGX-H100-validated.yml", "--system",
                                         kSys + "HGX-H100-validated.json"};
  std::vector<std::string> args = {"collective", "--bytes", "1MiB", "--json"};
  args.insert(args.end(), pair.begin(), pair.end());
  nlohmann::json j = parse_json(expect_ok(args).out);
  EXPECT_EQ(j["executor"], "ideal");
  EXPECT_DOUBLE_EQ(j["results"][0]["hbm_bytes"].get<double>(), 0.0);
  args.insert(args.end(), {"--executor", "sm"});
  j = parse_json(expect_ok(args).out);
  EXPECT_EQ(j["executor"], "sm");
  EXPECT_GT(j["results"][0]["hbm_bytes"].get<double>(), 0.0);
}

TEST_F(EndpointCli, UnknownExecutorIsOneLine) {
  expect_bad_input({"collective", "--executor", "bogus"}, {"--executor", "unknown executor 'bogus'", "ideal, sm, ace"});
  expect_bad_input({"collective", "--executor", "acee"}, {"--executor", "did you mean 'ace'"});
  expect_bad_input({"collective", "--executor", ""}, {"--executor"});
  // Each study runs the executors it compares: --executor is refused.
  expect_bad_input({"characterize", "units", "--executor", "ace"}, {"--executor: each study runs the executors it compares"});
  expect_bad_input({"characterize", "units", "--gemm", "64,64,64"}, {"--gemm applies to the overlap study, not to units"});
  expect_bad_input({"characterize", "traffic", "--op", "all-gather"}, {"--op: the traffic study runs every operation"});
}

TEST_F(EndpointCli, AceChunkLargerThanSramIsStreamed) {
  // --chunks turns max_chunk_bytes off: one chunk of 64 MiB streams through
  // the 4 MiB SRAM in 32 pieces of 2 MiB.
  expect_ok({"collective", "--executor", "ace", "--chunks", "1", "--bytes", "64MiB"});
  expect_ok({"collective", "--executor", "ace", "--chunks", "16", "--bytes", "64MiB"});
}

TEST_F(EndpointCli, BadEndpointKeysInAPlatformFile) {
  const std::string ring = "topology:\n  - {kind: ring, npus: 4, bandwidth_GBps: 50, latency_ns: 500}\n";
  const std::string units = write("units.yaml", ring + "npu:\n  compute_units: 8\ncommunication:\n  sm:\n    units: 9\n");
  expect_bad_input({"collective", "--platform", units, "--bytes", "1MiB"},
                   {units + ":7: communication.sm.units", "got 9"});
  // Fewer compute units than the default sm.units (8), not given in the file.
  const std::string few = write("few.yaml", ring + "npu:\n  compute_units: 4\n");
  expect_bad_input({"collective", "--platform", few, "--bytes", "1MiB"}, {few + ":4: npu.compute_units"});
  const std::string exec = write("exec.yaml", ring + "communication:\n  executor: nccl\n");
  expect_bad_input({"collective", "--platform", exec, "--bytes", "1MiB"}, {exec + ":4: communication.executor", "nccl"});
}

// ---------------------------------------------------- acesim characterize

TEST_F(EndpointCli, CharacterizeTables) {
  const std::vector<std::string> studies = {"units", "hbm", "overlap", "traffic"};
  const std::vector<std::size_t> rows = {10, 12, 9, 8};  // on the default platform
  for (std::size_t i = 0; i < studies.size(); ++i) {
    const acesim::test::CliRun r = expect_ok({"characterize", studies[i], "--bytes", "4MiB"});
    EXPECT_EQ(r.out.rfind("# acesim characterize " + studies[i] + ": all-reduce of 4 MiB", 0), 0u) << r.out;
    EXPECT_NE(r.out.find("# platform: 64 NPUs"), std::string::npos) << r.out;
    EXPECT_EQ(rows_of(r.out).size(), rows[i]) << r.out;
  }
}

TEST_F(EndpointCli, CharacterizeJson) {
  const std::vector<std::string> studies = {"units", "hbm", "overlap", "traffic"};
  for (const std::string& s : studies) {
    const nlohmann::json j = parse_json(expect_ok({"characterize", s, "--bytes", "4MiB", "--json"}).out);
    EXPECT_EQ(j["study"], s);
    ASSERT_TRUE(j.contains("rows") && j["rows"].is_array()) << j.dump();
    ASSERT_FALSE(j["rows"].empty());
    for (const auto& row : j["rows"]) {
      for (const char* k : {"config", "x", "time_ns", "algbw_GBps", "busbw_GBps", "network_GBps", "hbm_bytes",
                            "network_bytes", "hbm_bytes_per_network_byte"}) {
        EXPECT_TRUE(row.contains(k)) << s << ": " << k;
      }
      EXPECT_GT(row["time_ns"].get<double>(), 0.0) << row.dump();
    }
  }
}

TEST_F(EndpointCli, CharacterizeTrafficNumbers) {
  const nlohmann::json j = parse_json(expect_ok({"characterize", "traffic", "--bytes", "4MiB", "--json"}).out);
  std::map<std::string, double> ratio;
  for (const auto& row : j["rows"]) ratio[row["config"].get<std::string>()] = row["hbm_bytes_per_network_byte"].get<double>();
  ASSERT_EQ(ratio.size(), 8u) << j.dump();
  EXPECT_NEAR(ratio["all-reduce sm"], 3.5, 1e-6);
  EXPECT_NEAR(ratio["reduce-scatter sm"], 5.0, 1e-6);
  EXPECT_NEAR(ratio["all-gather sm"], 2.0, 1e-6);
  EXPECT_NEAR(ratio["all-reduce ace"], 64.0 / 63.0, 1e-9);
  for (const char* op : {"all-reduce", "reduce-scatter", "all-gather", "all-to-all"}) {
    EXPECT_LT(ratio[std::string(op) + " ace"], ratio[std::string(op) + " sm"]) << op;
  }
}

TEST_F(EndpointCli, CharacterizeOverlapAndUnits) {
  const nlohmann::json o = parse_json(expect_ok({"characterize", "overlap", "--bytes", "4MiB", "--json"}).out);
  ASSERT_GE(o["rows"].size(), 3u);
  EXPECT_EQ(o["rows"][0]["config"], "ideal");
  EXPECT_EQ(o["rows"][1]["config"], "ace");
  EXPECT_EQ(o["rows"][2]["config"], "sm units=1");
  // ideal communication costs the kernel nothing; sm takes compute units.
  EXPECT_DOUBLE_EQ(o["rows"][0]["kernel_slowdown"].get<double>(), 0.0);
  const double alone = o["rows"][0]["kernel_alone_ns"].get<double>();
  // The default 4096^3 bf16 GEMM is compute-bound: 2*4096^3 FLOP at 120 TFLOP/s.
  EXPECT_NEAR(alone, 2.0 * 4096.0 * 4096.0 * 4096.0 / 120e12 * 1e9, 1e-3);
  for (std::size_t i = 2; i < o["rows"].size(); ++i) {
    EXPECT_GT(o["rows"][i]["kernel_slowdown"].get<double>(), 0.0) << o["rows"][i].dump();
    EXPECT_GT(o["rows"][i]["kernel_overlapped_ns"].get<double>(), alone);
  }
  const nlohmann::json u = parse_json(expect_ok({"characterize", "units", "--bytes", "4MiB", "--json"}).out);
  ASSERT_EQ(u["rows"].size(), 10u);
  EXPECT_EQ(u["x"], "units");
  EXPECT_EQ(u["rows"][0]["config"], "sm units=1");
  EXPECT_DOUBLE_EQ(u["rows"][0]["x"].get<double>(), 1.0);
  EXPECT_EQ(u["rows"][7]["config"], "sm units=80");
  // More units never make an sm collective slower.
  for (std::size_t i = 1; i < 8; ++i) {
    EXPECT_LE(u["rows"][i]["time_ns"].get<double>(), u["rows"][i - 1]["time_ns"].get<double>()) << i;
  }
}

TEST_F(EndpointCli, CharacterizeBadInput) {
  expect_bad_input({"characterize", "bogus"}, {"bogus", "units"});
  expect_bad_input({"characterize"}, {"study"});
  expect_bad_input({"characterize", "overlap", "--gemm", "1,2"}, {"--gemm", "'1,2'"});
  expect_bad_input({"characterize", "overlap", "--gemm", "1,2,3,"}, {"--gemm"});
  expect_bad_input({"characterize", "overlap", "--gemm", "0,2,3"}, {"--gemm"});
  expect_bad_input({"characterize", "overlap", "--gemm", "a,b,c"}, {"--gemm"});
  expect_bad_input({"characterize", "units", "--op", "allreduse"}, {"--op", "all-reduce"});
  expect_bad_input({"characterize", "units", "--bytes", "0"}, {"--bytes"});
  expect_bad_input({"characterize", "units", "--bytes", "64M"}, {"--bytes", "ambiguous"});
  expect_bad_input({"characterize", "units", "--bytes", "2048TiB"}, {"--bytes", "1 PiB"});
}

TEST_F(EndpointCli, CharacterizeIsDeterministic) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"characterize", "overlap", "--bytes", "4MiB"},
        std::vector<std::string>{"characterize", "units", "--bytes", "4MiB", "--json"}}) {
    const acesim::test::CliRun a = expect_ok(args);
    const acesim::test::CliRun b = expect_ok(args);
    EXPECT_FALSE(a.out.empty());
    EXPECT_EQ(a.out, b.out);
  }
}

}  // namespace
