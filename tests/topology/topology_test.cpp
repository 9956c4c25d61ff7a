#include <gtest/gtest.h>

#include "support.h"
#include "topology/topology.h"

namespace acesim {
namespace {

using test::dim;

TEST(Topology, RankCoordinateRoundTrip) {
  const Topology t({dim(DimKind::kRing, 4, 100, 1), dim(DimKind::kSwitch, 3, 50, 1), dim(DimKind::kFullyConnected, 5, 25, 1)});
  EXPECT_EQ(t.num_npus(), 60);
  EXPECT_EQ(t.stride(0), 1);
  EXPECT_EQ(t.stride(1), 4);
  EXPECT_EQ(t.stride(2), 12);
  for (Rank r = 0; r < t.num_npus(); ++r) {
    const auto c = t.coords(r);
    EXPECT_EQ(t.rank_of(c), r);
  }
  EXPECT_EQ(t.coords(59), (std::vector<int>{3, 2, 4}));
  EXPECT_EQ(t.with_coord(59, 1, 0), 51);
}

TEST(Topology, RingRoutesTakeTheShortWay) {
  const Topology t({dim(DimKind::kRing, 8, 100, 1)});
  std::vector<LinkId> r;
  t.route(1, 3, r);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(t.npu_at(t.link(r[0]).src_node), 1);
  EXPECT_EQ(t.npu_at(t.link(r[0]).dst_node), 2);
  EXPECT_EQ(t.npu_at(t.link(r[1]).dst_node), 3);
  r.clear();
  t.route(1, 7, r);  // backwards: 1 -> 0 -> 7
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(t.npu_at(t.link(r[0]).dst_node), 0);
  EXPECT_EQ(t.npu_at(t.link(r[1]).dst_node), 7);
  r.clear();
  t.route(0, 4, r);  // tie goes the positive way
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(t.npu_at(t.link(r[0]).dst_node), 1);
}

TEST(Topology, SwitchAndFullyConnectedRoutes) {
  const Topology t({dim(DimKind::kSwitch, 4, 100, 1), dim(DimKind::kFullyConnected, 3, 50, 2)});
  std::vector<LinkId> r;
  t.route(0, 3, r);  // through the switch: up, down
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(t.npu_at(t.link(r[0]).src_node), 0);
  EXPECT_EQ(t.npu_at(t.link(r[0]).dst_node), -1);
  EXPECT_EQ(t.npu_at(t.link(r[1]).src_node), -1);
  EXPECT_EQ(t.npu_at(t.link(r[1]).dst_node), 3);
  r.clear();
  t.route(1, 1 + 4 * 2, r);  // one direct link in dimension 1
  ASSERT_EQ(r.size(), 1u);
  const Link l = t.link(r[0]);
  EXPECT_EQ(l.src_node, 1);
  EXPECT_EQ(l.dst_node, 9);
  EXPECT_EQ(l.dim, 1);
  EXPECT_DOUBLE_EQ(l.bandwidth_Bps, 50e9);
  EXPECT_EQ(l.latency_ps, 2000);
}

TEST(Topology, DimensionOrderedRouteAcrossATorus) {
  const Topology t({dim(DimKind::kRing, 4, 100, 1), dim(DimKind::kRing, 4, 100, 1)});
  std::vector<LinkId> r;
  t.route(0, 5, r);  // (0,0) -> (1,1): dimension 0 first, then dimension 1
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(t.link(r[0]).dim, 0);
  EXPECT_EQ(t.npu_at(t.link(r[0]).dst_node), 1);
  EXPECT_EQ(t.link(r[1]).dim, 1);
  EXPECT_EQ(t.npu_at(t.link(r[1]).src_node), 1);
  EXPECT_EQ(t.npu_at(t.link(r[1]).dst_node), 5);
}

TEST(Topology, EveryLinkIdDecodesConsistently) {
  const Topology t({dim(DimKind::kRing, 3, 100, 1), dim(DimKind::kFullyConnected, 4, 100, 1), dim(DimKind::kSwitch, 2, 100, 1)});
  // ring: 2 per rank; fc: 3 per rank; switch: 2 per rank; 24 ranks.
  EXPECT_EQ(t.num_links(), 24 * (2 + 3 + 2));
  for (Rank a = 0; a < t.num_npus(); ++a) {
    for (Rank b = 0; b < t.num_npus(); ++b) {
      std::vector<LinkId> r;
      t.route(a, b, r);
      Rank at = a;
      for (LinkId id : r) {
        const Link l = t.link(id);
        if (t.is_npu(l.src_node)) {
          EXPECT_EQ(l.src_node, at);
        }
        if (t.is_npu(l.dst_node)) at = t.npu_at(l.dst_node);
      }
      EXPECT_EQ(at, b);
    }
  }
}

TEST(Topology, RefusesBadDimensions) {
  EXPECT_THROW(Topology({}), std::invalid_argument);
  EXPECT_THROW(Topology({dim(DimKind::kRing, 0, 100, 1)}), std::invalid_argument);
  EXPECT_THROW(Topology({dim(DimKind::kRing, 4, 0, 1)}), std::invalid_argument);
  EXPECT_THROW(Topology({dim(DimKind::kRing, 4, 100, -1)}), std::invalid_argument);
  EXPECT_THROW(Topology({dim(DimKind::kRing, 65536, 100, 1), dim(DimKind::kRing, 65536, 100, 1)}), std::invalid_argument);
}

TEST(Topology, MillionNpusCostNothingToDescribe) {
  const Topology t({dim(DimKind::kRing, 32, 100, 1), dim(DimKind::kRing, 32, 100, 1), dim(DimKind::kRing, 32, 100, 1),
                    dim(DimKind::kRing, 32, 100, 1)});
  EXPECT_EQ(t.num_npus(), 1 << 20);
  std::vector<LinkId> r;
  t.route(0, t.num_npus() - 1, r);
  EXPECT_EQ(r.size(), 4u);
}

}  // namespace
}  // namespace acesim
