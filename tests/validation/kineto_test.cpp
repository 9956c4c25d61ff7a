// acesim reproduce kineto: PyTorch profiler traces of real runs replayed
// (docs/validation.md, section 8), and the replay's own bar.
#include "reproduce/kineto_replays.h"

#include <cmath>

#include <gtest/gtest.h>

#include "test_paths.h"

namespace acesim {
namespace {

const KinetoStudy& study() {
  static const KinetoStudy s = run_kineto_study(test::data_dir());
  return s;
}

TEST(KinetoStudy, DocumentedTablesAreWhatTheStudyComputes) {
  EXPECT_EQ(test::doc_tables("docs/validation.md", "kineto"), kineto_study_tables(study()))
      << "docs/validation.md's section 8 is out of date: paste `acesim reproduce kineto`'s tables";
}

// With every duration as traced, each step within 0.01% and every GPU
// activity starting where it ran.
TEST(KinetoStudy, DurationsAsTracedGiveBackTheTrace) {
  ASSERT_EQ(study().cases.size(), 6u);
  long long activities = 0, on_time = 0;
  for (const KinetoCase& c : study().cases) {
    SCOPED_TRACE(c.file);
    ASSERT_FALSE(c.measured.steps.empty());
    for (const KinetoStepRecord& s : c.measured.steps) EXPECT_LT(std::abs(s.error()), 1e-4) << s.number;
    EXPECT_EQ(c.measured.activities_on_time, c.measured.activities);
    EXPECT_EQ(c.measured.largest_start_gap_ps, 0);
    activities += c.measured.activities;
    on_time += c.measured.activities_on_time;
  }
  EXPECT_EQ(activities, 6230 + 1204 + 1154 + 822);  // the two sampled ranks twice (alone and together), the H200 trace
  EXPECT_EQ(on_time, activities);
}

}  // namespace
}  // namespace acesim
