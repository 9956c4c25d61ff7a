// Rails: the scale-out network of a node-based platform when every GPU has
// its own NIC and GPU i of every node plugs into rail switch i. Put after the
// node's own dimension (the NVLink domain), a group of this dimension is the
// GPUs with one local index across the nodes: one rail. So each group adds
// one switch, as `switch` does, and traffic between GPUs of different rails
// never enters the scale-out network: routes are dimension-ordered, so it
// crosses the NVLink domain first to the GPU on the destination's rail (what
// NCCL's PXN does). Link ids: 2 per NPU (NIC up to its rail switch, then down),
// in rank order.
#include "topology/topology_kinds.h"

namespace acesim {
namespace {

class RailFabric final : public DimensionFabric {
 public:
  LinkId num_links(const DimPlace& p) const override {
    return p.npus() == 1 ? 0 : 2 * static_cast<LinkId>(p.topo.num_npus());
  }

  Link link(const DimPlace& p, LinkId local) const override {
    const Rank npu = static_cast<Rank>(local / 2);
    const NodeId sw = p.group_node(p.group_of(npu), 0);
    return local % 2 == 0 ? p.make_link(npu, sw) : p.make_link(sw, npu);
  }

  void route(const DimPlace& p, Rank at, int to, std::vector<LinkId>& out) const override {
    out.push_back(p.link_base + static_cast<LinkId>(at) * 2);
    out.push_back(p.link_base + static_cast<LinkId>(p.with_coord(at, to)) * 2 + 1);
  }

  int npu_links_out(int npus) const override { (void)npus; return 1; }
  int nodes_per_group(int npus) const override { return npus > 1 ? 1 : 0; }
  std::string node_name(const DimPlace& p, NodeId node) const override {
    return "rail" + std::to_string(node - p.node_base);
  }
};

}  // namespace

void register_rail_kind(TopologyKindRegistry& registry) {
  TopologyKindEntry e;
  e.name = "rail";
  e.default_algorithm = "ring";
  e.help = "one NIC per NPU; NPU i of every node on rail switch i (put after the node's NVLink dimension)";
  e.build = [](const DimensionSpec&) { return std::make_shared<const RailFabric>(); };
  registry.add(std::move(e));
}

}  // namespace acesim
