// One report schema: `acesim run --json` carries the same core keys, with
// the same meanings, for a built-in workload and for Chakra traces; a trace
// reports its iterations like a built-in workload does.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "chakra/chakra_writer.h"
#include "cli_runner.h"
#include "test_data.h"

namespace acesim {
namespace {

using test::chakra::TraceWriter;
namespace wire = test::chakra::wire;

// What a script may read from either kind of run (docs/workloads.md).
const std::vector<std::string> kCoreKeys = {
    "workload",          "platform",
    "executor",          "npus",
    "simulated_ranks",   "simulation",
    "iterations",        "iteration_time_ns",
    "iteration_times_ns", "first_iteration_ns",
    "total_time_ns",     "compute_time_ns",
    "exposed_comm_ns",   "comm_time_ns",
    "overlap_ns",        "network_utilization_per_dim",
    "network_utilization_in_flight_per_dim", "comm_in_flight_ns_per_dim",
    "network_bytes_per_dim", "hbm_utilization",
    "hbm_bytes",         "comm_unit_seconds",
    "collectives",       "events"};

class ReportSchema : public test::CliTest {
 protected:
  // ASTRA-sim's 8-NPU ring (50 GB/s as ASTRA-sim reads it, 50 x 2^30
  // bytes/s; 500 ns), one chunk, no endpoint delay: a 1 MiB all-reduce takes
  // 2*7/8 * 1048576 / 53.6870912 + 14 * 500 = 41179.688 ns.
  std::vector<std::string> ring8() const {
    return {"--network", test::kNet + "Ring_8npus.yml", "--system", test::kCustom + "ring_1chunk_nodelay.json"};
  }
  // Every rank: 10 us of compute, then the all-reduce of its gradients.
  std::string forward_then_all_reduce() {
    TraceWriter w;
    w.comp(1, "fwd", 10);
    w.coll(2, "grad_ar", wire::ALL_REDUCE, 1 << 20, {1});
    return test::chakra::write_ranks(dir_, "t", std::vector<TraceWriter>(8, w));
  }
  nlohmann::json run_json(std::vector<std::string> args) {
    for (const std::string& a : ring8()) args.push_back(a);
    args.push_back("--json");
    const test::CliRun r = run(args);
    EXPECT_EQ(r.status, 0) << r.err;
    return nlohmann::json::parse(r.out);
  }
};

TEST_F(ReportSchema, BuiltInAndChakraRunsShareTheCoreKeys) {
  const nlohmann::json table =
      run_json({"run", "--workload", test::kData + "/astra-sim-1.0/workload/microAllReduce.txt"});
  const nlohmann::json trace = run_json({"run", "--chakra", forward_then_all_reduce()});
  for (const std::string& key : kCoreKeys) {
    SCOPED_TRACE(key);
    ASSERT_TRUE(table.contains(key));
    ASSERT_TRUE(trace.contains(key));
    EXPECT_EQ(table[key].type_name(), trace[key].type_name());
  }
  for (const char* part : {"compute", "communication"}) {
    EXPECT_TRUE(trace["hbm_utilization"].contains(part));
    EXPECT_TRUE(trace["hbm_bytes"].contains(part));
  }
  // The old Chakra-only names are gone.
  for (const char* old : {"total_ns", "compute_ns", "comm_ns", "cpu_ns", "hbm_utilization_compute"}) {
    EXPECT_FALSE(trace.contains(old)) << old;
  }
}

TEST_F(ReportSchema, ChakraTimesMeanWhatTheBuiltInOnesMean) {
  // One pass: the iteration is the whole run; NPU 0 computes 10 us, then
  // waits for the all-reduce with nothing else to do.
  const nlohmann::json j = run_json({"run", "--chakra", forward_then_all_reduce()});
  EXPECT_EQ(j["iterations"], 1);
  EXPECT_NEAR(j["iteration_time_ns"].get<double>(), 10000 + 41179.688, 1e-3);
  EXPECT_NEAR(j["total_time_ns"].get<double>(), 10000 + 41179.688, 1e-3);
  EXPECT_NEAR(j["first_iteration_ns"].get<double>(), 10000 + 41179.688, 1e-3);
  ASSERT_EQ(j["iteration_times_ns"].size(), 1u);
  EXPECT_NEAR(j["compute_time_ns"].get<double>(), 10000, 1e-6);
  EXPECT_NEAR(j["comm_time_ns"].get<double>(), 41179.688, 1e-3);
  EXPECT_NEAR(j["exposed_comm_ns"].get<double>(), 41179.688, 1e-3);
  EXPECT_EQ(j["overlap_ns"].get<double>(), 0.0);
}

TEST_F(ReportSchema, ChakraIterationsReplayTheTraceBackToBack) {
  // --iterations 3: each pass starts when the previous one is done on the
  // rank, so each takes what one pass alone takes.
  const double one = 10000 + 41179.688;
  const nlohmann::json j = run_json({"run", "--chakra", forward_then_all_reduce(), "--iterations", "3"});
  EXPECT_EQ(j["iterations"], 3);
  ASSERT_EQ(j["iteration_times_ns"].size(), 3u);
  for (const auto& t : j["iteration_times_ns"]) EXPECT_NEAR(t.get<double>(), one, 1e-3);
  EXPECT_NEAR(j["total_time_ns"].get<double>(), 3 * one, 1e-3);
  EXPECT_NEAR(j["iteration_time_ns"].get<double>(), one, 1e-3);  // the last, as for built-in workloads
  EXPECT_NEAR(j["first_iteration_ns"].get<double>(), one, 1e-3);
  EXPECT_NEAR(j["compute_time_ns"].get<double>(), 10000, 1e-6);  // the measured iteration's own
  EXPECT_NEAR(j["comm_time_ns"].get<double>(), 41179.688, 1e-3);
  EXPECT_EQ(j["collectives"], 3);
  // Every node once per pass, with the trace's own id and its iteration.
  ASSERT_EQ(j["nodes"].size(), 6u);
  for (std::size_t k = 0; k < 6; ++k) {
    EXPECT_EQ(j["nodes"][k]["iteration"], static_cast<int>(k / 2));
    EXPECT_EQ(j["nodes"][k]["id"], 1 + static_cast<int>(k % 2));
  }
  EXPECT_NEAR(j["nodes"][2]["start_ns"].get<double>(), one, 1e-3);  // pass 1's first node waits for pass 0
}

TEST_F(ReportSchema, BuiltInIterationTimesEndWithTheMeasuredOne) {
  const nlohmann::json j =
      run_json({"run", "--workload", test::kData + "/astra-sim-1.0/workload/microAllReduce.txt", "--iterations", "3"});
  ASSERT_EQ(j["iteration_times_ns"].size(), 3u);
  EXPECT_EQ(j["iteration_times_ns"][0], j["first_iteration_ns"]);
  EXPECT_EQ(j["iteration_times_ns"][2], j["iteration_time_ns"]);
  double sum = 0;
  for (const auto& t : j["iteration_times_ns"]) sum += t.get<double>();
  EXPECT_NEAR(sum, j["total_time_ns"].get<double>(), 1e-3);
}

}  // namespace
}  // namespace acesim
