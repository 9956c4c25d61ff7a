#include <stdexcept>

#include "algorithm/algorithm.h"

namespace acesim {

AlgorithmRegistry& algorithm_registry() {
  static AlgorithmRegistry registry("collective algorithm", register_builtin_algorithms);
  return registry;
}

Algorithm register_algorithm(AlgorithmRegistry& registry, CollectiveAlgorithm alg) {
  if (!alg.pattern || !alg.unsupported) throw std::logic_error("algorithm '" + alg.name + "' needs pattern and unsupported");
  // The shape cache packs the id into 13 bits (collective/collective_engine.cpp).
  if (registry.size() >= 8192) throw std::logic_error("more than 8192 collective algorithms");
  alg.id = static_cast<int>(registry.size());
  return &registry.add(std::move(alg));
}

std::optional<Algorithm> parse_algorithm(std::string_view name) {
  if (Algorithm a = algorithm_registry().find(name)) return a;
  return std::nullopt;
}

Algorithm algorithm(std::string_view name) { return &algorithm_registry().get(name); }

Algorithm astra_algorithm(std::string_view name) {
  const std::string n = normalize_name(name);
  for (const CollectiveAlgorithm& a : algorithm_registry().entries()) {
    for (const std::string& s : a.astra_names) {
      if (normalize_name(s) == n) return &a;
    }
  }
  return nullptr;
}

std::string_view to_string(Algorithm alg) { return alg != nullptr ? std::string_view(alg->name) : "?"; }

std::vector<std::string> algorithm_names() { return algorithm_registry().names(); }

std::optional<std::string> unsupported_reason(CollectiveOp op, Algorithm alg, long long n) {
  const std::string what = std::string(to_string(alg)) + " " + std::string(to_string(op));
  if (n < 1) return what + ": group has no NPUs";
  return alg->unsupported(op, n, what);
}

std::optional<std::string> operation_unsupported(CollectiveOp op, Algorithm alg) { return unsupported_reason(op, alg, 2); }

Pattern make_pattern(CollectiveOp op, Algorithm alg, int n) {
  if (auto why = unsupported_reason(op, alg, n)) throw std::invalid_argument(*why);
  if (n == 1) return {};
  return alg->pattern(op, n);
}

}  // namespace acesim
