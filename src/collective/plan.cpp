#include "collective/plan.h"

#include <algorithm>
#include <stdexcept>

#include "topology/topology_kinds.h"

namespace acesim {

Algorithm default_algorithm(DimKind kind) {
  return algorithm(topology_kind_registry().get(kind.name()).default_algorithm);
}

CollectiveConfig default_collective_config(const Topology& topo) {
  CollectiveConfig c;
  for (CollectiveOp op : kAllCollectiveOps) {
    OpConfig& oc = c.op(op);
    oc.per_dim.clear();
    for (int d = 0; d < topo.num_dims(); ++d) oc.per_dim.push_back(default_algorithm(topo.dim(d).kind));
  }
  return c;
}

namespace {

// The symmetric operation a rooted one is built around.
CollectiveOp symmetric_half(CollectiveOp op) {
  return op == CollectiveOp::kReduce ? CollectiveOp::kReduceScatter : CollectiveOp::kAllGather;
}

// Scatter then all-gather of every piece (van de Geijn's broadcast); reduce-
// scatter then gather of the reduced pieces (Rabenseifner's reduce). Both
// move 2(n-1)/n of the data through the root's links, where a naive root
// sending or receiving everything moves (n-1) times it.
std::vector<PhaseSpec> rooted_phases(CollectiveOp op, Algorithm half, std::vector<int> dims, long long n) {
  const Algorithm direct = algorithm("direct");
  switch (op) {
    case CollectiveOp::kBroadcast:
      return {PhaseSpec{CollectiveOp::kScatter, direct, dims, 1.0, n},
              PhaseSpec{CollectiveOp::kAllGather, half, dims, 1.0, n}};
    case CollectiveOp::kReduce:
      return {PhaseSpec{CollectiveOp::kReduceScatter, half, dims, 1.0, n},
              PhaseSpec{CollectiveOp::kGather, direct, dims, 1.0, n}};
    case CollectiveOp::kGather:
    case CollectiveOp::kScatter: return {PhaseSpec{op, direct, dims, 1.0, n}};
    default: return {PhaseSpec{op, half, dims, 1.0, n}};
  }
}

}  // namespace

Algorithm group_algorithm(CollectiveOp op, const CollectiveConfig& cfg, std::span<const int> dims) {
  const OpConfig& oc = cfg.op(is_rooted(op) ? symmetric_half(op) : op);
  if (dims.size() == 1 && oc.plan != PlanKind::kFlat) return oc.per_dim.at(static_cast<std::size_t>(dims[0]));
  return oc.flat;
}

std::vector<PhaseSpec> build_rooted_plan(CollectiveOp op, const CollectiveConfig& cfg, const Topology& topo,
                                         std::span<const int> dims_in) {
  std::vector<int> dims;
  long long n = 1;
  for (int d : dims_in) {
    if (topo.dim(d).npus <= 1) continue;
    dims.push_back(d);
    n *= topo.dim(d).npus;
  }
  if (dims.empty()) return {};
  if (dims.size() == 1 || (op != CollectiveOp::kBroadcast && op != CollectiveOp::kReduce)) {
    return rooted_phases(op, group_algorithm(op, cfg, dims), dims, n);
  }
  // Over several dimensions the symmetric half runs as the platform plans
  // that operation (hierarchically: one dimension at a time, each with its
  // own algorithm and chunk slots), around one direct phase over the whole
  // group to or from the root.
  const Algorithm direct = algorithm("direct");
  const CollectiveOp half = symmetric_half(op);
  std::vector<PhaseSpec> phases = build_plan(half, cfg.op(half), topo, dims);
  if (op == CollectiveOp::kBroadcast) {
    phases.insert(phases.begin(), PhaseSpec{CollectiveOp::kScatter, direct, dims, 1.0, n});
  } else {
    phases.push_back(PhaseSpec{CollectiveOp::kGather, direct, dims, 1.0, n});
  }
  return phases;
}

std::vector<PhaseSpec> build_group_plan(CollectiveOp op, Algorithm alg, long long n) {
  if (n <= 1) return {};
  return rooted_phases(op, alg, {}, n);
}

long long position_in_group(const Topology& topo, std::span<const int> dims, Rank r) {
  long long pos = 0, weight = 1;
  for (int d : dims) {
    pos += topo.coord(r, d) * weight;
    weight *= topo.dim(d).npus;
  }
  return pos;
}

std::vector<PhaseSpec> build_plan(CollectiveOp op, const OpConfig& cfg, const Topology& topo,
                                  std::span<const int> dims_in) {
  std::vector<int> dims;
  for (int d : dims_in) {
    if (topo.dim(d).npus > 1) dims.push_back(d);
  }
  std::vector<PhaseSpec> phases;
  if (dims.empty()) return phases;
  auto size_of = [&](int d) { return static_cast<long long>(topo.dim(d).npus); };
  auto one = [&](CollectiveOp o, int d, double factor) {
    phases.push_back(PhaseSpec{o, cfg.per_dim.at(d), {d}, factor, size_of(d)});
  };

  if (cfg.plan == PlanKind::kFlat) {
    long long n = 1;
    for (int d : dims) n *= size_of(d);
    phases.push_back(PhaseSpec{op, cfg.flat, dims, 1.0, n});
    return phases;
  }
  const std::size_t k = dims.size();
  switch (op) {
    case CollectiveOp::kAllReduce: {
      if (cfg.plan == PlanKind::kPerDimension) {
        for (int d : dims) one(CollectiveOp::kAllReduce, d, 1.0);
        break;
      }
      // A dimension whose algorithm cannot reduce-scatter (double binary
      // tree) runs a full all-reduce at its level and no all-gather later.
      auto splits = [&](int d) { return cfg.per_dim.at(d)->splits; };
      double factor = 1.0;
      for (std::size_t i = 0; i + 1 < k; ++i) {
        if (splits(dims[i])) {
          one(CollectiveOp::kReduceScatter, dims[i], factor);
          factor /= static_cast<double>(size_of(dims[i]));
        } else {
          one(CollectiveOp::kAllReduce, dims[i], factor);
        }
      }
      one(CollectiveOp::kAllReduce, dims[k - 1], factor);
      for (std::size_t i = k - 1; i-- > 0;) {
        if (!splits(dims[i])) continue;
        factor *= static_cast<double>(size_of(dims[i]));
        one(CollectiveOp::kAllGather, dims[i], factor);
      }
      break;
    }
    case CollectiveOp::kReduceScatter: {
      double factor = 1.0;
      for (std::size_t i = 0; i < k; ++i) {
        one(CollectiveOp::kReduceScatter, dims[i], factor);
        factor /= static_cast<double>(size_of(dims[i]));
      }
      break;
    }
    case CollectiveOp::kAllGather: {
      // Mirror of reduce-scatter: smallest pieces on the last dimension first,
      // the full output gathered on the first dimension last.
      double factor = 1.0;
      for (std::size_t i = 0; i + 1 < k; ++i) factor /= static_cast<double>(size_of(dims[i]));
      for (std::size_t i = k; i-- > 0;) {
        one(CollectiveOp::kAllGather, dims[i], factor);
        if (i > 0) factor *= static_cast<double>(size_of(dims[i - 1]));
      }
      break;
    }
    case CollectiveOp::kAllToAll:
      for (int d : dims) one(CollectiveOp::kAllToAll, d, 1.0);
      break;
    default:
      throw std::invalid_argument(std::string(to_string(op)) + ": a rooted operation is planned by build_rooted_plan");
  }
  return phases;
}

std::string validate(const CollectiveConfig& cfg, const Topology& topo) {
  if (cfg.chunks < 1) return "chunks must be >= 1";
  if (cfg.active_chunks_per_dim < 1) return "active chunks per dimension must be >= 1";
  if (cfg.endpoint_delay_ps < 0) return "endpoint delay must be >= 0";
  std::vector<int> all;
  for (int d = 0; d < topo.num_dims(); ++d) all.push_back(d);
  for (CollectiveOp op : kAllCollectiveOps) {
    const OpConfig& oc = cfg.op(op);
    if (oc.plan != PlanKind::kFlat && static_cast<int>(oc.per_dim.size()) != topo.num_dims()) {
      return std::string(to_string(op)) + ": " + std::to_string(oc.per_dim.size()) +
             " algorithms given for a topology of " + std::to_string(topo.num_dims()) + " dimensions";
    }
    for (const PhaseSpec& ph : build_plan(op, oc, topo, all)) {
      if (auto why = operation_unsupported(ph.op, ph.algorithm)) {
        std::string where = ph.dims.size() == 1 ? " on dimension " + std::to_string(ph.dims[0]) : " on the flat group";
        return std::string(to_string(op)) + where + ": " + *why;
      }
    }
  }
  return {};
}

ListedGroup listed_group(const Topology& topo, std::span<const Rank> m) {
  for (std::size_t i = 0; i < m.size(); ++i) {
    if (m[i] < 0 || m[i] >= topo.num_npus()) {
      throw std::invalid_argument("collective member " + std::to_string(m[i]) + " is not a rank of the topology's " +
                                  std::to_string(topo.num_npus()) + " NPUs");
    }
    if (i > 0 && m[i] <= m[i - 1]) throw std::invalid_argument("collective members must be ascending and distinct");
  }
  ListedGroup g;
  g.npus = static_cast<long long>(m.size());
  if (m.empty()) return g;
  // The dimensions along which the members differ pick the algorithm.
  for (int d = 0; d < topo.num_dims(); ++d) {
    for (Rank r : m) {
      if (topo.coord(r, d) != topo.coord(m.front(), d)) {
        g.differ.push_back(d);
        break;
      }
    }
  }
  // A grid of GPUs (the same local GPUs on each of its nodes) runs as
  // NCCL runs it on a communicator of those ranks: ppn GPUs per node over
  // nnodes.
  g.spanned.assign(topo.dims().begin(), topo.dims().end());
  long long grid = 1;
  for (int d = 0; d < topo.num_dims(); ++d) {
    std::vector<int> coords;
    for (Rank r : m) coords.push_back(topo.coord(r, d));
    std::sort(coords.begin(), coords.end());
    g.spanned[static_cast<std::size_t>(d)].npus = static_cast<int>(std::unique(coords.begin(), coords.end()) - coords.begin());
    grid *= g.spanned[static_cast<std::size_t>(d)].npus;
  }
  const bool node_and_scale_out = std::all_of(g.differ.begin(), g.differ.end(), [](int d) { return d < 2; });
  g.nccl_grid = grid == static_cast<long long>(m.size()) && node_and_scale_out;
  return g;
}

namespace {

// NCCL's model takes `op` on the group it sees as `v` (a group of one moves nothing).
bool nccl_takes(CollectiveOp op, const NcclView& v) {
  return v.nranks >= 2 && nccl_runs(v, op);
}

}  // namespace

GroupPlan plan_on_dims(CollectiveOp op, const CollectiveConfig& cfg, const Topology& topo, std::span<const int> dims) {
  GroupPlan p;
  for (int d : dims) p.npus *= topo.dim(d).npus;
  if (cfg.nccl.enabled && nccl_models(op)) {
    const NcclView v = nccl_view(topo, dims);
    if (nccl_takes(op, v)) {
      p.nccl = v;
      return p;
    }
  }
  p.phases = is_rooted(op) ? build_rooted_plan(op, cfg, topo, dims) : build_plan(op, cfg.op(op), topo, dims);
  return p;
}

GroupPlan plan_on_group(CollectiveOp op, const CollectiveConfig& cfg, const ListedGroup& g) {
  GroupPlan p;
  p.npus = g.npus;
  if (cfg.nccl.enabled && nccl_models(op) && g.nccl_grid) {
    const NcclView v = nccl_view(g.spanned);
    if (nccl_takes(op, v)) {
      p.nccl = v;
      return p;
    }
  }
  p.phases = build_group_plan(op, group_algorithm(op, cfg, g.differ), g.npus);
  return p;
}

std::optional<std::string> plan_refusal(CollectiveOp op, const CollectiveConfig& cfg, const GroupPlan& plan) {
  // Built only for a refusal: create() asks for every collective.
  const auto what = [&] { return std::string(to_string(op)) + " over " + std::to_string(plan.npus) + " NPUs"; };
  if (plan.nccl) {
    // The algorithm the platform forces, where it applies to the operation
    // (nccl_choose runs what is left to NCCL's cost model).
    const NcclSettings s = nccl_applied(cfg.nccl, op);
    if (!s.algo) return std::nullopt;
    NcclView v = *plan.nccl;
    v.arch = cfg.nccl.arch;
    if (auto why = nccl_unsupported(v, op, *s.algo)) return what() + ": NCCL's " + *why;
    return std::nullopt;
  }
  for (const PhaseSpec& ph : plan.phases) {
    if (auto why = unsupported_reason(ph.op, ph.algorithm, ph.group_size)) {
      // A phase of a hierarchical plan runs on one of the dimensions.
      const bool part = ph.group_size != plan.npus && ph.dims.size() == 1;
      return what() + (part ? " (its " + std::string(to_string(ph.op)) + " on dimension " + std::to_string(ph.dims[0]) + ")" : "") +
             ": " + *why;
    }
  }
  return std::nullopt;
}

}  // namespace acesim
