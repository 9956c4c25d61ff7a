#include <gtest/gtest.h>

#include <map>

#include "algorithm/algorithm.h"

namespace acesim {
namespace {

// Bytes (as a fraction of the phase size) each member sends over a pattern.
std::vector<double> sent(const Pattern& p, int n) {
  std::vector<double> out(n, 0.0);
  for (const PatternStep& s : p.steps) {
    for (const PatternMessage& m : s.messages) out[m.src] += m.fraction * s.scale_sum();
  }
  return out;
}

TEST(Pattern, BandwidthOptimalAlgorithmsSendTheTextbookVolume) {
  for (int n : {2, 4, 8, 16}) {
    const double rs = (n - 1.0) / n;
    for (Algorithm alg : {algorithm("ring"), algorithm("direct"), algorithm("halving-doubling")}) {
      for (double v : sent(make_pattern(CollectiveOp::kReduceScatter, alg, n), n)) EXPECT_NEAR(v, rs, 1e-12);
      for (double v : sent(make_pattern(CollectiveOp::kAllGather, alg, n), n)) EXPECT_NEAR(v, rs, 1e-12);
      for (double v : sent(make_pattern(CollectiveOp::kAllReduce, alg, n), n)) EXPECT_NEAR(v, 2 * rs, 1e-12);
    }
    // All-to-all: direct and pairwise send (n-1)/n; the ring forwards, so
    // each member sends (n-1)/2 in total.
    for (double v : sent(make_pattern(CollectiveOp::kAllToAll, algorithm("direct"), n), n)) EXPECT_NEAR(v, rs, 1e-12);
    for (double v : sent(make_pattern(CollectiveOp::kAllToAll, algorithm("halving-doubling"), n), n)) EXPECT_NEAR(v, rs, 1e-12);
    for (double v : sent(make_pattern(CollectiveOp::kAllToAll, algorithm("ring"), n), n)) EXPECT_NEAR(v, (n - 1) / 2.0, 1e-12);
  }
}

TEST(Pattern, StepCounts) {
  EXPECT_EQ(make_pattern(CollectiveOp::kAllReduce, algorithm("ring"), 8).total_steps(), 14);
  EXPECT_EQ(make_pattern(CollectiveOp::kAllReduce, algorithm("direct"), 8).total_steps(), 2);
  EXPECT_EQ(make_pattern(CollectiveOp::kAllReduce, algorithm("halving-doubling"), 8).total_steps(), 6);
  EXPECT_EQ(make_pattern(CollectiveOp::kAllReduce, algorithm("double-binary-tree"), 8).total_steps(), 6);
  EXPECT_EQ(make_pattern(CollectiveOp::kAllReduce, algorithm("double-binary-tree"), 6).total_steps(), 4);
  EXPECT_EQ(make_pattern(CollectiveOp::kAllToAll, algorithm("halving-doubling"), 8).total_steps(), 7);
  EXPECT_EQ(make_pattern(CollectiveOp::kAllReduce, algorithm("ring"), 1).total_steps(), 0);
}

TEST(Pattern, DoubleBinaryTreesReduceEveryMemberIntoBothRoots) {
  for (int n : {2, 3, 5, 8, 13}) {
    const Pattern p = make_pattern(CollectiveOp::kAllReduce, algorithm("double-binary-tree"), n);
    // In the reduce half every non-root member sends exactly once per tree.
    std::map<int, int> sends;
    const std::size_t half = p.steps.size() / 2;
    for (std::size_t s = 0; s < half; ++s) {
      for (const PatternMessage& m : p.steps[s].messages) {
        EXPECT_DOUBLE_EQ(m.fraction, 0.5);
        ++sends[m.src];
      }
    }
    int total = 0;
    for (auto& [member, count] : sends) {
      EXPECT_LE(count, 2) << "member " << member;
      total += count;
    }
    EXPECT_EQ(total, 2 * (n - 1)) << "n=" << n;
  }
}

TEST(Pattern, UnsupportedCombinationsAreExplained) {
  EXPECT_TRUE(unsupported_reason(CollectiveOp::kAllReduce, algorithm("halving-doubling"), 6).has_value());
  EXPECT_TRUE(unsupported_reason(CollectiveOp::kAllGather, algorithm("double-binary-tree"), 8).has_value());
  EXPECT_FALSE(unsupported_reason(CollectiveOp::kAllReduce, algorithm("double-binary-tree"), 6).has_value());
  EXPECT_TRUE(unsupported_reason(CollectiveOp::kAllReduce, algorithm("direct"), 1 << 20).has_value());
  EXPECT_THROW(make_pattern(CollectiveOp::kReduceScatter, algorithm("halving-doubling"), 12), std::invalid_argument);
}

}  // namespace
}  // namespace acesim
