// Watching a long run: the simulation's observer hook and Progress shares.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/progress.h"
#include "engine/simulation.h"

namespace acesim {
namespace {

// Reschedules itself `left` times, `step` apart.
class Ticker final : public EventHandler {
 public:
  Ticker(Simulation& sim, int left, TimePs step) : sim_(sim), left_(left), step_(step) {}
  void handle_event(std::uint64_t) override {
    if (--left_ > 0) sim_.schedule_in(step_, this, 0);
  }

 private:
  Simulation& sim_;
  int left_;
  TimePs step_;
};

struct Recording final : ProgressSink {
  std::vector<ProgressUpdate> updates;
  std::vector<std::string> stages;  // the views die with the call
  void progress(const ProgressUpdate& u) override {
    updates.push_back(u);
    stages.emplace_back(u.stage);
  }
};

TEST(SimulationObserver, CalledEveryKHappeningsWithMonotoneTimeAndEvents) {
  Simulation sim;
  Ticker t(sim, 10'000, 7);
  sim.schedule_at(0, &t, 0);
  std::vector<std::pair<TimePs, std::uint64_t>> seen;
  sim.set_observer([&](TimePs now, std::uint64_t handled) { seen.emplace_back(now, handled); }, 100);
  ASSERT_TRUE(sim.run());
  // 10,000 events, one call per 100: the k-th after event 100k, at (100k - 1) x 7 ps.
  ASSERT_EQ(seen.size(), 100u);
  for (std::size_t k = 0; k < seen.size(); ++k) {
    EXPECT_EQ(seen[k].second, 100 * (k + 1));
    EXPECT_EQ(seen[k].first, static_cast<TimePs>(100 * (k + 1) - 1) * 7);
  }
}

TEST(SimulationObserver, CountsFluidCompletionsAndCanBeRemoved) {
  struct Nothing final : ActivityListener {
    void activity_done(std::uint64_t) override {}
  } nothing;
  Simulation sim;
  const ResourceId link = sim.fluid().add_resource("link", 1.0);
  const Usage use[] = {{link, 1.0}};
  for (int i = 1; i <= 8; ++i) {
    ActivitySpec spec;
    spec.work = static_cast<double>(i);  // they finish one by one
    sim.fluid().start(0, spec, use, &nothing, 0);
  }
  std::vector<std::uint64_t> handled;
  sim.set_observer([&](TimePs, std::uint64_t h) { handled.push_back(h); }, 2);
  ASSERT_TRUE(sim.run());
  EXPECT_EQ(handled, (std::vector<std::uint64_t>{2, 4, 6, 8}));
  EXPECT_THROW(sim.set_observer([](TimePs, std::uint64_t) {}, 0), std::logic_error);
  // No observer: nothing called (and nothing to call).
  Simulation quiet;
  Ticker t(quiet, 5000, 1);
  quiet.schedule_at(0, &t, 0);
  quiet.set_observer(nullptr);
  EXPECT_TRUE(quiet.run());
}

TEST(Progress, SharesMapIntoTheWholeAndNeverGoBack) {
  Recording sink;
  const Progress whole(&sink);
  const Progress second = whole.part(1, 4, "size 2/4");
  second.stage("simulating");
  second.report(10, 5, 0.5);
  second.report(11, 6, 0.25);  // a smaller fraction does not move it back
  second.stage("finishing");
  second.report(12, 7, 1.0);
  const Progress tail = whole.share(0.5, 1.0, "rest").part(1, 2, "b");
  tail.report(-1, 0, 2.0);  // clamped to its share's end
  ASSERT_EQ(sink.updates.size(), 6u);
  const double expect[] = {0.25, 0.375, 0.375, 0.375, 0.5, 1.0};
  for (std::size_t i = 0; i < sink.updates.size(); ++i) EXPECT_DOUBLE_EQ(sink.updates[i].fraction, expect[i]) << i;
  EXPECT_EQ(sink.stages[0], "size 2/4: simulating");
  EXPECT_EQ(sink.stages[3], "size 2/4: finishing");
  EXPECT_EQ(sink.stages[5], "rest b");
  EXPECT_EQ(sink.updates[2].sim_time, 11);
  EXPECT_EQ(sink.updates[2].events, 6u);
  // A Progress with no sink is off and reports nothing.
  const Progress off;
  EXPECT_FALSE(off.on());
  off.part(0, 2, "x").report(0, 0, 1.0);
}

TEST(Progress, WatchReportsTheSimulationWithTheDriversFraction) {
  Recording sink;
  Simulation sim;
  Ticker t(sim, 3 * static_cast<int>(Simulation::kObserveEvery), 1);
  sim.schedule_at(0, &t, 0);
  const Progress p = Progress(&sink).part(0, 2, "");
  p.watch(sim, [&] { return static_cast<double>(sim.stats().events) / (3.0 * Simulation::kObserveEvery); });
  ASSERT_TRUE(sim.run());
  ASSERT_EQ(sink.updates.size(), 3u);
  EXPECT_DOUBLE_EQ(sink.updates[0].fraction, 0.5 / 3);
  EXPECT_DOUBLE_EQ(sink.updates[2].fraction, 0.5);
  EXPECT_EQ(sink.updates[2].events, 3 * Simulation::kObserveEvery);
}

}  // namespace
}  // namespace acesim
