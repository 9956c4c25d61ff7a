// Direct: every member exchanges its piece with every other member in one
// step (all-reduce: a reduce-scatter step, then an all-gather step). The
// rooted phases are direct too: in one step the root (member 0) sends each
// member its 1/n (scatter), or receives each member's 1/n (gather).
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

PatternStep rooted_step(CollectiveOp op, int n) {
  PatternStep s;
  s.messages.reserve(static_cast<std::size_t>(n) - 1);
  for (int i = 1; i < n; ++i) {
    s.messages.push_back(op == CollectiveOp::kScatter ? PatternMessage{0, i, 1.0 / n} : PatternMessage{i, 0, 1.0 / n});
  }
  return s;
}

Pattern direct(CollectiveOp op, int n) {
  Pattern p;
  if (op == CollectiveOp::kGather || op == CollectiveOp::kScatter) {
    p.steps.push_back(rooted_step(op, n));
    return p;
  }
  p.steps.push_back(all_pairs_step(n, 1.0 / n));
  if (op == CollectiveOp::kAllReduce) p.steps.push_back(all_pairs_step(n, 1.0 / n));
  return p;
}

std::optional<std::string> unsupported(CollectiveOp op, long long n, const std::string& what) {
  if (op == CollectiveOp::kBroadcast || op == CollectiveOp::kReduce) {
    return what + ": runs as phases (scatter + all-gather, reduce-scatter + gather), not one pattern";
  }
  if (op == CollectiveOp::kGather || op == CollectiveOp::kScatter) {
    if (n > (1LL << 26)) return what + ": a group of " + std::to_string(n) + " NPUs is too large";
    return std::nullopt;
  }
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
