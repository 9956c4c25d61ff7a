// A fully-connected group: a link from every NPU to every other NPU of the
// group. Link ids: n-1 per NPU, in rank order, by the peer's coordinate.
// Routes are the one direct link.
#include "topology/topology_kinds.h"

namespace acesim {
namespace {

class FullyConnectedFabric final : public DimensionFabric {
 public:
  LinkId num_links(const DimPlace& p) const override {
    return static_cast<LinkId>(p.topo.num_npus()) * (p.npus() - 1);
  }

  Link link(const DimPlace& p, LinkId local) const override {
    const int per = p.npus() - 1;
    const Rank from = static_cast<Rank>(local / per);
    const int slot = static_cast<int>(local % per);
    return p.make_link(from, p.with_coord(from, slot < p.coord(from) ? slot : slot + 1));
  }

  void route(const DimPlace& p, Rank at, int to, std::vector<LinkId>& out) const override {
    const int slot = to < p.coord(at) ? to : to - 1;
    out.push_back(p.link_base + static_cast<LinkId>(at) * (p.npus() - 1) + slot);
  }

  int npu_links_out(int npus) const override { return npus - 1; }
};

}  // namespace

void register_fully_connected_kind(TopologyKindRegistry& registry) {
  TopologyKindEntry e;
  e.name = "fully-connected";
  e.aliases = {"FullyConnected"};
  e.astra_name = "FullyConnected";
  e.help = "a link from every NPU to every other NPU of the group";
  e.build = [](const DimensionSpec&) { return std::make_shared<const FullyConnectedFabric>(); };
  registry.add(std::move(e));
}

}  // namespace acesim
