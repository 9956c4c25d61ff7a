// Iterations of a Chakra trace (ProfilerStep#N markers, --iterations
// passes) and the measured iteration's times, by hand.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "chakra/chakra_writer.h"
#include "config/platform.h"
#include "driver/chakra_run.h"
#include "report/collective_sweep.h"
#include "scratch_dir.h"

namespace acesim {
namespace {

using test::chakra::TraceWriter;
using test::chakra::write_ranks;
namespace wire = test::chakra::wire;

PlatformConfig ring(int n) {
  return parse_platform_yaml(fmt::format("topology:\n  - {{kind: ring, npus: {}, bandwidth_GBps: 50, latency_ns: 500}}\n"
                                         "collectives:\n  endpoint_delay_ns: 0\n",
                                         n),
                             "ring.yaml");
}

class ChakraIterations : public test::ScratchDirTest {
 protected:
  ChakraReport run(const PlatformConfig& p, const std::vector<TraceWriter>& ranks, int iterations = 1) {
    const std::string prefix = write_ranks(dir_, "t", ranks);
    ChakraRunOptions o;
    o.iterations = iterations;
    return run_chakra(p, chakra::read_traces(prefix, static_cast<int>(ranks.size())), prefix, o);
  }
  // PyTorch's step annotations: a CPU node of no time that the step's work follows.
  static void marker(TraceWriter& w, std::uint64_t id, int step, const std::vector<std::uint64_t>& deps) {
    w.comp(id, fmt::format("ProfilerStep#{}", step), 0, deps).mutable_attr(0)->set_bool_val(true);
  }
};

constexpr TimePs kUs = kPsPerUs;

TEST_F(ChakraIterations, ProfilerStepMarkersSplitTheTrace) {
  // Step 7: A (10 us); step 8: B (20 us). The markers are written out of
  // order in the file: their step numbers order them.
  TraceWriter w;
  w.comp(2, "A", 10, {1});
  marker(w, 3, 8, {2});
  w.comp(4, "B", 20, {3});
  marker(w, 1, 7, {});
  const ChakraReport r = run(ring(2), {w, w});
  EXPECT_EQ(r.iterations, 2);
  EXPECT_EQ(r.iteration_end_ps, (std::vector<TimePs>{10 * kUs, 30 * kUs}));
  EXPECT_EQ(r.first_iteration_ps, 10 * kUs);
  EXPECT_EQ(r.iteration_ps, 20 * kUs);
  EXPECT_EQ(r.compute_ps, 20 * kUs);
  // With two passes: four iterations, the second pass after the first.
  const ChakraReport twice = run(ring(2), {w, w}, 2);
  EXPECT_EQ(twice.iterations, 4);
  EXPECT_EQ(twice.iteration_end_ps, (std::vector<TimePs>{10 * kUs, 30 * kUs, 40 * kUs, 60 * kUs}));
  EXPECT_EQ(twice.total_ps, 60 * kUs);
}

TEST_F(ChakraIterations, LabelsFollowTheLatestMarkerAncestor) {
  TraceWriter w;
  marker(w, 1, 0, {});
  w.comp(2, "a", 1, {1});
  marker(w, 3, 1, {2});
  w.comp(4, "b", 1, {3});
  w.comp(5, "free", 1);  // descends from no marker: iteration 0
  w.comp(6, "join", 1, {2, 4});
  const std::string prefix = write_ranks(dir_, "l", {w});
  const chakra::Trace t = chakra::read_traces(prefix, 1)[0];
  int markers = 0;
  EXPECT_EQ(chakra_iteration_labels(t, markers), (std::vector<int>{0, 0, 1, 1, 0, 1}));
  EXPECT_EQ(markers, 2);
}

TEST_F(ChakraIterations, ExposedCommunicationIsCommunicationAlone) {
  // A (10 us) -> all-reduce of 1 MiB; a CPU node of 25 us beside them; C
  // (3 us) after the all-reduce. Communication is exposed only while no
  // kernel and no CPU node runs: from 25 us to the all-reduce's end.
  const PlatformConfig p = ring(4);
  TraceWriter w;
  w.comp(1, "A", 10);
  w.coll(2, "ar", wire::ALL_REDUCE, 1 << 20, {1});
  w.comp(3, "C", 3, {2});
  w.comp(4, "cpu", 25).mutable_attr(0)->set_bool_val(true);
  const ChakraReport r = run(p, {w, w, w, w});
  CollectiveRequestSpec req;
  req.op = CollectiveOp::kAllReduce;
  const TimePs ar = run_collective(p, req, 1 << 20).time_ps;
  ASSERT_GT(ar, 15 * kUs);
  EXPECT_EQ(r.total_ps, 13 * kUs + ar);
  EXPECT_EQ(r.iteration_ps, r.total_ps);
  EXPECT_EQ(r.comm_ps, ar);
  EXPECT_EQ(r.exposed_comm_ps, 10 * kUs + ar - 25 * kUs);
  EXPECT_EQ(r.overlap_ps, 15 * kUs);
  EXPECT_EQ(r.compute_idle_ps, r.total_ps - 13 * kUs);  // the CPU time counts as idle for the compute stream
}

}  // namespace
}  // namespace acesim
