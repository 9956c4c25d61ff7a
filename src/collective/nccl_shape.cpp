#include "collective/nccl_shape.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <vector>

#include "algorithm/algorithm.h"
#include "algorithm/nccl_patterns.h"

namespace acesim {
namespace {

// NVLS all-reduce on one switch: the reduce-scatter half reads every GPU's
// data through the switch (multimem loads: S up per GPU, S/n reduced down),
// the all-gather half writes each GPU's S/n once and the switch multicasts it
// (S/n up, S down). Each GPU's up- and down-link carry (n+1)/n S, in one
// pipelined step. The switch's reduction and multicast run below the links'
// rate (`nvls_efficiency`): the same bytes hold the links longer. Adds the
// loads of `node` (members `first` on of the shape's group) to `st`.
void add_nvls_loads(const Topology& topo, std::span<const Rank> node, std::size_t first, ShapeStep& st,
                    TransferShape& shape) {
  const auto n = static_cast<long long>(node.size());
  const double bytes = static_cast<double>(n + 1) / static_cast<double>(n);
  const double load = bytes / topo.dim(0).nvls_efficiency;
  std::vector<LinkId> up;
  std::vector<LinkId> down;
  for (long long i = 0; i < n; ++i) {
    const Rank r = node[i];
    const Rank other = node[(i + 1) % n];
    up.clear();
    down.clear();
    topo.route(r, other, up);
    topo.route(other, r, down);
    if (up.size() != 2 || down.size() != 2) throw std::invalid_argument("nvls: the node domain is not one switch");
    for (LinkId l : {up.front(), down.back()}) {
      const Link link = topo.link(l);
      st.loads.push_back({l, load});
      st.max_seconds_per_byte = std::max(st.max_seconds_per_byte, load / link.bandwidth_Bps);
      shape.bytes_per_dim[link.dim] += bytes;
    }
    const TimePs lat = topo.link(up.front()).latency_ps + topo.link(down.back()).latency_ps;
    st.max_latency_ps = std::max(st.max_latency_ps, lat);
    shape.link_traffic.push_back({r, topo.link(up.front()).dim, bytes, bytes});
    shape.originated[first + static_cast<std::size_t>(i)] = bytes;
    shape.terminated[first + static_cast<std::size_t>(i)] = bytes;
  }
}

// The step pipelined as one: its slowest link and its longest route. Loads
// and per-NPU traffic on the same link or dimension merge.
TransferShape one_step(const Topology& topo, ShapeStep st, TransferShape shape, bool with_messages) {
  std::sort(st.loads.begin(), st.loads.end(), [](const LinkLoad& a, const LinkLoad& b) { return a.link < b.link; });
  std::vector<LinkLoad> loads;
  for (const LinkLoad& l : st.loads) {
    if (!loads.empty() && loads.back().link == l.link) {
      loads.back().bytes_per_byte += l.bytes_per_byte;
    } else {
      loads.push_back(l);
    }
  }
  st.loads = std::move(loads);
  for (const LinkLoad& l : st.loads) {
    st.max_seconds_per_byte = std::max(st.max_seconds_per_byte, l.bytes_per_byte / topo.link(l.link).bandwidth_Bps);
  }
  std::sort(shape.link_traffic.begin(), shape.link_traffic.end(), [](const NpuLinkTraffic& a, const NpuLinkTraffic& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.dim < b.dim;
  });
  std::vector<NpuLinkTraffic> traffic;
  for (const NpuLinkTraffic& t : shape.link_traffic) {
    if (!traffic.empty() && traffic.back().rank == t.rank && traffic.back().dim == t.dim) {
      traffic.back().sent += t.sent;
      traffic.back().received += t.received;
    } else {
      traffic.push_back(t);
    }
  }
  shape.link_traffic = std::move(traffic);
  st.frontier.assign(1, {st.max_latency_ps, st.max_seconds_per_byte});
  shape.steps.assign(1, std::move(st));
  shape.total_steps = 1;
  if (with_messages && shape.step_messages.empty()) shape.step_messages.emplace_back();
  return shape;
}

TransferShape nvls_shape(const Topology& topo, std::span<const Rank> members, bool with_messages) {
  TransferShape shape;
  shape.bytes_per_dim.assign(topo.num_dims(), 0.0);
  shape.originated.assign(members.size(), 0.0);
  shape.terminated.assign(members.size(), 0.0);
  ShapeStep st;
  add_nvls_loads(topo, members, 0, st, shape);
  // The switch's work is no message between members.
  return one_step(topo, std::move(st), std::move(shape), with_messages);
}

// NVLS-tree (all-reduce across nodes): NVLS's reduce-scatter inside every
// node, each GPU's reduced 1/ppn share all-reduced with the same GPU of the
// other nodes over its NIC along NCCL's double binary tree, and NVLS's
// all-gather inside every node, all pipelined: one step that loads the
// NVLink ports as NVLS does and the NICs with the tree's traffic
// (algorithm/nccl_patterns.h). Its messages are the tree's.
TransferShape nvls_tree_shape(const Topology& topo, std::span<const Rank> members, int ppn, bool with_messages) {
  TransferShape shape = build_shape(topo, nccl_nvls_tree_pattern(static_cast<int>(members.size()), ppn), members,
                                    with_messages);
  ShapeStep st = std::move(shape.steps.at(0));
  const std::vector<double> net_originated = shape.originated;
  const std::vector<double> net_terminated = shape.terminated;
  const auto group = static_cast<std::size_t>(ppn);
  for (std::size_t first = 0; first < members.size(); first += group) {
    add_nvls_loads(topo, members.subspan(first, group), first, st, shape);
  }
  for (std::size_t i = 0; i < members.size(); ++i) {
    shape.originated[i] += net_originated[i];
    shape.terminated[i] += net_terminated[i];
  }
  return one_step(topo, std::move(st), std::move(shape), with_messages);
}

// A channel's ring is a pipeline, not a lock-step: each GPU forwards as soon
// as its predecessor's slice arrives, so a step costs the ring's mean hop
// latency (a node crossing every ppn hops), not its slowest hop's. NCCL's own
// ring latency counts network hops the same way (2(nnodes-1) of 2(n-1) steps).
void pipeline_ring_latency(const Topology& topo, const Pattern& pattern, std::span<const Rank> members,
                           TransferShape& shape) {
  std::vector<LinkId> route;
  for (std::size_t i = 0; i < pattern.steps.size(); ++i) {
    double weighted = 0.0;
    double total = 0.0;
    for (const PatternMessage& m : pattern.steps[i].messages) {
      route.clear();
      topo.route(members[m.src], members[m.dst], route);
      TimePs lat = 0;
      for (LinkId l : route) lat += topo.link(l).latency_ps;
      weighted += m.fraction * static_cast<double>(lat);
      total += m.fraction;
    }
    ShapeStep& st = shape.steps[i];
    st.max_latency_ps = total > 0.0 ? static_cast<TimePs>(std::llround(weighted / total)) : 0;
    double spb = 0.0;
    for (const auto& point : st.frontier) spb = std::max(spb, point.second);
    st.frontier.assign(1, {st.max_latency_ps, spb});
  }
}

// SHARP (CollNet): member i sends `share[i]` of the data up to its rail's
// switch, which reduces it across the nodes and sends the result back down:
// share[i] on every link from the GPU to the switch and from it back.
void add_sharp_loads(const Topology& topo, std::span<const Rank> members, int ppn, const std::vector<double>& share,
                     ShapeStep& st, TransferShape& shape) {
  const std::size_t n = members.size();
  const auto group = static_cast<std::size_t>(ppn);
  std::vector<LinkId> up;
  std::vector<LinkId> down;
  for (std::size_t i = 0; i < n; ++i) {
    if (share[i] <= 0.0) continue;
    const Rank r = members[i];
    const Rank peer = members[(i + group) % n];  // the same GPU of the next node: same rail
    up.clear();
    down.clear();
    topo.route(r, peer, up);
    topo.route(peer, r, down);
    const auto into_switch = [&](LinkId l) { return topo.node_kind(topo.link(l).dst_node) == NodeKind::kSwitch; };
    if (std::count_if(up.begin(), up.end(), into_switch) != 1) {
      throw std::invalid_argument("collnet: the scale-out is not one switch per rail");
    }
    const auto to_switch = static_cast<std::size_t>(std::find_if(up.begin(), up.end(), into_switch) - up.begin()) + 1;
    up.resize(to_switch);
    down.erase(down.begin(), down.end() - static_cast<std::ptrdiff_t>(to_switch));
    TimePs lat = 0;
    for (const std::vector<LinkId>* half : {&up, &down}) {
      for (LinkId l : *half) {
        const Link link = topo.link(l);
        st.loads.push_back({l, share[i]});
        shape.bytes_per_dim[link.dim] += share[i];
        lat += link.latency_ps;
      }
    }
    st.max_latency_ps = std::max(st.max_latency_ps, lat);
    shape.link_traffic.push_back({r, topo.link(up.front()).dim, share[i], share[i]});
    shape.originated[i] += share[i];
    shape.terminated[i] += share[i];
  }
}

// CollNet all-reduce across nodes: NVLink traffic inside each node (its
// pattern, algorithm/nccl_patterns.h) and each head's share through the
// in-network reduction, pipelined as one step. Direct: every GPU heads
// 1/ppn; chain: GPU g heads the channels c with c % ppn == g.
TransferShape collnet_shape(const Topology& topo, const NcclChoice& choice, int ppn, std::span<const Rank> members,
                            bool with_messages) {
  const int n = static_cast<int>(members.size());
  const bool direct = choice.algo == NcclAlgo::kCollNetDirect;
  const Pattern intra = direct ? nccl_collnet_direct_pattern(n, ppn) : nccl_collnet_chain_pattern(n, ppn, choice.channels);
  TransferShape shape = build_shape(topo, intra, members, with_messages);
  std::vector<double> share(members.size(), direct ? 1.0 / ppn : 0.0);
  for (int c = 0; !direct && c < choice.channels; ++c) {
    for (int base = 0; base < n; base += ppn) share[static_cast<std::size_t>(base + c % ppn)] += 1.0 / choice.channels;
  }
  ShapeStep st = std::move(shape.steps.at(0));
  add_sharp_loads(topo, members, ppn, share, st, shape);
  return one_step(topo, std::move(st), std::move(shape), with_messages);
}

}  // namespace

TransferShape nccl_shape(const Topology& topo, CollectiveOp op, const NcclChoice& choice, int ppn,
                         std::span<const Rank> members, bool with_messages) {
  const int n = static_cast<int>(members.size());
  TransferShape shape;
  switch (choice.algo) {
    case NcclAlgo::kRing: {
      // On a fully connected node (AMD's xGMI mesh) the channels' rings
      // spread over every link; on a switch or ring, NCCL's own rings.
      const bool mesh = topo.num_dims() > 0 && topo.dim(0).kind == DimKind::kFullyConnected;
      const Pattern ring = mesh ? nccl_mesh_ring_pattern(op, n, ppn, choice.channels)
                                : nccl_ring_pattern(op, n, ppn, choice.channels);
      shape = build_shape(topo, ring, members, with_messages);
      pipeline_ring_latency(topo, ring, members, shape);
      break;
    }
    case NcclAlgo::kTree:
      shape = build_shape(topo, nccl_tree_pattern(n, ppn, choice.channels), members, with_messages);
      break;
    case NcclAlgo::kAllPairs: shape = build_shape(topo, nccl_allpairs_pattern(n), members, with_messages); break;
    case NcclAlgo::kNvls: shape = nvls_shape(topo, members, with_messages); break;
    case NcclAlgo::kNvlsTree: shape = nvls_tree_shape(topo, members, ppn, with_messages); break;
    case NcclAlgo::kCollNetDirect:
    case NcclAlgo::kCollNetChain: shape = collnet_shape(topo, choice, ppn, members, with_messages); break;
    case NcclAlgo::kP2p:
      // Every peer's send at once, as NCCL's grouped sends and receives run;
      // across rails a route crosses NVLink first (PXN).
      shape = build_shape(topo, make_pattern(op, algorithm("direct"), n), members, with_messages);
      break;
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
