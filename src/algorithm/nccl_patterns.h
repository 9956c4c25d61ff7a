// The patterns of NCCL's ring and tree with several channels, on a group of
// n = nodes x ppn members numbered node-major (member m is GPU m % ppn of
// node m / ppn, as acesim numbers ranks with dimension 0 fastest). They take
// NCCL's parameters (GPUs per node, channels), so they are not registry
// entries: the collective layer's NCCL model (collective/nccl_model.h)
// builds them for the algorithm its cost model picked. docs/model.md,
// "NCCL collectives".
#pragma once

#include "algorithm/collective_op.h"
#include "algorithm/pattern.h"

namespace acesim {

// Ring with `channels` rings running at once, each carrying 1/channels of
// the data. Channel c's ring visits every node's GPUs contiguously: even
// nodes from GPU c % ppn up to (c - 1) % ppn, odd nodes backwards, so every
// crossing between nodes stays on one rail (NIC index) and successive
// channels use successive rails. All-reduce: 2(n-1) steps of 1/n of the
// data; reduce-scatter and all-gather: n-1 steps.
Pattern nccl_ring_pattern(CollectiveOp op, int n, int ppn, int channels);

// All-reduce as NCCL's tree runs it, pipelined, as one step in which every
// tree edge carries its channel's data once up (reduce) and once down
// (broadcast). Inside a node, channel c is a chain starting at GPU c % ppn
// (the GPU whose NIC the channel uses); between nodes, even channels use
// tree 0 (a binary heap over nodes, root node 0) and odd channels tree 1
// (its mirror image, root node N-1): a double binary tree.
Pattern nccl_tree_pattern(int n, int ppn, int channels);

}  // namespace acesim
