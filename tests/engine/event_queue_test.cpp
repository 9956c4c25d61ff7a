#include <gtest/gtest.h>

#include <vector>

#include "engine/simulation.h"

namespace acesim {
namespace {

struct Log : EventHandler {
  Simulation* sim = nullptr;
  std::vector<std::pair<TimePs, std::uint64_t>> seen;
  void handle_event(std::uint64_t tag) override { seen.emplace_back(sim->now(), tag); }
};

TEST(EventQueue, OrdersByTimeThenPriorityThenInsertion) {
  Simulation sim;
  Log log;
  log.sim = &sim;
  sim.schedule_at(50, &log, 1, EventPriority::kDefault);
  sim.schedule_at(10, &log, 2, EventPriority::kDefault);
  sim.schedule_at(50, &log, 3, EventPriority::kCompletion);
  sim.schedule_at(50, &log, 4, EventPriority::kDefault);
  sim.schedule_at(50, &log, 5, EventPriority::kStart);
  sim.run();
  const std::vector<std::uint64_t> order = {2, 3, 5, 1, 4};
  ASSERT_EQ(log.seen.size(), order.size());
  for (std::size_t i = 0; i < order.size(); ++i) EXPECT_EQ(log.seen[i].second, order[i]);
  EXPECT_EQ(sim.now(), 50);
}

TEST(EventQueue, RefusesThePast) {
  Simulation sim;
  Log log;
  log.sim = &sim;
  sim.schedule_at(100, &log, 0);
  sim.run();
  EXPECT_THROW(sim.schedule_at(99, &log, 0), std::logic_error);
}

TEST(EventQueue, TwoSimulationsAreIndependent) {
  Simulation a, b;
  Log la, lb;
  la.sim = &a;
  lb.sim = &b;
  a.schedule_at(5, &la, 1);
  b.schedule_at(7, &lb, 2);
  a.run();
  EXPECT_EQ(a.now(), 5);
  EXPECT_EQ(b.now(), 0);
  b.run();
  EXPECT_EQ(b.now(), 7);
  EXPECT_EQ(la.seen.size(), 1u);
  EXPECT_EQ(lb.seen.size(), 1u);
}

TEST(EventQueue, RunStopsAtLimit) {
  Simulation sim;
  Log log;
  log.sim = &sim;
  sim.schedule_at(10, &log, 0);
  sim.schedule_at(30, &log, 1);
  EXPECT_FALSE(sim.run(20));
  EXPECT_EQ(log.seen.size(), 1u);
  EXPECT_TRUE(sim.run());
  EXPECT_EQ(log.seen.size(), 2u);
}

}  // namespace
}  // namespace acesim
