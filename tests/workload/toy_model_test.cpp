// A model registered from the test suite (not shipped), run end to end:
// model_registry() -> build_model -> lower_training -> the graph executor.
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>

#include "driver/training_run.h"
#include "support.h"
#include "workload/models/model_registry.h"

namespace acesim {
namespace {

constexpr TimePs us(double v) { return static_cast<TimePs>(v * 1e6); }

Kernel timed(double micros) {
  Kernel k;
  k.time_ps = us(micros);
  return k;
}

// Two layers with fixed kernel times; the second's weight gradients are
// all-reduced over every dimension.
Workload toy(const ModelOptions& opt, const Topology&) {
  Workload w;
  w.name = "toy";
  w.parallelism = "DATA";
  w.iterations = opt.iterations;
  Layer l0;
  l0.name = "L0";
  l0.forward.compute = l0.input_grad.compute = l0.weight_grad.compute = timed(10);
  Layer l1;
  l1.name = "L1";
  l1.forward.compute = l1.input_grad.compute = l1.weight_grad.compute = timed(20);
  l1.weight_grad.comm.op = CollectiveOp::kAllReduce;
  l1.weight_grad.comm.bytes = 4e6;
  l1.weight_grad.comm.blocking = false;
  w.layers = {l0, l1};
  return w;
}

void register_toy() {
  static std::once_flag once;
  std::call_once(once, [] { model_registry().add({{"toy", {}, "two layers and one all-reduce (tests only)"}, toy}); });
}

TEST(ToyModel, RegisteredModelRunsEndToEnd) {
  register_toy();
  EXPECT_NE(find_model("toy"), nullptr);
  const auto names = model_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "toy"), names.end());

  // Ring of 4 at 100 GB/s, ideal endpoint: the all-reduce of 4 MB takes
  // 1.5 x 4 MB / 100 GB/s = 60 us.
  // Iteration 0: fwd L0 [0,10] L1 [10,30]; wg L1 [30,50] -> AR [50,110];
  //   ig L1 [50,70]; wg L0 [70,80] (L0's input gradient is not computed).
  // Iteration 1: fwd L0 [80,90]; fwd L1 waits for the AR: [110,130] (20 us
  //   exposed); wg L1 [130,150] -> AR [150,210]; ig L1 [150,170]; wg L0 [170,180].
  PlatformConfig p = test::platform({test::dim(DimKind::kRing, 4, 100, 0)});
  p.npu.executor = "ideal";
  p.npu.fixed_kernel_times = true;
  ModelOptions opt;
  opt.iterations = 2;
  const Topology topo(p.dims);
  const TrainReport r = run_training(p, build_model("toy", opt, topo));
  EXPECT_EQ(r.first_iteration_ps, us(110));
  EXPECT_EQ(r.total_ps, us(210));
  EXPECT_EQ(r.iteration_ps, us(100));
  EXPECT_EQ(r.compute_ps, us(80));
  EXPECT_EQ(r.exposed_comm_ps, us(20));
  ASSERT_EQ(r.layers.size(), 2u);
  EXPECT_EQ(r.layers[1].exposed_ps, us(20));
  EXPECT_EQ(r.layers[1].comm_ps[2], us(60));
  ASSERT_EQ(r.collectives.size(), 2u);
  EXPECT_EQ(r.collectives[1].issue_ps, us(150));
  EXPECT_EQ(r.collectives[1].done_ps, us(210));
}

}  // namespace
}  // namespace acesim
