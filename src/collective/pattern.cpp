#include "collective/pattern.h"

#include <stdexcept>

namespace acesim {
namespace {

// Direct patterns list n(n-1) messages; past this the group is refused.
constexpr long long kMaxDirectMessages = 1LL << 26;

bool power_of_two(long long n) { return n > 0 && (n & (n - 1)) == 0; }

int log2_exact(int n) {
  int k = 0;
  while ((1 << k) < n) ++k;
  return k;
}

PatternStep ring_step(int n, int repeat, double scale_first = 1.0, double scale_step = 0.0) {
  PatternStep s;
  s.messages.reserve(n);
  for (int i = 0; i < n; ++i) s.messages.push_back({i, (i + 1) % n, 1.0 / n});
  s.repeat = repeat;
  s.scale_first = scale_first;
  s.scale_step = scale_step;
  return s;
}

PatternStep all_pairs_step(int n, double fraction) {
  PatternStep s;
  s.messages.reserve(static_cast<std::size_t>(n) * (n - 1));
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (i != j) s.messages.push_back({i, j, fraction});
    }
  }
  return s;
}

PatternStep xor_step(int n, int distance, double fraction) {
  PatternStep s;
  s.messages.reserve(n);
  for (int i = 0; i < n; ++i) s.messages.push_back({i, i ^ distance, fraction});
  return s;
}

// Recursive halving: partners at distance n/2, n/4, ..., 1; half the data each time.
void halving(int n, Pattern& p) {
  const int k = log2_exact(n);
  for (int s = 1; s <= k; ++s) p.steps.push_back(xor_step(n, n >> s, 1.0 / (1 << s)));
}

// Recursive doubling: partners at distance 1, 2, ..., n/2; data doubles each time.
void doubling(int n, Pattern& p) {
  const int k = log2_exact(n);
  for (int s = 0; s < k; ++s) p.steps.push_back(xor_step(n, 1 << s, static_cast<double>(1 << s) / n));
}

int heap_depth(int i) {
  int d = 0;
  while (i > 0) {
    i = (i - 1) / 2;
    ++d;
  }
  return d;
}

// Two complete binary trees, each reducing and broadcasting half the data.
// Tree A is heap-ordered (parent of i is (i-1)/2); tree B mirrors it
// (member i plays n-1-i), so the leaves of one are the inner nodes of the
// other. Reduce climbs level by level, then broadcast descends.
void double_binary_tree(int n, Pattern& p) {
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
}

}  // namespace

std::optional<std::string> unsupported_reason(CollectiveOp op, Algorithm alg, long long n) {
  const std::string what = std::string(to_string(alg)) + " " + std::string(to_string(op));
  if (n < 1) return what + ": group has no NPUs";
  switch (alg) {
    case Algorithm::kRing:
      break;
    case Algorithm::kDirect:
      if (n * (n - 1) > kMaxDirectMessages) {
        return what + ": a group of " + std::to_string(n) +
               " NPUs has too many pairs for a direct pattern; use ring or a hierarchical plan";
      }
      break;
    case Algorithm::kHalvingDoubling:
      if (!power_of_two(n)) {
        return what + " needs a power-of-two group size, got " + std::to_string(n);
      }
      if (op == CollectiveOp::kAllToAll && n * (n - 1) > kMaxDirectMessages) {
        return what + ": group of " + std::to_string(n) + " NPUs is too large";
      }
      break;
    case Algorithm::kDoubleBinaryTree:
      if (op != CollectiveOp::kAllReduce) return what + ": double-binary-tree implements all-reduce only";
      if (n > (1LL << 22)) return what + ": group of " + std::to_string(n) + " NPUs is too large";
      break;
  }
  return std::nullopt;
}

Pattern make_pattern(CollectiveOp op, Algorithm alg, int n) {
  if (auto why = unsupported_reason(op, alg, n)) throw std::invalid_argument(*why);
  Pattern p;
  if (n == 1) return p;
  switch (alg) {
    case Algorithm::kRing:
      switch (op) {
        case CollectiveOp::kReduceScatter:
        case CollectiveOp::kAllGather:
          p.steps.push_back(ring_step(n, n - 1));
          break;
        case CollectiveOp::kAllReduce:
          p.steps.push_back(ring_step(n, 2 * (n - 1)));
          break;
        case CollectiveOp::kAllToAll:
          // Store-and-forward around the ring: step k carries the (n-k)
          // pieces that still have to travel further.
          p.steps.push_back(ring_step(n, n - 1, n - 1, -1.0));
          break;
      }
      break;
    case Algorithm::kDirect:
      if (op == CollectiveOp::kAllReduce) {
        p.steps.push_back(all_pairs_step(n, 1.0 / n));  // reduce-scatter
        p.steps.push_back(all_pairs_step(n, 1.0 / n));  // all-gather
      } else {
        p.steps.push_back(all_pairs_step(n, 1.0 / n));
      }
      break;
    case Algorithm::kHalvingDoubling:
      switch (op) {
        case CollectiveOp::kReduceScatter: halving(n, p); break;
        case CollectiveOp::kAllGather: doubling(n, p); break;
        case CollectiveOp::kAllReduce:
          halving(n, p);
          doubling(n, p);
          break;
        case CollectiveOp::kAllToAll:
          // Pairwise exchange: in step k every member swaps its piece with i xor k.
          for (int k = 1; k < n; ++k) p.steps.push_back(xor_step(n, k, 1.0 / n));
          break;
      }
      break;
    case Algorithm::kDoubleBinaryTree:
      double_binary_tree(n, p);
      break;
  }
  return p;
}

}  // namespace acesim
