// `acesim reproduce placement` (reproduce/placement.h): the closed forms of
// two jobs on one bottleneck link, the effect of placement and of a time
// shift, and the tables docs/cluster.md shows.
#include "reproduce/placement.h"

#include <gtest/gtest.h>

#include "test_paths.h"

namespace acesim {
namespace {

const PlacementStudy& study() {
  static const PlacementStudy s = run_placement_study();
  return s;
}

const PlacementPoint& point(double oversubscription, const std::string& placement, double shift) {
  for (const PlacementPoint& p : study().points) {
    if (p.oversubscription == oversubscription && p.placement == placement && p.shift == shift) return p;
  }
  throw std::logic_error("no such point");
}

TEST(PlacementStudy, ClosedFormsHold) {
  ASSERT_EQ(study().closed_forms.size(), 3u);
  for (const ClosedFormCase& c : study().closed_forms) {
    EXPECT_EQ(c.iteration_ps, c.expected_ps) << c.name;
    EXPECT_DOUBLE_EQ(c.slowdown, c.expected_slowdown) << c.name;
  }
}

TEST(PlacementStudy, PackedSharesNothingSpreadSlowsAndAShiftUndoesIt) {
  EXPECT_EQ(study().points.size(), 27u);
  for (double o : {1.0, 2.0, 4.0}) {
    for (double shift : {0.0, 0.25, 0.5}) {
      const PlacementPoint& p = point(o, "packed", shift);
      EXPECT_DOUBLE_EQ(p.slowdown[0], 1.0);
      EXPECT_DOUBLE_EQ(p.slowdown[1], 1.0);
      EXPECT_EQ(p.shared_bytes, 0.0);
    }
  }
  // 1:1: an uplink per node, so even spread jobs share no link.
  EXPECT_DOUBLE_EQ(point(1.0, "spread", 0.0).slowdown[0], 1.0);
  for (double o : {2.0, 4.0}) {
    EXPECT_NEAR(point(o, "spread", 0.0).slowdown[0], 1.405, 0.001);
    EXPECT_NEAR(point(o, "spread", 0.25).slowdown[0], 1.155, 0.001);
    EXPECT_DOUBLE_EQ(point(o, "spread", 0.5).slowdown[0], 1.0);
    EXPECT_GT(point(o, "spread", 0.0).shared_bytes, 500e9);
  }
  // Random: slower alone at 4:1 (its ring crosses more leaves).
  EXPECT_GT(point(4.0, "random", 0.0).alone_ps, point(4.0, "packed", 0.0).alone_ps);
}

TEST(PlacementStudy, DocTablesAreTheCommandsOutput) {
  EXPECT_EQ(test::doc_tables("docs/cluster.md", "placement"), placement_tables(study()))
      << "regenerate with scripts/update-doc-tables.py placement";
}

}  // namespace
}  // namespace acesim
