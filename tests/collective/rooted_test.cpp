// Rooted collectives (broadcast, reduce, gather, scatter) and collectives
// over listed ranks against their closed forms (docs/model.md, "Rooted
// collectives" and "Groups of listed ranks"), on both network backends.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collective/collective_engine.h"
#include "platform/platform_instance.h"
#include "support.h"

namespace acesim {
namespace {

using test::dim;
using test::platform;
using namespace test::closed_form;
using Op = CollectiveOp;

double time_ns(const PlatformConfig& p, Op op, Rank root = 0, std::vector<Rank> members = {}) {
  CollectiveRequestSpec req;
  req.op = op;
  req.root = root;
  req.members = std::move(members);
  return ps_to_ns(run_collective(p, req, static_cast<std::uint64_t>(kS)).time_ps);
}

struct Expect {
  double fluid;
  double analytical;
};

void expect_times(DimKind kind, int n, Op op, Expect e, Rank root = 0) {
  for (const std::string backend : {"fluid", "analytical"}) {
    const PlatformConfig p = platform({dim(kind, n, kB / 1e9, kA)}, backend);
    const double want = backend == "fluid" ? e.fluid : e.analytical;
    EXPECT_NEAR(time_ns(p, op, root), want, want * 1e-4)
        << to_string(op) << " on " << to_string(kind) << " of " << n << " root " << root << ", " << backend;
  }
}

TEST(Rooted, SwitchClosedForms) {
  // Through a switch every message takes two links (2A). A direct scatter
  // or gather puts (n-1) pieces of S/n on the root's one link (the
  // congestion-unaware backend sees one piece); broadcast and reduce add an
  // all-gather / reduce-scatter (direct on a switch) of the same time.
  for (int n : {4, 8}) {
    const double k = n - 1;
    const Expect one{2 * kA + xfer_ns(k * kS / n), 2 * kA + xfer_ns(kS / n)};
    const Expect two{2 * one.fluid, 2 * one.analytical};
    for (Rank root : {0, n - 1}) {
      expect_times(DimKind::kSwitch, n, Op::kScatter, one, root);
      expect_times(DimKind::kSwitch, n, Op::kGather, one, root);
      expect_times(DimKind::kSwitch, n, Op::kBroadcast, two, root);
      expect_times(DimKind::kSwitch, n, Op::kReduce, two, root);
    }
  }
}

TEST(Rooted, FullyConnectedClosedForms) {
  // One link per pair: every piece of S/n has a link to itself.
  for (int n : {4, 8}) {
    const Expect one{kA + xfer_ns(kS / n), kA + xfer_ns(kS / n)};
    expect_times(DimKind::kFullyConnected, n, Op::kScatter, one, 1);
    expect_times(DimKind::kFullyConnected, n, Op::kGather, one, 2);
    expect_times(DimKind::kFullyConnected, n, Op::kBroadcast, {2 * one.fluid, 2 * one.analytical}, 3);
    expect_times(DimKind::kFullyConnected, n, Op::kReduce, {2 * one.fluid, 2 * one.analytical}, 0);
  }
}

TEST(Rooted, RingOfFourByHand) {
  // Root 0 on a ring of 4: member 2 is two hops away, the tie going the
  // positive way, so link 0->1 (scatter) or 3->0 (gather) carries two
  // pieces of S/4. The ring all-gather / reduce-scatter adds 3 (A + S/4B).
  const Expect one{2 * kA + xfer_ns(kS / 2), 2 * kA + xfer_ns(kS / 4)};
  const double ring = 3 * (kA + xfer_ns(kS / 4));
  expect_times(DimKind::kRing, 4, Op::kScatter, one);
  expect_times(DimKind::kRing, 4, Op::kGather, one);
  expect_times(DimKind::kRing, 4, Op::kBroadcast, {one.fluid + ring, one.analytical + ring});
  expect_times(DimKind::kRing, 4, Op::kReduce, {one.fluid + ring, one.analytical + ring});
}

TEST(Rooted, BusBandwidthFactors) {
  EXPECT_DOUBLE_EQ(busbw_factor(Op::kBroadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::kReduce, 8), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::kGather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::kScatter, 8), 7.0 / 8);
}

TEST(Rooted, OnlyReduceReduces) {
  // The sm executor charges HBM per byte sent at the reduce-scatter rate in
  // a reduce's reduce-scatter phase and at the copy (all-gather) rate in
  // every other rooted phase. On n NPUs, per NPU on average:
  //   broadcast: scatter (n-1)S/n + all-gather n(n-1)S/n, all copies;
  //   reduce:    reduce-scatter n(n-1)S/n reduced + gather (n-1)S/n copied;
  //   gather, scatter: (n-1)S/n copied.
  PlatformConfig p = platform({dim(DimKind::kFullyConnected, 4, kB / 1e9, kA)});
  p.npu.executor = "sm";
  const double g = p.npu.sm.hbm_per_byte_gather, red = p.npu.sm.hbm_per_byte_reduce;
  ASSERT_NE(g, red);
  const double n = 4, S = 1 << 20;
  auto hbm = [&](Op op) {
    CollectiveRequestSpec req;
    req.op = op;
    return run_collective(p, req, 1 << 20).hbm_bytes;
  };
  const double piece = (n - 1) * S / n;
  EXPECT_NEAR(hbm(Op::kBroadcast), g * (piece + n * piece) / n, 1e-6 * S);
  EXPECT_NEAR(hbm(Op::kReduce), (red * n * piece + g * piece) / n, 1e-6 * S);
  EXPECT_NEAR(hbm(Op::kGather), g * piece / n, 1e-6 * S);
  EXPECT_NEAR(hbm(Op::kScatter), g * piece / n, 1e-6 * S);
}

TEST(Rooted, RootOutsideItsGroupIsRefused) {
  const PlatformConfig p = platform({dim(DimKind::kSwitch, 8, kB / 1e9, kA)});
  PlatformInstance pi(p, false);
  CollectiveRequest r;
  r.op = Op::kGather;
  r.bytes = 1024;
  r.root = 8;
  EXPECT_THROW(pi.collectives.create(r), std::invalid_argument);
  r.members = {0, 2, 5};
  r.root = 3;
  try {
    pi.collectives.create(r);
    FAIL() << "root position 3 of a group of 3 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("root position 3 is outside its group of 3 ranks"), std::string::npos) << e.what();
  }
}

TEST(Rooted, SymmetricSimulationRefusesRooted) {
  const PlatformConfig p = platform({dim(DimKind::kSwitch, 8, kB / 1e9, kA)});
  PlatformInstance pi(p, true);
  CollectiveRequest r;
  r.op = Op::kBroadcast;
  r.bytes = 1024;
  EXPECT_THROW(pi.collectives.create(r), std::invalid_argument);
}

TEST(ListedRanks, NonContiguousGroupOnARing) {
  // {0, 2, 5} on a ring of 8 runs the ring algorithm on its three members:
  // 0->2 takes 2 hops, 2->5 and 5->0 take 3, on disjoint links, so each of
  // the 2(3-1) steps takes 3A + (S/3)/B on both backends.
  for (const std::string backend : {"fluid", "analytical"}) {
    const PlatformConfig p = platform({dim(DimKind::kRing, 8, kB / 1e9, kA)}, backend);
    const double want = 4 * (3 * kA + xfer_ns(kS / 3));
    EXPECT_NEAR(time_ns(p, Op::kAllReduce, 0, {0, 2, 5}), want, want * 1e-4) << backend;
  }
}

TEST(ListedRanks, NonContiguousGroupOnASwitch) {
  // On a switch the dimension's algorithm (direct) runs: each member's up
  // link carries 2 pieces of S/3 per step, two steps.
  for (const std::string backend : {"fluid", "analytical"}) {
    const PlatformConfig p = platform({dim(DimKind::kSwitch, 8, kB / 1e9, kA)}, backend);
    const double want = backend == "fluid" ? 2 * (2 * kA + xfer_ns(2 * kS / 3)) : 2 * (2 * kA + xfer_ns(kS / 3));
    EXPECT_NEAR(time_ns(p, Op::kAllReduce, 0, {0, 2, 5}), want, want * 1e-4) << backend;
    // A gather to rank 5 over the same ranks: two pieces of S/3 into its link.
    const double gather = backend == "fluid" ? 2 * kA + xfer_ns(2 * kS / 3) : 2 * kA + xfer_ns(kS / 3);
    EXPECT_NEAR(time_ns(p, Op::kGather, 5, {0, 2, 5}), gather, gather * 1e-4) << backend;
  }
}

TEST(ListedRanks, AcrossDimensionsRoutesOverTheFabric) {
  // {1, 6} on a 4x2 torus of rings differ on both dimensions: a flat ring
  // of two members whose messages take one hop on each dimension.
  const PlatformConfig p = platform({dim(DimKind::kRing, 4, kB / 1e9, kA), dim(DimKind::kRing, 2, kB / 1e9, kA)});
  const double want = 2 * (2 * kA + xfer_ns(kS / 2));
  EXPECT_NEAR(time_ns(p, Op::kAllReduce, 0, {1, 6}), want, want * 1e-4);
}

TEST(ListedRanks, BadMembersAreRefused) {
  const PlatformConfig p = platform({dim(DimKind::kSwitch, 8, kB / 1e9, kA)});
  PlatformInstance pi(p, false);
  CollectiveRequest r;
  r.bytes = 1024;
  r.members = {0, 8};
  EXPECT_THROW(pi.collectives.create(r), std::invalid_argument);
  r.members = {2, 2};
  EXPECT_THROW(pi.collectives.create(r), std::invalid_argument);
  PlatformInstance sym(p, true);
  r.members = {0, 2};
  EXPECT_THROW(sym.collectives.create(r), std::invalid_argument);
}

}  // namespace
}  // namespace acesim
