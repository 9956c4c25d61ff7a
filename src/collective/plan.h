// Multi-dimension plans: how one collective over several dimensions becomes a
// sequence of phases, each an algorithm run on groups spanning some of the
// dimensions. Every chunk of the collective walks the phases in order.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
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

// Checks the configuration's shape (one algorithm per dimension) and that
// each phase it can produce on `topo` names an algorithm that runs that
// operation at all (operation_unsupported). A group size an algorithm
// cannot serve is not a problem of the platform: plan_refusal below
// says so for the collectives that run on such a group. Returns a
// description of the first problem, or an empty string.
std::string validate(const CollectiveConfig& cfg, const Topology& topo);

// A group of listed ranks (not whole dimensions) as collectives are planned
// on it: the dimensions its members differ in (they pick the algorithm), how
// many coordinates it spans on each, and whether it is a grid of GPUs on the
// node and scale-out dimensions, which NCCL's model runs as a communicator.
struct ListedGroup {
  std::vector<int> differ;
  std::vector<DimensionSpec> spanned;
  bool nccl_grid = false;
  long long npus = 0;
};
// Throws std::invalid_argument for members that are not ascending,
// distinct ranks of `topo`.
ListedGroup listed_group(const Topology& topo, std::span<const Rank> members);

// How a collective over one group is carried out: by NCCL's model on the
// group as `nccl` sees it, or else by the platform's phases (none: nothing
// to move). CollectiveEngine::create runs what these give.
struct GroupPlan {
  std::optional<NcclView> nccl;
  std::vector<PhaseSpec> phases;
  long long npus = 1;  // the group's NPUs
};
// Over whole dimensions (existing, distinct). Throws std::invalid_argument
// when NCCL's model runs `op` and the dimensions are not a node and a
// scale-out (nccl_view).
GroupPlan plan_on_dims(CollectiveOp op, const CollectiveConfig& cfg, const Topology& topo, std::span<const int> dims);
GroupPlan plan_on_group(CollectiveOp op, const CollectiveConfig& cfg, const ListedGroup& group);

// The one check of an algorithm against the group it would serve: why the
// platform cannot run `op` as `plan` carries it out, in one line naming the
// operation, the group's NPUs, the algorithm and what would work, or
// nullopt. An algorithm that cannot serve a group size is an error only for
// a collective that runs on such a group: CollectiveEngine::create refuses
// it, GraphExecutor checks a workload's collectives before any runs, and
// `acesim collective` the one it times (docs/robustness.md, "Limits").
std::optional<std::string> plan_refusal(CollectiveOp op, const CollectiveConfig& cfg, const GroupPlan& plan);

}  // namespace acesim
