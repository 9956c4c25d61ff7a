// The collective operations and their size conventions (docs/model.md).
// Operations are the fixed vocabulary every layer speaks; algorithms that
// carry them out are plug-ins (algorithm/algorithm.h).
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace acesim {

enum class CollectiveOp {
  kAllReduce,
  kReduceScatter,
  kAllGather,
  kAllToAll,
  // Rooted: one member (the root) is the source or the destination.
  kBroadcast,
  kReduce,
  kGather,
  kScatter,
};
// The symmetric operations: each has its own plan and algorithms in a
// platform's configuration (collective/plan.h). Rooted operations are built
// from them and from direct gather/scatter phases (docs/model.md, "Rooted
// collectives"), so they have no configuration of their own.
inline constexpr std::array<CollectiveOp, 4> kAllCollectiveOps = {
    CollectiveOp::kAllReduce, CollectiveOp::kReduceScatter, CollectiveOp::kAllGather,
    CollectiveOp::kAllToAll};
inline constexpr std::array<CollectiveOp, 4> kRootedCollectiveOps = {
    CollectiveOp::kBroadcast, CollectiveOp::kReduce, CollectiveOp::kGather, CollectiveOp::kScatter};

constexpr bool is_rooted(CollectiveOp op) {
  return op == CollectiveOp::kBroadcast || op == CollectiveOp::kReduce || op == CollectiveOp::kGather ||
         op == CollectiveOp::kScatter;
}

std::string_view to_string(CollectiveOp op);
// Spellings match ignoring case, '-' and '_': "all-reduce", "allreduce",
// ASTRA-sim's "ALLREDUCE" all name one op. Every operation, rooted ones too.
std::optional<CollectiveOp> parse_collective_op(std::string_view s);
std::vector<std::string> collective_op_names();

// nccl-tests' bus-bandwidth factor for an operation on n ranks (1 for
// broadcast and reduce, (n-1)/n for gather and scatter, as nccl-tests).
double busbw_factor(CollectiveOp op, long long n);

}  // namespace acesim
