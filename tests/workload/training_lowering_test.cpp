// The training loop as a work graph: which nodes and waits a layer table
// lowers into (docs/workloads.md, "Training loop").
#include <gtest/gtest.h>

#include "workload/graph/training_lowering.h"

namespace acesim {
namespace {

Kernel timed(TimePs t) {
  Kernel k;
  k.time_ps = t;
  return k;
}

bool runs(const Kernel& k) { return k.time_ps > 0; }

Workload two_layers() {
  Workload w;
  w.name = "two";
  w.iterations = 2;
  for (int l = 0; l < 2; ++l) {
    Layer layer;
    layer.name = "L" + std::to_string(l);
    layer.forward.compute = layer.input_grad.compute = layer.weight_grad.compute = timed(1000);
    w.layers.push_back(layer);
  }
  w.layers[1].weight_grad.comm.op = CollectiveOp::kAllReduce;
  w.layers[1].weight_grad.comm.bytes = 1e6;
  w.layers[1].weight_grad.comm.blocking = false;
  w.layers[1].update_ps = 7;
  return w;
}

int count(const WorkGraph& g, WorkNodeKind k) {
  int n = 0;
  for (std::uint32_t i = 0; i < g.size(); ++i) n += g.node(i).kind == k ? 1 : 0;
  return n;
}

TEST(TrainingLowering, GradientsGateTheNextForwardAndTheEnd) {
  const TrainingGraph t = lower_training(two_layers(), runs);
  const WorkGraph& g = t.graph;
  ASSERT_EQ(t.steps.size(), g.size());
  // Per iteration: 2 forwards, 2 weight gradients, 1 input gradient (not layer 0's).
  EXPECT_EQ(count(g, WorkNodeKind::kCompute), 10);
  EXPECT_EQ(count(g, WorkNodeKind::kCollective), 2);
  EXPECT_EQ(count(g, WorkNodeKind::kNop), 1);  // the start
  // Iteration 1's forward of L1 waits for iteration 0's all-reduce plus the
  // update; the end waits for iteration 1's.
  ASSERT_EQ(count(g, WorkNodeKind::kWait), 2);
  std::vector<std::uint32_t> waits;
  for (std::uint32_t i = 0; i < g.size(); ++i) {
    if (g.node(i).kind == WorkNodeKind::kWait) waits.push_back(i);
  }
  EXPECT_EQ(g.node(waits[0]).rule, WaitRule::kGate);
  EXPECT_EQ(t.steps[waits[0]].iteration, 1);
  EXPECT_EQ(t.steps[waits[0]].layer, 1);
  EXPECT_EQ(g.node(waits[1]).rule, WaitRule::kEnd);
  EXPECT_EQ(waits[1], g.size() - 1);
  EXPECT_EQ(g.indegree()[waits[0]], 2);  // the stream and the all-reduce
  // The all-reduce's edge into the gate carries the update time.
  for (std::uint32_t i = 0; i < g.size(); ++i) {
    if (g.node(i).kind != WorkNodeKind::kCollective) continue;
    ASSERT_EQ(g.child_end(i) - g.child_begin(i), 1u);
    EXPECT_EQ(g.child_delay(g.child_begin(i)), 7);
  }
}

TEST(TrainingLowering, BlockingCollectivesHoldTheStream) {
  Workload w = two_layers();
  w.layers[0].forward.comm.op = CollectiveOp::kAllGather;
  w.layers[0].forward.comm.bytes = 1e6;
  const TrainingGraph t = lower_training(w, runs);
  int resume = 0;
  for (std::uint32_t i = 0; i < t.graph.size(); ++i) {
    if (t.graph.node(i).kind == WorkNodeKind::kWait && t.graph.node(i).rule == WaitRule::kResume) ++resume;
  }
  EXPECT_EQ(resume, 2);  // one per iteration
}

TEST(TrainingLowering, KernelsWithoutWorkAreLeftOut) {
  const TrainingGraph t = lower_training(two_layers(), [](const Kernel&) { return false; });
  EXPECT_EQ(count(t.graph, WorkNodeKind::kCompute), 0);
  EXPECT_EQ(count(t.graph, WorkNodeKind::kCollective), 2);
}

TEST(TrainingLowering, RefusesWhatTheLoopCannotRun) {
  Workload w = two_layers();
  w.layers[1].recompute_forward = {5};
  EXPECT_THROW(lower_training(w, runs), std::invalid_argument);
  EXPECT_THROW(lower_training(Workload{}, runs), std::invalid_argument);
}

}  // namespace
}  // namespace acesim
