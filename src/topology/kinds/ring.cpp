// A ring: every NPU links to its two neighbours, one link each way (with n=2
// both go to the one neighbour). Link ids: 2 per NPU, positive direction
// first, in rank order. Routes take the shorter way round, ties going the
// positive way; with a link down on that way, the other way round.
#include <algorithm>

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
    const int fwd = (to - p.coord(at) + n) % n;
    walk(p, at, fwd <= n - fwd, to, out);
  }

  bool route_around(const DimPlace& p, Rank at, int to, const std::vector<bool>& down, std::vector<LinkId>& out) const override {
    const std::size_t from = out.size();
    for (bool positive : {true, false}) {
      walk(p, at, positive, to, out);
      if (std::none_of(out.begin() + static_cast<std::ptrdiff_t>(from), out.end(),
                       [&](LinkId l) { return down[static_cast<std::size_t>(l)]; })) {
        return true;
      }
      out.resize(from);
    }
    return false;
  }

  int npu_links_out(int npus) const override { (void)npus; return 2; }

 private:
  // From `at` to coordinate `to` one way round.
  static void walk(const DimPlace& p, Rank at, bool positive, int to, std::vector<LinkId>& out) {
    const int n = p.npus();
    int c = p.coord(at);
    while (c != to) {
      out.push_back(p.link_base + static_cast<LinkId>(p.with_coord(at, c)) * 2 + (positive ? 0 : 1));
      c = positive ? (c + 1) % n : (c + n - 1) % n;
    }
  }
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
