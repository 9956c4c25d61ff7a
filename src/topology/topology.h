// Topologies as graphs of nodes and links, described by dimensions.
//
// A topology is a list of dimensions; each has a kind (a registered builder:
// ring, fully-connected, switch, ...; topology_kinds.h), its NPU count, link
// bandwidth (per direction), link latency and links per neighbour. Ranks are
// numbered in mixed radix with dimension 0 varying fastest; the NPUs that
// differ only in dimension d's coordinate form one group of that dimension,
// and the dimension's kind builds the same fabric for every group. A torus is
// rings in every dimension.
//
// The graph: NPUs are nodes 0..num_npus-1 (node id = rank); the switches and
// NICs the dimensions add follow, dimension by dimension, group by group. A
// link joins any two nodes (switch to switch included), carries a bandwidth,
// a latency and the dimension it is counted under. Routes are paths of
// links, dimension-ordered: dimension 0 first.
//
// Regular kinds compute their link and node ids (no tables), so a topology
// of a million NPUs costs a few bytes per dimension; a kind built from an
// explicit graph (link_graph.h) stores one group's tables.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/time.h"

namespace acesim {

using Rank = std::int32_t;
using LinkId = std::int64_t;
using NodeId = std::int64_t;

enum class NodeKind { kNpu, kSwitch, kNic };
std::string_view to_string(NodeKind kind);

// Names a registered topology kind by its canonical name (what reports
// print). Readers store the registry entry's name, so equal kinds compare
// equal; the built-ins have constants.
class DimKind {
 public:
  constexpr DimKind() = default;
  constexpr explicit DimKind(std::string_view name) : name_(name) {}
  constexpr std::string_view name() const { return name_; }
  friend constexpr bool operator==(DimKind a, DimKind b) { return a.name_ == b.name_; }

  static const DimKind kRing;
  static const DimKind kFullyConnected;
  static const DimKind kSwitch;

 private:
  std::string_view name_ = "ring";
};
inline constexpr DimKind DimKind::kRing{"ring"};
inline constexpr DimKind DimKind::kFullyConnected{"fully-connected"};
inline constexpr DimKind DimKind::kSwitch{"switch"};

std::string_view to_string(DimKind kind);

// A parameter of its kind's own (a fat-tree's leaf_size), as the platform
// file gives it; the kind declares which it takes (topology_kinds.h).
struct KindParam {
  std::string name;
  double value = 0.0;
};

struct DimensionSpec {
  DimKind kind = DimKind::kRing;
  int npus = 1;
  double bandwidth_GBps = 0.0;  // per link, per direction (10^9 bytes/s)
  double latency_ns = 0.0;      // per link traversal
  int links_per_neighbour = 1;  // parallel links between neighbours: bandwidth adds up
  // A switch that reduces in the switch (NVLink SHARP): NCCL's NVLS runs on it.
  bool nvls = false;
  // The share of the link rate NVLS's multimem traffic gets (the switch's
  // reduction and multicast do not keep up with the links).
  double nvls_efficiency = 1.0;
  // A scale-out whose switches reduce in the network (SHARP): NCCL's CollNet
  // runs on it.
  bool sharp = false;
  std::vector<KindParam> params = {};  // only those given; the kind has defaults for the rest

  // The parameter's value, or `fallback` when the platform does not give it.
  double param(std::string_view name, double fallback) const {
    for (const KindParam& p : params) {
      if (p.name == name) return p.value;
    }
    return fallback;
  }
};

struct Link {
  NodeId src_node = -1;
  NodeId dst_node = -1;
  int dim = 0;  // the dimension whose statistics count this link
  double bandwidth_Bps = 0.0;
  TimePs latency_ps = 0;
};

class DimensionFabric;
struct DimPlace;

class Topology {
 public:
  // Throws std::invalid_argument naming the dimension and what is wrong
  // (an unknown kind included).
  explicit Topology(std::vector<DimensionSpec> dims);

  int num_dims() const { return static_cast<int>(dims_.size()); }
  Rank num_npus() const { return num_npus_; }
  const DimensionSpec& dim(int d) const { return dims_[d]; }
  const std::vector<DimensionSpec>& dims() const { return dims_; }
  Rank stride(int d) const { return stride_[d]; }

  int coord(Rank r, int d) const { return static_cast<int>((r / stride_[d]) % dims_[d].npus); }
  std::vector<int> coords(Rank r) const;
  Rank rank_of(std::span<const int> coords) const;
  // `r` with its coordinate in dimension d replaced by `value`.
  Rank with_coord(Rank r, int d, int value) const {
    return r + static_cast<Rank>(value - coord(r, d)) * stride_[d];
  }

  // Nodes.
  NodeId num_nodes() const { return num_nodes_; }
  bool is_npu(NodeId n) const { return n >= 0 && n < num_npus_; }
  // The rank of an NPU node; -1 for a switch or NIC.
  Rank npu_at(NodeId n) const { return is_npu(n) ? static_cast<Rank>(n) : -1; }
  NodeKind node_kind(NodeId n) const;
  // "npu3"; a switch or NIC as its dimension's kind names it ("switch").
  std::string node_name(NodeId n) const;

  // Links.
  LinkId num_links() const { return num_links_; }
  Link link(LinkId id) const;
  // A straggler's endpoint: the links into and out of NPU `npu` carry
  // `factor` (> 1: slower) times less; a link between two stragglers takes
  // the larger factor. Set before anything reads the links.
  void set_npu_link_slowdown(Rank npu, double factor);
  // Degraded hardware (a NIC at half rate, a slow link): link `id` carries
  // `share` (in (0, 1]) of its rate. Set before anything reads the links.
  void set_link_share(LinkId id, double share);
  // A link down (a cable pulled, a port failed): routes avoid it where the
  // dimension's kind has another path (a fat-tree's other uplinks, a ring's
  // other way round) and route() throws NoRoute where it has none. Set
  // before anything reads the routes; unreachable() says whether every NPU
  // still reaches every other.
  void set_link_down(LinkId id);
  bool link_down(LinkId id) const { return !link_down_.empty() && link_down_[static_cast<std::size_t>(id)]; }
  // "" when every NPU still reaches every other NPU of its groups; else the
  // first place where one cannot, in words ("npu3's link to leaf1 is down").
  std::string unreachable() const;
  // "dim0:npu3->npu4", "dim1:npu2->switch".
  std::string link_name(LinkId id) const;
  // The NPU whose links stand for this one when one rank stands for all:
  // the source when it is an NPU, else the destination when it is one; -1
  // for a link between switches, which no NPU stands for.
  Rank link_owner(const Link& l) const { return is_npu(l.src_node) ? npu_at(l.src_node) : npu_at(l.dst_node); }
  Rank link_owner(LinkId id) const { return link_owner(link(id)); }
  // Appends the links from src to dst (dimension-ordered; within a
  // dimension, its kind's route: on rings the shortest direction, ties
  // going the positive way). Empty when src == dst.
  void route(Rank src, Rank dst, std::vector<LinkId>& out) const;

  // Dimension d as its fabric sees it (for the kinds' builders).
  DimPlace place(int d) const;
  const DimensionFabric& fabric(int d) const { return *fabrics_[d]; }

 private:
  int dim_of_link(LinkId id) const;
  // Replaces the route from `from` on in `out` (dimension d, `at` to
  // coordinate `to`) by one around down links when it crosses one.
  void avoid_down(int d, Rank at, int to, std::size_t from, std::vector<LinkId>& out) const;
  int dim_of_node(NodeId n) const;

  std::vector<DimensionSpec> dims_;
  std::vector<std::shared_ptr<const DimensionFabric>> fabrics_;
  std::vector<Rank> stride_;
  std::vector<LinkId> link_base_;
  std::vector<NodeId> node_base_;
  std::vector<int> nodes_per_group_;
  std::vector<double> bandwidth_Bps_;
  std::vector<TimePs> latency_ps_;
  Rank num_npus_ = 1;
  LinkId num_links_ = 0;
  std::vector<double> npu_slowdown_;  // per NPU, empty when none is slowed
  std::vector<double> link_share_;    // per link, empty when none is degraded
  std::vector<bool> link_down_;       // per link, empty when none is down
  NodeId num_nodes_ = 0;
};

// A route that links down leave no path for.
class NoRoute : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Links leaving one NPU in a dimension of this spec's kind and size, each of
// the dimension's bandwidth: what its link utilisation is measured against.
int npu_links_out(const DimensionSpec& d);

}  // namespace acesim
