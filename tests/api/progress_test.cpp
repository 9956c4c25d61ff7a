// Progress of whole requests: what a display is told while a size sweep, a
// training run or a study goes (engine/progress.h).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "api/api.h"
#include "driver/characterization.h"
#include "scratch_dir.h"
#include "test_paths.h"

namespace acesim {
namespace {

struct Recording final : ProgressSink {
  std::vector<ProgressUpdate> updates;
  std::vector<std::string> stages;
  void progress(const ProgressUpdate& u) override {
    updates.push_back(u);
    stages.emplace_back(u.stage);
  }
  // The fraction never goes back, starts at 0 and ends at exactly 1; within
  // one simulation, time and events never go back either.
  void expect_monotone() const {
    ASSERT_FALSE(updates.empty());
    EXPECT_DOUBLE_EQ(updates.front().fraction, 0.0);
    EXPECT_DOUBLE_EQ(updates.back().fraction, 1.0);
    for (std::size_t i = 1; i < updates.size(); ++i) {
      EXPECT_GE(updates[i].fraction, updates[i - 1].fraction) << stages[i];
      if (stages[i] == stages[i - 1] && updates[i - 1].sim_time >= 0) {
        EXPECT_GE(updates[i].sim_time, updates[i - 1].sim_time) << stages[i];
        EXPECT_GE(updates[i].events, updates[i - 1].events) << stages[i];
      }
    }
  }
  std::size_t count(const std::string& stage) const {
    std::size_t n = 0;
    for (const std::string& s : stages) n += s == stage;
    return n;
  }
};

using ProgressApi = test::ScratchDirTest;

TEST_F(ProgressApi, ASweepOfFullCollectivesReportsEachSizeInItsShare) {
  // 512 NPUs simulated in full: thousands of events per size, so the
  // simulation's observer reports several times inside each.
  api::CollectiveRequest r;
  r.platform.file = write("cube.yaml", "topology:\n"
                                       "  - {kind: ring, npus: 8, bandwidth_GBps: 50, latency_ns: 500}\n"
                                       "  - {kind: ring, npus: 8, bandwidth_GBps: 50, latency_ns: 500}\n"
                                       "  - {kind: ring, npus: 8, bandwidth_GBps: 50, latency_ns: 500}\n"
                                       "collectives: {chunks: 64}\n");
  r.platform.full = true;
  r.min_bytes = "1MiB";
  r.max_bytes = "4MiB";
  Recording rec;
  r.progress = &rec;
  const api::CollectiveRun run = api::simulate_collectives(r);
  ASSERT_EQ(run.results.size(), 3u);
  rec.expect_monotone();
  EXPECT_EQ(rec.stages.front(), "size 1/3 (1 MiB): building");
  for (std::size_t i = 0; i < 3; ++i) {
    const std::string size = i == 0 ? "1 MiB" : i == 1 ? "2 MiB" : "4 MiB";
    const std::string simulating = "size " + std::to_string(i + 1) + "/3 (" + size + "): simulating";
    // The first report of a simulation and its last (done, at the end time);
    // between them, one each time Simulation::kObserveEvery more happenings
    // were handled (a batch of completions counts whole: at most that many).
    const std::uint64_t events = run.results[i].events;
    EXPECT_GE(events, 4 * Simulation::kObserveEvery);
    EXPECT_GE(rec.count(simulating), 2 + 2u) << simulating;
    EXPECT_LE(rec.count(simulating), 2 + events / Simulation::kObserveEvery) << simulating;
  }
  // A size's share ends where the next begins: 1/3, 2/3, 1.
  for (std::size_t i = 0; i < rec.updates.size(); ++i) {
    if (rec.stages[i].rfind("size 2/3", 0) == 0) {
      EXPECT_GE(rec.updates[i].fraction, 1.0 / 3 - 1e-12);
      EXPECT_LE(rec.updates[i].fraction, 2.0 / 3 + 1e-12);
    }
  }
}

TEST(ProgressApiTraining, ExecutorsSideBySideShareTheWhole) {
  api::TrainingRequest r;
  r.iterations = 2;  // nothing else given: ResNet-50, sm and ace side by side
  Recording rec;
  r.progress = &rec;
  const api::TrainingRun run = api::simulate_training(r);
  ASSERT_EQ(run.reports.size(), 2u);
  rec.expect_monotone();
  EXPECT_EQ(rec.count("sm: building"), 1u);
  EXPECT_EQ(rec.count("ace: building"), 1u);
  // The first executor's run ends at half of the whole.
  for (std::size_t i = 0; i < rec.updates.size(); ++i) {
    if (rec.stages[i].rfind("sm:", 0) == 0) {
      EXPECT_LE(rec.updates[i].fraction, 0.5 + 1e-12);
    } else {
      EXPECT_GE(rec.updates[i].fraction, 0.5 - 1e-12);
    }
  }
}

TEST(ProgressApiStudy, EveryPointOfAStudyIsAShare) {
  api::PlatformRequest pr;
  pr.file = test::data_dir() + "/platforms/ring8.yaml";
  const PlatformConfig platform = api::load_platform(pr);
  for (const std::string name : {"units", "hbm", "overlap", "traffic"}) {
    Recording rec;
    const Study s = run_study(name, platform, CollectiveRequestSpec{}, 1 << 20, gemm_kernel(1024, 1024, 1024),
                              Progress(&rec));
    rec.expect_monotone();
    // Each row: its building stage, in its own share of 1/rows.
    const std::size_t rows = s.rows.size();
    std::size_t building = 0;
    for (std::size_t i = 0; i < rec.updates.size(); ++i) {
      if (rec.stages[i].find(": building") == std::string::npos) continue;
      EXPECT_NEAR(rec.updates[i].fraction, static_cast<double>(building) / static_cast<double>(rows), 1e-12)
          << rec.stages[i];
      EXPECT_EQ(rec.stages[i].rfind(name + " " + std::to_string(building + 1) + "/" + std::to_string(rows) + " (", 0), 0u)
          << rec.stages[i];
      ++building;
    }
    EXPECT_EQ(building, rows) << name;
  }
}

}  // namespace
}  // namespace acesim
