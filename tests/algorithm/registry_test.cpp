// The algorithm registry, and a collective algorithm added from outside the
// library (the recipe of docs/architecture.md) run end to end.
#include <gtest/gtest.h>

#include "algorithm/algorithm.h"
#include "support.h"

namespace acesim {
namespace {

TEST(AlgorithmRegistry, ListsTheBuiltinsInOrderWithAliases) {
  const std::vector<std::string> names = algorithm_names();
  ASSERT_GE(names.size(), 4u);
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + 4),
            (std::vector<std::string>{"ring", "direct", "halving-doubling", "double-binary-tree"}));
  EXPECT_EQ(algorithm("HD"), algorithm("halving-doubling"));
  EXPECT_EQ(algorithm("double_binary_tree"), algorithm("dbt"));
  EXPECT_EQ(astra_algorithm("halvingDoubling"), algorithm("halving-doubling"));
  EXPECT_EQ(astra_algorithm("nope"), nullptr);
  EXPECT_FALSE(algorithm("double-binary-tree")->splits);
  EXPECT_TRUE(algorithm("ring")->splits);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(algorithm(names[i])->id, static_cast<int>(i));
}

TEST(AlgorithmRegistry, RefusesUnknownNamesWithASuggestion) {
  EXPECT_FALSE(parse_algorithm("rign").has_value());
  try {
    algorithm("rign");
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "unknown collective algorithm 'rign' (did you mean 'ring'?)");
  }
}

TEST(AlgorithmRegistry, RefusesATakenName) {
  CollectiveAlgorithm a;
  a.name = "Ring";
  a.unsupported = [](CollectiveOp, long long, const std::string&) -> std::optional<std::string> { return std::nullopt; };
  a.pattern = [](CollectiveOp, int) { return Pattern{}; };
  EXPECT_THROW(register_algorithm(algorithm_registry(), a), std::logic_error);
}

// A toy: all-reduce through member 0 (everyone sends it all the data, it
// sends the sum back). Not shipped; registered here as a user would.
Algorithm star() {
  if (auto a = parse_algorithm("test-star")) return *a;
  CollectiveAlgorithm a;
  a.name = "test-star";
  a.help = "all-reduce through member 0";
  a.splits = false;
  a.unsupported = [](CollectiveOp op, long long, const std::string& what) -> std::optional<std::string> {
    if (op != CollectiveOp::kAllReduce) return what + ": test-star implements all-reduce only";
    return std::nullopt;
  };
  a.pattern = [](CollectiveOp, int n) {
    Pattern p;
    PatternStep up, down;
    for (int i = 1; i < n; ++i) {
      up.messages.push_back({i, 0, 1.0});
      down.messages.push_back({0, i, 1.0});
    }
    p.steps = {up, down};
    return p;
  };
  return register_algorithm(algorithm_registry(), std::move(a));
}

TEST(AlgorithmRegistry, AToyAlgorithmRunsEndToEnd) {
  const Algorithm s = star();
  EXPECT_EQ(algorithm("test_star"), s);
  EXPECT_GE(s->id, 4);
  // One switch of n NPUs, link bandwidth B, latency L per traversal (up and
  // down: 2L per message). Fluid: member 0's down link, then its up link,
  // carries (n-1) x S: 2 x ((n-1) S / B + 2L). Analytical (congestion-
  // unaware): each message alone, 2 x (S / B + 2L).
  const int n = 4;
  const double B = 100e9, L_ns = 500, S = 8 << 20;
  for (const char* backend : {"fluid", "analytical"}) {
    PlatformConfig p = test::platform({test::dim(DimKind::kSwitch, n, B / 1e9, L_ns)}, backend);
    test::set_algorithm(p, CollectiveOp::kAllReduce, s);
    const double expected_ns = std::string(backend) == "fluid" ? 2.0 * ((n - 1) * S / B * 1e9 + 2 * L_ns)
                                                                : 2.0 * (S / B * 1e9 + 2 * L_ns);
    EXPECT_NEAR(test::time_ns(p, CollectiveOp::kAllReduce, S), expected_ns, 1e-3) << backend;
  }
  // What it cannot run is refused with its own reason.
  PlatformConfig p = test::platform({test::dim(DimKind::kSwitch, n, 100, 500)});
  test::set_algorithm(p, CollectiveOp::kAllGather, s);
  EXPECT_THROW(test::time_ns(p, CollectiveOp::kAllGather, S), std::invalid_argument);
}

}  // namespace
}  // namespace acesim
