// Hand-computed timelines of small synthetic workloads, one per kind of
// parallelism (docs/workloads.md, "Training loop").
#include <gtest/gtest.h>

#include "support.h"
#include "driver/training_run.h"

namespace acesim {
namespace {

using test::dim;
using test::platform;

constexpr TimePs us(double v) { return static_cast<TimePs>(v * 1e6); }

Kernel timed(double micros) {
  Kernel k;
  k.time_ps = us(micros);
  return k;
}

CommSpec comm(CollectiveOp op, double bytes, std::vector<int> dims, bool blocking) {
  CommSpec c;
  c.op = op;
  c.bytes = bytes;
  c.dims = std::move(dims);
  c.blocking = blocking;
  return c;
}

Layer layer(const std::string& name, double fwd, double ig, double wg) {
  Layer l;
  l.name = name;
  l.forward.compute = timed(fwd);
  l.input_grad.compute = timed(ig);
  l.weight_grad.compute = timed(wg);
  return l;
}

// Ideal endpoint, kernel times as given, no latency, one chunk: collective
// times are bytes over bandwidth, easy to add up by hand.
PlatformConfig ideal(std::vector<DimensionSpec> dims) {
  PlatformConfig p = platform(std::move(dims));
  p.npu.executor = "ideal";
  p.npu.fixed_kernel_times = true;
  return p;
}

TEST(Trainer, DataParallelTwoLayers) {
  // Ring of 4 at 100 GB/s: an all-reduce of S takes 1.5 S / 100 GB/s.
  // AR1 (4 MB) = 60 us, AR0 (2 MB) = 30 us.
  // Iteration 0: fwd L0 [0,10] L1 [10,30]; wg L1 [30,50] -> AR1 [50,110];
  //   ig L1 [50,70]; wg L0 [70,80] -> AR0 waits for the ring: [110,140].
  // Iteration 1 starts when AR0 is done: fwd L0 [140,150] (60 us exposed),
  //   fwd L1 [150,170]; wg L1 [170,190] -> AR1 [190,250]; ig L1 [190,210];
  //   wg L0 [210,220] -> AR0 [250,280]; the run ends at 280.
  Workload w;
  w.name = "dp2";
  w.iterations = 2;
  w.layers = {layer("L0", 10, 10, 10), layer("L1", 20, 20, 20)};
  w.layers[0].weight_grad.comm = comm(CollectiveOp::kAllReduce, 2e6, {}, false);
  w.layers[1].weight_grad.comm = comm(CollectiveOp::kAllReduce, 4e6, {}, false);
  const TrainReport r = run_training(ideal({dim(DimKind::kRing, 4, 100, 0)}), w);
  EXPECT_EQ(r.first_iteration_ps, us(140));
  EXPECT_EQ(r.total_ps, us(280));
  EXPECT_EQ(r.iteration_ps, us(140));
  EXPECT_EQ(r.compute_ps, us(80));
  EXPECT_EQ(r.exposed_comm_ps, us(60));
  EXPECT_EQ(r.comm_ps, us(90));   // [190, 280]
  EXPECT_EQ(r.overlap_ps, us(30));
  ASSERT_EQ(r.layers.size(), 2u);
  EXPECT_EQ(r.layers[0].exposed_ps, us(60));
  EXPECT_EQ(r.layers[1].exposed_ps, 0);
  EXPECT_EQ(r.layers[1].comm_ps[2], us(60));
  EXPECT_EQ(r.layers[0].comm_ps[2], us(60));  // issued at 220, done at 280
  EXPECT_EQ(r.layers[1].compute_ps[0], us(20));
  EXPECT_EQ(r.layers[0].compute_ps[1], 0);  // the first layer's input gradient is not computed
  ASSERT_EQ(r.collectives.size(), 4u);
}

TEST(Trainer, UpdateTimeDelaysTheNextForward) {
  Workload w;
  w.iterations = 2;
  w.layers = {layer("L0", 10, 10, 10)};
  w.layers[0].weight_grad.comm = comm(CollectiveOp::kAllReduce, 2e6, {}, false);
  w.layers[0].update_ps = us(5);
  // fwd [0,10], wg [10,20], AR [20,50], update to 55; fwd [55,65], wg [65,75], AR [75,105], update 110.
  const TrainReport r = run_training(ideal({dim(DimKind::kRing, 4, 100, 0)}), w);
  EXPECT_EQ(r.first_iteration_ps, us(55));
  EXPECT_EQ(r.total_ps, us(110));
  EXPECT_EQ(r.iteration_ps, us(55));
  EXPECT_EQ(r.exposed_comm_ps, us(35));
}

TEST(Trainer, ModelParallelActivationsBlock) {
  // MODEL: forward all-gather and input-gradient all-reduce over all NPUs,
  // both blocking; no weight-gradient communication.
  // Ring of 4, 100 GB/s: AG of 4 MB (output) = 0.75 * 4e6 / 1e11 = 30 us; AR of 2 MB = 30 us.
  // fwd L0 [0,10] AG [10,40]; fwd L1 [40,60] AG [60,90];
  // wg L1 [90,100]; ig L1 [100,110] AR [110,140]; wg L0 [140,150]; (no ig compute for L0) AR [150,180].
  Workload w;
  w.iterations = 1;
  w.layers = {layer("L0", 10, 10, 10), layer("L1", 20, 10, 10)};
  for (Layer& l : w.layers) {
    l.forward.comm = comm(CollectiveOp::kAllGather, 4e6, {}, true);
    l.input_grad.comm = comm(CollectiveOp::kAllReduce, 2e6, {}, true);
  }
  const TrainReport r = run_training(ideal({dim(DimKind::kRing, 4, 100, 0)}), w);
  EXPECT_EQ(r.total_ps, us(180));
  EXPECT_EQ(r.iteration_ps, us(180));
  EXPECT_EQ(r.compute_ps, us(60));
  EXPECT_EQ(r.exposed_comm_ps, us(120));
  EXPECT_EQ(r.overlap_ps, 0);
  EXPECT_EQ(r.layers[0].exposed_ps, us(60));
  EXPECT_EQ(r.layers[1].exposed_ps, us(60));
}

TEST(Trainer, HybridCollectivesUseTheirOwnDimensions) {
  // 2x2 torus: dimension 0 at 100 GB/s, dimension 1 at 25 GB/s.
  // Model parallel on dimension 0 (blocking AG of 4 MB: 0.5*4e6/1e11 = 20 us),
  // data parallel on dimension 1 (AR of 2 MB over 2 NPUs at 25 GB/s: 2e6/25e9 = 80 us).
  // One layer, two iterations: fwd [0,10] AG [10,30]; wg [30,40] AR [40,120];
  // (no ig compute) iteration 1 waits for AR: fwd [120,130] AG [130,150]; wg [150,160] AR [160,240].
  Workload w;
  w.iterations = 2;
  w.layers = {layer("L0", 10, 10, 10)};
  w.layers[0].forward.comm = comm(CollectiveOp::kAllGather, 4e6, {0}, true);
  w.layers[0].weight_grad.comm = comm(CollectiveOp::kAllReduce, 2e6, {1}, false);
  const TrainReport r = run_training(ideal({dim(DimKind::kRing, 2, 100, 0), dim(DimKind::kRing, 2, 25, 0)}), w);
  EXPECT_EQ(r.first_iteration_ps, us(120));
  EXPECT_EQ(r.total_ps, us(240));
  EXPECT_EQ(r.iteration_ps, us(120));
  EXPECT_EQ(r.compute_ps, us(20));
  // Network: dimension 1 carried the AR twice (2 MB each, half sent per NPU... 1 MB per NPU per AR).
  ASSERT_EQ(r.network_bytes_per_dim.size(), 2u);
  EXPECT_DOUBLE_EQ(r.network_bytes_per_dim[1], 2 * 2e6 * 0.5 * 2);
}

TEST(Trainer, DlrmAllToAllInForwardAndBackward) {
  // Embedding (layer 0): blocking all-to-all forward and backward (its
  // input-gradient communication, though its input gradient is not computed);
  // MLP (layer 1): data-parallel weight-gradient all-reduce.
  // Ring of 4, 100 GB/s, ring all-to-all of S: 3 steps, 1.5 S / B: 1.2 MB -> 18 us.
  // fwd emb [0,5] A2A [5,23]; fwd mlp [23,33]; wg mlp [33,43] AR (4 MB, 60 us) [43,103];
  // ig mlp [43,53]; wg emb [53,58]; A2A backward waits for the ring (one active chunk): [103,121].
  Workload w;
  w.iterations = 1;
  w.layers = {layer("embedding", 5, 5, 5), layer("mlp", 10, 10, 10)};
  w.layers[0].forward.comm = comm(CollectiveOp::kAllToAll, 1.2e6, {}, true);
  w.layers[0].input_grad.comm = comm(CollectiveOp::kAllToAll, 1.2e6, {}, true);
  w.layers[1].weight_grad.comm = comm(CollectiveOp::kAllReduce, 4e6, {}, false);
  PlatformConfig p = ideal({dim(DimKind::kRing, 4, 100, 0)});
  p.collectives.op(CollectiveOp::kAllToAll).per_dim = {algorithm("ring")};
  const TrainReport r = run_training(p, w);
  EXPECT_EQ(r.total_ps, us(121));
  EXPECT_EQ(r.compute_ps, us(40));
  EXPECT_EQ(r.layers[0].exposed_ps, us(18 + 63));
}

TEST(Trainer, ContentionSlowsComputeUnderSm) {
  // The same data-parallel workload with kernels through the NPU model:
  // an sm all-reduce holding units slows the overlapping compute.
  Workload w;
  w.iterations = 2;
  w.layers = {layer("L0", 100, 100, 100), layer("L1", 100, 100, 100)};
  for (Layer& l : w.layers) l.weight_grad.comm = comm(CollectiveOp::kAllReduce, 64e6, {}, false);
  PlatformConfig p = platform({dim(DimKind::kRing, 4, 100, 0)});
  p.npu.executor = "ideal";
  const TrainReport base = run_training(p, w);
  p.npu.executor = "sm";
  p.npu.sm.units = 40;
  const TrainReport sm = run_training(p, w);
  EXPECT_GT(sm.compute_ps, base.compute_ps);
  // Here the all-reduces dominate: slower compute stays hidden behind them.
  EXPECT_GE(sm.iteration_ps, base.iteration_ps);
  EXPECT_GT(sm.hbm_bytes_comm, 0.0);
  // Kept fixed, as ASTRA-sim does: compute is as given.
  p.npu.fixed_kernel_times = true;
  const TrainReport fixed = run_training(p, w);
  EXPECT_EQ(fixed.compute_ps, us(500));
}

}  // namespace
}  // namespace acesim

namespace acesim {
namespace {

TEST(Trainer, AceSramNeverDeadlocksUnderLifo) {
  // Regression: under LIFO a newer collective's first-phase chunk outranks an
  // older collective's all-gather in the same group queue. When the newer
  // chunk waited for SRAM, the all-gathers that would free it waited behind
  // it: every collective stuck. Many concurrent weight-gradient all-reduces
  // on a 2x8 torus with a small SRAM reproduce it.
  PlatformConfig p = test::platform({test::dim(DimKind::kRing, 2, 200, 20), test::dim(DimKind::kRing, 8, 100, 500)});
  p.npu.executor = "ace";
  p.npu.ace.sram_bytes = 1 << 20;
  p.collectives.chunks = 16;
  Workload w;
  w.iterations = 1;
  for (int i = 0; i < 12; ++i) {
    Layer l;
    l.name = "L" + std::to_string(i);
    l.forward.compute.time_ps = 10 * kPsPerUs;
    l.weight_grad.compute.time_ps = 10 * kPsPerUs;
    l.weight_grad.comm.op = CollectiveOp::kAllReduce;
    l.weight_grad.comm.bytes = 4e6;
    l.weight_grad.comm.blocking = false;
    w.layers.push_back(l);
  }
  const TrainReport r = run_training(p, w);
  EXPECT_GT(r.iteration_ps, 0);
  PlatformConfig ideal = p;
  ideal.npu.executor = "ideal";
  EXPECT_GE(r.iteration_ps, run_training(ideal, w).iteration_ps);
}

}  // namespace
}  // namespace acesim
