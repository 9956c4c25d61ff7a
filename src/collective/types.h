// Names shared by the collective layer, the config readers and the reports.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace acesim {

enum class CollectiveOp { kAllReduce, kReduceScatter, kAllGather, kAllToAll };
inline constexpr std::array<CollectiveOp, 4> kAllCollectiveOps = {
    CollectiveOp::kAllReduce, CollectiveOp::kReduceScatter, CollectiveOp::kAllGather,
    CollectiveOp::kAllToAll};

enum class Algorithm { kRing, kDirect, kHalvingDoubling, kDoubleBinaryTree };

// How a collective over several dimensions is split into per-dimension phases.
enum class PlanKind {
  // reduce-scatter up the dimensions, all-reduce on the last, all-gather back down
  kHierarchical,
  // one phase over all the collective's NPUs as a single group
  kFlat,
  // all-reduce: a full all-reduce on each dimension in turn (ASTRA-sim's
  // "baseline" collective optimization); other ops as hierarchical
  kPerDimension,
};

enum class SchedulingPolicy { kLifo, kFifo };

std::string_view to_string(CollectiveOp op);
std::string_view to_string(Algorithm alg);
std::string_view to_string(PlanKind plan);
std::string_view to_string(SchedulingPolicy policy);

std::optional<CollectiveOp> parse_collective_op(std::string_view s);
std::optional<Algorithm> parse_algorithm(std::string_view s);
std::optional<PlanKind> parse_plan(std::string_view s);
std::optional<SchedulingPolicy> parse_scheduling_policy(std::string_view s);

// Valid spellings, for error messages and suggestions.
std::vector<std::string> collective_op_names();
std::vector<std::string> algorithm_names();
std::vector<std::string> plan_names();

// nccl-tests' bus-bandwidth factor for an operation on n ranks.
double busbw_factor(CollectiveOp op, long long n);

}  // namespace acesim
