#include "collective/nccl_shape.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "algorithm/nccl_patterns.h"

namespace acesim {
namespace {

// NVLS all-reduce on one switch: the reduce-scatter half reads every GPU's
// data through the switch (multimem loads: S up per GPU, S/n reduced down),
// the all-gather half writes each GPU's S/n once and the switch multicasts it
// (S/n up, S down). Each GPU's up- and down-link carry (n+1)/n S, in one
// pipelined step.
TransferShape nvls_shape(const Topology& topo, std::span<const Rank> members, bool with_messages) {
  const auto n = static_cast<long long>(members.size());
  const double load = static_cast<double>(n + 1) / static_cast<double>(n);
  TransferShape shape;
  shape.bytes_per_dim.assign(topo.num_dims(), 0.0);
  shape.originated.assign(members.size(), load);
  shape.terminated.assign(members.size(), load);
  ShapeStep st;
  std::vector<LinkId> up;
  std::vector<LinkId> down;
  for (long long i = 0; i < n; ++i) {
    const Rank r = members[i];
    const Rank other = members[(i + 1) % n];
    up.clear();
    down.clear();
    topo.route(r, other, up);
    topo.route(other, r, down);
    if (up.size() != 2 || down.size() != 2) throw std::invalid_argument("nvls: the node domain is not one switch");
    for (LinkId l : {up.front(), down.back()}) {
      const Link link = topo.link(l);
      st.loads.push_back({l, load});
      st.max_seconds_per_byte = std::max(st.max_seconds_per_byte, load / link.bandwidth_Bps);
      shape.bytes_per_dim[link.dim] += load;
    }
    const TimePs lat = topo.link(up.front()).latency_ps + topo.link(down.back()).latency_ps;
    st.max_latency_ps = std::max(st.max_latency_ps, lat);
    shape.link_traffic.push_back({r, topo.link(up.front()).dim, load, load});
  }
  std::sort(st.loads.begin(), st.loads.end(), [](const LinkLoad& a, const LinkLoad& b) { return a.link < b.link; });
  std::sort(shape.link_traffic.begin(), shape.link_traffic.end(),
            [](const NpuLinkTraffic& a, const NpuLinkTraffic& b) { return a.rank < b.rank; });
  st.frontier.emplace_back(st.max_latency_ps, st.max_seconds_per_byte);
  shape.steps.push_back(std::move(st));
  shape.total_steps = 1;
  if (with_messages) shape.step_messages.emplace_back();  // the switch's work is no message between members
  return shape;
}

}  // namespace

TransferShape nccl_shape(const Topology& topo, CollectiveOp op, const NcclChoice& choice, int ppn,
                         std::span<const Rank> members, bool with_messages) {
  const int n = static_cast<int>(members.size());
  TransferShape shape;
  switch (choice.algo) {
    case NcclAlgo::kRing:
      shape = build_shape(topo, nccl_ring_pattern(op, n, ppn, choice.channels), members, with_messages);
      break;
    case NcclAlgo::kTree:
      shape = build_shape(topo, nccl_tree_pattern(n, ppn, choice.channels), members, with_messages);
      break;
    case NcclAlgo::kNvls: shape = nvls_shape(topo, members, with_messages); break;
  }
  // The latency step: every step pays step_ps on top of its own latency.
  ShapeStep lat;
  lat.max_latency_ps = std::max<TimePs>(0, choice.base_ps - choice.step_ps);
  lat.frontier.emplace_back(lat.max_latency_ps, 0.0);
  shape.steps.insert(shape.steps.begin(), std::move(lat));
  if (with_messages) shape.step_messages.insert(shape.step_messages.begin(), std::vector<ShapeMessage>{});
  shape.total_steps += 1;
  return shape;
}

}  // namespace acesim
