// Halving-doubling (Rabenseifner): recursive halving reduce-scatter, then
// recursive doubling all-gather; log2(n) steps each. Power-of-two groups.
#include "algorithm/algorithm.h"

namespace acesim {
namespace {

bool power_of_two(long long n) { return n > 0 && (n & (n - 1)) == 0; }

int log2_exact(int n) {
  int k = 0;
  while ((1 << k) < n) ++k;
  return k;
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

Pattern halving_doubling(CollectiveOp op, int n) {
  Pattern p;
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
    default: break;  // rooted: refused by unsupported()
  }
  return p;
}

std::optional<std::string> unsupported(CollectiveOp op, long long n, const std::string& what) {
  if (is_rooted(op)) return what + ": rooted phases run direct";
  if (!power_of_two(n)) return what + " needs a power-of-two group size, got " + std::to_string(n) + "; use ring";
  if (op == CollectiveOp::kAllToAll && n * (n - 1) > kMaxPairMessages) {
    return what + ": a group of " + std::to_string(n) + " NPUs has too many pairs for a pairwise exchange; use ring";
  }
  return std::nullopt;
}

}  // namespace

void register_halving_doubling(AlgorithmRegistry& registry) {
  CollectiveAlgorithm a;
  a.name = "halving-doubling";
  a.aliases = {"hd"};
  a.help = "recursive halving then doubling; log2(n) steps each way; power-of-two groups";
  a.astra_names = {"halvingDoubling"};
  a.unsupported = unsupported;
  a.pattern = halving_doubling;
  register_algorithm(registry, std::move(a));
}

}  // namespace acesim
