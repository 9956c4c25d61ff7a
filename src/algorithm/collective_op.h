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

enum class CollectiveOp { kAllReduce, kReduceScatter, kAllGather, kAllToAll };
inline constexpr std::array<CollectiveOp, 4> kAllCollectiveOps = {
    CollectiveOp::kAllReduce, CollectiveOp::kReduceScatter, CollectiveOp::kAllGather,
    CollectiveOp::kAllToAll};

std::string_view to_string(CollectiveOp op);
// Spellings match ignoring case, '-' and '_': "all-reduce", "allreduce",
// ASTRA-sim's "ALLREDUCE" all name one op.
std::optional<CollectiveOp> parse_collective_op(std::string_view s);
std::vector<std::string> collective_op_names();

// nccl-tests' bus-bandwidth factor for an operation on n ranks.
double busbw_factor(CollectiveOp op, long long n);

}  // namespace acesim
