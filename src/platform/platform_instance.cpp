#include "platform/platform_instance.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "algorithm/algorithm.h"
#include "collective/nccl_model.h"
#include "network/transfer_shape.h"

namespace acesim {
namespace {

bool close(double a, double b) { return std::abs(a - b) <= 1e-12 * std::max({1.0, std::abs(a), std::abs(b)}); }

// Every member of the group originates and terminates the same bytes, and,
// step by step, the links each member owns carry the same loads: then one
// member's links and endpoint stand for all (the max-min rates are equal).
bool shape_symmetric(const Topology& topo, const TransferShape& shape, const std::vector<Rank>& members) {
  for (std::size_t i = 1; i < members.size(); ++i) {
    if (!close(shape.originated[i], shape.originated[0]) || !close(shape.terminated[i], shape.terminated[0])) return false;
  }
  for (const ShapeStep& st : shape.steps) {
    std::map<Rank, std::vector<std::pair<int, double>>> owned;
    for (const LinkLoad& l : st.loads) {
      const Link link = topo.link(l.link);
      const Rank owner = topo.link_owner(link);
      if (owner < 0) return false;  // a link between switches: no member's links stand for it
      owned[owner].emplace_back(link.dim * 2 + (topo.is_npu(link.src_node) ? 0 : 1), l.bytes_per_byte);
    }
    std::vector<std::pair<int, double>> first;
    bool have_first = false;
    for (Rank m : members) {
      std::vector<std::pair<int, double>> v = owned[m];
      std::sort(v.begin(), v.end());
      if (!have_first) {
        first = v;
        have_first = true;
        continue;
      }
      if (v.size() != first.size()) return false;
      for (std::size_t k = 0; k < v.size(); ++k) {
        if (v[k].first != first[k].first || !close(v[k].second, first[k].second)) return false;
      }
    }
  }
  return true;
}

}  // namespace

std::string asymmetry_reason(const PlatformConfig& config) {
  if (std::string nccl = nccl_asymmetry(config.collectives.nccl, config.dims); !nccl.empty()) return nccl;
  const Topology topo(config.dims);
  int spanning = 0;
  for (const DimensionSpec& d : config.dims) spanning += d.npus > 1 ? 1 : 0;
  for (CollectiveOp op : kAllCollectiveOps) {
    const OpConfig& oc = config.collectives.op(op);
    if (oc.plan == PlanKind::kFlat && spanning > 1) {
      return std::string(to_string(op)) + " uses a flat plan over several dimensions";
    }
    for (int d = 0; d < topo.num_dims(); ++d) {
      const int n = topo.dim(d).npus;
      if (n <= 1) continue;
      const Algorithm alg = oc.plan == PlanKind::kFlat ? oc.flat : oc.per_dim.at(static_cast<std::size_t>(d));
      std::vector<Rank> members;
      for (int k = 0; k < n; ++k) members.push_back(static_cast<Rank>(k) * topo.stride(d));
      // The phases this operation can run on the dimension.
      for (CollectiveOp phase : kAllCollectiveOps) {
        if (unsupported_reason(phase, alg, n)) continue;
        const bool used = phase == op || (op == CollectiveOp::kAllReduce && phase != CollectiveOp::kAllToAll);
        if (!used) continue;
        const TransferShape shape = build_shape(topo, make_pattern(phase, alg, n), members);
        if (!shape_symmetric(topo, shape, members)) {
          return std::string(to_string(op)) + ": " + std::string(to_string(alg)) + " on dimension " + std::to_string(d) +
                 " (" + std::string(to_string(topo.dim(d).kind)) + " of " + std::to_string(n) +
                 ") gives NPUs different roles";
        }
      }
    }
  }
  return {};
}

}  // namespace acesim
