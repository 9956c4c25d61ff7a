#include "topology/topology.h"

#include <algorithm>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "topology/fabric.h"
#include "topology/topology_kinds.h"

namespace acesim {
namespace {

void check_dimension(const DimensionSpec& s, std::size_t d) {
  const std::string where = "dimension " + std::to_string(d) + ": ";
  if (s.npus < 1) throw std::invalid_argument(where + "npus must be >= 1");
  if (!(s.bandwidth_GBps > 0.0) || !std::isfinite(s.bandwidth_GBps)) {
    throw std::invalid_argument(where + "bandwidth must be > 0 GB/s");
  }
  if (!(s.latency_ns >= 0.0) || !std::isfinite(s.latency_ns)) {
    throw std::invalid_argument(where + "latency must be >= 0 ns");
  }
  if (s.links_per_neighbour < 1) throw std::invalid_argument(where + "links per neighbour must be >= 1");
  if (!(s.nvls_efficiency > 0.0 && s.nvls_efficiency <= 1.0)) {
    throw std::invalid_argument(where + "nvls efficiency must be in (0, 1]");
  }
}

std::shared_ptr<const DimensionFabric> build_fabric(const DimensionSpec& s, std::size_t d) {
  const TopologyKindRegistry& kinds = topology_kind_registry();
  const TopologyKindEntry* kind = kinds.find(s.kind.name());
  if (kind == nullptr) throw std::invalid_argument("dimension " + std::to_string(d) + ": " + kinds.unknown(s.kind.name()));
  return kind->build(s);
}

}  // namespace

std::string_view to_string(NodeKind kind) {
  switch (kind) {
    case NodeKind::kNpu: return "npu";
    case NodeKind::kSwitch: return "switch";
    case NodeKind::kNic: return "nic";
  }
  return "?";
}

std::string_view to_string(DimKind kind) { return kind.name(); }

Topology::Topology(std::vector<DimensionSpec> dims) : dims_(std::move(dims)) {
  if (dims_.empty()) throw std::invalid_argument("topology has no dimensions");
  std::int64_t total = 1;
  for (std::size_t d = 0; d < dims_.size(); ++d) {
    check_dimension(dims_[d], d);
    total *= dims_[d].npus;
    if (total > std::numeric_limits<Rank>::max()) {
      throw std::invalid_argument("topology has more than 2^31-1 NPUs");
    }
  }
  for (std::size_t d = 0; d < dims_.size(); ++d) {
    fabrics_.push_back(build_fabric(dims_[d], d));
    nodes_per_group_.push_back(fabrics_[d]->nodes_per_group(dims_[d].npus));
  }
  num_npus_ = static_cast<Rank>(total);
  Rank stride = 1;
  for (std::size_t d = 0; d < dims_.size(); ++d) {
    stride_.push_back(stride);
    stride *= dims_[d].npus;
    bandwidth_Bps_.push_back(dims_[d].bandwidth_GBps * 1e9 * dims_[d].links_per_neighbour);
    latency_ps_.push_back(ns_to_ps(dims_[d].latency_ns));
  }
  // Ids: each dimension's links and nodes follow the previous dimension's.
  LinkId links = 0;
  NodeId nodes = num_npus_;
  for (int d = 0; d < num_dims(); ++d) {
    link_base_.push_back(links);
    node_base_.push_back(nodes);
    const DimPlace p = place(d);
    links += fabrics_[d]->num_links(p);
    nodes += static_cast<NodeId>(p.num_groups()) * p.nodes_per_group;
  }
  num_links_ = links;
  num_nodes_ = nodes;
}

DimPlace Topology::place(int d) const {
  return DimPlace{*this,
                  d,
                  link_base_[d],
                  node_base_[d],
                  nodes_per_group_[d],
                  bandwidth_Bps_[d],
                  latency_ps_[d]};
}

std::vector<int> Topology::coords(Rank r) const {
  std::vector<int> c(dims_.size());
  for (int d = 0; d < num_dims(); ++d) c[d] = coord(r, d);
  return c;
}

Rank Topology::rank_of(std::span<const int> c) const {
  Rank r = 0;
  for (int d = 0; d < num_dims(); ++d) r += static_cast<Rank>(c[d]) * stride_[d];
  return r;
}

int Topology::dim_of_link(LinkId id) const {
  if (id < 0 || id >= num_links_) throw std::out_of_range("link id out of range");
  // A dimension without links shares its base with the next: take the last.
  int d = num_dims() - 1;
  while (link_base_[d] > id) --d;
  return d;
}

int Topology::dim_of_node(NodeId n) const {
  if (n < num_npus_ || n >= num_nodes_) throw std::out_of_range("not a switch or NIC node id");
  int d = num_dims() - 1;
  while (node_base_[d] > n) --d;
  return d;
}

NodeKind Topology::node_kind(NodeId n) const {
  if (is_npu(n)) return NodeKind::kNpu;
  const int d = dim_of_node(n);
  const DimPlace p = place(d);
  return fabrics_[d]->node_kind(static_cast<int>((n - p.node_base) % p.nodes_per_group));
}

std::string Topology::node_name(NodeId n) const {
  if (is_npu(n)) return "npu" + std::to_string(n);
  const int d = dim_of_node(n);
  return fabrics_[d]->node_name(place(d), n);
}

Link Topology::link(LinkId id) const {
  const int d = dim_of_link(id);
  Link l = fabrics_[d]->link(place(d), id - link_base_[d]);
  if (!npu_slowdown_.empty()) {
    double f = 1.0;
    if (is_npu(l.src_node)) f = std::max(f, npu_slowdown_[static_cast<std::size_t>(l.src_node)]);
    if (is_npu(l.dst_node)) f = std::max(f, npu_slowdown_[static_cast<std::size_t>(l.dst_node)]);
    l.bandwidth_Bps /= f;
  }
  if (!link_share_.empty()) l.bandwidth_Bps *= link_share_[static_cast<std::size_t>(id)];
  return l;
}

void Topology::set_link_share(LinkId id, double share) {
  if (id < 0 || id >= num_links_) throw std::invalid_argument("link " + std::to_string(id) + " does not exist");
  if (!(share > 0.0 && share <= 1.0)) throw std::invalid_argument("a link's share of its rate must be in (0, 1]");
  if (link_share_.empty()) link_share_.assign(static_cast<std::size_t>(num_links_), 1.0);
  link_share_[static_cast<std::size_t>(id)] = share;
}

void Topology::set_link_down(LinkId id) {
  if (id < 0 || id >= num_links_) throw std::invalid_argument("link " + std::to_string(id) + " does not exist");
  if (link_down_.empty()) link_down_.assign(static_cast<std::size_t>(num_links_), false);
  link_down_[static_cast<std::size_t>(id)] = true;
}

std::string Topology::unreachable() const {
  if (link_down_.empty()) return "";
  for (int d = 0; d < num_dims(); ++d) {
    std::string why = fabrics_[d]->unreachable(place(d), link_down_);
    if (!why.empty()) return why;
  }
  return "";
}

void Topology::avoid_down(int d, Rank at, int to, std::size_t from, std::vector<LinkId>& out) const {
  const auto down = std::find_if(out.begin() + static_cast<std::ptrdiff_t>(from), out.end(),
                                 [&](LinkId l) { return link_down_[static_cast<std::size_t>(l)]; });
  if (down == out.end()) return;
  const LinkId dead = *down;
  out.resize(from);
  if (!fabrics_[d]->route_around(place(d), at, to, link_down_, out)) {
    throw NoRoute("npu" + std::to_string(at) + " cannot reach npu" + std::to_string(with_coord(at, d, to)) + ": link " +
                  link_name(dead) + " is down and the " + std::string(dims_[d].kind.name()) + " fabric has no other path");
  }
}

void Topology::set_npu_link_slowdown(Rank npu, double factor) {
  if (npu < 0 || npu >= num_npus_) throw std::invalid_argument("straggler rank " + std::to_string(npu) + " does not exist");
  if (!(factor > 0.0) || !std::isfinite(factor)) throw std::invalid_argument("straggler factor must be > 0");
  if (npu_slowdown_.empty()) npu_slowdown_.assign(static_cast<std::size_t>(num_npus_), 1.0);
  npu_slowdown_[static_cast<std::size_t>(npu)] = factor;
}

std::string Topology::link_name(LinkId id) const {
  const Link l = link(id);
  return "dim" + std::to_string(l.dim) + ":" + node_name(l.src_node) + "->" + node_name(l.dst_node);
}

void Topology::route(Rank src, Rank dst, std::vector<LinkId>& out) const {
  Rank at = src;
  for (int d = 0; d < num_dims(); ++d) {
    const int b = coord(dst, d);
    if (coord(at, d) == b) continue;
    const std::size_t from = out.size();
    fabrics_[d]->route(place(d), at, b, out);
    if (!link_down_.empty()) avoid_down(d, at, b, from, out);
    at = with_coord(at, d, b);
  }
}

std::string DimensionFabric::unreachable(const DimPlace& p, const std::vector<bool>& down) const {
  // The groups that hold a down link: by its NPU end, else by its switch.
  std::vector<Rank> groups;
  const LinkId links = num_links(p);
  for (LinkId l = 0; l < links; ++l) {
    if (!down[static_cast<std::size_t>(p.link_base + l)]) continue;
    const Link k = link(p, l);
    const NodeId end = p.topo.is_npu(k.src_node) ? k.src_node : k.dst_node;
    groups.push_back(p.topo.is_npu(end) ? p.group_of(static_cast<Rank>(end))
                                        : static_cast<Rank>((end - p.node_base) / p.nodes_per_group));
  }
  std::sort(groups.begin(), groups.end());
  groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
  std::vector<LinkId> r;
  for (Rank g : groups) {
    for (int a = 0; a < p.npus(); ++a) {
      for (int b = 0; b < p.npus(); ++b) {
        if (a == b) continue;
        const Rank at = p.rank_in_group(g, a);
        r.clear();
        route(p, at, b, r);
        const auto dead = std::find_if(r.begin(), r.end(), [&](LinkId l) { return down[static_cast<std::size_t>(l)]; });
        if (dead == r.end()) continue;
        const LinkId l = *dead;
        r.clear();
        if (!route_around(p, at, b, down, r)) {
          return "npu" + std::to_string(at) + " cannot reach npu" + std::to_string(p.rank_in_group(g, b)) + ": link " +
                 p.topo.link_name(l) + " is down and the " + std::string(p.topo.dim(p.dim).kind.name()) + " fabric has no other path";
        }
      }
    }
  }
  return "";
}

int npu_links_out(const DimensionSpec& d) { return build_fabric(d, 0)->npu_links_out(d.npus); }

}  // namespace acesim
