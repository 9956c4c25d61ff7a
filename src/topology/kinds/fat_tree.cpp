// A fat-tree (folded Clos) of 2 or 3 tiers per group of the dimension.
//
// Each NPU's NIC links to a leaf switch (`leaf_size` NPUs per leaf, the last
// leaf may hold fewer). A leaf has A = ceil(leaf_size / oversubscription)
// uplinks, one to each of A switches above it, each carrying
// leaf_size x bandwidth / (oversubscription x A): with oversubscription 2 a
// leaf's uplinks carry half of what its NPUs can send. Two tiers: the A
// spines join all leaves. Three tiers: leaves form pods of `pod_size`; each
// pod has A aggregation switches, and aggregation switch a of every pod
// links to the pod_size core switches of plane a, each link as fast as an
// uplink of a leaf (no oversubscription above the leaves). Tiers a group
// does not need (one leaf, one pod) are left out.
//
// Routes: shortest paths, spread as InfiniBand's d-mod-k routing does,
// deterministically: to NPU j the uplink of a leaf is j mod A and the core
// switch (j / A) mod pod_size. With links down (Topology::set_link_down), a
// route that would cross one is spread the same way over the paths still
// up: uplink ups[j mod |ups|] of the uplinks whose path to the destination
// leaf is whole, then the same over its plane's cores, as a subnet manager
// spreads destinations over the ports left after a re-sweep. An NPU's one
// link to its leaf has no alternative. An NPU's links have the dimension's latency
// (its NIC and first switch); switch-to-switch links `switch_latency_ns`
// (default: the same).
//
// Ids per group: 2 per NPU (up to its leaf, down), then 2 per leaf uplink
// (up, down) leaf by leaf, then 2 per aggregation-to-core link; groups one
// after another. Nodes per group: leaves, then aggregation switches (the
// spines of two tiers), then cores.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "topology/topology_kinds.h"

namespace acesim {
namespace {

struct Geometry {
  int n = 1;       // NPUs per group
  int leaf = 1;    // NPUs per leaf
  int leaves = 1;  // L
  int up = 0;      // A: uplinks per leaf, aggregation switches per pod (0: one leaf)
  int pod = 1;     // leaves per pod (P)
  int pods = 1;    // Q
  int cores = 0;   // per plane (0: one pod)
  double uplink_share = 1.0;  // an uplink's bandwidth over an NPU link's

  static int ceil_div(int a, int b) { return (a + b - 1) / b; }

  Geometry(int npus, int tiers, int leaf_size, double oversubscription, int pod_size)
      : n(npus), leaf(leaf_size) {
    leaves = ceil_div(n, leaf);
    if (leaves == 1) return;
    up = static_cast<int>(std::ceil(leaf / oversubscription - 1e-9));
    uplink_share = leaf / (oversubscription * up);
    pod = tiers == 3 ? pod_size : leaves;
    pods = ceil_div(leaves, pod);
    cores = pods > 1 ? pod : 0;
  }

  LinkId npu_links() const { return 2 * static_cast<LinkId>(n); }
  LinkId leaf_links() const { return 2 * static_cast<LinkId>(leaves) * up; }
  LinkId core_links() const { return 2 * static_cast<LinkId>(pods) * up * cores; }
  LinkId per_group() const { return n == 1 ? 0 : npu_links() + leaf_links() + core_links(); }
  int nodes() const { return n == 1 ? 0 : leaves + pods * up + up * cores; }
  int agg_node(int q, int a) const { return leaves + q * up + a; }
  int core_node(int a, int c) const { return leaves + pods * up + a * cores + c; }
};

class FatTreeFabric final : public DimensionFabric {
 public:
  FatTreeFabric(int tiers, int leaf_size, double oversubscription, int pod_size, double switch_latency_ns)
      : tiers_(tiers), leaf_size_(leaf_size), oversubscription_(oversubscription), pod_size_(pod_size),
        switch_latency_ns_(switch_latency_ns) {}

  LinkId num_links(const DimPlace& p) const override {
    return static_cast<LinkId>(p.num_groups()) * geometry(p.npus()).per_group();
  }

  Link link(const DimPlace& p, LinkId local) const override {
    const Geometry g = geometry(p.npus());
    const Rank group = static_cast<Rank>(local / g.per_group());
    LinkId i = local % g.per_group();
    const bool down = i % 2 == 1;
    NodeId lo = 0;  // the lower end
    NodeId hi = 0;
    double share = g.uplink_share;
    if (i < g.npu_links()) {
      const int c = static_cast<int>(i / 2);
      lo = p.rank_in_group(group, c);
      hi = p.group_node(group, c / g.leaf);
      share = 1.0;
    } else if ((i -= g.npu_links()) < g.leaf_links()) {
      const int e = static_cast<int>(i / 2);
      const int l = e / g.up;
      lo = p.group_node(group, l);
      hi = p.group_node(group, g.agg_node(l / g.pod, e % g.up));
    } else {
      const int e = static_cast<int>((i - g.leaf_links()) / 2);
      const int qa = e / g.cores;
      lo = p.group_node(group, g.agg_node(qa / g.up, qa % g.up));
      hi = p.group_node(group, g.core_node(qa % g.up, e % g.cores));
    }
    Link l = down ? p.make_link(hi, lo) : p.make_link(lo, hi);
    l.bandwidth_Bps *= share;
    if (hi >= p.node_base && lo >= p.node_base && switch_latency_ns_ >= 0.0) l.latency_ps = ns_to_ps(switch_latency_ns_);
    return l;
  }

  void route(const DimPlace& p, Rank at, int to, std::vector<LinkId>& out) const override {
    const Geometry g = geometry(p.npus());
    const int c = g.cores > 0 ? (to / g.up) % g.cores : 0;
    emit(g, base(p, g, at), p.coord(at), to, g.up > 0 ? to % g.up : 0, c, out);
  }

  bool route_around(const DimPlace& p, Rank at, int to, const std::vector<bool>& down, std::vector<LinkId>& out) const override {
    const Geometry g = geometry(p.npus());
    const LinkId b = base(p, g, at);
    const int from = p.coord(at);
    const auto is_down = [&](LinkId l) { return static_cast<bool>(down[static_cast<std::size_t>(l)]); };
    if (is_down(b + 2 * static_cast<LinkId>(from)) || is_down(b + 2 * static_cast<LinkId>(to) + 1)) return false;
    const int li = from / g.leaf;
    const int lj = to / g.leaf;
    if (li == lj) return false;  // only the two NPU links, both up: route() had it
    // d-mod-k over the uplinks (and cores) whose whole path is up.
    std::vector<int> ups;
    for (int a = 0; a < g.up; ++a) {
      if (open_cores(g, b, li, lj, a, is_down) > 0) ups.push_back(a);
    }
    if (ups.empty()) return false;
    const int a = ups[static_cast<std::size_t>(to) % ups.size()];
    int c = 0;
    if (li / g.pod != lj / g.pod) {
      std::vector<int> cores;
      for (int k = 0; k < g.cores; ++k) {
        if (path_up(g, b, li, lj, a, k, is_down)) cores.push_back(k);
      }
      c = cores[static_cast<std::size_t>(to / g.up) % cores.size()];
    }
    emit(g, b, from, to, a, c, out);
    return true;
  }

  std::string unreachable(const DimPlace& p, const std::vector<bool>& down) const override {
    const Geometry g = geometry(p.npus());
    const LinkId per = g.per_group();
    const auto is_down = [&](LinkId l) { return static_cast<bool>(down[static_cast<std::size_t>(l)]); };
    for (Rank group = 0; per > 0 && group < p.num_groups(); ++group) {
      const LinkId b = p.link_base + static_cast<LinkId>(group) * per;
      if (std::none_of(down.begin() + b, down.begin() + b + per, [](bool x) { return x; })) continue;
      for (int c = 0; c < g.n; ++c) {
        const LinkId l = b + 2 * static_cast<LinkId>(c);
        if (is_down(l) || is_down(l + 1)) {
          return "npu" + std::to_string(p.rank_in_group(group, c)) + " has one link to its leaf and " + p.topo.link_name(is_down(l) ? l : l + 1) +
                 " is down: nothing else reaches it";
        }
      }
      for (int li = 0; li < g.leaves; ++li) {
        for (int lj = 0; lj < g.leaves; ++lj) {
          bool open = li == lj;
          for (int a = 0; a < g.up && !open; ++a) open = open_cores(g, b, li, lj, a, is_down) > 0;
          if (!open) {
            return "no path from " + p.topo.node_name(p.group_node(group, li)) + " to " + p.topo.node_name(p.group_node(group, lj)) +
                   ": every switch between them has a link down";
          }
        }
      }
    }
    return "";
  }

  int npu_links_out(int npus) const override { (void)npus; return 1; }
  int nodes_per_group(int npus) const override { return geometry(npus).nodes(); }

  std::string node_name(const DimPlace& p, NodeId node) const override {
    const Geometry g = geometry(p.npus());
    const NodeId i = node - p.node_base;
    const int k = static_cast<int>(i % g.nodes());
    std::string name;
    if (k < g.leaves) {
      name = "leaf" + std::to_string(k);
    } else if (k < g.leaves + g.pods * g.up) {
      const int qa = k - g.leaves;
      name = g.cores == 0 ? "spine" + std::to_string(qa) : "agg" + std::to_string(qa / g.up) + "." + std::to_string(qa % g.up);
    } else {
      const int ac = k - g.leaves - g.pods * g.up;
      name = "core" + std::to_string(ac / g.cores) + "." + std::to_string(ac % g.cores);
    }
    return p.num_groups() > 1 ? name + "/" + std::to_string(i / g.nodes()) : name;
  }

 private:
  Geometry geometry(int npus) const { return Geometry(npus, tiers_, leaf_size_, oversubscription_, pod_size_); }

  // The first link id of `at`'s group.
  static LinkId base(const DimPlace& p, const Geometry& g, Rank at) {
    return p.link_base + static_cast<LinkId>(p.group_of(at)) * g.per_group();
  }
  static LinkId leaf_up(const Geometry& g, LinkId b, int leaf, int a) { return b + g.npu_links() + 2 * (static_cast<LinkId>(leaf) * g.up + a); }
  static LinkId core_up(const Geometry& g, LinkId b, int pod, int a, int c) {
    return b + g.npu_links() + g.leaf_links() + 2 * ((static_cast<LinkId>(pod) * g.up + a) * g.cores + c);
  }

  // Whether the path from leaf li to leaf lj over uplink a (and core c of
  // plane a, between pods) has every link up.
  template <class Down>
  static bool path_up(const Geometry& g, LinkId b, int li, int lj, int a, int c, const Down& down) {
    if (down(leaf_up(g, b, li, a)) || down(leaf_up(g, b, lj, a) + 1)) return false;
    const int qi = li / g.pod;
    const int qj = lj / g.pod;
    return qi == qj || (!down(core_up(g, b, qi, a, c)) && !down(core_up(g, b, qj, a, c) + 1));
  }
  // How many cores of plane a a path from li to lj over uplink a may take (1 within a pod).
  template <class Down>
  static int open_cores(const Geometry& g, LinkId b, int li, int lj, int a, const Down& down) {
    if (li / g.pod == lj / g.pod) return path_up(g, b, li, lj, a, 0, down) ? 1 : 0;
    int n = 0;
    for (int c = 0; c < g.cores; ++c) n += path_up(g, b, li, lj, a, c, down) ? 1 : 0;
    return n;
  }

  // The route from NPU `from` to NPU `to` of the group at link id b, over
  // uplink a and (between pods) core c of plane a.
  static void emit(const Geometry& g, LinkId b, int from, int to, int a, int c, std::vector<LinkId>& out) {
    const int li = from / g.leaf;
    const int lj = to / g.leaf;
    out.push_back(b + 2 * static_cast<LinkId>(from));
    if (li != lj) {
      out.push_back(leaf_up(g, b, li, a));
      const int qi = li / g.pod;
      const int qj = lj / g.pod;
      if (qi != qj) {
        out.push_back(core_up(g, b, qi, a, c));
        out.push_back(core_up(g, b, qj, a, c) + 1);
      }
      out.push_back(leaf_up(g, b, lj, a) + 1);
    }
    out.push_back(b + 2 * static_cast<LinkId>(to) + 1);
  }

  int tiers_;
  int leaf_size_;
  double oversubscription_;
  int pod_size_;
  double switch_latency_ns_;  // < 0: the dimension's
};

}  // namespace

void register_fat_tree_kind(TopologyKindRegistry& registry) {
  TopologyKindEntry e;
  e.name = "fat-tree";
  e.aliases = {"fattree", "clos"};
  e.default_algorithm = "ring";
  e.help = "leaf switches of leaf_size NPUs under spines (tiers 2) or pods and cores (tiers 3); "
           "oversubscription at the leaves; d-mod-k routes";
  e.params = {
      {"tiers", "2: leaves and spines; 3: leaves, pods of aggregation switches, cores", 2, 3, true},
      {"leaf_size", "NPUs per leaf switch (default 32: half the ports of a 64-port switch)", 1, 1 << 20, true},
      {"oversubscription", "a leaf's downlink capacity over its uplink capacity (default 1)", 1, 1024, false},
      {"pod_size", "leaves per pod with 3 tiers (default 32)", 1, 1 << 20, true},
      {"switch_latency_ns", "latency of a switch-to-switch link (default: the dimension's latency_ns)", 0, 1e9, false},
  };
  e.build = [](const DimensionSpec& s) {
    return std::make_shared<const FatTreeFabric>(static_cast<int>(s.param("tiers", 2)), static_cast<int>(s.param("leaf_size", 32)),
                                                 s.param("oversubscription", 1.0), static_cast<int>(s.param("pod_size", 32)),
                                                 s.param("switch_latency_ns", -1.0));
  };
  registry.add(std::move(e));
}

}  // namespace acesim
