// `acesim run` end to end: a scenario checked field by field, outputs, and bad input.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "test_data.h"

namespace acesim {
namespace {

using test::kCustom;
using test::kData;
using test::kNet;

const std::string kWl = kData + "/astra-sim-1.0/workload/";

class RunCli : public test::CliTest {};

TEST_F(RunCli, AstraMicroAllReduceFieldByField) {
  // One layer: 5 ns of compute per pass (cycles of 1 ns), a 1 MiB all-reduce
  // of weight gradients, 5 ns update. 8-NPU ring at 50 GB/s as ASTRA-sim
  // reads it (50 x 2^30 bytes/s), 500 ns links, one chunk, no endpoint
  // delay: the all-reduce takes 2*7/8 * 1048576 / 53.6870912 + 14 * 500
  // = 41179.688 ns. Iteration 0: fwd [0,5], wg [5,10], all-reduce
  // [10, 41189.688], update -> 41194.688: iteration 1 repeats it; the run
  // ends at 82389.376.
  const auto r = expect_ok({"run", "--workload", kWl + "microAllReduce.txt", "--network", kNet + "Ring_8npus.yml",
                            "--system", kCustom + "ring_1chunk_nodelay.json", "--json"});
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["executor"], "ideal");
  EXPECT_EQ(j["npus"], 8);
  EXPECT_EQ(j["iterations"], 2);
  EXPECT_NEAR(j["first_iteration_ns"].get<double>(), 41194.688, 1e-3);
  EXPECT_NEAR(j["iteration_time_ns"].get<double>(), 41194.688, 1e-3);
  EXPECT_NEAR(j["total_time_ns"].get<double>(), 82389.376, 1e-3);
  EXPECT_NEAR(j["compute_time_ns"].get<double>(), 10.0, 1e-6);
  EXPECT_NEAR(j["exposed_comm_ns"].get<double>(), 41184.688, 1e-3);
  EXPECT_NEAR(j["comm_time_ns"].get<double>(), 41179.688, 1e-3);
  EXPECT_EQ(j["overlap_ns"].get<double>(), 0.0);
  ASSERT_EQ(j["layers"].size(), 1u);
  EXPECT_EQ(j["layers"][0]["name"], "conv1");
  EXPECT_NEAR(j["layers"][0]["forward_compute_ns"].get<double>(), 5.0, 1e-9);
  EXPECT_EQ(j["layers"][0]["weight_grad_comm"]["op"], "all-reduce");
  EXPECT_EQ(j["layers"][0]["weight_grad_comm"]["bytes"], 1048576.0);
  EXPECT_NEAR(j["layers"][0]["weight_grad_comm"]["time_ns"].get<double>(), 41179.688, 1e-3);
  EXPECT_NEAR(j["layers"][0]["exposed_comm_ns"].get<double>(), 41184.688, 1e-3);
  // Network: 2*7/8 MiB sent per NPU per iteration on dimension 0.
  EXPECT_NEAR(j["network_bytes_per_dim"][0].get<double>(), 2 * 2 * 7.0 / 8 * 1048576, 1e-3);
  EXPECT_EQ(j["hbm_bytes"]["communication"], 0.0);
}

TEST_F(RunCli, DefaultRunComparesSmAndAce) {
  const auto r = expect_ok({"run", "--iterations", "1"});
  EXPECT_NE(r.out.find("ResNet-50"), std::string::npos);
  EXPECT_NE(r.out.find("sm"), std::string::npos);
  EXPECT_NE(r.out.find("ace"), std::string::npos);
  EXPECT_NE(r.out.find("iteration time (us)"), std::string::npos);
  EXPECT_NE(r.out.find("HBM bytes per network byte"), std::string::npos);
  EXPECT_NE(r.out.find("res5c_branch2c"), std::string::npos);
}

TEST_F(RunCli, CsvAndTraceFiles) {
  const std::string csv = (dir_ / "csv").string();
  const std::string trace = (dir_ / "trace.json").string();
  expect_ok({"run", "--workload", kWl + "DLRM_HybridParallel.txt", "--network", kNet + "Ring_8npus.yml", "--system",
             kCustom + "ring_1chunk_nodelay.json", "--csv", csv, "--trace", trace, "--trace-npus", "2"});
  const std::string layers = test::slurp(dir_ / "csv" / "layers.csv");
  EXPECT_EQ(layers.rfind("layer,forward_compute_ns,", 0), 0u);
  EXPECT_NE(layers.find("\nEmbedding,"), std::string::npos);
  const std::string coll = test::slurp(dir_ / "csv" / "collectives.csv");
  EXPECT_NE(coll.find("Embedding,forward,all-to-all,98304"), std::string::npos) << coll;
  const auto t = nlohmann::json::parse(test::slurp(trace));
  int compute = 0, begins = 0, ends = 0;
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] == "X" && e["cat"] == "compute") ++compute;
    if (e["ph"] == "b") ++begins;
    if (e["ph"] == "e") ++ends;
    if (e.contains("pid")) {
      EXPECT_LT(e["pid"].get<int>(), 2);
    }
  }
  EXPECT_GT(compute, 0);
  EXPECT_GT(begins, 0);
  EXPECT_EQ(begins, ends);
}

TEST_F(RunCli, SameInputSameOutput) {
  const std::vector<std::string> args = {"run", "--model", "resnet50", "--executor", "sm", "--iterations", "1", "--json"};
  EXPECT_EQ(expect_ok(args).out, expect_ok(args).out);
}

TEST_F(RunCli, BadInput) {
  expect_bad_input({"run", "--model", "resnet5"}, {"unknown model 'resnet5'", "did you mean 'resnet50'"});
  expect_bad_input({"run", "--workload", "/nonexistent.txt"}, {"/nonexistent.txt", "cannot open"});
  const std::string bad = write("bad.txt", "DATA\n1\nl0 -1 5 NONE 0 5 NONE 0 5 ALLREDUCE 12x 5\n");
  expect_bad_input({"run", "--workload", bad}, {bad + ":3:37:", "weight-gradient communication size", "12x"});
  expect_bad_input({"run", "--model", "resnet50", "--workload", bad}, {"cannot be combined"});
  expect_bad_input({"run", "--iterations", "0"}, {"--iterations", "1..10000"});
  expect_bad_input({"run", "--compare", "sm,acee"}, {"--compare", "did you mean 'ace'"});
  expect_bad_input({"run", "--precision", "fp12"}, {"--precision", "fp12"});
  const std::string p = write("p.yaml",
                              "topology:\n  - {kind: ring, npus: 4, bandwidth_GBps: 100, latency_ns: 100}\n"
                              "workload:\n  model: resnet50\n  data_dims: [1]\n");
  expect_bad_input({"run", "--platform", p}, {p + ":5: workload.data_dims", "not a dimension"});
}

}  // namespace
}  // namespace acesim

namespace acesim {
namespace {

class ScaleCli : public test::CliTest {};

TEST_F(ScaleCli, SymmetricByDefaultFullOnRequestSameAnswer) {
  const auto sym = expect_ok({"run", "--model", "resnet50", "--executor", "sm", "--iterations", "1", "--json"});
  const auto full = expect_ok({"run", "--model", "resnet50", "--executor", "sm", "--iterations", "1", "--full", "--json"});
  const auto js = nlohmann::json::parse(sym.out);
  const auto jf = nlohmann::json::parse(full.out);
  EXPECT_EQ(js["simulated_ranks"], 1);
  EXPECT_EQ(js["simulation"], "symmetric");
  EXPECT_EQ(jf["simulated_ranks"], 64);
  EXPECT_EQ(jf["simulation"], "full (--full)");
  for (const char* k : {"iteration_time_ns", "compute_time_ns", "exposed_comm_ns", "comm_time_ns"}) {
    EXPECT_EQ(js[k].dump(), jf[k].dump()) << k;
  }
  const auto table = expect_ok({"collective", "--bytes", "1MiB"});
  EXPECT_NE(table.out.find("# simulated 1 of 64 ranks: symmetric"), std::string::npos) << table.out;
}

TEST_F(ScaleCli, StragglersAreReported) {
  const auto r = expect_ok({"run", "--model", "resnet50", "--executor", "ideal", "--iterations", "2", "--straggler", "5=1.5"});
  EXPECT_NE(r.out.find("# simulated 64 of 64 ranks: full: stragglers"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("stragglers (ideal): iteration"), std::string::npos) << r.out;
  expect_bad_input({"run", "--straggler", "5"}, {"--straggler", "RANK=FACTOR"});
  expect_bad_input({"run", "--straggler", "64=2"}, {"--straggler", "rank 64 does not exist"});
  expect_bad_input({"run", "--straggler", "3=0"}, {"--straggler", "factor"});
}

TEST_F(ScaleCli, TheDefaultRunWithAStragglerFinishesUnderBothExecutors) {
  // sm and ace side by side, the default platform and model: the ace run
  // stopped with "simulation cannot finish" at 18.3 ms (exit 3) before
  // chunks took ACE's SRAM in one order at every NPU
  // (tests/collective/collective_engine_test.cpp). Both now take about
  // twice their even iteration: rank 1 computes twice as long.
  const auto r = expect_ok({"run", "--straggler", "1=2"});
  EXPECT_NE(r.out.find("stragglers (sm): iteration 15765.445 us against 8056.442 us without them (+95.7%)"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("stragglers (ace): iteration 15500.158 us against 7778.089 us without them (+99.3%)"),
            std::string::npos) << r.out;
}

// An LLM step on a preset with an energy model reports its joules: every
// GPU between its idle and its board power plus what HBM and links can add
// (hgx-h100: 121.7 W idle, 700 W board); a platform without one, null.
TEST_F(RunCli, LlmStepsReportEnergyWhereThePlatformHasAModel) {
  const test::CliRun h100 = expect_ok({"run", "--platform", "hgx-h100", "--model", "llama3-8b", "--tp", "8", "--json"});
  ASSERT_EQ(h100.status, 0) << h100.err;
  const nlohmann::json j = nlohmann::json::parse(h100.out);
  ASSERT_TRUE(j.contains("energy_J"));
  ASSERT_TRUE(j["energy_J"].is_number());
  const double watts = j["energy_J"].get<double>() / (j["total_time_ns"].get<double>() * 1e-9) / 8;
  EXPECT_GT(watts, 121.7 + 0.3 * 578.3);  // the GEMMs keep the units busy most of the step
  EXPECT_LT(watts, 700.0 + 110.0);        // HBM at its 3.35 TB/s peak adds 106 W; the links far less
  const test::CliRun none = expect_ok({"run", "--model", "resnet50", "--iterations", "1", "--json"});
  ASSERT_EQ(none.status, 0) << none.err;
  EXPECT_TRUE(nlohmann::json::parse(none.out)["energy_J"].is_null());
}


}  // namespace
}  // namespace acesim
