// Collective algorithms: one registry entry per algorithm, each in its own
// file (algorithm/ring.cpp, direct.cpp, ...). An algorithm generates the
// pattern of one operation on one group of n members; the collective layer
// above decides which groups (plans over dimensions) and the network below
// lays patterns onto links. To add one: docs/architecture.md.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "algorithm/collective_op.h"
#include "algorithm/pattern.h"
#include "registry/registry.h"

namespace acesim {

struct CollectiveAlgorithm : RegistryEntryBase {
  // Spellings in ASTRA-sim system files (`all-reduce-implementation` etc.).
  std::vector<std::string> astra_names;
  // Why it cannot run `op` on n >= 1 members, or nullopt when it can.
  // `what` ("ring all-reduce") starts every message.
  std::function<std::optional<std::string>(CollectiveOp op, long long n, const std::string& what)> unsupported;
  // The steps of `op` on n >= 2 members (only called when supported).
  std::function<Pattern(CollectiveOp op, int n)> pattern;
  // Hierarchical plans reduce-scatter up the dimensions and all-gather back;
  // an algorithm that cannot split (a tree) runs a full all-reduce on its
  // dimension instead.
  bool splits = true;
  int id = -1;  // position in the registry, set when registered
};

// A chosen algorithm: a registry entry, alive for the whole process.
using Algorithm = const CollectiveAlgorithm*;

using AlgorithmRegistry = Registry<CollectiveAlgorithm>;
// The registry, with the built-in algorithms registered on first use.
AlgorithmRegistry& algorithm_registry();
// Adds `alg` (its id set to its position). Throws std::logic_error on a
// taken name or a missing function.
Algorithm register_algorithm(AlgorithmRegistry& registry, CollectiveAlgorithm alg);
// The built-ins, one line each (algorithm/builtin.cpp).
void register_builtin_algorithms(AlgorithmRegistry& registry);

// By name or alias; nullopt when unknown.
std::optional<Algorithm> parse_algorithm(std::string_view name);
// By name; throws std::invalid_argument with a suggestion when unknown.
Algorithm algorithm(std::string_view name);
// By an ASTRA-sim implementation name; nullptr when unknown.
Algorithm astra_algorithm(std::string_view name);
std::string_view to_string(Algorithm alg);
std::vector<std::string> algorithm_names();

// Why `alg` cannot run `op` on n members, or nullopt when it can.
std::optional<std::string> unsupported_reason(CollectiveOp op, Algorithm alg, long long n);
// Why `alg` cannot run `op` on any group: what it refuses on two members.
// A platform is refused for this when it is read; a group size an
// algorithm cannot serve only where a collective runs on such a group
// (plan_refusal, collective/plan.h).
std::optional<std::string> operation_unsupported(CollectiveOp op, Algorithm alg);
// Throws std::invalid_argument with unsupported_reason() when unsupported.
Pattern make_pattern(CollectiveOp op, Algorithm alg, int n);

}  // namespace acesim
