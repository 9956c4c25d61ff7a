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

// The same rings on nodes whose GPUs are fully connected (AMD's xGMI mesh):
// the channels' rings take different orders through a node, so that
// together they load every GPU-to-GPU link of it alike (RCCL's rings on
// 8 x MI300X run at the 7 links' rate: docs/model.md, "RCCL on a mesh"). A
// complete directed graph on n >= 2 vertices splits into n - 1 arc-disjoint
// Hamiltonian cycles except at n = 4 and n = 6 (Tillson, 1980), so n - 1
// channels (or a multiple) do this exactly; the pattern states the result:
// each node's hops spread evenly over its ordered GPU pairs. The crossings
// between nodes are nccl_ring_pattern's.
Pattern nccl_mesh_ring_pattern(CollectiveOp op, int n, int ppn, int channels);

// MSCCL's all-pairs all-reduce (RCCL on one AMD node): every member sends
// each other member that member's 1/n share (reduce-scatter), then its own
// reduced share to each (all-gather): 2 steps of 1/n per ordered pair.
Pattern nccl_allpairs_pattern(int n);

// NCCL's double binary tree over `nodes` (src/graph/trees.cc,
// ncclGetDtree): tree 0 is NCCL's btree (root node 0 with one child; every
// node's parent flips its lowest set bit and sets the next), tree 1 the
// btree mirrored (node i as N-1-i) for an even node count, shifted by one
// node for an odd one, so that a node inner in one tree is mostly a leaf in
// the other. The parent of `node` in tree `tree` (0 or 1), or -1 at the root.
int nccl_dtree_parent(int tree, int node, int nodes);

// All-reduce as NCCL's tree runs it, pipelined, as one step in which every
// tree edge carries its channel's data once up (reduce) and once down
// (broadcast). Inside a node, channel c is a chain starting at GPU c % ppn
// (the GPU whose NIC the channel uses); between nodes, even channels use
// tree 0 and odd channels tree 1 of the double binary tree.
Pattern nccl_tree_pattern(int n, int ppn, int channels);

// The traffic between nodes of NCCL's NVLS-tree all-reduce: after the
// NVLS reduce-scatter inside each node, GPU g holds 1/ppn of the data,
// reduced over its node, and all-reduces it with GPU g of the other nodes
// over its own NIC (rail g) along the double binary tree, each tree
// carrying half of it once up and once down, pipelined: one step. The
// NVLink traffic is no member-to-member pattern (collective/nccl_shape.h).
Pattern nccl_nvls_tree_pattern(int n, int ppn);

// The NVLink traffic of NCCL's CollNet all-reduce (the network's switches
// reduce across nodes; collective/nccl_shape.h adds their traffic), one
// pipelined step. Direct: every GPU heads 1/ppn of the data; it sends each
// other GPU of its node that GPU's share to reduce (scatter) and each
// other GPU its own reduced share back (broadcast): 2/ppn per ordered pair.
// Chain: channel c's chain inside each node ends at its head GPU c % ppn,
// every chain edge carrying the channel's data once each way.
Pattern nccl_collnet_direct_pattern(int n, int ppn);
Pattern nccl_collnet_chain_pattern(int n, int ppn, int channels);

}  // namespace acesim
