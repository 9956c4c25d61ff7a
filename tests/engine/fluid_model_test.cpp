// Closed-form checks of the sharing solver (see docs/model.md, "Sharing solver").
#include <gtest/gtest.h>

#include <vector>

#include "engine/simulation.h"

namespace acesim {
namespace {

// Records when each activity finished.
struct Recorder : ActivityListener {
  Simulation* sim = nullptr;
  std::vector<TimePs> done_at = std::vector<TimePs>(16, -1);
  void activity_done(std::uint64_t tag) override { done_at[tag] = sim->now(); }
};

// Starts an activity at a given time through an event.
struct Starter : EventHandler {
  Simulation* sim;
  Recorder* rec;
  ActivitySpec spec;
  std::vector<Usage> usage;
  std::uint64_t tag;
  void handle_event(std::uint64_t) override { sim->fluid().start(sim->now(), spec, usage, rec, tag); }
};

constexpr double kGB = 1e9;

TEST(FluidModel, OneActivityAloneRunsAtItsBottleneck) {
  Simulation sim;
  Recorder rec;
  rec.sim = &sim;
  const ResourceId link = sim.fluid().add_resource("link", 100 * kGB);
  const std::vector<Usage> u = {{link, 1.0}};
  ActivitySpec spec;
  spec.work = 1e9;  // 1 GB at 100 GB/s = 10 ms
  sim.fluid().start(0, spec, u, &rec, 0);
  EXPECT_TRUE(sim.run());
  EXPECT_EQ(rec.done_at[0], 10 * kPsPerMs);
}

TEST(FluidModel, MaxRateCapsAnActivity) {
  Simulation sim;
  Recorder rec;
  rec.sim = &sim;
  const ResourceId link = sim.fluid().add_resource("link", 100 * kGB);
  const std::vector<Usage> u = {{link, 1.0}};
  ActivitySpec spec;
  spec.work = 1e9;
  spec.max_rate = 25 * kGB;
  sim.fluid().start(0, spec, u, &rec, 0);
  sim.run();
  EXPECT_EQ(rec.done_at[0], 40 * kPsPerMs);
}

TEST(FluidModel, NEqualFlowsShareALinkEqually) {
  for (int n : {2, 3, 7}) {
    Simulation sim;
    Recorder rec;
    rec.sim = &sim;
    const ResourceId link = sim.fluid().add_resource("link", 10 * kGB);
    const std::vector<Usage> u = {{link, 1.0}};
    std::vector<ActivityId> ids;
    for (int i = 0; i < n; ++i) {
      ActivitySpec spec;
      spec.work = 1e9;
      ids.push_back(sim.fluid().start(0, spec, u, &rec, static_cast<std::uint64_t>(i)));
    }
    EXPECT_DOUBLE_EQ(sim.fluid().rate(0, ids[0]), 10 * kGB / n);
    sim.run();
    // n GB through 10 GB/s.
    for (int i = 0; i < n; ++i) EXPECT_EQ(rec.done_at[i], n * 100 * kPsPerMs) << "n=" << n;
  }
}

TEST(FluidModel, WeightedFlowsShareInProportion) {
  Simulation sim;
  Recorder rec;
  rec.sim = &sim;
  const ResourceId link = sim.fluid().add_resource("link", 12 * kGB);
  const std::vector<Usage> u = {{link, 1.0}};
  ActivitySpec heavy;
  heavy.work = 8e9;
  heavy.weight = 2.0;
  ActivitySpec light;
  light.work = 8e9;
  light.weight = 1.0;
  const ActivityId a = sim.fluid().start(0, heavy, u, &rec, 0);
  const ActivityId b = sim.fluid().start(0, light, u, &rec, 1);
  EXPECT_DOUBLE_EQ(sim.fluid().rate(0, a), 8 * kGB);
  EXPECT_DOUBLE_EQ(sim.fluid().rate(0, b), 4 * kGB);
  sim.run();
  // heavy: 8 GB at 8 GB/s = 1 s. light: 4 GB done by then, 4 GB left at 12 GB/s = 1/3 s.
  EXPECT_EQ(rec.done_at[0], kPsPerSec);
  EXPECT_NEAR(static_cast<double>(rec.done_at[1]), static_cast<double>(kPsPerSec + kPsPerSec / 3), 2.0);
}

TEST(FluidModel, TighterOfTwoResourcesBounds) {
  Simulation sim;
  Recorder rec;
  rec.sim = &sim;
  const ResourceId link = sim.fluid().add_resource("link", 100 * kGB);
  const ResourceId hbm = sim.fluid().add_resource("hbm", 150 * kGB);
  // Each byte sent needs 2 bytes of HBM: HBM allows 75 GB/s, the link 100.
  const std::vector<Usage> u = {{link, 1.0}, {hbm, 2.0}};
  ActivitySpec spec;
  spec.work = 75e9;
  const ActivityId a = sim.fluid().start(0, spec, u, &rec, 0);
  EXPECT_DOUBLE_EQ(sim.fluid().rate(0, a), 75 * kGB);
  sim.run();
  EXPECT_EQ(rec.done_at[0], kPsPerSec);
  EXPECT_NEAR(sim.fluid().resource_used(hbm, sim.now()), 150e9, 1.0);
  EXPECT_NEAR(sim.fluid().resource_used(link, sim.now()), 75e9, 1.0);
}

TEST(FluidModel, MaxMinGivesLeftoverToUnconstrainedFlow) {
  // Classic max-min: flow A crosses links 1 and 2, flow B only link 2,
  // flow C only link 1. Link 1 = 10, link 2 = 30. A and C share link 1
  // (5 each); B takes what A leaves on link 2 (25).
  Simulation sim;
  Recorder rec;
  rec.sim = &sim;
  const ResourceId l1 = sim.fluid().add_resource("l1", 10.0);
  const ResourceId l2 = sim.fluid().add_resource("l2", 30.0);
  ActivitySpec spec;
  spec.work = 1000.0;
  const std::vector<Usage> ua = {{l1, 1.0}, {l2, 1.0}};
  const std::vector<Usage> ub = {{l2, 1.0}};
  const std::vector<Usage> uc = {{l1, 1.0}};
  const ActivityId a = sim.fluid().start(0, spec, ua, &rec, 0);
  const ActivityId b = sim.fluid().start(0, spec, ub, &rec, 1);
  const ActivityId c = sim.fluid().start(0, spec, uc, &rec, 2);
  EXPECT_DOUBLE_EQ(sim.fluid().rate(0, a), 5.0);
  EXPECT_DOUBLE_EQ(sim.fluid().rate(0, b), 25.0);
  EXPECT_DOUBLE_EQ(sim.fluid().rate(0, c), 5.0);
}

TEST(FluidModel, ActivitiesJoiningAndLeavingMidway) {
  // A alone on a 10 B/s link with 100 B; B (20 B) joins at t=4 s.
  // 0-4 s: A at 10 -> 60 left. 4-8 s: both at 5 -> A 40 left, B done at 8 s.
  // 8-12 s: A alone at 10 -> done at 12 s.
  Simulation sim;
  Recorder rec;
  rec.sim = &sim;
  const ResourceId link = sim.fluid().add_resource("link", 10.0);
  const std::vector<Usage> u = {{link, 1.0}};
  ActivitySpec a;
  a.work = 100.0;
  sim.fluid().start(0, a, u, &rec, 0);
  Starter s;
  s.sim = &sim;
  s.rec = &rec;
  s.spec.work = 20.0;
  s.usage = u;
  s.tag = 1;
  sim.schedule_at(4 * kPsPerSec, &s, 0, EventPriority::kStart);
  sim.run();
  EXPECT_EQ(rec.done_at[1], 8 * kPsPerSec);
  EXPECT_EQ(rec.done_at[0], 12 * kPsPerSec);
  EXPECT_NEAR(sim.fluid().resource_used(link, sim.now()), 120.0, 1e-9);
}

TEST(FluidModel, PriorityClassServedFirst) {
  Simulation sim;
  Recorder rec;
  rec.sim = &sim;
  const ResourceId hbm = sim.fluid().add_resource("hbm", 100.0);
  const std::vector<Usage> u = {{hbm, 1.0}};
  ActivitySpec high;
  high.work = 1000.0;
  high.max_rate = 70.0;
  high.priority_class = 0;
  ActivitySpec low;
  low.work = 1000.0;
  low.priority_class = 1;
  const ActivityId h = sim.fluid().start(0, high, u, &rec, 0);
  const ActivityId l = sim.fluid().start(0, low, u, &rec, 1);
  EXPECT_DOUBLE_EQ(sim.fluid().rate(0, h), 70.0);
  EXPECT_DOUBLE_EQ(sim.fluid().rate(0, l), 30.0);
}

TEST(FluidModel, CancelFreesCapacity) {
  Simulation sim;
  Recorder rec;
  rec.sim = &sim;
  const ResourceId link = sim.fluid().add_resource("link", 10.0);
  const std::vector<Usage> u = {{link, 1.0}};
  ActivitySpec spec;
  spec.work = 100.0;
  const ActivityId a = sim.fluid().start(0, spec, u, &rec, 0);
  const ActivityId b = sim.fluid().start(0, spec, u, &rec, 1);
  EXPECT_DOUBLE_EQ(sim.fluid().rate(0, b), 5.0);
  sim.fluid().cancel(0, a);
  EXPECT_DOUBLE_EQ(sim.fluid().rate(0, b), 10.0);
  sim.run();
  EXPECT_EQ(rec.done_at[0], -1);
  EXPECT_EQ(rec.done_at[1], 10 * kPsPerSec);
}

TEST(FluidModel, OnlyTheTouchedComponentIsRerated) {
  Simulation sim;
  Recorder rec;
  rec.sim = &sim;
  std::vector<ResourceId> links;
  for (int i = 0; i < 10; ++i) links.push_back(sim.fluid().add_resource("l", 10.0));
  ActivitySpec spec;
  spec.work = 100.0;
  for (int i = 0; i < 10; ++i) {
    const std::vector<Usage> u = {{links[i], 1.0}};
    sim.fluid().start(0, spec, u, &rec, 0);
  }
  sim.fluid().next_completion(0);
  const std::uint64_t before = sim.fluid().stats().activities_rerated;
  const std::vector<Usage> u = {{links[3], 1.0}};
  sim.fluid().start(0, spec, u, &rec, 1);
  sim.fluid().next_completion(0);
  // Only the two activities on link 3 get new rates.
  EXPECT_EQ(sim.fluid().stats().activities_rerated - before, 2u);
}

TEST(FluidModel, RefusesUnboundedActivity) {
  FluidModel f;
  ActivitySpec spec;
  spec.work = 1.0;
  EXPECT_THROW(f.start(0, spec, {}, nullptr, 0), std::invalid_argument);
}

TEST(FluidModel, ZeroWorkCompletesImmediately) {
  Simulation sim;
  Recorder rec;
  rec.sim = &sim;
  const ResourceId link = sim.fluid().add_resource("link", 10.0);
  const std::vector<Usage> u = {{link, 1.0}};
  ActivitySpec spec;
  spec.work = 0.0;
  sim.fluid().start(0, spec, u, &rec, 0);
  sim.run();
  EXPECT_EQ(rec.done_at[0], 0);
}

}  // namespace
}  // namespace acesim
