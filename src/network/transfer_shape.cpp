#include "network/transfer_shape.h"

#include <algorithm>
#include <limits>

namespace acesim {

TransferShape build_shape(const Topology& topo, const Pattern& pattern, std::span<const Rank> members,
                          bool with_messages) {
  TransferShape shape;
  shape.bytes_per_dim.assign(topo.num_dims(), 0.0);
  shape.originated.assign(members.size(), 0.0);
  shape.terminated.assign(members.size(), 0.0);
  std::vector<NpuLinkTraffic> per_link;
  std::vector<LinkId> route;
  std::vector<LinkLoad> raw;
  for (const PatternStep& ps : pattern.steps) {
    ShapeStep st;
    st.repeat = ps.repeat;
    st.scale_first = ps.scale_first;
    st.scale_step = ps.scale_step;
    st.scale_sum = ps.scale_sum();
    raw.clear();
    std::vector<std::pair<TimePs, double>> points;
    if (with_messages) {
      std::vector<ShapeMessage>& msgs = shape.step_messages.emplace_back();
      for (const PatternMessage& m : ps.messages) msgs.push_back({members[m.src], members[m.dst], m.fraction});
    }
    for (const PatternMessage& m : ps.messages) {
      shape.originated[m.src] += m.fraction * st.scale_sum;
      shape.terminated[m.dst] += m.fraction * st.scale_sum;
      route.clear();
      topo.route(members[m.src], members[m.dst], route);
      TimePs lat = 0;
      double min_bw = std::numeric_limits<double>::infinity();
      for (LinkId l : route) {
        const Link link = topo.link(l);
        lat += link.latency_ps;
        min_bw = std::min(min_bw, link.bandwidth_Bps);
        raw.push_back({l, m.fraction});
      }
      st.max_latency_ps = std::max(st.max_latency_ps, lat);
      points.emplace_back(lat, route.empty() ? 0.0 : m.fraction / min_bw);
    }
    // Merge loads per link.
    std::sort(raw.begin(), raw.end(), [](const LinkLoad& a, const LinkLoad& b) { return a.link < b.link; });
    for (const LinkLoad& l : raw) {
      if (!st.loads.empty() && st.loads.back().link == l.link) {
        st.loads.back().bytes_per_byte += l.bytes_per_byte;
      } else {
        st.loads.push_back(l);
      }
    }
    for (const LinkLoad& l : st.loads) {
      const Link link = topo.link(l.link);
      st.max_seconds_per_byte = std::max(st.max_seconds_per_byte, l.bytes_per_byte / link.bandwidth_Bps);
      shape.bytes_per_dim[link.dim] += l.bytes_per_byte * st.scale_sum;
      const double b = l.bytes_per_byte * st.scale_sum;
      if (topo.is_npu(link.src_node)) per_link.push_back({topo.npu_at(link.src_node), link.dim, b, 0.0});
      if (topo.is_npu(link.dst_node)) per_link.push_back({topo.npu_at(link.dst_node), link.dim, 0.0, b});
    }
    // Pareto frontier: keep points not dominated in both latency and time per byte.
    std::sort(points.begin(), points.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second > b.second;
    });
    double best_rate = -1.0;
    for (const auto& p : points) {
      if (p.second > best_rate) {
        st.frontier.push_back(p);
        best_rate = p.second;
      }
    }
    shape.total_steps += st.repeat;
    shape.steps.push_back(std::move(st));
  }
  std::sort(per_link.begin(), per_link.end(), [](const NpuLinkTraffic& a, const NpuLinkTraffic& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.dim < b.dim;
  });
  for (const NpuLinkTraffic& t : per_link) {
    if (!shape.link_traffic.empty() && shape.link_traffic.back().rank == t.rank && shape.link_traffic.back().dim == t.dim) {
      shape.link_traffic.back().sent += t.sent;
      shape.link_traffic.back().received += t.received;
    } else {
      shape.link_traffic.push_back(t);
    }
  }
  return shape;
}

const TransferShape& ShapeCache::get(std::uint64_t key, CollectiveOp op, Algorithm alg,
                                     std::span<const Rank> members) {
  auto it = shapes_.find(key);
  if (it != shapes_.end()) return *it->second;
  const Pattern pattern = make_pattern(op, alg, static_cast<int>(members.size()));
  auto shape = std::make_unique<TransferShape>(build_shape(topo_, pattern, members, with_messages_));
  const TransferShape& ref = *shape;
  shapes_.emplace(key, std::move(shape));
  return ref;
}

}  // namespace acesim
