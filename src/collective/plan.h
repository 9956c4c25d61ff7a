// Multi-dimension plans: how one collective over several dimensions becomes a
// sequence of phases, each an algorithm run on groups spanning some of the
// dimensions. Every chunk of the collective walks the phases in order.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "collective/nccl_model.h"
#include "collective/types.h"
#include "topology/topology.h"

namespace acesim {

// How one operation is carried out.
struct OpConfig {
  PlanKind plan = PlanKind::kHierarchical;
  std::vector<Algorithm> per_dim;  // hierarchical / per-dimension: one per topology dimension
  Algorithm flat = algorithm("ring");  // flat plan: the algorithm over the whole group
};

struct CollectiveConfig {
  int chunks = 1;                 // pieces each collective is split into (pipelined)
  // When > 0, a collective is split into more chunks if needed so that no
  // chunk exceeds this many bytes (an offload engine's SRAM must hold one).
  std::uint64_t max_chunk_bytes = 0;
  int active_chunks_per_dim = 1;  // chunks running at once on one group of a dimension
  SchedulingPolicy policy = SchedulingPolicy::kLifo;
  TimePs endpoint_delay_ps = 0;  // added to every step (message handling at the endpoint)
  std::array<OpConfig, 4> ops;   // indexed by CollectiveOp
  // When enabled, all-reduce, reduce-scatter and all-gather run as NCCL runs
  // them (collective/nccl_model.h) instead of by chunks and plans.
  NcclSettings nccl;

  OpConfig& op(CollectiveOp o) { return ops[static_cast<int>(o)]; }
  const OpConfig& op(CollectiveOp o) const { return ops[static_cast<int>(o)]; }
};

// Default algorithm on a dimension kind: what its registry entry names
// (ring on rings, direct on fully-connected groups and switches; docs/model.md).
Algorithm default_algorithm(DimKind kind);
CollectiveConfig default_collective_config(const Topology& topo);

struct PhaseSpec {
  CollectiveOp op;
  Algorithm algorithm;
  std::vector<int> dims;  // topology dimensions one group of this phase spans
  double size_factor;     // phase data size = chunk size x size_factor
  long long group_size;
};

// The phases of `op` over `dims` (topology dimensions, in the order given;
// dimensions of size 1 are skipped). Sizes follow nccl-tests: all-reduce and
// reduce-scatter take the per-rank input size, all-gather the per-rank output
// size, all-to-all the bytes each rank sends in total.
std::vector<PhaseSpec> build_plan(CollectiveOp op, const OpConfig& cfg, const Topology& topo,
                                  std::span<const int> dims);

// Rooted operations over `dims` (as build_plan; dimensions of size 1
// skipped) run as phases over one group of all their NPUs, the root first
// (docs/model.md, "Rooted collectives"):
//   broadcast = scatter (direct) + all-gather;   reduce = reduce-scatter + gather (direct);
//   gather, scatter: one direct phase.
// The all-gather / reduce-scatter half takes that operation's algorithm on
// the dimension (one dimension) or its flat algorithm (several).
std::vector<PhaseSpec> build_rooted_plan(CollectiveOp op, const CollectiveConfig& cfg, const Topology& topo,
                                         std::span<const int> dims);
// The phases of `op` over one explicit group of n ranks (not whole
// dimensions): one phase of `alg` for a symmetric operation, or the rooted
// decomposition above with `alg` for its symmetric half. PhaseSpec::dims is
// empty: the group is its member list.
std::vector<PhaseSpec> build_group_plan(CollectiveOp op, Algorithm alg, long long n);
// The algorithm of `op` (or, rooted, of its symmetric half) on an explicit
// group whose members differ along `dims` only: the dimension's algorithm
// when that is one dimension, the flat algorithm otherwise.
Algorithm group_algorithm(CollectiveOp op, const CollectiveConfig& cfg, std::span<const int> dims);

// The position of rank `r` in its group over `dims` (member order: the
// first dimension listed varies fastest), which is how a root is given to
// the collective engine.
long long position_in_group(const Topology& topo, std::span<const int> dims, Rank r);

// Checks that every phase the configuration can produce is supported.
// Returns a description of the first problem, or an empty string.
std::string validate(const CollectiveConfig& cfg, const Topology& topo);

}  // namespace acesim
