// A switch: every group of the dimension adds one switch node; each NPU has
// a link up to it and one down from it. Link ids: 2 per NPU (up, then down),
// in rank order. Routes go up and down.
#include "topology/topology_kinds.h"

namespace acesim {
namespace {

class SwitchFabric final : public DimensionFabric {
 public:
  explicit SwitchFabric(std::string numbered_name) : numbered_name_(std::move(numbered_name)) {}

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
    if (numbered_name_.empty()) return DimensionFabric::node_name(p, node);
    return numbered_name_ + std::to_string(node - p.node_base);
  }

 private:
  std::string numbered_name_;  // empty: every switch is "switch"
};

}  // namespace

std::shared_ptr<const DimensionFabric> make_switch_fabric(std::string numbered_name) {
  return std::make_shared<const SwitchFabric>(std::move(numbered_name));
}

void register_switch_kind(TopologyKindRegistry& registry) {
  TopologyKindEntry e;
  e.name = "switch";
  e.aliases = {"Switch"};
  e.astra_name = "Switch";
  e.help = "every NPU links up to one switch and down from it";
  e.build = [](const DimensionSpec&) { return make_switch_fabric(); };
  registry.add(std::move(e));
}

}  // namespace acesim
