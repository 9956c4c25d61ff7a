// An explicit graph: nodes and links in tables, shortest-path routes.
//
// For fabrics that are not rings, fully-connected groups or single switches
// (fat-trees, NIC rails, switches joined to switches). A topology kind's
// builder makes one and wraps it with make_graph_fabric(); the graph is one
// group of its dimension, and the topology repeats it for every group (a
// topology of one dimension is the whole graph). Memory: the tables plus a
// next-link table of (NPUs x nodes) entries, so it suits graphs of up to a
// few thousand nodes; regular fabrics compute their ids instead.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "topology/fabric.h"
#include "topology/topology.h"

namespace acesim {

class LinkGraph {
 public:
  // What a shortest path minimises first; the other breaks ties, then the
  // lowest link id at each hop (so routes are deterministic).
  enum class Metric { kHops, kLatency };

  struct GraphLink {
    NodeId src;
    NodeId dst;
    double bandwidth_Bps;
    TimePs latency_ps;
  };

  // Nodes 0..npus-1 are the NPUs; a node's id is its coordinate in the group.
  explicit LinkGraph(int npus);

  NodeId add_node(NodeKind kind, std::string name);
  // Throws std::invalid_argument for an unknown node, a self-loop, a
  // bandwidth <= 0 or a latency < 0.
  LinkId add_link(NodeId src, NodeId dst, double bandwidth_Bps, TimePs latency_ps);
  // One link each way.
  void add_duplex(NodeId a, NodeId b, double bandwidth_Bps, TimePs latency_ps);

  // Computes the routes between NPUs; throws std::invalid_argument naming a
  // pair when one NPU cannot reach another. Call once, after the last link.
  void finish(Metric metric = Metric::kHops);

  bool finished() const { return finished_; }
  int num_npus() const { return npus_; }
  NodeId num_nodes() const { return static_cast<NodeId>(kinds_.size()); }
  LinkId num_links() const { return static_cast<LinkId>(links_.size()); }
  NodeKind node_kind(NodeId n) const { return kinds_[n]; }
  const std::string& node_name(NodeId n) const { return names_[n]; }
  const GraphLink& link(LinkId id) const { return links_[id]; }
  // Appends the links from NPU `src` to NPU `dst` (after finish()).
  void route(int src, int dst, std::vector<LinkId>& out) const;

 private:
  std::vector<std::int32_t> next_links_to(NodeId dst, Metric metric) const;

  int npus_;
  std::vector<NodeKind> kinds_;
  std::vector<std::string> names_;
  std::vector<GraphLink> links_;
  std::vector<std::vector<LinkId>> out_;  // per node, its links in id order
  std::vector<std::int32_t> next_;        // [dst NPU * nodes + node]: the link to take, -1 at dst
  bool finished_ = false;
};

// A dimension's fabric from a finished graph of that dimension's NPU count:
// every group of the dimension gets a copy of it. Link ids: the graph's, group
// after group; node names: the graph's, with "/<group>" when there are several.
std::shared_ptr<const DimensionFabric> make_graph_fabric(LinkGraph graph);

}  // namespace acesim
