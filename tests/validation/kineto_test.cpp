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

// With every duration as traced, each step within 0.01% and at most 3 of a
// trace's GPU activities more than 1 us from where they ran (none more than
// 2 us).
TEST(KinetoStudy, DurationsAsTracedGiveBackTheTrace) {
  ASSERT_EQ(study().cases.size(), 5u);
  long long activities = 0, on_time = 0;
  for (const KinetoCase& c : study().cases) {
    SCOPED_TRACE(c.file);
    ASSERT_FALSE(c.measured.steps.empty());
    for (const KinetoStepRecord& s : c.measured.steps) EXPECT_LT(std::abs(s.error()), 1e-4) << s.number;
    EXPECT_LE(c.measured.activities - c.measured.activities_on_time, 3);
    EXPECT_LE(c.measured.largest_start_gap_ps, 2'000'000);
    activities += c.measured.activities;
    on_time += c.measured.activities_on_time;
  }
  EXPECT_EQ(activities, 6230 + 1204 + 1154);  // the two sampled ranks twice: alone and together
  EXPECT_EQ(on_time, 6227 + 1204 + 1154);
}

}  // namespace
}  // namespace acesim
