// NCCL's collectives (collective/nccl_model.h; docs/model.md, "NCCL
// collectives"): NCCL's own cost-model times from its formulas, what its
// selection picks, and the simulated times against closed forms.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "algorithm/nccl_patterns.h"
#include "cli_runner.h"
#include "collective/nccl_model.h"
#include "config/platform.h"
#include "driver/collective_run.h"

namespace acesim {
namespace {

constexpr double kGiB = 1073741824.0;

// One node of n GPUs on a switch of `bw` GB/s per port, `lat_ns` per link;
// `nodes` > 1 adds a scale-out switch of `nic` GB/s per GPU.
std::string nccl_yaml(int n, double bw, double lat_ns, bool nvls, int nodes = 1, double nic = 50.0,
                      const std::string& extra = "") {
  std::string y = "topology:\n  - {kind: switch, npus: " + std::to_string(n) + ", bandwidth_GBps: " + std::to_string(bw) +
                  ", latency_ns: " + std::to_string(lat_ns) + (nvls ? ", nvls: true" : "") + "}\n";
  y += "  - {kind: switch, npus: " + std::to_string(nodes) + ", bandwidth_GBps: " + std::to_string(nic) + ", latency_ns: 0}\n";
  y += "communication: {executor: ideal}\ncollectives:\n  library: nccl\n" + extra;
  return y;
}

double sim_us(const std::string& yaml, CollectiveOp op, double bytes) {
  const PlatformConfig p = parse_platform_yaml(yaml, "test.yaml");
  CollectiveRequestSpec req;
  req.op = op;
  return ps_to_us(run_collective(p, req, static_cast<std::uint64_t>(bytes)).time_ps);
}

// NVLS's kernel pipeline by hand (docs/model.md, "NCCL collectives"): the
// switch at `rate_GBps` (efficiency x port x n/(n+1)), 7.47 us of
// synchronisation per iteration stated at that rate (k = 7.47 us x rate /
// ops bytes, the switch's own rate rate x (1 + k/128 KiB), a
// synchronisation 7.47 us / (1 + k/128 KiB)); an iteration moves ops x
// chunk bytes (the message, if shorter) at the slower of the switch and
// `nic_GBps` (0: none), and waits `syncs` synchronisations; the message
// takes (iterations + stages - 1) iterations.
double nvls_pipeline_us(double S, double rate_GBps, double ops, double chunk, int syncs, int stages,
                        double nic_GBps = 0.0) {
  const double norm = 1.0 + 7.47e3 * rate_GBps / ops / 131072.0;
  const double loop = std::min(S, ops * chunk);
  double move_us = loop / (1e3 * rate_GBps * norm);
  if (nic_GBps > 0.0) move_us = std::max(move_us, loop / (1e3 * nic_GBps));
  return (std::max(1.0, S / (ops * chunk)) + stages - 1) * (move_us + syncs * 7.47 / norm);
}

NcclView h200_node(bool nvls) {
  NcclView v;
  v.nranks = 8;
  v.ppn = 8;
  v.intra_GBps = 450.0;
  v.nvls = nvls;
  return v;
}

// NCCL's formulas by hand (2.23 tables): ring all-reduce on one node of 8,
// latency = base + 2(n-1) hop, algbw = busbw n / (2(n-1)).
TEST(NcclModel, RingAllReduceCostsAreNcclsFormulas) {
  const NcclView v = h200_node(false);
  const auto simple = nccl_cost(v, CollectiveOp::kAllReduce, kGiB, NcclAlgo::kRing, NcclProto::kSimple, 24);
  ASSERT_TRUE(simple);
  EXPECT_NEAR(simple->latency_us, 8.4 + 14 * 3.4, 1e-9);
  EXPECT_NEAR(simple->time_us, 56.0 + kGiB / (1000.0 * 450.0 * 8 / 14), 1e-6);
  const auto ll = nccl_cost(v, CollectiveOp::kAllReduce, 8, NcclAlgo::kRing, NcclProto::kLL, 24);
  ASSERT_TRUE(ll);
  EXPECT_NEAR(ll->latency_us, 6.6 + 14 * 0.6, 1e-9);
  EXPECT_NEAR(ll->busbw_GBps, 141.0, 1e-9);  // Hopper's one-node LL cap below 450 x 1/2
  EXPECT_NEAR(ll->time_us, 15.0 + 8 / (1000.0 * 141.0 * 8 / 14), 1e-9);
  const auto ll128 = nccl_cost(v, CollectiveOp::kAllReduce, kGiB, NcclAlgo::kRing, NcclProto::kLL128, 24);
  ASSERT_TRUE(ll128);
  EXPECT_NEAR(ll128->latency_us, 14.0 + 14 * 1.9, 1e-9);
  EXPECT_NEAR(ll128->busbw_GBps, 450.0 * 0.92, 1e-9);
  // Tree on one node: chains, 2 (ppn-1) hops; busbw x0.92 x0.85, algbw = busbw / 2.
  const auto tree = nccl_cost(v, CollectiveOp::kAllReduce, kGiB, NcclAlgo::kTree, NcclProto::kSimple, 24);
  ASSERT_TRUE(tree);
  EXPECT_NEAR(tree->latency_us, 8.4 + 2 * 7 * 4.0, 1e-9);
  EXPECT_NEAR(tree->busbw_GBps, 450.0 * 0.92 * 0.85, 1e-9);
  EXPECT_NEAR(tree->algbw_GBps, 450.0 * 0.92 * 0.85 * 0.5 * 0.9, 1e-9);  // size correction 0.9 past 256 MiB
  // NVLS: 25 us, algbw = 5/6 busbw; Simple only.
  const NcclView nv = h200_node(true);
  const auto nvls = nccl_cost(nv, CollectiveOp::kAllReduce, kGiB, NcclAlgo::kNvls, NcclProto::kSimple, 16);
  ASSERT_TRUE(nvls);
  EXPECT_NEAR(nvls->time_us, 25.0 + kGiB / (1000.0 * 450.0 * 5 / 6), 1e-6);
  EXPECT_FALSE(nccl_cost(nv, CollectiveOp::kAllReduce, kGiB, NcclAlgo::kNvls, NcclProto::kLL, 16));
}

TEST(NcclModel, SelectionPicksLLForTinyAndSimpleForLargeMessages) {
  for (bool nvls : {false, true}) {
    const NcclView v = h200_node(nvls);
    const NcclChoice tiny = nccl_choose(v, CollectiveOp::kAllReduce, 8, NcclSettings{true, {}, {}, 0});
    EXPECT_EQ(tiny.algo, NcclAlgo::kRing);
    EXPECT_EQ(tiny.proto, NcclProto::kLL);
    EXPECT_EQ(tiny.channels, 24);
    const NcclChoice large = nccl_choose(v, CollectiveOp::kAllReduce, kGiB, NcclSettings{true, {}, {}, 0});
    EXPECT_EQ(large.proto, NcclProto::kSimple);
    EXPECT_EQ(large.algo, nvls ? NcclAlgo::kNvls : NcclAlgo::kRing);
    EXPECT_EQ(large.channels, nvls ? 16 : 24);
  }
  // Forced like NCCL_PROTO: the cost model chooses among what is allowed.
  const NcclChoice forced =
      nccl_choose(h200_node(true), CollectiveOp::kAllReduce, kGiB, NcclSettings{true, NcclAlgo::kRing, NcclProto::kLL, 8});
  EXPECT_EQ(forced.algo, NcclAlgo::kRing);
  EXPECT_EQ(forced.proto, NcclProto::kLL);
  EXPECT_EQ(forced.channels, 8);
}

TEST(NcclModel, RefusalsSayWhatWouldWork) {
  const NcclView plain = h200_node(false);
  auto why = nccl_unsupported(plain, CollectiveOp::kAllReduce, NcclAlgo::kNvls);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("nvls: true"), std::string::npos) << *why;
  why = nccl_unsupported(plain, CollectiveOp::kAllGather, NcclAlgo::kTree);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("use ring"), std::string::npos) << *why;
  EXPECT_THROW(nccl_choose(plain, CollectiveOp::kAllGather, 1024, NcclSettings{true, NcclAlgo::kTree, {}, 0}),
               std::invalid_argument);
}

// The caps follow the GPU generation: on an A100 node (240 GB/s) ring LL is
// min(87.7, 0.5 x 240) = 87.7 GB/s, LL128 min(0.92 x 240, 24 x 20) = 220.8;
// on Hopper's rows the same node gets min(141, 120) = 120 and 220.8.
TEST(NcclModel, CapsFollowTheGpuArchitecture) {
  NcclView v = h200_node(false);
  v.intra_GBps = 240.0;
  v.arch = NcclArch::kAmpere;
  EXPECT_NEAR(nccl_cost(v, CollectiveOp::kAllReduce, kGiB, NcclAlgo::kRing, NcclProto::kLL, 24)->busbw_GBps, 87.7, 1e-9);
  EXPECT_NEAR(nccl_cost(v, CollectiveOp::kAllReduce, kGiB, NcclAlgo::kRing, NcclProto::kLL128, 24)->busbw_GBps, 220.8, 1e-9);
  v.arch = NcclArch::kHopper;
  EXPECT_NEAR(nccl_cost(v, CollectiveOp::kAllReduce, kGiB, NcclAlgo::kRing, NcclProto::kLL, 24)->busbw_GBps, 120.0, 1e-9);
  // nccl_choose takes the generation from the settings.
  NcclSettings s{true, NcclAlgo::kRing, NcclProto::kLL, 24};
  s.arch = NcclArch::kAmpere;
  EXPECT_NEAR(nccl_choose(v, CollectiveOp::kAllReduce, kGiB, s).cost.busbw_GBps, 87.7, 1e-9);
  // Blackwell's rows: LL min(282, 0.5 x 721.8) = 282; tree Simple
  // min(0.92 x 721.8, 24 x 77.4) x 0.85 = 564.4.
  v.intra_GBps = 721.8;
  v.arch = NcclArch::kBlackwell;
  EXPECT_NEAR(nccl_cost(v, CollectiveOp::kAllReduce, kGiB, NcclAlgo::kRing, NcclProto::kLL, 24)->busbw_GBps, 282.0, 1e-9);
  EXPECT_NEAR(nccl_cost(v, CollectiveOp::kAllReduce, kGiB, NcclAlgo::kTree, NcclProto::kSimple, 24)->busbw_GBps,
              0.92 * 721.8 * 0.85, 1e-9);
  // NVLS's bus bandwidth carries the switch's efficiency.
  v.nvls = true;
  v.nvls_efficiency = 0.74;
  EXPECT_NEAR(nccl_cost(v, CollectiveOp::kAllReduce, kGiB, NcclAlgo::kNvls, NcclProto::kSimple, 16)->busbw_GBps,
              0.74 * 721.8, 1e-9);
  EXPECT_EQ(parse_nccl_arch("Blackwell"), NcclArch::kBlackwell);
  EXPECT_FALSE(parse_nccl_arch("volta"));
}

// NVLS-tree across nodes (NCCL 2.23+ tuning): latency = NVLS-tree's NVLink
// hop + 2 floor(log2 nnodes) network hops (25 + 2 x 14 on 2 nodes), busbw =
// min(intra x nvls efficiency, inter on 2 nodes, inter / 2 beyond), algbw
// = 5/6 busbw; Simple only.
TEST(NcclModel, NvlsTreeCostsAreNcclsFormulas) {
  NcclView v = h200_node(true);
  v.intra_GBps = 370.8;
  v.nvls_efficiency = 0.85;
  v.nnodes = 2;
  v.nranks = 16;
  v.inter_GBps = 8 * 50.0;
  const auto two = nccl_cost(v, CollectiveOp::kAllReduce, kGiB, NcclAlgo::kNvlsTree, NcclProto::kSimple, 16);
  ASSERT_TRUE(two);
  EXPECT_NEAR(two->latency_us, 25.0 + 2 * 14.0, 1e-9);
  EXPECT_NEAR(two->busbw_GBps, 370.8 * 0.85, 1e-9);  // the switch, not the NICs (400)
  EXPECT_NEAR(two->time_us, 53.0 + kGiB / (1000.0 * 370.8 * 0.85 * 5 / 6), 1e-6);
  EXPECT_FALSE(nccl_cost(v, CollectiveOp::kAllReduce, kGiB, NcclAlgo::kNvlsTree, NcclProto::kLL128, 16));
  // The cost model picks it for large all-reduces on two nodes, on NVLS's 16 channels.
  const NcclChoice large = nccl_choose(v, CollectiveOp::kAllReduce, kGiB, NcclSettings{true, {}, {}, 0});
  EXPECT_EQ(large.algo, NcclAlgo::kNvlsTree);
  EXPECT_EQ(large.channels, 16);
  // The simulation pays the NVLS-tree kernel's pipeline instead of NCCL's
  // latency: at 1 GiB 64 iterations of 128 ops x 128 KiB, the switch
  // binding (280.16 GB/s against the NICs' 400), plus the 3 stages' fill,
  // less what the links take (S / 280.16 GB/s).
  const double rate = 0.85 * 370.8 * 8 / 9;
  EXPECT_NEAR(ps_to_us(large.base_ps),
              nvls_pipeline_us(kGiB, rate, 128, 131072, 2, 4, 400.0) - kGiB / (1e3 * rate), 1e-5);
  // Four nodes: 2 x 2 network hops, and the NICs count half.
  v.nnodes = 4;
  v.nranks = 32;
  const auto four = nccl_cost(v, CollectiveOp::kAllReduce, kGiB, NcclAlgo::kNvlsTree, NcclProto::kSimple, 16);
  ASSERT_TRUE(four);
  EXPECT_NEAR(four->latency_us, 25.0 + 4 * 14.0, 1e-9);
  EXPECT_NEAR(four->busbw_GBps, 200.0, 1e-9);
  EXPECT_EQ(parse_nccl_algo("nvlstree"), NcclAlgo::kNvlsTree);
  EXPECT_EQ(parse_nccl_algo("NVLS_Tree"), NcclAlgo::kNvlsTree);
}

TEST(NcclModel, NvlsTreeRefusalsSayWhatWouldWork) {
  NcclView v = h200_node(true);
  auto why = nccl_unsupported(v, CollectiveOp::kAllReduce, NcclAlgo::kNvlsTree);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("NCCL disables NVLS-tree on one node; use nvls"), std::string::npos) << *why;
  v.nnodes = 2;
  v.nranks = 16;
  v.inter_GBps = 400.0;
  EXPECT_FALSE(nccl_unsupported(v, CollectiveOp::kAllReduce, NcclAlgo::kNvlsTree));
  why = nccl_unsupported(v, CollectiveOp::kAllGather, NcclAlgo::kNvlsTree);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("use ring"), std::string::npos) << *why;
  why = nccl_unsupported(v, CollectiveOp::kAllReduce, NcclAlgo::kNvls);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("use nvls-tree"), std::string::npos) << *why;
  EXPECT_THROW(nccl_choose(v, CollectiveOp::kAllReduce, kGiB, NcclSettings{true, NcclAlgo::kNvlsTree, NcclProto::kLL, 0}),
               std::invalid_argument);
  v.nvls = false;
  why = nccl_unsupported(v, CollectiveOp::kAllReduce, NcclAlgo::kNvlsTree);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("nvls: true"), std::string::npos) << *why;
}

// CollNet (SHARP in the scale-out's switches; NCCL 2.23+ tuning): Direct
// latency 2 (min(1, ppn-1) x 3.7 + (ppn-1) x 0.4) + 31 us, busbw min(intra,
// inter) x0.85 on Hopper and later; Chain 2 (ppn-1) x 2.8 + 30 us, busbw
// min(intra, inter); algbw = busbw / 2; Simple only.
TEST(NcclModel, CollNetCostsAreNcclsFormulas) {
  NcclView v = h200_node(false);
  v.intra_GBps = 370.8;
  v.nnodes = 2;
  v.nranks = 16;
  v.inter_GBps = 400.0;
  v.collnet = true;
  const auto direct = nccl_cost(v, CollectiveOp::kAllReduce, kGiB, NcclAlgo::kCollNetDirect, NcclProto::kSimple, 24);
  ASSERT_TRUE(direct);
  EXPECT_NEAR(direct->latency_us, 2 * (3.7 + 7 * 0.4) + 31.0, 1e-9);
  EXPECT_NEAR(direct->busbw_GBps, 370.8 * 0.85, 1e-9);
  EXPECT_NEAR(direct->algbw_GBps, 370.8 * 0.85 / 2, 1e-9);
  const auto chain = nccl_cost(v, CollectiveOp::kAllReduce, kGiB, NcclAlgo::kCollNetChain, NcclProto::kSimple, 24);
  ASSERT_TRUE(chain);
  EXPECT_NEAR(chain->latency_us, 2 * 7 * 2.8 + 30.0, 1e-9);
  EXPECT_NEAR(chain->algbw_GBps, 370.8 / 2, 1e-9);
  EXPECT_FALSE(nccl_cost(v, CollectiveOp::kAllReduce, kGiB, NcclAlgo::kCollNetChain, NcclProto::kLL, 24));
  // A100 nodes (240 GB/s) with 200 Gb/s NICs and SHARP: Direct (44 us,
  // 100 GB/s) beats tree and ring at 4 MiB; ring wins at 1 GiB, tree/LL at 8 B.
  v.intra_GBps = 240.0;
  v.inter_GBps = 200.0;
  NcclSettings s{true, {}, {}, 0};
  s.arch = NcclArch::kAmpere;
  EXPECT_EQ(nccl_choose(v, CollectiveOp::kAllReduce, 4 * 1048576.0, s).algo, NcclAlgo::kCollNetDirect);
  EXPECT_EQ(nccl_choose(v, CollectiveOp::kAllReduce, kGiB, s).algo, NcclAlgo::kRing);
  EXPECT_EQ(nccl_choose(v, CollectiveOp::kAllReduce, 8, s).algo, NcclAlgo::kTree);
  // Refusals.
  v.collnet = false;
  auto why = nccl_unsupported(v, CollectiveOp::kAllReduce, NcclAlgo::kCollNetDirect);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("sharp: true"), std::string::npos) << *why;
  v.collnet = true;
  why = nccl_unsupported(v, CollectiveOp::kAllGather, NcclAlgo::kCollNetChain);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("use ring"), std::string::npos) << *why;
  EXPECT_EQ(parse_nccl_algo("CollNetDirect"), NcclAlgo::kCollNetDirect);
  EXPECT_EQ(parse_nccl_algo("collnet_chain"), NcclAlgo::kCollNetChain);
}

// NCCL's trees between nodes (src/graph/trees.cc): the btree on 8 nodes is
// 0 - 4, 4 - {2, 6}, 2 - {1, 3}, 6 - {5, 7}; the second tree mirrors it on
// an even count and shifts it by one on an odd count.
TEST(NcclPatterns, DoubleBinaryTreeIsNccls) {
  const std::vector<int> btree8 = {-1, 2, 4, 2, 0, 6, 4, 6};
  for (int node = 0; node < 8; ++node) {
    EXPECT_EQ(nccl_dtree_parent(0, node, 8), btree8[static_cast<std::size_t>(node)]) << node;
    const int mirrored = btree8[static_cast<std::size_t>(7 - node)];
    EXPECT_EQ(nccl_dtree_parent(1, node, 8), mirrored < 0 ? -1 : 7 - mirrored) << node;
  }
  // Three nodes: tree 0 is the chain 0 - 2 - 1; tree 1 the chain 1 - 0 - 2.
  EXPECT_EQ(nccl_dtree_parent(0, 2, 3), 0);
  EXPECT_EQ(nccl_dtree_parent(0, 1, 3), 2);
  EXPECT_EQ(nccl_dtree_parent(1, 1, 3), -1);
  EXPECT_EQ(nccl_dtree_parent(1, 0, 3), 1);
  EXPECT_EQ(nccl_dtree_parent(1, 2, 3), 0);
  // Two nodes: each tree one edge, rooted at either end.
  EXPECT_EQ(nccl_dtree_parent(0, 1, 2), 0);
  EXPECT_EQ(nccl_dtree_parent(1, 0, 2), 1);
}

// NVLS-tree between 4 nodes of 2 GPUs: on each rail, every tree edge
// carries half of the GPU's 1/ppn share each way. Nodes 1 and 2 are inner
// in one tree (parent and two children) and a leaf in the other: 4 halves
// = 2/ppn of the data out of each of their NICs; nodes 0 and 3 send 2.
TEST(NcclPatterns, NvlsTreeLoadsEachRailWithItsDoubleBinaryTree) {
  const Pattern p = nccl_nvls_tree_pattern(8, 2);
  ASSERT_EQ(p.steps.size(), 1u);
  std::vector<double> sent(8, 0.0);
  for (const PatternMessage& m : p.steps[0].messages) {
    EXPECT_EQ(m.src % 2, m.dst % 2);  // never off its rail
    EXPECT_NE(m.src / 2, m.dst / 2);  // only between nodes
    sent[static_cast<std::size_t>(m.src)] += m.fraction;
  }
  const std::vector<double> expect = {0.5, 0.5, 1.0, 1.0, 1.0, 1.0, 0.5, 0.5};
  for (std::size_t i = 0; i < 8; ++i) EXPECT_NEAR(sent[i], expect[i], 1e-12) << i;
}

TEST(NcclPatterns, RingChannelsCrossNodesOnTheirOwnRail) {
  // 2 nodes x 4 GPUs, 4 channels: channel c runs c, c+1, .. c-1 on node 0,
  // crosses on rail c-1, runs backwards to c on node 1 and crosses back on
  // rail c: no crossing changes rail, and every rail carries two crossings.
  const Pattern p = nccl_ring_pattern(CollectiveOp::kAllReduce, 8, 4, 4);
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(p.steps[0].repeat, 14);
  double total = 0.0;
  int crossing = 0;
  std::vector<int> per_rail(4, 0);
  for (const PatternMessage& m : p.steps[0].messages) {
    total += m.fraction;
    if (m.src / 4 != m.dst / 4) {
      ++crossing;
      ++per_rail[static_cast<std::size_t>(m.src % 4)];
      EXPECT_EQ(m.dst % 4, m.src % 4);
      EXPECT_NEAR(m.fraction, 1.0 / (4 * 8), 1e-12);
    }
  }
  EXPECT_NEAR(total, 1.0, 1e-12);  // every member sends 1/n of the data per step
  EXPECT_EQ(crossing, 8);          // 4 channels x 2 node boundaries
  EXPECT_EQ(per_rail, std::vector<int>(4, 2));
  // Three nodes: the wrap from the last node (forwards) to the first changes
  // rail, once per channel; the other crossings stay on their rail.
  const Pattern odd = nccl_ring_pattern(CollectiveOp::kAllGather, 12, 4, 4);
  int off_rail = 0;
  for (const PatternMessage& m : odd.steps[0].messages) off_rail += (m.src / 4 != m.dst / 4 && m.src % 4 != m.dst % 4) ? 1 : 0;
  EXPECT_EQ(off_rail, 4);
}

// Ring all-reduce on one 8-GPU node, per protocol: NCCL's latency (base +
// 2(n-1) hops) + 2(n-1) route latencies + 2(n-1)/n S wire / B; channels
// share the same NVSwitch ports, so their count does not change the time.
TEST(NcclSimulation, RingOnOneNodeIsTheClosedForm) {
  const double S = 256.0 * 1048576.0, B = 450e9, L = 500.0;  // ns per link
  struct P { const char* name; double base, hop, wire; };
  for (const P& p : {P{"simple", 8.4, 3.4, 1.0}, P{"ll", 6.6, 0.6, 2.0}, P{"ll128", 14.0, 1.9, 128.0 / 120.0}}) {
    for (int channels : {1, 4, 24}) {
      SCOPED_TRACE(std::string(p.name) + " channels " + std::to_string(channels));
      const std::string extra = "  nccl: {algorithm: ring, protocol: " + std::string(p.name) +
                                ", channels: " + std::to_string(channels) + "}\n";
      const double expect_us = p.base + 14 * p.hop + 14 * 2 * L / 1000.0 + 14.0 / 8.0 * S * p.wire / B * 1e6;
      EXPECT_NEAR(sim_us(nccl_yaml(8, 450, L, false, 1, 50, extra), CollectiveOp::kAllReduce, S), expect_us, 1e-3);
    }
  }
}

// NVLS: every GPU's switch up- and down-link carry (n+1)/n S, so
// busbw = 2(n-1)/n S / t approaches 2(n-1)/(n+1) B = 700 GB/s on 8 GPUs.
// On top of the links' time the simulation pays the kernel's pipeline
// (3 stages, one synchronisation per iteration) instead of NCCL's 25 us:
// time = 2 x 500 ns of link latency + the pipeline.
TEST(NcclSimulation, NvlsBusBandwidthApproachesItsFormula) {
  const std::string yaml = nccl_yaml(8, 450, 500, true, 1, 50, "  nccl: {algorithm: nvls}\n");
  const double S = 8.0 * kGiB;
  const double t_us = sim_us(yaml, CollectiveOp::kAllReduce, S);
  EXPECT_NEAR(t_us, 1.0 + nvls_pipeline_us(S, 450.0 * 8 / 9, 128, 131072, 1, 3), 1e-3);
  const double busbw = 2.0 * 7 / 8 * S / (t_us * 1e3);
  EXPECT_NEAR(busbw, 2.0 * 7 / 9 * 450, 0.005 * 700);
  // With the switch at NCCL's Hopper efficiency the links are held 1/0.85
  // as long: an H100 node at 370.8 GB/s tends to 2 x 7/9 x 0.85 x 370.8 =
  // 490.3 GB/s busbw (nccl-tests measures 474-480), the 3 stages' fill
  // taking 1% off at 8 GiB.
  std::string h100 = nccl_yaml(8, 370.8, 500, true, 1, 50, "  nccl: {algorithm: nvls}\n");
  h100.replace(h100.find("nvls: true"), 10, "nvls: true, nvls_efficiency: 0.85");
  const double rate = 0.85 * 370.8 * 8 / 9;
  const double t85 = sim_us(h100, CollectiveOp::kAllReduce, S);
  EXPECT_NEAR(t85, 1.0 + nvls_pipeline_us(S, rate, 128, 131072, 1, 3), 1e-3);
  EXPECT_NEAR(2.0 * 7 / 8 * S / (t85 * 1e3), 490.3, 0.012 * 490.3);
  // NCCL's chunk for smaller messages (64 KiB below 64 x 128 ops x 128 KiB
  // = 1 GiB, 32 KiB below 64 MiB, 16 KiB below 8 MiB): more iterations,
  // each with its synchronisation, and a fill of two iterations that no
  // longer vanishes beside the transfer. 16 MiB: 4 iterations of 4 MiB.
  for (const double mib : {512.0, 16.0, 2.0}) {
    SCOPED_TRACE(mib);
    const double bytes = mib * 1048576.0;
    const double chunk = mib >= 64 ? 65536 : mib >= 8 ? 32768 : 16384;
    EXPECT_NEAR(sim_us(h100, CollectiveOp::kAllReduce, bytes), 1.0 + nvls_pipeline_us(bytes, rate, 128, chunk, 1, 3),
                2e-3);
  }
  // The measured ramp (NVIDIA's DGX H100 sample, nccl-tests all_reduce):
  // 16 MiB in 123.8 us; the pipeline 120.7 us, the links alone 59.9 us.
  EXPECT_NEAR(1.0 + nvls_pipeline_us(16.0 * 1048576.0, rate, 128, 32768, 1, 3), 120.7, 0.05);
}

// Two nodes of 4 GPUs, one 50 GB/s NIC each: with 4 channels every NIC
// carries one ring's crossing, so the ring runs at 4 x 50 GB/s; with one
// channel all crossings share one NIC (4x slower). Latencies set to 0 leave
// NCCL's: base + 12 intra hops + 2 network hops, x1.4 (Simple, multi-node).
TEST(NcclSimulation, RingAcrossNodesUsesEveryNic) {
  const double S = 64.0 * 1048576.0;
  const double lat_us = (8.4 + 12 * 3.4 + 2 * 14.0) * 1.4;
  for (int channels : {4, 1}) {
    SCOPED_TRACE(channels);
    const std::string extra = "  nccl: {algorithm: ring, protocol: simple, channels: " + std::to_string(channels) + "}\n";
    const double nic_GBps = 50.0 * (channels == 4 ? 4 : 1);
    EXPECT_NEAR(sim_us(nccl_yaml(4, 450, 0, false, 2, 50, extra), CollectiveOp::kAllReduce, S),
                lat_us + 14.0 / 8.0 * S / (nic_GBps * 1e9) * 1e6, 1e-3);
  }
}

// Link latencies across nodes: a ring is a pipeline, so each of its 14
// steps costs the mean hop latency of a channel's ring: 6 hops inside a node
// (2 x 500 ns) and 2 crossings on the GPUs' own rail (2 x 2000 ns): 1750 ns.
TEST(NcclSimulation, RingStepsCostTheMeanHopLatency) {
  std::string yaml = nccl_yaml(4, 450, 500, false, 2, 50, "  nccl: {algorithm: ring, protocol: simple, channels: 4}\n");
  yaml.replace(yaml.find("latency_ns: 0"), 13, "latency_ns: 2000");
  const double S = 64.0 * 1048576.0;
  const double lat_us = (8.4 + 12 * 3.4 + 2 * 14.0) * 1.4 + 14 * 1.75;
  EXPECT_NEAR(sim_us(yaml, CollectiveOp::kAllReduce, S), lat_us + 14.0 / 8.0 * S / 200e9 * 1e6, 1e-3);
}

// All-to-all as NCCL's grouped sends: every pair at once, Simple above 16
// KiB per peer (NCCL_P2P_LL_THRESHOLD), LL below; latency one ring step
// (base + one NVLink hop) plus the route's (2 x 500 ns through the switch).
// 8 GPUs at 450 GB/s, 1 GiB: each sends 7/8 S over its link.
TEST(NcclSimulation, AllToAllRunsAsPointToPointSends) {
  const std::string yaml = nccl_yaml(8, 450, 500, false);
  EXPECT_NEAR(sim_us(yaml, CollectiveOp::kAllToAll, kGiB), 8.4 + 3.4 + 1.0 + 7.0 / 8.0 * kGiB / 450e9 * 1e6, 1e-3);
  // 64 KiB is 8 KiB per peer: LL, whose lines carry half data.
  const double S = 65536.0;
  EXPECT_NEAR(sim_us(yaml, CollectiveOp::kAllToAll, S), 6.6 + 0.6 + 1.0 + 2.0 * 7.0 / 8.0 * S / 450e9 * 1e6, 1e-3);
  const NcclChoice c = nccl_choose(h200_node(false), CollectiveOp::kAllToAll, S, NcclSettings{true, {}, {}, 0});
  EXPECT_EQ(c.algo, NcclAlgo::kP2p);
  EXPECT_EQ(c.proto, NcclProto::kLL);
  EXPECT_EQ(nccl_choose(h200_node(false), CollectiveOp::kAllToAll, 8.0 * 16385, NcclSettings{true, {}, {}, 0}).proto,
            NcclProto::kSimple);
  // A platform's forced algorithm and LL128 apply to collectives, not to
  // NCCL's point-to-point sends (as NCCL_ALGO and NCCL_PROTO): the
  // all-to-all still runs p2p, with the threshold's protocol.
  const NcclChoice forced =
      nccl_choose(h200_node(false), CollectiveOp::kAllToAll, S, NcclSettings{true, NcclAlgo::kRing, NcclProto::kLL128, 0});
  EXPECT_EQ(forced.algo, NcclAlgo::kP2p);
  EXPECT_EQ(forced.proto, NcclProto::kLL);
  const std::string ring = nccl_yaml(8, 450, 500, false, 1, 50, "  nccl: {algorithm: ring, protocol: ll128}\n");
  EXPECT_NEAR(sim_us(ring, CollectiveOp::kAllToAll, kGiB), 8.4 + 3.4 + 1.0 + 7.0 / 8.0 * kGiB / 450e9 * 1e6, 1e-3);
  // Beyond 2048 ranks the pairs are too many to simulate one by one: the
  // platform's own plan runs instead.
  NcclView big = h200_node(false);
  big.nranks = 4096;
  big.nnodes = 512;
  EXPECT_FALSE(nccl_runs(big, CollectiveOp::kAllToAll));
  EXPECT_TRUE(nccl_runs(big, CollectiveOp::kAllReduce));
  big.nranks = 2048;
  EXPECT_TRUE(nccl_runs(big, CollectiveOp::kAllToAll));
}

// One rank stands for a node only when every GPU starts as many channels:
// 8 GPUs with the default 24 (ring) and 16 (NVLS) channels, not 16 GPUs.
TEST(NcclModel, OneNodeIsSymmetricWhenChannelsSpreadEvenly) {
  const NcclSettings s{true, {}, {}, 0};
  auto node = [](int npus) {
    DimensionSpec d;
    d.kind = DimKind("switch");
    d.npus = npus;
    return std::vector<DimensionSpec>{d};
  };
  EXPECT_EQ(nccl_asymmetry(s, node(8)), "");
  EXPECT_EQ(nccl_asymmetry(s, node(16)), "NCCL channels not a multiple of the GPUs per node");
  EXPECT_EQ(nccl_asymmetry(NcclSettings{true, {}, {}, 32}, node(16)), "");
  EXPECT_EQ(nccl_asymmetry(NcclSettings{true, {}, {}, 12}, node(8)), "NCCL channels not a multiple of the GPUs per node");
}

// The tree runs across nodes (full simulation) and all-gather keeps ring.
TEST(NcclSimulation, TreeAcrossNodesAndAllGatherRun) {
  const std::string yaml = nccl_yaml(4, 450, 0, false, 4, 50, "  nccl: {algorithm: tree, protocol: simple}\n");
  EXPECT_GT(sim_us(yaml, CollectiveOp::kAllReduce, 1048576.0), 0.0);
  const std::string ring = nccl_yaml(8, 450, 0, false);
  // One GPU: nothing to move.
  EXPECT_EQ(sim_us(nccl_yaml(1, 450, 0, false), CollectiveOp::kAllReduce, 1048576.0), 0.0);
  // All-gather, ring Simple at 1 GiB: 8.4 + 7 x 3.4 us + 7/8 S / B.
  EXPECT_NEAR(sim_us(ring, CollectiveOp::kAllGather, kGiB), 8.4 + 7 * 3.4 + 7.0 / 8.0 * kGiB / 450e9 * 1e6, 1e-3);
}

// NVLS-tree on nodes of 4 GPUs, latencies 0: one pipelined step whose
// slowest link sets the time: a GPU's NVLink port carries 5/4 S (as NVLS
// on 4), its NIC the tree's share of S/4: S/4 on 2 nodes, 2 x S/4 at the
// inner nodes of 4. The simulation adds what the kernel's pipeline (4
// stages, two synchronisations per iteration, the slower of the switch and
// the NIC per iteration) takes beyond the links, in place of NCCL's latency;
// 16 channels on 4 GPUs: 64 ops.
TEST(NcclSimulation, NvlsTreeIsTheClosedForm) {
  const std::string extra = "  nccl: {algorithm: nvls-tree}\n";
  const double S = kGiB;
  const double rate = 450.0 * 4 / 5;
  const auto pipeline = [&](double bytes, double chunk, double nic_GBps) {
    return nvls_pipeline_us(bytes, rate, 64, chunk, 2, 4, nic_GBps);
  };
  // 2 nodes, 50 GB/s NICs: the NICs bind (S/4 / 50 > 5/4 S / 450).
  EXPECT_NEAR(sim_us(nccl_yaml(4, 450, 0, true, 2, 50, extra), CollectiveOp::kAllReduce, S),
              pipeline(S, 131072, 200.0), 1e-3);
  EXPECT_GT(pipeline(S, 131072, 200.0), S / 4 / 50e9 * 1e6);
  // 200 GB/s NICs: the switch binds.
  EXPECT_NEAR(sim_us(nccl_yaml(4, 450, 0, true, 2, 200, extra), CollectiveOp::kAllReduce, S),
              pipeline(S, 131072, 800.0), 1e-3);
  // 4 nodes: the inner nodes' NICs carry twice the share; NCCL's chunk is
  // 64 KiB from 4 nodes.
  EXPECT_NEAR(sim_us(nccl_yaml(4, 450, 0, true, 4, 50, extra), CollectiveOp::kAllReduce, S),
              pipeline(S, 65536, 100.0), 1e-3);
  // 16 MiB on 2 nodes is below 4 x 64 ops x 128 KiB, so NCCL's NVLS-tree
  // chunk is 64 KiB: 4 iterations of 4 MiB and the fill of three more.
  const double mid = 16.0 * 1048576.0;
  EXPECT_NEAR(sim_us(nccl_yaml(4, 450, 0, true, 2, 200, extra), CollectiveOp::kAllReduce, mid),
              pipeline(mid, 65536, 800.0), 2e-3);
}

// CollNet on 2 nodes of 4 GPUs, latencies 0, the scale-out switch
// reducing: NCCL's latency once, then one pipelined step. Every GPU's NVLink
// port carries 2(ppn-1)/ppn S = 1.5 S (Direct: scatter to and broadcast
// from the heads; Chain on 4 channels: the chains' edges), its NIC its
// head's share S/4 up to the switch and back.
TEST(NcclSimulation, CollNetIsTheClosedForm) {
  const double S = kGiB;
  const auto sharp = [](std::string y) {
    y.replace(y.rfind("latency_ns: 0}"), 14, "latency_ns: 0, sharp: true}");
    return y;
  };
  const std::string direct = "  nccl: {algorithm: collnet-direct}\n";
  const double direct_us = 2 * (3.7 + 3 * 0.4) + 31.0;
  EXPECT_NEAR(sim_us(sharp(nccl_yaml(4, 450, 0, false, 2, 50, direct)), CollectiveOp::kAllReduce, S),
              direct_us + S / 4 / 50e9 * 1e6, 1e-3);
  EXPECT_NEAR(sim_us(sharp(nccl_yaml(4, 450, 0, false, 2, 200, direct)), CollectiveOp::kAllReduce, S),
              direct_us + 1.5 * S / 450e9 * 1e6, 1e-3);
  const std::string chain = "  nccl: {algorithm: collnet-chain, channels: 4}\n";
  EXPECT_NEAR(sim_us(sharp(nccl_yaml(4, 450, 0, false, 2, 50, chain)), CollectiveOp::kAllReduce, S),
              2 * 3 * 2.8 + 30.0 + S / 4 / 50e9 * 1e6, 1e-3);
}

class NcclCli : public test::CliTest {};

TEST_F(NcclCli, ResultsNameWhatRan) {
  const std::string p = write("p.yaml", nccl_yaml(8, 450, 500, true));
  const test::CliRun r = expect_ok({"collective", "--platform", p, "--min-bytes", "8", "--max-bytes", "8GiB",
                                    "--step-factor", "1024", "--json"});
  const nlohmann::json j = parse_json(r.out);
  ASSERT_EQ(j["results"].size(), 4u);
  EXPECT_EQ(j["results"][0]["algorithm"], "ring");
  EXPECT_EQ(j["results"][0]["protocol"], "ll");
  EXPECT_EQ(j["results"][0]["channels"], 24);
  EXPECT_EQ(j["results"][3]["algorithm"], "nvls");
  EXPECT_EQ(j["results"][3]["protocol"], "simple");
  EXPECT_EQ(j["results"][3]["channels"], 16);
  const test::CliRun t = expect_ok({"collective", "--platform", p, "--bytes", "8", "--algo", "tree", "--proto", "ll128"});
  EXPECT_NE(t.out.find("algorithm protocol channels"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("tree    ll128       24"), std::string::npos) << t.out;
  // Two nodes: NVLS-tree by its own name, in JSON as NCCL_ALGO spells it.
  const std::string two = write("two.yaml", nccl_yaml(4, 450, 0, true, 2));
  const test::CliRun n = expect_ok({"collective", "--platform", two, "--bytes", "1GiB", "--algo", "nvlstree", "--json"});
  EXPECT_EQ(parse_json(n.out)["results"][0]["algorithm"], "nvls-tree");
}

TEST_F(NcclCli, BadInputIsRefusedInOneLine) {
  const std::string plain = write("plain.yaml", nccl_yaml(8, 450, 500, false));
  expect_bad_input({"collective", "--platform", plain, "--bytes", "1MiB", "--algo", "nvls"}, {"nvls: true", "use ring"});
  expect_bad_input({"collective", "--platform", plain, "--bytes", "1MiB", "--op", "all-gather", "--algo", "tree"},
                   {"tree all-gather", "use ring"});
  expect_bad_input({"collective", "--platform", plain, "--bytes", "1MiB", "--proto", "ll256"}, {"--proto", "ll256"});
  expect_bad_input({"collective", "--platform", plain, "--bytes", "1MiB", "--op", "all-to-all", "--algo", "ring"},
                   {"ring all-to-all", "point-to-point", "use p2p or auto"});
  expect_bad_input({"collective", "--platform", plain, "--bytes", "1MiB", "--algo", "p2p"}, {"p2p all-reduce", "all-to-all only"});
  expect_bad_input({"collective", "--platform", "ace-isca21", "--bytes", "1MiB", "--algo", "ring"},
                   {"--algo", "--library nccl"});
  const std::string ring_nvls = write("r.yaml", "topology:\n  - {kind: ring, npus: 4, bandwidth_GBps: 10, latency_ns: 0, nvls: true}\n");
  expect_bad_input({"collective", "--platform", ring_nvls, "--bytes", "1MiB"}, {"nvls", "kind switch"});
  const std::string over = write("o.yaml", "topology:\n  - {kind: switch, npus: 4, bandwidth_GBps: 10, latency_ns: 0, nvls: true, nvls_efficiency: 1.5}\n");
  expect_bad_input({"collective", "--platform", over, "--bytes", "1MiB"}, {"nvls_efficiency", "(0, 1]", "1.5"});
  const std::string alone = write("a.yaml", "topology:\n  - {kind: switch, npus: 4, bandwidth_GBps: 10, latency_ns: 0, nvls_efficiency: 0.8}\n");
  expect_bad_input({"collective", "--platform", alone, "--bytes", "1MiB"}, {"nvls_efficiency", "needs nvls: true"});
  const std::string one = write("one.yaml", nccl_yaml(8, 450, 500, true));
  expect_bad_input({"collective", "--platform", one, "--bytes", "1MiB", "--algo", "nvls-tree"},
                   {"NCCL disables NVLS-tree on one node; use nvls"});
  const std::string two_plain = write("two.yaml", nccl_yaml(4, 450, 500, false, 2));
  expect_bad_input({"collective", "--platform", two_plain, "--bytes", "1MiB", "--algo", "nvlstree"}, {"nvls: true", "use ring"});
  expect_bad_input({"collective", "--platform", two_plain, "--bytes", "1MiB", "--algo", "collnet-direct"},
                   {"collnet-direct all-reduce", "sharp: true", "use ring"});
  const std::string node_sharp = write("ns.yaml", "topology:\n  - {kind: switch, npus: 4, bandwidth_GBps: 10, latency_ns: 0, sharp: true}\n");
  expect_bad_input({"collective", "--platform", node_sharp, "--bytes", "1MiB"}, {"topology[0].sharp", "scale-out"});
  const std::string ring_sharp = write("rs.yaml", "topology:\n  - {kind: switch, npus: 4, bandwidth_GBps: 10, latency_ns: 0}\n"
                                                  "  - {kind: ring, npus: 4, bandwidth_GBps: 10, latency_ns: 0, sharp: true}\n");
  expect_bad_input({"collective", "--platform", ring_sharp, "--bytes", "1MiB"}, {"topology[1].sharp", "kind switch or rail"});
  const std::string arch = write("g.yaml", nccl_yaml(8, 450, 500, false, 1, 50, "  nccl: {gpu_arch: hoper}\n"));
  expect_bad_input({"collective", "--platform", arch, "--bytes", "1MiB"}, {"collectives.nccl.gpu_arch", "'hoper'", "hopper"});
}

}  // namespace
}  // namespace acesim

namespace acesim {
namespace {

// RCCL's rings on a fully connected node: the channels together load every
// ordered GPU pair alike (1/(n(n-1)) of the data a step), so a ring step
// runs on all n-1 links of a GPU.
TEST(NcclPatterns, MeshRingsLoadEveryLinkAlike) {
  const Pattern p = nccl_mesh_ring_pattern(CollectiveOp::kAllReduce, 8, 8, 56);
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(p.steps[0].repeat, 14);
  ASSERT_EQ(p.steps[0].messages.size(), 56u);
  for (const PatternMessage& m : p.steps[0].messages) EXPECT_NEAR(m.fraction, 1.0 / 56, 1e-12);
  // Across nodes the crossings stay NCCL's: each rail carries what it did.
  const Pattern two = nccl_mesh_ring_pattern(CollectiveOp::kAllGather, 16, 8, 8);
  const Pattern plain = nccl_ring_pattern(CollectiveOp::kAllGather, 16, 8, 8);
  const auto crossings = [](const Pattern& q) {
    double c = 0.0;
    for (const PatternMessage& m : q.steps[0].messages) c += m.src / 8 != m.dst / 8 ? m.fraction : 0.0;
    return c;
  };
  EXPECT_NEAR(crossings(two), crossings(plain), 1e-12);
  EXPECT_NEAR(crossings(two), 2.0 / 16, 1e-12);
}

TEST(NcclPatterns, AllPairsIsTwoDirectSteps) {
  const Pattern p = nccl_allpairs_pattern(8);
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(p.steps[0].repeat, 2);
  ASSERT_EQ(p.steps[0].messages.size(), 56u);
  for (const PatternMessage& m : p.steps[0].messages) EXPECT_NEAR(m.fraction, 1.0 / 8, 1e-12);
}

std::string mesh_yaml(const std::string& extra) {
  return "topology:\n  - {kind: fully-connected, npus: 8, bandwidth_GBps: 50, latency_ns: 500}\n"
         "communication: {executor: ideal}\ncollectives:\n  library: nccl\n  nccl: {gpu_arch: cdna3" +
         extra + "}\n";
}

// Ring Simple on the mesh (RCCL's rows): 17 us + 14 x 2.1 us of RCCL's
// latency, 14 link latencies, and 2(n-1)/n S over the 7 links of a GPU.
TEST(NcclSimulation, RcclRingOnTheMeshIsTheClosedForm) {
  const double S = 1024.0 * 1048576.0;
  const double expect_us = 17.0 + 14 * 2.1 + 14 * 0.5 + 14.0 / 8.0 * S / (7 * 50e9) * 1e6;
  EXPECT_NEAR(sim_us(mesh_yaml(", algorithm: ring"), CollectiveOp::kAllReduce, S), expect_us, 1e-3);
}

// gfx950 (cdna4): RCCL's model 6 has model 5's rows, so its ring is the
// same closed form; it opens 112 channels on one node, not 56, and MSCCL's
// all-pairs is not run there (ring below 20 MiB too).
TEST(NcclSimulation, RcclCdna4IsTheMeshRingWithTwiceTheChannels) {
  std::string yaml = mesh_yaml(", algorithm: ring");
  yaml.replace(yaml.find("cdna3"), 5, "cdna4");
  const double S = 1024.0 * 1048576.0;
  EXPECT_NEAR(sim_us(yaml, CollectiveOp::kAllReduce, S), 17.0 + 14 * 2.1 + 14 * 0.5 + 14.0 / 8.0 * S / (7 * 50e9) * 1e6, 1e-3);
  std::string plain = mesh_yaml("");
  plain.replace(plain.find("cdna3"), 5, "cdna4");
  const PlatformConfig p = parse_platform_yaml(plain, "test.yaml");
  CollectiveRequestSpec req;
  req.op = CollectiveOp::kAllReduce;
  const CollectiveResult r = run_collective(p, req, 4 * 1048576);
  EXPECT_EQ(r.algorithm.rfind("ring", 0), 0u) << r.algorithm;
  EXPECT_EQ(r.channels, 112);
  EXPECT_EQ(parse_nccl_arch("cdna4"), NcclArch::kCdna4);
}

// LL128: RCCL 2.26.6 enabled it on gfx950 (its ROCm 7.0.0 release notes);
// one gfx942 node leaves it off, and forcing it there says why.
TEST(NcclSimulation, RcclLl128OnlyWhereRcclEnablesIt) {
  CollectiveRequestSpec req;
  req.op = CollectiveOp::kAllReduce;
  std::string yaml = mesh_yaml(", algorithm: ring, protocol: ll128");
  try {
    run_collective(parse_platform_yaml(yaml, "t.yaml"), req, 1048576);
    ADD_FAILURE() << "ll128 ran on one gfx942 node";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("RCCL runs no ll128 on one gfx942 node"), std::string::npos) << e.what();
  }
  yaml.replace(yaml.find("cdna3"), 5, "cdna4");
  EXPECT_EQ(run_collective(parse_platform_yaml(yaml, "t.yaml"), req, 1048576).protocol, "ll128");
}

// MSCCL's all-pairs (RCCL on 8 AMD GPUs, to 20 MiB): its calibrated latency
// (LL 12.1 us, Simple 18.33 us), 2 link latencies, and 2 S/8 per link at
// the link's rate over its wire factor (LL 2.68, Simple 1.436); RCCL picks
// it by size, LL below 512 KiB, and its ring above 20 MiB.
TEST(NcclSimulation, RcclAllPairsBySize) {
  const double small = 64.0 * 1024, mid = 8.0 * 1048576.0;
  EXPECT_NEAR(sim_us(mesh_yaml(""), CollectiveOp::kAllReduce, small), 12.1 + 1.0 + 2 * small / 8 * 2.68 / 50e9 * 1e6, 1e-3);
  EXPECT_NEAR(sim_us(mesh_yaml(""), CollectiveOp::kAllReduce, mid), 18.33 + 1.0 + 2 * mid / 8 * 1.436 / 50e9 * 1e6, 1e-3);
  const PlatformConfig p = parse_platform_yaml(mesh_yaml(""), "test.yaml");
  CollectiveRequestSpec req;
  req.op = CollectiveOp::kAllReduce;
  EXPECT_EQ(run_collective(p, req, 4 * 1048576).algorithm, "allpairs");
  EXPECT_EQ(run_collective(p, req, 64 * 1048576).algorithm, "ring");
  req.op = CollectiveOp::kAllGather;
  EXPECT_EQ(run_collective(p, req, 4 * 1048576).algorithm, "ring");
  // Forced where it cannot run: one line saying why.
  const PlatformConfig nv = parse_platform_yaml(nccl_yaml(8, 450, 500, false, 1, 50, "  nccl: {algorithm: allpairs}\n"), "t.yaml");
  req.op = CollectiveOp::kAllReduce;
  try {
    run_collective(nv, req, 1048576);
    ADD_FAILURE() << "allpairs ran on an NVIDIA switch";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("fully connected node of 8 AMD GPUs"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace acesim
