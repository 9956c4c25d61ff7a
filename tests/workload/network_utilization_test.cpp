// Network utilization over the whole run and while communication is in
// flight (docs/model.md, "Network utilization"), in closed form on Chakra
// traces small enough to time by hand.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "chakra/chakra_writer.h"
#include "config/platform.h"
#include "driver/chakra_run.h"
#include "driver/training_run.h"
#include "report/collective_sweep.h"
#include "scratch_dir.h"

namespace acesim {
namespace {

using test::chakra::TraceWriter;
using test::chakra::write_ranks;
namespace wire = test::chakra::wire;

// Rings of 50 GB/s links, 500 ns per hop, no endpoint delay; one ring per
// entry of `npus`.
PlatformConfig rings(const std::vector<int>& npus) {
  std::string dims;
  for (int n : npus) dims += fmt::format("  - {{kind: ring, npus: {}, bandwidth_GBps: 50, latency_ns: 500}}\n", n);
  return parse_platform_yaml("topology:\n" + dims + "collectives:\n  endpoint_delay_ns: 0\n", "rings.yaml");
}

TimePs all_reduce_ps(const PlatformConfig& p, std::uint64_t bytes, std::vector<int> dims = {}) {
  CollectiveRequestSpec req;
  req.op = CollectiveOp::kAllReduce;
  req.dims = std::move(dims);
  return run_collective(p, req, bytes).time_ps;
}

// Both directions of a ring: what one NPU's links can carry out of it.
constexpr double kRingCapacityBps = 2 * 50e9;

class NetworkUtilization : public test::ScratchDirTest {
 protected:
  ChakraReport run(const PlatformConfig& p, const std::vector<TraceWriter>& ranks) {
    const std::string prefix = write_ranks(dir_, "t", ranks);
    return run_chakra(p, chakra::read_traces(prefix, static_cast<int>(ranks.size())), prefix);
  }
};

TEST_F(NetworkUtilization, OneCollectiveAloneAfterCompute) {
  // 30 us of compute, then one ring all-reduce of 1 MiB over 4 NPUs: each NPU
  // sends 2 (n-1)/n of the buffer. Over the run the links idle during the
  // compute; while the all-reduce is in flight they do not.
  const PlatformConfig p = rings({4});
  TraceWriter w;
  w.comp(1, "fwd", 30);
  w.coll(2, "ar", wire::ALL_REDUCE, 1 << 20, {1});
  const ChakraReport r = run(p, {w, w, w, w});
  const TimePs ar = all_reduce_ps(p, 1 << 20);
  const double bytes = 2.0 * 3.0 / 4.0 * (1 << 20);
  ASSERT_EQ(r.total_ps, 30 * kPsPerUs + ar);
  ASSERT_EQ(r.network_bytes_per_dim.size(), 1u);
  EXPECT_DOUBLE_EQ(r.network_bytes_per_dim[0], bytes);
  EXPECT_DOUBLE_EQ(r.comm_in_flight_ps_per_dim[0], static_cast<double>(ar));
  EXPECT_NEAR(r.network_utilization_in_flight_per_dim[0], bytes / (kRingCapacityBps * ps_to_seconds(ar)), 1e-12);
  EXPECT_NEAR(r.network_utilization_per_dim[0], bytes / (kRingCapacityBps * ps_to_seconds(r.total_ps)), 1e-12);
  // A unidirectional ring uses at most half of both directions; latency
  // (6 steps of 500 ns) keeps it below that.
  EXPECT_LT(r.network_utilization_in_flight_per_dim[0], 0.5);
  EXPECT_GT(r.network_utilization_in_flight_per_dim[0], 0.4);
}

TEST_F(NetworkUtilization, OverlappingCollectivesCountTheirUnionOnce) {
  // Two all-reduces issued together on the same ring: in flight from 0 to
  // the later end, not for the sum of their durations.
  const PlatformConfig p = rings({4});
  TraceWriter w;
  w.coll(1, "a", wire::ALL_REDUCE, 1 << 20);
  w.coll(2, "b", wire::ALL_REDUCE, 1 << 20);
  const ChakraReport r = run(p, {w, w, w, w});
  EXPECT_DOUBLE_EQ(r.comm_in_flight_ps_per_dim[0], static_cast<double>(r.total_ps));
  EXPECT_NEAR(r.network_utilization_in_flight_per_dim[0], r.network_utilization_per_dim[0], 1e-12);
  EXPECT_NEAR(r.network_utilization_in_flight_per_dim[0],
              2 * 2.0 * 3.0 / 4.0 * (1 << 20) / (kRingCapacityBps * ps_to_seconds(r.total_ps)), 1e-12);
}

TEST_F(NetworkUtilization, EachDimensionCountsOnlyItsOwnCollectives) {
  // 4 x 2 rings: an all-reduce over dimension 0, 20 us of compute, then one
  // over dimension 1. Dimension d is in flight only while its own collective
  // runs, so each dimension's in-flight utilization is that collective's
  // alone.
  const PlatformConfig p = rings({4, 2});
  TraceWriter w;
  w.coll(1, "ar0", wire::ALL_REDUCE, 1 << 20, {}, {true, false});
  w.comp(2, "gap", 20, {1});
  w.coll(3, "ar1", wire::ALL_REDUCE, 1 << 20, {2}, {false, true});
  const ChakraReport r = run(p, std::vector<TraceWriter>(8, w));
  const TimePs ar0 = all_reduce_ps(p, 1 << 20, {0});
  const TimePs ar1 = all_reduce_ps(p, 1 << 20, {1});
  ASSERT_EQ(r.total_ps, ar0 + 20 * kPsPerUs + ar1);
  EXPECT_DOUBLE_EQ(r.comm_in_flight_ps_per_dim[0], static_cast<double>(ar0));
  EXPECT_DOUBLE_EQ(r.comm_in_flight_ps_per_dim[1], static_cast<double>(ar1));
  const double bytes0 = 2.0 * 3.0 / 4.0 * (1 << 20);
  const double bytes1 = 2.0 * 1.0 / 2.0 * (1 << 20);
  EXPECT_DOUBLE_EQ(r.network_bytes_per_dim[0], bytes0);
  EXPECT_DOUBLE_EQ(r.network_bytes_per_dim[1], bytes1);
  EXPECT_NEAR(r.network_utilization_in_flight_per_dim[0], bytes0 / (kRingCapacityBps * ps_to_seconds(ar0)), 1e-12);
  // A ring of 2 has one neighbour: both directions go to it (npu_links_out).
  const double cap1 = npu_link_capacity_Bps(p.dims[1]);
  EXPECT_NEAR(r.network_utilization_in_flight_per_dim[1], bytes1 / (cap1 * ps_to_seconds(ar1)), 1e-12);
}

TEST_F(NetworkUtilization, AMessageIsInFlightOnTheDimensionsItsRouteCrosses) {
  // 2 x 2 rings: rank 0 sends 1 MiB to rank 1 (dimension 0 only) and ranks 2
  // and 3 send nothing; dimension 1 never has communication in flight.
  const PlatformConfig p = rings({2, 2});
  TraceWriter a, b, idle;
  a.send(1, "s", 1, 1 << 20);
  b.recv(1, "r", 0, 1 << 20);
  const ChakraReport r = run(p, {a, b, idle, idle});
  const TimePs msg = 500'000 + seconds_to_ps_ceil((1 << 20) / 50e9);
  ASSERT_EQ(r.total_ps, msg);
  // Mean over the 4 NPUs: two of them had the message in flight.
  EXPECT_DOUBLE_EQ(r.comm_in_flight_ps_per_dim[0], static_cast<double>(msg) / 2);
  EXPECT_DOUBLE_EQ(r.comm_in_flight_ps_per_dim[1], 0.0);
  EXPECT_DOUBLE_EQ(r.network_utilization_in_flight_per_dim[1], 0.0);
  // Bytes sent per NPU (mean): 1 MiB / 4; in flight per NPU: msg / 2.
  const double cap0 = npu_link_capacity_Bps(p.dims[0]);
  EXPECT_NEAR(r.network_utilization_in_flight_per_dim[0], (1 << 20) / 4.0 / (cap0 * ps_to_seconds(msg) / 2), 1e-12);
}

}  // namespace
}  // namespace acesim
