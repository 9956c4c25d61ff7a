// What a topology kind builds: the fabric of one dimension, the same for
// every group of NPUs that differ only in that dimension's coordinate.
//
// A fabric numbers its own links (0 .. num_links-1, over all groups) and the
// nodes each group adds (switches, NICs: 0 .. nodes_per_group-1); the
// topology offsets both by what the dimensions before it use. The numbering
// is the fabric's choice; the network backends sort and key by link id, so a
// kind keeps it stable. Regular kinds compute ids from ranks; an explicit
// graph (link_graph.h) keeps one group's tables.
#pragma once

#include <string>
#include <vector>

#include "topology/topology.h"

namespace acesim {

// One dimension of a topology as its fabric sees it: the NPU arithmetic and
// where its link and node ids start.
struct DimPlace {
  const Topology& topo;
  int dim;
  LinkId link_base;
  NodeId node_base;
  int nodes_per_group;
  double bandwidth_Bps;  // the spec's bandwidth times its links per neighbour
  TimePs latency_ps;

  int npus() const { return topo.dim(dim).npus; }
  Rank stride() const { return topo.stride(dim); }
  int coord(Rank r) const { return topo.coord(r, dim); }
  Rank with_coord(Rank r, int c) const { return topo.with_coord(r, dim, c); }
  Rank num_groups() const { return topo.num_npus() / npus(); }
  // Groups are numbered by the rank's other coordinates, in rank order.
  Rank group_of(Rank r) const { return r % stride() + r / (stride() * npus()) * stride(); }
  Rank rank_in_group(Rank group, int c) const {
    return group % stride() + group / stride() * stride() * npus() + static_cast<Rank>(c) * stride();
  }
  // The node a group adds, by its index within the group.
  NodeId group_node(Rank group, int local) const {
    return node_base + static_cast<NodeId>(group) * nodes_per_group + local;
  }
  // A link of this dimension at its bandwidth and latency.
  Link make_link(NodeId src, NodeId dst) const { return Link{src, dst, dim, bandwidth_Bps, latency_ps}; }
};

class DimensionFabric {
 public:
  virtual ~DimensionFabric() = default;

  // Links over all groups of the dimension.
  virtual LinkId num_links(const DimPlace& p) const = 0;
  // `local`: 0 .. num_links-1. Node ids are the topology's.
  virtual Link link(const DimPlace& p, LinkId local) const = 0;
  // Appends the topology's link ids from NPU `at` to the NPU of its group
  // with coordinate `to` (!= at's).
  virtual void route(const DimPlace& p, Rank at, int to, std::vector<LinkId>& out) const = 0;
  // With links down (`down`: per topology link id): the route from `at` to
  // `to` over links still up, appended to `out`; false where the kind has
  // none (the default: a kind that does not reroute).
  virtual bool route_around(const DimPlace& p, Rank at, int to, const std::vector<bool>& down, std::vector<LinkId>& out) const {
    (void)p; (void)at; (void)to; (void)down; (void)out;
    return false;
  }
  // "" when every NPU of every group still reaches every other with `down`
  // links down; else the first pair that cannot, in words. The default
  // routes every pair of each group that holds a down link.
  virtual std::string unreachable(const DimPlace& p, const std::vector<bool>& down) const;
  // Links from one NPU into the dimension (see npu_links_out()).
  virtual int npu_links_out(int npus) const = 0;

  // Switches and NICs each group adds (for the dimension's size).
  virtual int nodes_per_group(int npus) const { (void)npus; return 0; }
  virtual NodeKind node_kind(int local) const { (void)local; return NodeKind::kSwitch; }
  virtual std::string node_name(const DimPlace& p, NodeId node) const { (void)p; (void)node; return "switch"; }
};

}  // namespace acesim
