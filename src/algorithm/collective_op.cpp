#include "algorithm/collective_op.h"

#include "registry/registry.h"

namespace acesim {

std::string_view to_string(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce: return "all-reduce";
    case CollectiveOp::kReduceScatter: return "reduce-scatter";
    case CollectiveOp::kAllGather: return "all-gather";
    case CollectiveOp::kAllToAll: return "all-to-all";
    case CollectiveOp::kBroadcast: return "broadcast";
    case CollectiveOp::kReduce: return "reduce";
    case CollectiveOp::kGather: return "gather";
    case CollectiveOp::kScatter: return "scatter";
  }
  return "?";
}

std::optional<CollectiveOp> parse_collective_op(std::string_view s) {
  const std::string n = normalize_name(s);
  for (const auto& ops : {kAllCollectiveOps, kRootedCollectiveOps}) {
    for (CollectiveOp op : ops) {
      if (n == normalize_name(to_string(op))) return op;
    }
  }
  return std::nullopt;
}

std::vector<std::string> collective_op_names() {
  std::vector<std::string> names;
  for (CollectiveOp op : kAllCollectiveOps) names.emplace_back(to_string(op));
  for (CollectiveOp op : kRootedCollectiveOps) names.emplace_back(to_string(op));
  return names;
}

double busbw_factor(CollectiveOp op, long long n) {
  if (n <= 1) return 0.0;
  const double r = static_cast<double>(n - 1) / static_cast<double>(n);
  if (op == CollectiveOp::kBroadcast || op == CollectiveOp::kReduce) return 1.0;
  return op == CollectiveOp::kAllReduce ? 2.0 * r : r;
}

}  // namespace acesim
