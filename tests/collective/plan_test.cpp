// Multi-dimension plans, chunk pipelining, scheduling and sharing, against
// hand-computed answers.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "collective/collective_engine.h"
#include "support.h"

namespace acesim {
namespace {

using test::dim;
using test::platform;

constexpr double kS = 64.0 * 1024 * 1024;

double xfer_ns(double bytes, double GBps) { return bytes / GBps; }

TEST(Plan, HierarchicalAllReducePhases) {
  const Topology topo({dim(DimKind::kRing, 4, 100, 0), dim(DimKind::kRing, 2, 100, 0), dim(DimKind::kRing, 8, 100, 0)});
  const CollectiveConfig cfg = default_collective_config(topo);
  const std::vector<int> all = {0, 1, 2};
  const auto phases = build_plan(CollectiveOp::kAllReduce, cfg.op(CollectiveOp::kAllReduce), topo, all);
  ASSERT_EQ(phases.size(), 5u);
  EXPECT_EQ(phases[0].op, CollectiveOp::kReduceScatter);
  EXPECT_EQ(phases[0].dims, std::vector<int>{0});
  EXPECT_DOUBLE_EQ(phases[0].size_factor, 1.0);
  EXPECT_EQ(phases[1].op, CollectiveOp::kReduceScatter);
  EXPECT_DOUBLE_EQ(phases[1].size_factor, 0.25);
  EXPECT_EQ(phases[2].op, CollectiveOp::kAllReduce);
  EXPECT_EQ(phases[2].dims, std::vector<int>{2});
  EXPECT_DOUBLE_EQ(phases[2].size_factor, 0.125);
  EXPECT_EQ(phases[3].op, CollectiveOp::kAllGather);
  EXPECT_DOUBLE_EQ(phases[3].size_factor, 0.25);
  EXPECT_EQ(phases[4].op, CollectiveOp::kAllGather);
  EXPECT_DOUBLE_EQ(phases[4].size_factor, 1.0);
}

TEST(Plan, AllGatherMirrorsReduceScatter) {
  const Topology topo({dim(DimKind::kRing, 4, 100, 0), dim(DimKind::kRing, 8, 100, 0)});
  const CollectiveConfig cfg = default_collective_config(topo);
  const std::vector<int> all = {0, 1};
  const auto ag = build_plan(CollectiveOp::kAllGather, cfg.op(CollectiveOp::kAllGather), topo, all);
  ASSERT_EQ(ag.size(), 2u);
  EXPECT_EQ(ag[0].dims, std::vector<int>{1});
  EXPECT_DOUBLE_EQ(ag[0].size_factor, 0.25);
  EXPECT_EQ(ag[1].dims, std::vector<int>{0});
  EXPECT_DOUBLE_EQ(ag[1].size_factor, 1.0);
}

TEST(Plan, DimensionsOfSizeOneAreSkipped) {
  const Topology topo({dim(DimKind::kRing, 1, 100, 0), dim(DimKind::kRing, 8, 100, 0)});
  const CollectiveConfig cfg = default_collective_config(topo);
  const std::vector<int> all = {0, 1};
  const auto p = build_plan(CollectiveOp::kAllReduce, cfg.op(CollectiveOp::kAllReduce), topo, all);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].dims, std::vector<int>{1});
}

TEST(Plan, TwoDimensionHierarchicalAllReduceClosedForm) {
  // RS on dim 0 (4 NPUs, 200 GB/s, 20 ns), all-reduce of S/4 on dim 1
  // (4 NPUs, 50 GB/s, 700 ns), all-gather back on dim 0. One chunk: serial.
  PlatformConfig p = platform({dim(DimKind::kRing, 4, 200, 20), dim(DimKind::kRing, 4, 50, 700)});
  const double rs0 = 3 * 20 + xfer_ns(0.75 * kS, 200);
  const double ar1 = 6 * 700 + xfer_ns(2 * 0.75 * kS / 4, 50);
  const double expected = 2 * rs0 + ar1;
  EXPECT_NEAR(test::time_ns(p, CollectiveOp::kAllReduce, kS), expected, expected * 1e-4);
  p.network.backend = "analytical";
  EXPECT_NEAR(test::time_ns(p, CollectiveOp::kAllReduce, kS), expected, expected * 1e-4);
}

TEST(Plan, PerDimensionPlanRunsFullAllReduceOnEachDimension) {
  PlatformConfig p = platform({dim(DimKind::kRing, 4, 200, 20), dim(DimKind::kRing, 4, 50, 700)});
  p.collectives.op(CollectiveOp::kAllReduce).plan = PlanKind::kPerDimension;
  const double expected = 6 * 20 + xfer_ns(1.5 * kS, 200) + 6 * 700 + xfer_ns(1.5 * kS, 50);
  EXPECT_NEAR(test::time_ns(p, CollectiveOp::kAllReduce, kS), expected, expected * 1e-4);
}

TEST(Plan, FlatRingOnOneDimensionEqualsRing) {
  PlatformConfig p = platform({dim(DimKind::kRing, 8, 100, 500)});
  const double ring = test::time_ns(p, CollectiveOp::kAllReduce, kS);
  p.collectives.op(CollectiveOp::kAllReduce).plan = PlanKind::kFlat;
  p.collectives.op(CollectiveOp::kAllReduce).flat = algorithm("ring");
  EXPECT_DOUBLE_EQ(test::time_ns(p, CollectiveOp::kAllReduce, kS), ring);
}

TEST(Plan, FlatRingAcrossTwoDimensionsClosedForm) {
  // 2x2 torus, ring over ranks 0,1,2,3: hops 1->2 and 3->0 cross both
  // dimensions; every used link carries one piece of S/4 per step, so each
  // of the 3 reduce-scatter steps takes a0 + a1 + (S/4) / min(B0, B1).
  PlatformConfig p = platform({dim(DimKind::kRing, 2, 100, 300), dim(DimKind::kRing, 2, 40, 900)});
  auto& oc = p.collectives.op(CollectiveOp::kReduceScatter);
  oc.plan = PlanKind::kFlat;
  oc.flat = algorithm("ring");
  const double expected = 3 * (300 + 900 + xfer_ns(kS / 4, 40));
  for (std::string b : {"fluid", "analytical"}) {
    p.network.backend = b;
    EXPECT_NEAR(test::time_ns(p, CollectiveOp::kReduceScatter, kS), expected, expected * 1e-4) << b;
  }
}

TEST(Plan, SubsetOfDimensions) {
  // All-reduce over dimension 1 only: four independent rings of 4 on
  // disjoint links, each the single-ring closed form.
  PlatformConfig p = platform({dim(DimKind::kRing, 4, 200, 20), dim(DimKind::kRing, 4, 50, 700)});
  const double expected = 6 * (700 + xfer_ns(kS / 4, 50));
  EXPECT_NEAR(test::time_ns(p, CollectiveOp::kAllReduce, kS, {1}), expected, expected * 1e-4);
  // Over dimensions {1, 0} in that order: reduce-scatter on 1 first.
  const double rs1 = 3 * 700 + xfer_ns(0.75 * kS, 50);
  const double ar0 = 6 * 20 + xfer_ns(1.5 * kS / 4, 200);
  EXPECT_NEAR(test::time_ns(p, CollectiveOp::kAllReduce, kS, {1, 0}), 2 * rs1 + ar0, (2 * rs1 + ar0) * 1e-4);
}

TEST(Pipelining, TwoChunksThroughThreePhases) {
  // Two chunks of S/2, one active chunk per dimension, phases RS0 (t_a),
  // AR1 (t_b), AG0 (t_a) with t_b > t_a. Hand schedule:
  //   dim0: c0 RS [0,ta], c1 RS [ta,2ta], c0 AG [ta+tb, 2ta+tb], c1 AG [ta+2tb, 2ta+2tb]
  //   dim1: c0 AR [ta, ta+tb], c1 AR [ta+tb, ta+2tb]
  // so the collective ends at 2 ta + 2 tb.
  PlatformConfig p = platform({dim(DimKind::kRing, 4, 200, 20), dim(DimKind::kRing, 4, 50, 700)}, "fluid", 2);
  const double c = kS / 2;
  const double ta = 3 * 20 + xfer_ns(0.75 * c, 200);
  const double tb = 6 * 700 + xfer_ns(1.5 * c / 4, 50);
  ASSERT_GT(tb, ta);
  const double expected = 2 * ta + 2 * tb;
  EXPECT_NEAR(test::time_ns(p, CollectiveOp::kAllReduce, kS), expected, expected * 1e-4);
  p.network.backend = "analytical";
  EXPECT_NEAR(test::time_ns(p, CollectiveOp::kAllReduce, kS), expected, expected * 1e-4);
}

TEST(Pipelining, ManyChunksKeepTheBottleneckDimensionBusy) {
  // 64 chunks, no latency. Per chunk, dimension 0 does RS then AG (t_a each)
  // and dimension 1 an AR between them (t_b, here equal to t_a). Completions
  // of one instant are all applied before anything new is dispatched, and AG
  // outranks RS, so dimension 0 never idles: the last chunk's AR on
  // dimension 1 runs while dimension 0 does the previous chunk's AG. The
  // collective takes exactly 2 * 64 * t_a.
  PlatformConfig p = platform({dim(DimKind::kRing, 4, 200, 0), dim(DimKind::kRing, 4, 100, 0)}, "fluid", 64);
  const double c = kS / 64;
  const double ta = xfer_ns(0.75 * c, 200);
  const double tb = xfer_ns(1.5 * c / 4, 100);
  ASSERT_DOUBLE_EQ(ta, tb);
  EXPECT_NEAR(test::time_ns(p, CollectiveOp::kAllReduce, kS), 64 * 2 * ta, 1e-3);
}

// Runs collectives created (and arrived at) in order at t=0 on one engine;
// returns their finish times in ns.
std::vector<double> run_together(PlatformConfig p, SchedulingPolicy policy, int count) {
  p.collectives.policy = policy;
  Simulation sim;
  const Topology topo(p.dims);
  auto net = make_network(p.network, sim, topo);
  CollectiveEngine engine(sim, topo, *net, p.collectives);
  CollectiveRequest r;
  r.bytes = kS;
  std::vector<CollectiveId> ids;
  for (int i = 0; i < count; ++i) {
    ids.push_back(engine.create(r));
    engine.arrive_all(ids.back());
  }
  EXPECT_TRUE(sim.run());
  std::vector<double> t;
  for (CollectiveId id : ids) {
    EXPECT_TRUE(engine.finished(id));
    t.push_back(ps_to_ns(engine.finish_time(id)));
  }
  return t;
}

TEST(Scheduling, FifoServesTheOldestFirstLifoTheNewest) {
  // Three collectives arrive at the same instant; the policy orders them.
  const PlatformConfig p = platform({dim(DimKind::kRing, 8, 100, 500)});
  const double one = 14 * (500 + xfer_ns(kS / 8, 100));
  const auto fifo = run_together(p, SchedulingPolicy::kFifo, 3);
  EXPECT_NEAR(fifo[0], one, one * 1e-4);
  EXPECT_NEAR(fifo[1], 2 * one, one * 1e-4);
  EXPECT_NEAR(fifo[2], 3 * one, one * 1e-4);
  const auto lifo = run_together(p, SchedulingPolicy::kLifo, 3);
  EXPECT_NEAR(lifo[2], one, one * 1e-4);
  EXPECT_NEAR(lifo[1], 2 * one, one * 1e-4);
  EXPECT_NEAR(lifo[0], 3 * one, one * 1e-4);
}

TEST(Sharing, ConcurrentCollectivesShareLinksOnlyInTheFluidBackend) {
  // Two active chunks per dimension: both collectives run at once on the
  // same ring. Fluid: they share every link, both finish after the bytes of
  // two (latency paid once each). Analytical: each runs as if alone.
  PlatformConfig p = platform({dim(DimKind::kRing, 8, 100, 500)});
  p.collectives.active_chunks_per_dim = 2;
  const double lat = 14 * 500;
  const double bytes = 14 * xfer_ns(kS / 8, 100);
  const auto fluid = run_together(p, SchedulingPolicy::kFifo, 2);
  EXPECT_NEAR(fluid[0], lat + 2 * bytes, (lat + 2 * bytes) * 1e-4);
  EXPECT_NEAR(fluid[1], lat + 2 * bytes, (lat + 2 * bytes) * 1e-4);
  p.network.backend = "analytical";
  const auto analytical = run_together(p, SchedulingPolicy::kFifo, 2);
  EXPECT_NEAR(analytical[0], lat + bytes, (lat + bytes) * 1e-4);
  EXPECT_NEAR(analytical[1], lat + bytes, (lat + bytes) * 1e-4);
}

TEST(Sharing, BackendsAgreeWithoutSharing) {
  for (DimKind kind : {DimKind::kRing, DimKind::kFullyConnected, DimKind::kSwitch}) {
    PlatformConfig p = platform({dim(kind, 8, 100, 500), dim(DimKind::kRing, 4, 50, 1000)}, "fluid", 8);
    const double fluid = test::time_ns(p, CollectiveOp::kAllReduce, kS);
    p.network.backend = "analytical";
    const double analytical = test::time_ns(p, CollectiveOp::kAllReduce, kS);
    if (kind == DimKind::kSwitch) {
      // Default on a switch is direct, whose pieces share the up-link.
      EXPECT_GT(fluid, analytical);
    } else {
      EXPECT_DOUBLE_EQ(fluid, analytical) << to_string(kind);
    }
  }
}

TEST(Engine, RanksArrivingLateDelayTheirGroupOnly) {
  // 2 rings of 4 along dimension 0 (dimension 1 separates them); the
  // collective spans dimension 0 only. Rank 5 (second ring) arrives late.
  PlatformConfig p = platform({dim(DimKind::kRing, 4, 100, 500), dim(DimKind::kRing, 2, 100, 500)});
  struct Late : EventHandler {
    CollectiveEngine* engine;
    CollectiveId id;
    void handle_event(std::uint64_t rank) override { engine->arrive(id, static_cast<Rank>(rank)); }
  };
  struct Done : CollectiveListener {
    Simulation* sim;
    std::vector<TimePs> at = std::vector<TimePs>(8, -1);
    void collective_done(CollectiveId, Rank r) override { at[r] = sim->now(); }
  };
  Simulation sim;
  const Topology topo(p.dims);
  auto net = make_network(p.network, sim, topo);
  CollectiveEngine engine(sim, topo, *net, p.collectives);
  Done done;
  done.sim = &sim;
  CollectiveRequest r;
  r.bytes = kS;
  r.dims = {0};
  const CollectiveId id = engine.create(r, &done);
  for (Rank rank = 0; rank < 8; ++rank) {
    if (rank != 5) engine.arrive(id, rank);
  }
  Late late;
  late.engine = &engine;
  late.id = id;
  sim.schedule_at(1000 * kPsPerUs, &late, 5, EventPriority::kStart);
  sim.run();
  const TimePs one = ns_to_ps(6 * (500 + xfer_ns(kS / 4, 100)));
  for (Rank rank = 0; rank < 4; ++rank) EXPECT_NEAR(static_cast<double>(done.at[rank]), static_cast<double>(one), 10.0);
  for (Rank rank = 4; rank < 8; ++rank) {
    EXPECT_NEAR(static_cast<double>(done.at[rank]), static_cast<double>(1000 * kPsPerUs + one), 10.0);
  }
  EXPECT_TRUE(engine.finished(id));
}

TEST(Engine, UnfinishedCollectiveIsReported) {
  PlatformConfig p = platform({dim(DimKind::kRing, 4, 100, 500)});
  Simulation sim;
  const Topology topo(p.dims);
  auto net = make_network(p.network, sim, topo);
  CollectiveEngine engine(sim, topo, *net, p.collectives);
  CollectiveRequest r;
  r.bytes = kS;
  r.name = "grad";
  const CollectiveId id = engine.create(r);
  engine.arrive(id, 0);
  engine.arrive(id, 1);
  sim.run();
  EXPECT_FALSE(engine.finished(id));
  const auto report = engine.stuck_report();
  ASSERT_EQ(report.size(), 1u);
  EXPECT_NE(report[0].find("'grad'"), std::string::npos);
  EXPECT_NE(report[0].find("2/4 ranks arrived"), std::string::npos);
  EXPECT_NE(report[0].find("missing ranks 2 3"), std::string::npos);
  EXPECT_THROW(engine.arrive(id, 0), std::logic_error);
}

TEST(Determinism, SameInputSameOutput) {
  PlatformConfig p = default_platform();
  CollectiveRequestSpec req;
  std::vector<CollectiveResult> a, b;
  for (std::uint64_t s : size_sweep(1 << 16, 1 << 26, 4)) {
    a.push_back(run_collective(p, req, s));
    b.push_back(run_collective(p, req, s));
  }
  EXPECT_EQ(to_json(p, a).dump(), to_json(p, b).dump());
  EXPECT_EQ(format_table(p, req, a), format_table(p, req, b));
}

}  // namespace
}  // namespace acesim
