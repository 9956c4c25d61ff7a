// Chunks entering a collective where the endpoints gate entry (ACE's SRAM):
// every NPU gives room in one order, and a chunk enters only once its whole
// collective group has arrived, so that ranks arriving at different times
// (stragglers) can never leave two groups each holding room for a chunk the
// other has not let in (docs/model.md, "ace executor"). Each run below
// stopped with "simulation cannot finish" before.
#include <gtest/gtest.h>

#include "driver/training_run.h"
#include "report/collective_sweep.h"
#include "support.h"
#include "test_data.h"
#include "workload/formats/astra_workload.h"
#include "workload/models/models.h"

namespace acesim {
namespace {

using test::dim;
using test::platform;

// Three layers whose weight gradients each take w of compute and then a
// non-blocking all-reduce of `bytes`; nothing else.
Workload three_all_reduces(TimePs w, double bytes) {
  Workload wl;
  wl.name = "three all-reduces";
  wl.iterations = 1;
  for (const char* name : {"L0", "L1", "L2"}) {
    Layer l;
    l.name = name;
    l.weight_grad.compute.time_ps = w;
    l.weight_grad.comm.op = CollectiveOp::kAllReduce;
    l.weight_grad.comm.bytes = bytes;
    l.weight_grad.comm.blocking = false;
    wl.layers.push_back(l);
  }
  return wl;
}

TEST(AceEntryOrder, TwoGroupsThatLetInDifferentCollectivesNoLongerWaitOnEachOther) {
  // 2x2 rings at 100 GB/s, no latency; ACE's SRAM holds one 2 MB chunk, and
  // its DMA, ALUs and HBM are fast enough not to count. The backward pass
  // issues all-reduces X2, X1, X0 (2 MB, one chunk each) every w = 10 us;
  // each takes T alone (30 us: RS and AG of 1 MB on dimension 0, an
  // all-reduce of 1 MB on dimension 1).
  //
  // Rank 0 computes 2x slower. Its group {0,1} lets X2 in at 20 us, when
  // rank 0 arrives; X2 leaves both groups at 20 + T = 50 us. Before, each
  // group then let in what it had: {2,3} the newest collective its ranks had
  // reached (X0, LIFO), {0,1} X1 (rank 0 reaches X0 only at 60 us). Each
  // held its SRAM for a chunk whose dimension-1 phase needed the other
  // group, and the run stopped. Now a chunk enters only once every rank of
  // its collective has arrived, and every NPU gives room in the order
  // chunks entered: X1 at 50 us, X0 at 80 us, done at 110 us.
  PlatformConfig p = platform({dim(DimKind::kRing, 2, 100, 0), dim(DimKind::kRing, 2, 100, 0)});
  p.npu.executor = "ace";
  p.npu.ace.sram_bytes = 3'000'000;
  p.npu.ace.dma_GBps = 1e6;
  p.npu.ace.alu_GBps = 1e6;
  p.npu.hbm_GBps = 1e6;
  p.npu.fixed_kernel_times = true;
  p.collectives.policy = SchedulingPolicy::kLifo;
  const double bytes = 2e6;
  CollectiveRequestSpec req;
  const TimePs t = run_collective(p, req, static_cast<std::uint64_t>(bytes)).time_ps;
  EXPECT_NEAR(ps_to_ns(t), 30'000.0, 0.1);  // 1 MB / 100 GB/s, three times

  const TimePs w = 10 * kPsPerUs;
  const Workload wl = three_all_reduces(w, bytes);
  TrainOptions o;
  const TrainReport even = run_training(p, wl, o);
  // One chunk fits the SRAM: the all-reduces run one after another from
  // the first, at w.
  EXPECT_EQ(even.iteration_ps, w + 3 * t);
  o.stragglers = {{0, 2.0}};
  const TrainReport slow = run_training(p, wl, o);
  EXPECT_EQ(slow.simulation, "full: stragglers");
  // Everyone waits for rank 0 at X2 (20 us), then the same three in a row.
  EXPECT_EQ(slow.iteration_ps, 2 * w + 3 * t);
  EXPECT_EQ(slow.iteration_ps - even.iteration_ps, w);
}

// ResNet-50 on the default platform (64 NPUs, 4x4x4 rings, ACE), one
// iteration, rank 1 computing `factor` times slower; the platform's
// scheduling as given.
struct StragglerRuns {
  TrainReport even, slow;
};

StragglerRuns resnet_with_straggler(double factor, SchedulingPolicy policy,
                                    std::vector<std::pair<Rank, double>> more = {}) {
  PlatformConfig p = default_platform();
  p.collectives.policy = policy;
  ModelOptions mo;
  mo.iterations = 1;
  const Workload w = build_model("resnet50", mo, Topology(p.dims));
  TrainOptions o;
  StragglerRuns r;
  r.even = run_training(p, w, o);
  o.stragglers = {{1, factor}};
  o.stragglers.insert(o.stragglers.end(), more.begin(), more.end());
  r.slow = run_training(p, w, o);
  return r;
}

// The straggler's kernels alone take factor x the even run's compute, and
// everyone's weight gradients wait for its; after its last kernel at most
// the even run's tail of communication is left (less: more of it is done
// by then).
void expect_bounded(const StragglerRuns& r, double factor, const std::string& what) {
  EXPECT_EQ(r.even.simulation, "symmetric") << what;
  EXPECT_EQ(r.slow.simulation, "full: stragglers") << what;
  EXPECT_EQ(r.slow.simulated_ranks, 64) << what;
  const double c = static_cast<double>(r.even.compute_ps);
  const double tail = static_cast<double>(r.even.iteration_ps - r.even.compute_ps);
  EXPECT_GT(tail, 0.0) << what;
  EXPECT_GE(static_cast<double>(r.slow.iteration_ps), factor * c) << what;
  EXPECT_LE(static_cast<double>(r.slow.iteration_ps), factor * c + tail) << what;
}

TEST(AceEntryOrder, ResNet50WithAStragglerOnTheDefaultPlatformFinishes) {
  // `acesim run --iterations 1 --straggler 1=2 --executor ace` stopped at
  // 15.7 ms with 28 all-reduces stuck; it now takes 15.500 ms against
  // 7.778 ms without the straggler (2 x 7.726 ms of compute, and less of a
  // tail than the even run's 52 us).
  const StragglerRuns r = resnet_with_straggler(2.0, SchedulingPolicy::kLifo);
  expect_bounded(r, 2.0, "lifo, 1=2");
  EXPECT_NEAR(ps_to_ns(r.even.iteration_ps), 7'778'088.634, 0.001);
  EXPECT_NEAR(ps_to_ns(r.slow.iteration_ps), 15'500'158.288, 0.001);
  // A slight straggler stopped the run as well.
  expect_bounded(resnet_with_straggler(1.1, SchedulingPolicy::kLifo), 1.1, "lifo, 1=1.1");
}

TEST(AceEntryOrder, FifoAndTwoStragglersFinishToo) {
  // FIFO stopped as well: a group that could not fit the oldest chunk let
  // in a smaller, younger one that the other groups had no room for yet.
  expect_bounded(resnet_with_straggler(2.0, SchedulingPolicy::kFifo), 2.0, "fifo, 1=2");
  // Two stragglers in different groups of every dimension: the slower one
  // sets the pace.
  expect_bounded(resnet_with_straggler(2.0, SchedulingPolicy::kLifo, {{42, 1.5}}), 2.0, "lifo, 1=2 and 42=1.5");
  // Two in one first-phase group.
  expect_bounded(resnet_with_straggler(3.0, SchedulingPolicy::kLifo, {{2, 2.0}}), 3.0, "lifo, 1=3 and 2=2");
}

TEST(AceEntryOrder, HybridParallelismWithAStraggler) {
  // Transformer_HybridParallel (model-parallel collectives on dimension 0
  // that block the backward pass, data-parallel all-reduces over 1 and 2)
  // stopped too. A chunk may enter only once its whole collective group
  // has arrived: letting it in where its first groups have arrived would
  // take room at the straggler's NPU that the straggler's own blocking
  // model-parallel collective needs before it can arrive.
  const PlatformConfig p = default_platform();
  Workload w = read_astra_workload(test::kData + "/astra-sim-1.0/workload/Transformer_HybridParallel.txt", Topology(p.dims));
  w.iterations = 1;
  TrainOptions o;
  StragglerRuns r;
  r.even = run_training(p, w, o);
  o.stragglers = {{1, 2.0}};
  r.slow = run_training(p, w, o);
  // 2 x 548.943 ms of compute and the even run's 15.261 ms tail: 1113.146 ms.
  expect_bounded(r, 2.0, "transformer, 1=2");
  EXPECT_NEAR(ps_to_ns(r.slow.iteration_ps), 1'113'146'360.886, 0.001);
}

}  // namespace
}  // namespace acesim
