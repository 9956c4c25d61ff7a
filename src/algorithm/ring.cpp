// Ring: every member sends to its successor at every step. Reduce-scatter
// and all-gather take n-1 steps of 1/n of the data, all-reduce both.
#include "algorithm/algorithm.h"

namespace acesim {
namespace {

PatternStep ring_step(int n, int repeat, double scale_first, double scale_step) {
  PatternStep s;
  s.messages.reserve(n);
  for (int i = 0; i < n; ++i) s.messages.push_back({i, (i + 1) % n, 1.0 / n});
  s.repeat = repeat;
  s.scale_first = scale_first;
  s.scale_step = scale_step;
  return s;
}

Pattern ring(CollectiveOp op, int n) {
  Pattern p;
  switch (op) {
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllGather:
      p.steps.push_back(ring_step(n, n - 1, 1.0, 0.0));
      break;
    case CollectiveOp::kAllReduce:
      p.steps.push_back(ring_step(n, 2 * (n - 1), 1.0, 0.0));
      break;
    case CollectiveOp::kAllToAll:
      // Store-and-forward around the ring: step k carries the (n-k)
      // pieces that still have to travel further.
      p.steps.push_back(ring_step(n, n - 1, n - 1, -1.0));
      break;
    default: break;  // rooted: refused by unsupported()
  }
  return p;
}

}  // namespace

void register_ring(AlgorithmRegistry& registry) {
  CollectiveAlgorithm a;
  a.name = "ring";
  a.help = "each member sends to its successor; bandwidth-optimal, latency grows with n";
  a.astra_names = {"ring"};
  a.unsupported = [](CollectiveOp op, long long, const std::string& what) -> std::optional<std::string> {
    if (is_rooted(op)) return what + ": rooted phases run direct";
    return std::nullopt;
  };
  a.pattern = ring;
  register_algorithm(registry, std::move(a));
}

}  // namespace acesim
