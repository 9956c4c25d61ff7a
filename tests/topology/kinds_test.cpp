// Topology kinds as plug-ins: the registry, switches as nodes, explicit
// graphs, and toy kinds registered from here (not shipped) run end to end
// through both network backends against their closed forms.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "config/input_error.h"
#include "config/platform.h"
#include "support.h"
#include "topology/link_graph.h"
#include "topology/topology_kinds.h"

namespace acesim {
namespace {

using test::dim;
using test::platform;

using namespace test::closed_form;

// A line: a ring without the wrap-around link. Link ids as the ring's (2 per
// NPU, positive first); the end NPUs' missing links are holes no route uses.
class LineFabric final : public DimensionFabric {
 public:
  LinkId num_links(const DimPlace& p) const override {
    return p.npus() == 1 ? 0 : 2 * static_cast<LinkId>(p.topo.num_npus());
  }
  Link link(const DimPlace& p, LinkId local) const override {
    const Rank from = static_cast<Rank>(local / 2);
    const int to = p.coord(from) + (local % 2 == 0 ? 1 : -1);
    if (to < 0 || to >= p.npus()) throw std::out_of_range("no such link on a line");
    return p.make_link(from, p.with_coord(from, to));
  }
  void route(const DimPlace& p, Rank at, int to, std::vector<LinkId>& out) const override {
    const bool positive = to > p.coord(at);
    for (int c = p.coord(at); c != to; c += positive ? 1 : -1) {
      out.push_back(p.link_base + static_cast<LinkId>(p.with_coord(at, c)) * 2 + (positive ? 0 : 1));
    }
  }
  int npu_links_out(int npus) const override { (void)npus; return 2; }
};

// NPUs 0..n/2-1 on switch A, the others on switch B; A and B joined by links
// of half the bandwidth and twice the latency.
std::shared_ptr<const DimensionFabric> two_switches(const DimensionSpec& d) {
  if (d.npus < 2 || d.npus % 2 != 0) throw std::invalid_argument("two-switch needs an even number of NPUs");
  const double bw = d.bandwidth_GBps * 1e9;
  const TimePs lat = ns_to_ps(d.latency_ns);
  LinkGraph g(d.npus);
  const NodeId a = g.add_node(NodeKind::kSwitch, "A");
  const NodeId b = g.add_node(NodeKind::kSwitch, "B");
  for (int i = 0; i < d.npus; ++i) g.add_duplex(i, i < d.npus / 2 ? a : b, bw, lat);
  g.add_duplex(a, b, bw / 2, 2 * lat);
  g.finish();
  return make_graph_fabric(std::move(g));
}

// The built-in switch, as an explicit graph.
std::shared_ptr<const DimensionFabric> star(const DimensionSpec& d) {
  LinkGraph g(d.npus);
  const NodeId s = g.add_node(NodeKind::kSwitch, "hub");
  for (int i = 0; i < d.npus; ++i) g.add_duplex(i, s, d.bandwidth_GBps * 1e9, ns_to_ps(d.latency_ns));
  g.finish();
  return make_graph_fabric(std::move(g));
}

void add_toy_kinds() {
  static const bool added = [] {
    TopologyKindRegistry& r = topology_kind_registry();
    TopologyKindEntry line;
    line.name = "line";
    line.help = "a ring without the wrap-around link (test only)";
    line.build = [](const DimensionSpec&) { return std::make_shared<const LineFabric>(); };
    r.add(std::move(line));
    TopologyKindEntry two;
    two.name = "two-switch";
    two.help = "two switches joined by a link (test only)";
    two.build = two_switches;
    r.add(std::move(two));
    TopologyKindEntry hub;
    hub.name = "star-graph";
    hub.help = "one switch, as an explicit graph (test only)";
    hub.build = star;
    r.add(std::move(hub));
    return true;
  }();
  (void)added;
}

const DimKind kLine{"line"};
const DimKind kTwoSwitch{"two-switch"};
const DimKind kStar{"star-graph"};

std::vector<NodeId> node_path(const Topology& t, Rank src, Rank dst) {
  std::vector<LinkId> r;
  t.route(src, dst, r);
  std::vector<NodeId> nodes{src};
  for (LinkId id : r) {
    const Link l = t.link(id);
    EXPECT_EQ(l.src_node, nodes.back()) << t.link_name(id);
    nodes.push_back(l.dst_node);
  }
  return nodes;
}

TEST(TopologyKinds, BuiltinsAreRegisteredWithAstraSpellings) {
  const TopologyKindRegistry& r = topology_kind_registry();
  const std::vector<std::string> names = r.names();
  ASSERT_GE(names.size(), 3u);
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + 3),
            (std::vector<std::string>{"ring", "fully-connected", "switch"}));
  EXPECT_EQ(r.get("FullyConnected").name, "fully-connected");
  EXPECT_EQ(r.get("fully_connected").name, "fully-connected");
  EXPECT_EQ(r.get("Switch").astra_name, "Switch");
  const std::vector<std::string> astra = astra_topology_names();
  EXPECT_EQ(std::vector<std::string>(astra.begin(), astra.begin() + 3),
            (std::vector<std::string>{"Ring", "FullyConnected", "Switch"}));
  EXPECT_THROW(Topology({dim(DimKind("torus"), 4, 100, 1)}), std::invalid_argument);
}

TEST(TopologyKinds, SwitchesAreNodesAfterTheNpus) {
  const Topology t({dim(DimKind::kSwitch, 4, 100, 1), dim(DimKind::kRing, 2, 100, 1)});
  EXPECT_EQ(t.num_npus(), 8);
  EXPECT_EQ(t.num_nodes(), 10);  // one switch per group of dimension 0
  EXPECT_EQ(t.node_kind(3), NodeKind::kNpu);
  EXPECT_EQ(t.node_kind(8), NodeKind::kSwitch);
  EXPECT_EQ(node_path(t, 5, 6), (std::vector<NodeId>{5, 9, 6}));
  EXPECT_EQ(node_path(t, 0, 7), (std::vector<NodeId>{0, 8, 3, 7}));
  std::vector<LinkId> r;
  t.route(2, 7, r);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(t.link_name(r[0]), "dim0:npu2->switch");
  EXPECT_EQ(t.link_name(r[1]), "dim0:switch->npu3");
  EXPECT_EQ(t.link_name(r[2]), "dim1:npu3->npu7");
  EXPECT_EQ(t.link_owner(r[0]), 2);
  EXPECT_EQ(t.link_owner(r[1]), 3);
  EXPECT_EQ(npu_links_out(dim(DimKind::kSwitch, 4, 100, 1)), 1);
  EXPECT_EQ(npu_links_out(dim(DimKind::kFullyConnected, 4, 100, 1)), 3);
}

TEST(TopologyKinds, MillionNpusBehindSwitchesCostNoTables) {
  const Topology t({dim(DimKind::kSwitch, 1024, 100, 1), dim(DimKind::kSwitch, 1024, 100, 1)});
  EXPECT_EQ(t.num_nodes(), (1 << 20) + 2 * 1024);
  const std::vector<NodeId> p = node_path(t, 0, t.num_npus() - 1);
  EXPECT_EQ(p, (std::vector<NodeId>{0, 1 << 20, 1023, (1 << 20) + 1024 + 1023, (1 << 20) - 1}));
}

TEST(LinkGraph, RoutesAcrossSwitchToSwitchLinks) {
  LinkGraph g(4);
  const NodeId a = g.add_node(NodeKind::kSwitch, "A");
  const NodeId b = g.add_node(NodeKind::kSwitch, "B");
  g.add_duplex(0, a, 1e9, 10);
  g.add_duplex(1, a, 1e9, 10);
  g.add_duplex(2, b, 1e9, 10);
  g.add_duplex(3, b, 1e9, 10);
  const LinkId ab = g.add_link(a, b, 1e9, 20);
  g.add_link(b, a, 1e9, 20);
  g.finish();
  std::vector<LinkId> r;
  g.route(1, 3, r);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(g.link(r[0]).src, 1);
  EXPECT_EQ(r[1], ab);
  EXPECT_EQ(g.link(r[2]).dst, 3);
}

TEST(LinkGraph, TiesGoToTheLowestLinkAndTheMetricDecides) {
  // Two NPUs, two switches in parallel, and a slow direct link.
  auto build = [](LinkGraph::Metric metric) {
    LinkGraph g(2);
    const NodeId s1 = g.add_node(NodeKind::kSwitch, "s1");
    const NodeId s2 = g.add_node(NodeKind::kSwitch, "s2");
    g.add_link(0, s1, 1e9, 100);   // 0
    g.add_link(s1, 1, 1e9, 100);   // 1
    g.add_link(0, s2, 1e9, 100);   // 2
    g.add_link(s2, 1, 1e9, 100);   // 3
    g.add_link(0, 1, 1e9, 500);    // 4: fewer hops, more latency
    g.add_link(1, 0, 1e9, 10);     // 5
    g.finish(metric);
    return g;
  };
  std::vector<LinkId> r;
  build(LinkGraph::Metric::kHops).route(0, 1, r);
  EXPECT_EQ(r, (std::vector<LinkId>{4}));
  r.clear();
  build(LinkGraph::Metric::kLatency).route(0, 1, r);
  EXPECT_EQ(r, (std::vector<LinkId>{0, 1}));  // s1 and s2 tie: the lower link id
}

TEST(LinkGraph, RefusesWhatItCannotRoute) {
  LinkGraph g(3);
  g.add_duplex(0, 1, 1e9, 0);
  EXPECT_THROW(g.add_link(0, 0, 1e9, 0), std::invalid_argument);
  EXPECT_THROW(g.add_link(0, 7, 1e9, 0), std::invalid_argument);
  EXPECT_THROW(g.add_link(0, 2, 0.0, 0), std::invalid_argument);
  EXPECT_THROW(g.finish(), std::invalid_argument);  // npu2 is cut off
  LinkGraph unfinished(2);
  EXPECT_THROW(make_graph_fabric(std::move(unfinished)), std::logic_error);
}

TEST(TopologyKinds, GraphKindRepeatsForEveryGroup) {
  add_toy_kinds();
  const Topology t({dim(kTwoSwitch, 4, 100, 1), dim(DimKind::kRing, 2, 100, 1)});
  EXPECT_EQ(t.num_nodes(), 8 + 2 * 2);
  EXPECT_EQ(t.num_links(), 2 * 10 + 8 * 2);
  EXPECT_EQ(t.node_kind(11), NodeKind::kSwitch);
  EXPECT_EQ(t.node_name(8), "A/0");
  EXPECT_EQ(t.node_name(11), "B/1");
  // (0,0) -> (3,1): across both switches of group 0, then the ring.
  EXPECT_EQ(node_path(t, 0, 7), (std::vector<NodeId>{0, 8, 9, 3, 7}));
  EXPECT_EQ(node_path(t, 5, 6), (std::vector<NodeId>{5, 10, 11, 6}));
  std::vector<LinkId> r;
  t.route(4, 6, r);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(t.link_name(r[1]), "dim0:A/1->B/1");
  EXPECT_EQ(t.link_owner(r[1]), -1);
  EXPECT_EQ(t.link(r[1]).bandwidth_Bps, 50e9);
  EXPECT_EQ(t.link(r[1]).latency_ps, 2000);
  for (Rank a = 0; a < t.num_npus(); ++a) {
    for (Rank b = 0; b < t.num_npus(); ++b) EXPECT_EQ(node_path(t, a, b).back(), b);
  }
}

TEST(TopologyKinds, ToyLineRunsEndToEnd) {
  add_toy_kinds();
  for (std::string backend : {"fluid", "analytical"}) {
    for (int n : {2, 4, 8}) {
      PlatformConfig p = platform({dim(kLine, n, kB / 1e9, kA)}, backend);
      test::set_algorithm(p, CollectiveOp::kAllReduce, algorithm("ring"));
      // Ring steps: n-1 messages one hop forward; the last goes back the
      // whole line (n-1 hops) on the links the others do not use.
      const double expected = 2 * (n - 1) * ((n - 1) * kA + xfer_ns(kS / n));
      const double got = test::time_ns(p, CollectiveOp::kAllReduce, kS);
      EXPECT_NEAR(got, expected, expected * 1e-6) << "n=" << n << " " << backend;
    }
  }
  // The ends of a line play other roles than its middle: simulated in full.
  PlatformConfig p = platform({dim(kLine, 4, 100, 500)});
  test::set_algorithm(p, CollectiveOp::kAllReduce, algorithm("ring"));
  const CollectiveResult r = run_collective(p, CollectiveRequestSpec{}, 1 << 20);
  EXPECT_EQ(r.simulated_ranks, 4);
  EXPECT_NE(r.simulation.find("(line of 4) gives NPUs different roles"), std::string::npos) << r.simulation;
}

TEST(TopologyKinds, PlatformFilesNameRegisteredKinds) {
  add_toy_kinds();
  const PlatformConfig p = parse_platform_yaml(
      "topology:\n"
      "  - {kind: Line, npus: 4, bandwidth_GBps: 100, latency_ns: 500}\n"
      "collectives:\n"
      "  all-reduce: {algorithm: ring}\n",
      "line.yaml");
  ASSERT_EQ(p.dims.size(), 1u);
  EXPECT_EQ(p.dims[0].kind, kLine);
  const double expected = 2 * 3 * (3 * kA + xfer_ns(kS / 4));
  EXPECT_NEAR(test::time_ns(p, CollectiveOp::kAllReduce, kS), expected, expected * 1e-6);
  try {
    (void)parse_platform_yaml("topology:\n  - {kind: lin, npus: 4, bandwidth_GBps: 1, latency_ns: 1}\n", "bad.yaml");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown kind 'lin' (did you mean 'line'?)"), std::string::npos) << e.what();
  }
}

TEST(TopologyKinds, CollectivesCrossASwitchToSwitchLink) {
  add_toy_kinds();
  for (std::string backend : {"fluid", "analytical"}) {
    const bool fluid = backend == "fluid";
    PlatformConfig p = platform({dim(kTwoSwitch, 4, kB / 1e9, kA)}, backend);
    // Ring: 1 -> 2 and 3 -> 0 cross A-B (4 latencies, half bandwidth); each
    // link carries one message per step.
    test::set_algorithm(p, CollectiveOp::kAllReduce, algorithm("ring"));
    const double ring = 2 * 3 * (4 * kA + xfer_ns(kS / 4 * 2));
    EXPECT_NEAR(test::time_ns(p, CollectiveOp::kAllReduce, kS), ring, ring * 1e-6) << backend;
    // Direct all-to-all: A->B carries 4 pieces of S/4 at half bandwidth when
    // congestion counts; one piece otherwise.
    test::set_algorithm(p, CollectiveOp::kAllToAll, algorithm("direct"));
    const double a2a = 4 * kA + xfer_ns(fluid ? 2 * kS : kS / 2);
    EXPECT_NEAR(test::time_ns(p, CollectiveOp::kAllToAll, kS), a2a, a2a * 1e-6) << backend;
  }
  // No NPU's links stand for A-B: every rank is simulated.
  PlatformConfig p = platform({dim(kTwoSwitch, 4, 100, 500)});
  const CollectiveResult r = run_collective(p, CollectiveRequestSpec{}, 1 << 20);
  EXPECT_EQ(r.simulated_ranks, 4);
  EXPECT_EQ(r.link_bytes_per_dim.size(), 1u);
}

TEST(TopologyKinds, GraphSwitchMatchesTheBuiltinAndStaysSymmetric) {
  add_toy_kinds();
  for (std::string backend : {"fluid", "analytical"}) {
    for (CollectiveOp op : kAllCollectiveOps) {
      const PlatformConfig graph = platform({dim(kStar, 8, 100, 500), dim(DimKind::kRing, 4, 50, 700)}, backend, 4);
      const PlatformConfig builtin = platform({dim(DimKind::kSwitch, 8, 100, 500), dim(DimKind::kRing, 4, 50, 700)}, backend, 4);
      CollectiveRequestSpec req;
      req.op = op;
      const CollectiveResult sym = run_collective(graph, req, 24 << 20);
      const CollectiveResult want = run_collective(builtin, req, 24 << 20);
      req.full = true;
      const CollectiveResult full = run_collective(graph, req, 24 << 20);
      const std::string what = std::string(to_string(op)) + " " + backend;
      EXPECT_EQ(sym.simulated_ranks, 1) << what;
      EXPECT_EQ(sym.time_ps, full.time_ps) << what;
      EXPECT_EQ(sym.network_bytes_per_dim, full.network_bytes_per_dim) << what;
      EXPECT_NEAR(static_cast<double>(sym.time_ps), static_cast<double>(want.time_ps), 1e-6 * static_cast<double>(want.time_ps)) << what;
      EXPECT_EQ(sym.network_bytes_per_dim, want.network_bytes_per_dim) << what;
    }
  }
}

}  // namespace
}  // namespace acesim
