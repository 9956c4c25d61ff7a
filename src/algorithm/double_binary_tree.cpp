// Double binary tree (NCCL's tree all-reduce): two complete binary trees,
// each reducing and broadcasting half the data. Tree A is heap-ordered
// (parent of i is (i-1)/2); tree B mirrors it (member i plays n-1-i), so the
// leaves of one are the inner nodes of the other. Reduce climbs level by
// level, then broadcast descends. All-reduce only, so it does not split in
// hierarchical plans.
#include "algorithm/algorithm.h"

namespace acesim {
namespace {

int heap_depth(int i) {
  int d = 0;
  while (i > 0) {
    i = (i - 1) / 2;
    ++d;
  }
  return d;
}

Pattern double_binary_tree(CollectiveOp, int n) {
  Pattern p;
  const int height = heap_depth(n - 1);
  auto parent_a = [](int i) { return (i - 1) / 2; };
  auto parent_b = [n](int i) { return n - 1 - ((n - 1 - i) - 1) / 2; };
  auto depth_b = [n](int i) { return heap_depth(n - 1 - i); };
  for (int level = height; level >= 1; --level) {
    PatternStep s;
    for (int i = 0; i < n; ++i) {
      if (heap_depth(i) == level) s.messages.push_back({i, parent_a(i), 0.5});
      if (depth_b(i) == level) s.messages.push_back({i, parent_b(i), 0.5});
    }
    p.steps.push_back(std::move(s));
  }
  for (int level = 1; level <= height; ++level) {
    PatternStep s;
    for (int i = 0; i < n; ++i) {
      if (heap_depth(i) == level) s.messages.push_back({parent_a(i), i, 0.5});
      if (depth_b(i) == level) s.messages.push_back({parent_b(i), i, 0.5});
    }
    p.steps.push_back(std::move(s));
  }
  return p;
}

std::optional<std::string> unsupported(CollectiveOp op, long long n, const std::string& what) {
  if (op != CollectiveOp::kAllReduce) return what + ": double-binary-tree implements all-reduce only";
  if (n > (1LL << 22)) return what + ": a group of " + std::to_string(n) + " NPUs is too large (at most 4194304); use ring";
  return std::nullopt;
}

}  // namespace

void register_double_binary_tree(AlgorithmRegistry& registry) {
  CollectiveAlgorithm a;
  a.name = "double-binary-tree";
  a.aliases = {"dbt"};
  a.help = "two complementary binary trees, half the data each (all-reduce only)";
  a.astra_names = {"doubleBinaryTree"};
  a.unsupported = unsupported;
  a.pattern = double_binary_tree;
  a.splits = false;
  register_algorithm(registry, std::move(a));
}

}  // namespace acesim
