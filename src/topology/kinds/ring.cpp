// A ring: every NPU links to its two neighbours, one link each way (with n=2
// both go to the one neighbour). Link ids: 2 per NPU, positive direction
// first, in rank order. Routes take the shorter way round, ties going the
// positive way.
#include "topology/topology_kinds.h"

namespace acesim {
namespace {

class RingFabric final : public DimensionFabric {
 public:
  LinkId num_links(const DimPlace& p) const override {
    return p.npus() == 1 ? 0 : 2 * static_cast<LinkId>(p.topo.num_npus());
  }

  Link link(const DimPlace& p, LinkId local) const override {
    const Rank from = static_cast<Rank>(local / 2);
    const bool positive = local % 2 == 0;
    const int n = p.npus();
    const int c = p.coord(from);
    return p.make_link(from, p.with_coord(from, positive ? (c + 1) % n : (c + n - 1) % n));
  }

  void route(const DimPlace& p, Rank at, int to, std::vector<LinkId>& out) const override {
    const int n = p.npus();
    const int a = p.coord(at);
    const int fwd = (to - a + n) % n;
    const bool positive = fwd <= n - fwd;
    const int hops = positive ? fwd : n - fwd;
    int c = a;
    for (int h = 0; h < hops; ++h) {
      const Rank here = p.with_coord(at, c);
      out.push_back(p.link_base + static_cast<LinkId>(here) * 2 + (positive ? 0 : 1));
      c = positive ? (c + 1) % n : (c + n - 1) % n;
    }
  }

  int npu_links_out(int npus) const override { (void)npus; return 2; }
};

}  // namespace

void register_ring_kind(TopologyKindRegistry& registry) {
  TopologyKindEntry e;
  e.name = "ring";
  e.default_algorithm = "ring";
  e.aliases = {"Ring"};
  e.astra_name = "Ring";
  e.help = "each NPU links to its two neighbours; routes take the shorter way round";
  e.build = [](const DimensionSpec&) { return std::make_shared<const RingFabric>(); };
  registry.add(std::move(e));
}

}  // namespace acesim
