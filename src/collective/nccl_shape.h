// How a collective NCCL's model chose is laid onto the links: the pattern of
// its algorithm with its channels (algorithm/nccl_patterns.h), with the
// loads of in-switch reduction for NVLS and NVLS-tree (the node's switch)
// and CollNet (the scale-out's), which no member-to-member pattern can
// express; and NCCL's once-per-collective latency as a leading step that
// moves nothing.
#pragma once

#include <span>

#include "collective/nccl_model.h"
#include "network/transfer_shape.h"

namespace acesim {

// `members`: the group in node-major order (ppn GPUs of node 0 first).
TransferShape nccl_shape(const Topology& topo, CollectiveOp op, const NcclChoice& choice, int ppn,
                         std::span<const Rank> members, bool with_messages);

}  // namespace acesim
