// Direct: every member exchanges its piece with every other member in one
// step (all-reduce: a reduce-scatter step, then an all-gather step).
#include "algorithm/algorithm.h"

namespace acesim {
namespace {

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

Pattern direct(CollectiveOp op, int n) {
  Pattern p;
  p.steps.push_back(all_pairs_step(n, 1.0 / n));
  if (op == CollectiveOp::kAllReduce) p.steps.push_back(all_pairs_step(n, 1.0 / n));
  return p;
}

std::optional<std::string> unsupported(CollectiveOp, long long n, const std::string& what) {
  if (n * (n - 1) > kMaxPairMessages) {
    return what + ": a group of " + std::to_string(n) +
           " NPUs has too many pairs for a direct pattern; use ring or a hierarchical plan";
  }
  return std::nullopt;
}

}  // namespace

void register_direct(AlgorithmRegistry& registry) {
  CollectiveAlgorithm a;
  a.name = "direct";
  a.help = "every member sends to every other member at once; one step, n(n-1) messages";
  a.astra_names = {"direct"};
  a.unsupported = unsupported;
  a.pattern = direct;
  register_algorithm(registry, std::move(a));
}

}  // namespace acesim
