#include "collective/types.h"

#include <algorithm>
#include <cctype>

namespace acesim {
namespace {
std::string normalize(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '-' || c == '_' || c == ' ') continue;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}
}  // namespace

std::string_view to_string(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce: return "all-reduce";
    case CollectiveOp::kReduceScatter: return "reduce-scatter";
    case CollectiveOp::kAllGather: return "all-gather";
    case CollectiveOp::kAllToAll: return "all-to-all";
  }
  return "?";
}

std::string_view to_string(Algorithm alg) {
  switch (alg) {
    case Algorithm::kRing: return "ring";
    case Algorithm::kDirect: return "direct";
    case Algorithm::kHalvingDoubling: return "halving-doubling";
    case Algorithm::kDoubleBinaryTree: return "double-binary-tree";
  }
  return "?";
}

std::string_view to_string(PlanKind plan) {
  switch (plan) {
    case PlanKind::kHierarchical: return "hierarchical";
    case PlanKind::kFlat: return "flat";
    case PlanKind::kPerDimension: return "per-dimension";
  }
  return "?";
}

std::string_view to_string(SchedulingPolicy policy) {
  return policy == SchedulingPolicy::kLifo ? "lifo" : "fifo";
}

// Spellings are matched ignoring case, '-' and '_', so "all-reduce",
// "allreduce", "ALL_REDUCE" and ASTRA-sim's "ALLREDUCE" all name one op.
std::optional<CollectiveOp> parse_collective_op(std::string_view s) {
  const std::string n = normalize(s);
  for (CollectiveOp op : kAllCollectiveOps) {
    if (n == normalize(to_string(op))) return op;
  }
  return std::nullopt;
}

std::optional<Algorithm> parse_algorithm(std::string_view s) {
  const std::string n = normalize(s);
  if (n == "ring") return Algorithm::kRing;
  if (n == "direct") return Algorithm::kDirect;
  if (n == "halvingdoubling" || n == "hd") return Algorithm::kHalvingDoubling;
  if (n == "doublebinarytree" || n == "dbt") return Algorithm::kDoubleBinaryTree;
  return std::nullopt;
}

std::optional<PlanKind> parse_plan(std::string_view s) {
  const std::string n = normalize(s);
  if (n == "hierarchical") return PlanKind::kHierarchical;
  if (n == "flat") return PlanKind::kFlat;
  if (n == "perdimension") return PlanKind::kPerDimension;
  return std::nullopt;
}

std::optional<SchedulingPolicy> parse_scheduling_policy(std::string_view s) {
  const std::string n = normalize(s);
  if (n == "lifo") return SchedulingPolicy::kLifo;
  if (n == "fifo") return SchedulingPolicy::kFifo;
  return std::nullopt;
}

std::vector<std::string> collective_op_names() {
  return {"all-reduce", "reduce-scatter", "all-gather", "all-to-all"};
}
std::vector<std::string> algorithm_names() {
  return {"ring", "direct", "halving-doubling", "double-binary-tree"};
}
std::vector<std::string> plan_names() { return {"hierarchical", "flat", "per-dimension"}; }

double busbw_factor(CollectiveOp op, long long n) {
  if (n <= 1) return 0.0;
  const double r = static_cast<double>(n - 1) / static_cast<double>(n);
  return op == CollectiveOp::kAllReduce ? 2.0 * r : r;
}

}  // namespace acesim
