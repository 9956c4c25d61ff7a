// The built-in collective algorithms: one line each. A new algorithm is one
// file defining register_<name>() and one line here (docs/architecture.md).
#include "algorithm/algorithm.h"

namespace acesim {

void register_ring(AlgorithmRegistry& registry);
void register_direct(AlgorithmRegistry& registry);
void register_halving_doubling(AlgorithmRegistry& registry);
void register_double_binary_tree(AlgorithmRegistry& registry);

void register_builtin_algorithms(AlgorithmRegistry& registry) {
  register_ring(registry);
  register_direct(registry);
  register_halving_doubling(registry);
  register_double_binary_tree(registry);
}

}  // namespace acesim
