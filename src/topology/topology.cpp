#include "topology/topology.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace acesim {

std::string_view to_string(DimKind kind) {
  switch (kind) {
    case DimKind::kRing: return "ring";
    case DimKind::kFullyConnected: return "fully-connected";
    case DimKind::kSwitch: return "switch";
  }
  return "?";
}

Topology::Topology(std::vector<DimensionSpec> dims) : dims_(std::move(dims)) {
  if (dims_.empty()) throw std::invalid_argument("topology has no dimensions");
  std::int64_t total = 1;
  for (std::size_t d = 0; d < dims_.size(); ++d) {
    const DimensionSpec& s = dims_[d];
    const std::string where = "dimension " + std::to_string(d) + ": ";
    if (s.npus < 1) throw std::invalid_argument(where + "npus must be >= 1");
    if (!(s.bandwidth_GBps > 0.0) || !std::isfinite(s.bandwidth_GBps)) {
      throw std::invalid_argument(where + "bandwidth must be > 0 GB/s");
    }
    if (!(s.latency_ns >= 0.0) || !std::isfinite(s.latency_ns)) {
      throw std::invalid_argument(where + "latency must be >= 0 ns");
    }
    if (s.links_per_neighbour < 1) throw std::invalid_argument(where + "links per neighbour must be >= 1");
    total *= s.npus;
    if (total > std::numeric_limits<Rank>::max()) {
      throw std::invalid_argument("topology has more than 2^31-1 NPUs");
    }
  }
  num_npus_ = static_cast<Rank>(total);
  Rank stride = 1;
  LinkId base = 0;
  for (std::size_t d = 0; d < dims_.size(); ++d) {
    stride_.push_back(stride);
    stride *= dims_[d].npus;
    link_base_.push_back(base);
    base += static_cast<LinkId>(num_npus_) * links_per_rank(static_cast<int>(d));
    bandwidth_Bps_.push_back(dims_[d].bandwidth_GBps * 1e9 * dims_[d].links_per_neighbour);
    latency_ps_.push_back(ns_to_ps(dims_[d].latency_ns));
  }
  num_links_ = base;
}

int Topology::links_per_rank(int d) const {
  const DimensionSpec& s = dims_[d];
  if (s.npus == 1) return 0;
  switch (s.kind) {
    case DimKind::kRing: return 2;  // positive and negative direction
    case DimKind::kFullyConnected: return s.npus - 1;
    case DimKind::kSwitch: return 2;  // up to the switch, down from it
  }
  return 0;
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

LinkId Topology::ring_link(Rank from, int d, bool positive) const {
  return link_base_[d] + static_cast<LinkId>(from) * 2 + (positive ? 0 : 1);
}

LinkId Topology::fc_link(Rank from, int d, int to_coord) const {
  const int me = coord(from, d);
  const int slot = to_coord < me ? to_coord : to_coord - 1;
  return link_base_[d] + static_cast<LinkId>(from) * (dims_[d].npus - 1) + slot;
}

LinkId Topology::switch_up_link(Rank from, int d) const {
  return link_base_[d] + static_cast<LinkId>(from) * 2;
}

LinkId Topology::switch_down_link(Rank to, int d) const {
  return link_base_[d] + static_cast<LinkId>(to) * 2 + 1;
}

Link Topology::link(LinkId id) const {
  if (id < 0 || id >= num_links_) throw std::out_of_range("link id out of range");
  int d = num_dims() - 1;
  while (link_base_[d] > id) --d;
  const LinkId local = id - link_base_[d];
  const int per = links_per_rank(d);
  const Rank owner = static_cast<Rank>(local / per);
  const int slot = static_cast<int>(local % per);
  const int n = dims_[d].npus;
  const int c = coord(owner, d);
  Link l;
  l.dim = d;
  l.bandwidth_Bps = bandwidth_Bps_[d];
  l.latency_ps = latency_ps_[d];
  switch (dims_[d].kind) {
    case DimKind::kRing:
      l.src = owner;
      l.dst = with_coord(owner, d, slot == 0 ? (c + 1) % n : (c + n - 1) % n);
      break;
    case DimKind::kFullyConnected:
      l.src = owner;
      l.dst = with_coord(owner, d, slot < c ? slot : slot + 1);
      break;
    case DimKind::kSwitch:
      l.src = slot == 0 ? owner : -1;
      l.dst = slot == 0 ? -1 : owner;
      break;
  }
  return l;
}

std::string Topology::link_name(LinkId id) const {
  const Link l = link(id);
  auto end = [](Rank r) { return r < 0 ? std::string("switch") : "npu" + std::to_string(r); };
  return "dim" + std::to_string(l.dim) + ":" + end(l.src) + "->" + end(l.dst);
}

void Topology::route(Rank src, Rank dst, std::vector<LinkId>& out) const {
  Rank at = src;
  for (int d = 0; d < num_dims(); ++d) {
    const int a = coord(at, d);
    const int b = coord(dst, d);
    if (a == b) continue;
    const int n = dims_[d].npus;
    switch (dims_[d].kind) {
      case DimKind::kRing: {
        const int fwd = (b - a + n) % n;
        const bool positive = fwd <= n - fwd;
        const int hops = positive ? fwd : n - fwd;
        int c = a;
        for (int h = 0; h < hops; ++h) {
          const Rank here = with_coord(at, d, c);
          out.push_back(ring_link(here, d, positive));
          c = positive ? (c + 1) % n : (c + n - 1) % n;
        }
        break;
      }
      case DimKind::kFullyConnected:
        out.push_back(fc_link(at, d, b));
        break;
      case DimKind::kSwitch:
        out.push_back(switch_up_link(at, d));
        out.push_back(switch_down_link(with_coord(at, d, b), d));
        break;
    }
    at = with_coord(at, d, b);
  }
}

}  // namespace acesim
