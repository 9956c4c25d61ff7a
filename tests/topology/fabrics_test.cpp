// Cluster fabrics: NIC rails and fat-trees (routes, link bandwidths,
// symmetry) and their closed forms on both backends.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/input_error.h"
#include "config/platform.h"
#include "support.h"
#include "topology/topology_kinds.h"

namespace acesim {
namespace {

using test::dim;
using test::platform;
using namespace test::closed_form;

const DimKind kRail{"rail"};
const DimKind kFatTree{"fat-tree"};

DimensionSpec fat_tree(int npus, double bw_GBps, double lat_ns, std::vector<KindParam> params) {
  DimensionSpec d = dim(kFatTree, npus, bw_GBps, lat_ns);
  d.params = std::move(params);
  return d;
}

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

void expect_all_routes_arrive(const Topology& t) {
  for (Rank a = 0; a < t.num_npus(); ++a) {
    for (Rank b = 0; b < t.num_npus(); ++b) ASSERT_EQ(node_path(t, a, b).back(), b) << a << "->" << b;
  }
}

TEST(Fabrics, RailsJoinOneLocalIndexAcrossNodesAfterNvlink) {
  // 2 nodes of 8 GPUs: NVSwitch per node, then rail switch i for GPU i.
  const Topology t({dim(DimKind::kSwitch, 8, 450, 500), dim(kRail, 2, 50, 2000)});
  EXPECT_EQ(t.num_nodes(), 16 + 2 + 8);
  // GPU 0 of node 0 to GPU 1 of node 1: NVLink to GPU 1 first, then its rail.
  EXPECT_EQ(node_path(t, 0, 9), (std::vector<NodeId>{0, 16, 1, 18 + 1, 9}));
  EXPECT_EQ(t.node_name(18 + 1), "rail1");
  std::vector<LinkId> r;
  t.route(0, 9, r);
  EXPECT_EQ(t.link(r[2]).bandwidth_Bps, 50e9);
  for (LinkId id : r) EXPECT_GE(t.link_owner(id), 0);  // NPU links only: symmetric
  expect_all_routes_arrive(t);
}

TEST(Fabrics, FatTreeTwoTiersSpreadsByDestination) {
  // 8 NPUs, 4 per leaf, oversubscription 2: 2 spines, uplinks of 4b/(2*2) = b.
  const Topology t({fat_tree(8, 100, 10, {{"leaf_size", 4}, {"oversubscription", 2}})});
  EXPECT_EQ(t.num_nodes(), 8 + 2 + 2);
  EXPECT_EQ(t.num_links(), 2 * 8 + 2 * 2 * 2);
  EXPECT_EQ(node_path(t, 0, 3), (std::vector<NodeId>{0, 8, 3}));
  EXPECT_EQ(node_path(t, 0, 5), (std::vector<NodeId>{0, 8, 11, 9, 5}));  // spine 5 mod 2
  EXPECT_EQ(node_path(t, 1, 6), (std::vector<NodeId>{1, 8, 10, 9, 6}));  // spine 6 mod 2
  EXPECT_EQ(t.node_name(8), "leaf0");
  EXPECT_EQ(t.node_name(11), "spine1");
  std::vector<LinkId> r;
  t.route(0, 5, r);
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(t.link_name(r[1]), "dim0:leaf0->spine1");
  EXPECT_EQ(t.link(r[1]).bandwidth_Bps, 100e9);
  EXPECT_EQ(t.link_owner(r[1]), -1);
  EXPECT_EQ(t.link(r[0]).latency_ps, 10000);
  EXPECT_EQ(t.link(r[1]).latency_ps, 10000);
  const Topology fast({fat_tree(8, 100, 10, {{"leaf_size", 4}, {"switch_latency_ns", 0.5}})});
  r.clear();
  fast.route(0, 5, r);
  EXPECT_EQ(fast.link(r[0]).latency_ps, 10000);
  EXPECT_EQ(fast.link(r[1]).latency_ps, 500);
  EXPECT_EQ(fast.link(r[2]).latency_ps, 500);
  EXPECT_EQ(fast.link(r[3]).latency_ps, 10000);
  // Oversubscription 3 on 4 NPUs per leaf: 2 uplinks of 4b/(3*2).
  const Topology t3({fat_tree(8, 100, 10, {{"leaf_size", 4}, {"oversubscription", 3}})});
  r.clear();
  t3.route(0, 5, r);
  EXPECT_DOUBLE_EQ(t3.link(r[1]).bandwidth_Bps, 100e9 * 4 / 6);
  expect_all_routes_arrive(t);
  // A last leaf that is not full, and a group that fits one leaf (a switch).
  expect_all_routes_arrive(Topology({fat_tree(10, 100, 10, {{"leaf_size", 4}})}));
  const Topology one({fat_tree(6, 100, 10, {})});
  EXPECT_EQ(one.num_nodes(), 6 + 1);
  EXPECT_EQ(node_path(one, 0, 5), (std::vector<NodeId>{0, 6, 5}));
}

TEST(Fabrics, FatTreeThreeTiersCrossesCoresBetweenPods) {
  // 16 NPUs, 2 per leaf, 2 leaves per pod: 8 leaves, 4 pods, 2 aggregation
  // switches per pod, 2 planes of 2 cores.
  const Topology t({fat_tree(16, 100, 10, {{"tiers", 3}, {"leaf_size", 2}, {"pod_size", 2}})});
  EXPECT_EQ(t.num_nodes(), 16 + 8 + 4 * 2 + 2 * 2);
  // 0 -> 15: leaf0, agg0.(15 mod 2), core1.((15/2) mod 2), agg3.1, leaf7.
  const std::vector<NodeId> p = node_path(t, 0, 15);
  ASSERT_EQ(p.size(), 7u);
  EXPECT_EQ(t.node_name(p[1]), "leaf0");
  EXPECT_EQ(t.node_name(p[2]), "agg0.1");
  EXPECT_EQ(t.node_name(p[3]), "core1.1");
  EXPECT_EQ(t.node_name(p[4]), "agg3.1");
  EXPECT_EQ(t.node_name(p[5]), "leaf7");
  EXPECT_EQ(node_path(t, 0, 2).size(), 5u);  // same pod: no core
  expect_all_routes_arrive(t);
  expect_all_routes_arrive(Topology({fat_tree(13, 100, 10, {{"tiers", 3}, {"leaf_size", 2}, {"pod_size", 3}, {"oversubscription", 2}})}));
  // Per group of a second dimension: each rail has its own tree.
  const Topology rails({dim(DimKind::kSwitch, 4, 450, 500), fat_tree(8, 50, 10, {{"leaf_size", 2}})});
  expect_all_routes_arrive(rails);
  EXPECT_EQ(rails.node_name(rails.num_nodes() - 1), "spine1/3");
}

LinkId link_named(const Topology& t, const std::string& name) {
  for (LinkId l = 0; l < t.num_links(); ++l) {
    if (t.link_name(l) == name) return l;
  }
  ADD_FAILURE() << "no link " << name;
  return 0;
}

// Every route arrives and crosses no link that is down.
void expect_routes_avoid_down_links(const Topology& t) {
  expect_all_routes_arrive(t);
  std::vector<LinkId> r;
  for (Rank a = 0; a < t.num_npus(); ++a) {
    for (Rank b = 0; b < t.num_npus(); ++b) {
      r.clear();
      t.route(a, b, r);
      for (LinkId l : r) ASSERT_FALSE(t.link_down(l)) << a << "->" << b << " crosses " << t.link_name(l);
    }
  }
}

// A link down: a fat-tree spreads the destinations that crossed it over the
// uplinks whose paths are still whole (d-mod-k over those); routes that did
// not cross it keep theirs.
TEST(Fabrics, FatTreeRoutesAroundALinkDown) {
  // 8 NPUs, 4 per leaf, no oversubscription: 4 uplinks a leaf.
  Topology t({fat_tree(8, 100, 10, {{"leaf_size", 4}})});
  EXPECT_EQ(t.node_name(node_path(t, 0, 6)[2]), "spine2");  // 6 mod 4
  EXPECT_EQ(t.unreachable(), "");
  t.set_link_down(link_named(t, "dim0:leaf0->spine2"));
  EXPECT_TRUE(t.link_down(link_named(t, "dim0:leaf0->spine2")));
  EXPECT_FALSE(t.link_down(link_named(t, "dim0:spine2->leaf0")));
  // From leaf0 the whole paths to leaf1 are spines 0, 1, 3: 6 mod 3 = 0.
  EXPECT_EQ(t.node_name(node_path(t, 0, 6)[2]), "spine0");
  EXPECT_EQ(t.node_name(node_path(t, 0, 5)[2]), "spine1");  // its own, 5 mod 4: whole, kept
  EXPECT_EQ(t.node_name(node_path(t, 0, 7)[2]), "spine3");  // 7 mod 4: whole, kept
  // Into leaf0 the way down from spine 2 is still up: 4 -> 2 keeps spine 2.
  EXPECT_EQ(t.node_name(node_path(t, 4, 2)[2]), "spine2");
  EXPECT_EQ(t.unreachable(), "");
  expect_routes_avoid_down_links(t);
  // A three-tier tree: a core link down moves the plane's traffic to the
  // plane's other core.
  Topology t3({fat_tree(16, 100, 10, {{"tiers", 3}, {"leaf_size", 2}, {"pod_size", 2}})});
  EXPECT_EQ(t3.node_name(node_path(t3, 0, 15)[3]), "core1.1");
  t3.set_link_down(link_named(t3, "dim0:agg0.1->core1.1"));
  EXPECT_EQ(t3.node_name(node_path(t3, 0, 15)[3]), "core1.0");
  EXPECT_EQ(t3.node_name(node_path(t3, 0, 15)[2]), "agg0.1");
  expect_routes_avoid_down_links(t3);
  // All of leaf0's uplinks down: it reaches nothing outside itself.
  Topology cut({fat_tree(8, 100, 10, {{"leaf_size", 4}, {"oversubscription", 2}})});
  cut.set_link_down(link_named(cut, "dim0:leaf0->spine0"));
  cut.set_link_down(link_named(cut, "dim0:leaf0->spine1"));
  EXPECT_EQ(cut.unreachable(), "no path from leaf0 to leaf1: every switch between them has a link down");
  std::vector<LinkId> r;
  EXPECT_THROW(cut.route(0, 5, r), NoRoute);
  r.clear();
  cut.route(0, 3, r);  // within the leaf: still there
  EXPECT_EQ(r.size(), 2u);
  // An NPU has one link to its leaf.
  Topology lone({fat_tree(8, 100, 10, {{"leaf_size", 4}})});
  lone.set_link_down(link_named(lone, "dim0:leaf1->npu5"));
  EXPECT_EQ(lone.unreachable(), "npu5 has one link to its leaf and dim0:leaf1->npu5 is down: nothing else reaches it");
}

// A ring link down: the route goes the other way round. A switch has no
// other way.
TEST(Fabrics, RingRoutesTheOtherWayRoundALinkDown) {
  Topology t({dim(DimKind::kRing, 4, 100, 10), dim(DimKind::kSwitch, 2, 50, 10)});
  EXPECT_EQ(node_path(t, 0, 1), (std::vector<NodeId>{0, 1}));
  t.set_link_down(link_named(t, "dim0:npu0->npu1"));
  EXPECT_EQ(node_path(t, 0, 1), (std::vector<NodeId>{0, 3, 2, 1}));
  EXPECT_EQ(node_path(t, 0, 2), (std::vector<NodeId>{0, 3, 2}));  // a tie went the positive way
  EXPECT_EQ(node_path(t, 1, 0), (std::vector<NodeId>{1, 0}));     // the other direction is up
  // Across both dimensions: dimension 0 first, around the link.
  EXPECT_EQ(node_path(t, 0, 5), (std::vector<NodeId>{0, 3, 2, 1, 9, 5}));
  EXPECT_EQ(t.unreachable(), "");
  expect_routes_avoid_down_links(t);
  t.set_link_down(link_named(t, "dim0:npu2->npu1"));
  EXPECT_EQ(t.unreachable(), "npu0 cannot reach npu1: link dim0:npu0->npu1 is down and the ring fabric has no other path");
  Topology s({dim(DimKind::kSwitch, 4, 100, 10)});
  s.set_link_down(link_named(s, "dim0:npu2->switch"));
  EXPECT_EQ(s.unreachable(), "npu2 cannot reach npu0: link dim0:npu2->switch is down and the switch fabric has no other path");
  std::vector<LinkId> r;
  try {
    s.route(2, 3, r);
    ADD_FAILURE() << "routed over a link that is down";
  } catch (const NoRoute& e) {
    EXPECT_STREQ(e.what(), "npu2 cannot reach npu3: link dim0:npu2->switch is down and the switch fabric has no other path");
  }
}

// Ring all-reduce across nodes on rails: 2(n-1) steps of S/n over two links.
TEST(Fabrics, RingAllReduceOnRailsIsTheClosedForm) {
  for (std::string backend : {"fluid", "analytical"}) {
    for (int nodes : {2, 3, 5}) {
      PlatformConfig p = platform({dim(kRail, nodes, 50, kA)}, backend);
      test::set_algorithm(p, CollectiveOp::kAllReduce, algorithm("ring"));
      const double expected = 2 * (nodes - 1) * (2 * kA + kS / nodes / 50e9 * 1e9);
      EXPECT_NEAR(test::time_ns(p, CollectiveOp::kAllReduce, kS), expected, expected * 1e-6) << backend << nodes;
    }
    // 8 GPUs per node on NVSwitch at 450 GB/s, then 2 nodes on rails at 50 GB/s:
    // reduce-scatter in the node, all-reduce of S/8 across, all-gather in the node.
    PlatformConfig p = platform({dim(DimKind::kSwitch, 8, 450, kA), dim(kRail, 2, 50, kA)}, backend);
    test::set_algorithm(p, CollectiveOp::kAllReduce, algorithm("ring"));
    const double in_node = 7 * (2 * kA + kS / 8 / 450e9 * 1e9);
    const double across = 2 * (2 * kA + kS / 16 / 50e9 * 1e9);
    const double expected = 2 * in_node + across;
    const CollectiveResult r = run_collective(p, CollectiveRequestSpec{}, static_cast<std::uint64_t>(kS));
    EXPECT_NEAR(ps_to_ns(r.time_ps), expected, expected * 1e-6) << backend;
    EXPECT_EQ(r.simulated_ranks, 1) << r.simulation;
  }
}

// Halving-doubling on 8 NPUs, 4 per leaf: its distance-4 steps (S/2 each, the
// first of the reduce-scatter and the last of the all-gather) cross the
// spines, all 8 NPUs at once. With oversubscription 2, two flows share each
// uplink: the fluid backend takes twice as long for those steps; the
// analytical backend does not see it.
TEST(Fabrics, OversubscribedSpineHalvesCrossTrafficOnFluidOnly) {
  auto time = [](const std::string& backend, double oversubscription) {
    PlatformConfig p = platform({fat_tree(8, kB / 1e9, kA, {{"leaf_size", 4}, {"oversubscription", oversubscription}})}, backend);
    test::set_algorithm(p, CollectiveOp::kAllReduce, algorithm("halving-doubling"));
    return test::time_ns(p, CollectiveOp::kAllReduce, kS);
  };
  // Steps: distances 4, 2, 1 carrying S/2, S/4, S/8, then back; distance-4
  // routes take 4 links, the others 2.
  const double full = 2 * ((4 * kA + xfer_ns(kS / 2)) + (2 * kA + xfer_ns(kS / 4)) + (2 * kA + xfer_ns(kS / 8)));
  EXPECT_NEAR(time("fluid", 1), full, full * 1e-6);
  EXPECT_NEAR(time("analytical", 1), full, full * 1e-6);
  EXPECT_NEAR(time("analytical", 2), full, full * 1e-6);
  EXPECT_NEAR(time("fluid", 2), full + 2 * xfer_ns(kS / 2), full * 1e-6);
}

TEST(Fabrics, SwitchToSwitchLinksMakeARunFull) {
  PlatformConfig p = platform({fat_tree(8, 100, 500, {{"leaf_size", 4}})});
  const CollectiveResult r = run_collective(p, CollectiveRequestSpec{}, 1 << 20);
  EXPECT_EQ(r.simulated_ranks, 8);
  PlatformConfig one = platform({fat_tree(8, 100, 500, {{"leaf_size", 8}})});
  EXPECT_EQ(run_collective(one, CollectiveRequestSpec{}, 1 << 20).simulated_ranks, 1);
}

TEST(Fabrics, PlatformFilesGiveFatTreeKeysInRange) {
  const PlatformConfig p = parse_platform_yaml(
      "topology:\n"
      "  - {kind: switch, npus: 8, bandwidth_GBps: 450, latency_ns: 500}\n"
      "  - {kind: fat-tree, npus: 6, nodes: true, bandwidth_GBps: 50, latency_ns: 1000,\n"
      "     tiers: 3, leaf_size: 2, pod_size: 2, oversubscription: 1.5}\n",
      "ft.yaml");
  ASSERT_EQ(p.dims.size(), 2u);
  EXPECT_EQ(p.nodes_dim, 1);
  EXPECT_EQ(p.dims[1].param("tiers", 0), 3);
  EXPECT_EQ(p.dims[1].param("oversubscription", 0), 1.5);
  auto error = [](const std::string& extra) {
    try {
      parse_platform_yaml("topology:\n  - {kind: fat-tree, npus: 6, bandwidth_GBps: 50, latency_ns: 1" + extra + "}\n", "ft.yaml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error(", tiers: 4").find("topology[0].tiers: must be an integer in 2..3, got 4"), std::string::npos) << error(", tiers: 4");
  EXPECT_NE(error(", oversubscription: 0.5").find("oversubscription: must be in 1..1024"), std::string::npos);
  EXPECT_NE(error(", leaf_size: 2.5").find("leaf_size"), std::string::npos);
  // Keys of another kind are unknown to this one.
  EXPECT_NE(error(", nodes: true, nodes_x: 1").find("nodes_x"), std::string::npos);
  try {
    parse_platform_yaml("topology:\n  - {kind: switch, npus: 6, bandwidth_GBps: 50, latency_ns: 1, tiers: 2}\n", "s.yaml");
    ADD_FAILURE() << "switch took tiers";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("tiers"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace acesim
