// Every algorithm on every dimension kind against its closed form (derived
// by hand in docs/model.md, "Closed forms"), for both network backends.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "support.h"

namespace acesim {
namespace {

using test::dim;
using test::platform;

using namespace test::closed_form;

struct Case {
  std::string name;
  DimKind kind;
  int n;
  CollectiveOp op;
  Algorithm alg;
  double fluid_ns;
  double analytical_ns;
};

std::vector<Case> cases() {
  const double S = kS;
  auto X = xfer_ns;
  std::vector<Case> c;
  const DimKind R = DimKind::kRing, F = DimKind::kFullyConnected, W = DimKind::kSwitch;
  using Op = CollectiveOp;
  for (int n : {2, 4, 8, 16}) {
    const double k = n - 1;
    // Ring: n-1 steps (2(n-1) for all-reduce) of S/n to the next member.
    const double ring_step_1hop = kA + X(S / n);
    const double ring_step_2hop = 2 * kA + X(S / n);
    for (DimKind kind : {R, F}) {
      c.push_back({"ring-allreduce", kind, n, Op::kAllReduce, algorithm("ring"), 2 * k * ring_step_1hop, 2 * k * ring_step_1hop});
      c.push_back({"ring-reducescatter", kind, n, Op::kReduceScatter, algorithm("ring"), k * ring_step_1hop, k * ring_step_1hop});
      c.push_back({"ring-allgather", kind, n, Op::kAllGather, algorithm("ring"), k * ring_step_1hop, k * ring_step_1hop});
      // All-to-all around a ring: step j carries (n-j) pieces of S/n.
      c.push_back({"ring-alltoall", kind, n, Op::kAllToAll, algorithm("ring"), k * kA + X(k * S / 2), k * kA + X(k * S / 2)});
    }
    c.push_back({"ring-allreduce", W, n, Op::kAllReduce, algorithm("ring"), 2 * k * ring_step_2hop, 2 * k * ring_step_2hop});
    // Direct on a fully-connected group: one step per reduce-scatter/all-gather.
    c.push_back({"direct-allreduce", F, n, Op::kAllReduce, algorithm("direct"), 2 * (kA + X(S / n)), 2 * (kA + X(S / n))});
    c.push_back({"direct-reducescatter", F, n, Op::kReduceScatter, algorithm("direct"), kA + X(S / n), kA + X(S / n)});
    c.push_back({"direct-alltoall", F, n, Op::kAllToAll, algorithm("direct"), kA + X(S / n), kA + X(S / n)});
    // Direct through a switch: a member's up-link carries (n-1) pieces
    // (congestion-aware); the congestion-unaware backend sees one piece.
    c.push_back({"direct-allreduce", W, n, Op::kAllReduce, algorithm("direct"), 2 * (2 * kA + X(k * S / n)),
                 2 * (2 * kA + X(S / n))});
    c.push_back({"direct-alltoall", W, n, Op::kAllToAll, algorithm("direct"), 2 * kA + X(k * S / n), 2 * kA + X(S / n)});
    // Halving-doubling: log2(n) steps each way, 2(n-1)/n S in all.
    int lg = 0;
    while ((1 << lg) < n) ++lg;
    c.push_back({"hd-allreduce", F, n, Op::kAllReduce, algorithm("halving-doubling"), 2 * lg * kA + X(2.0 * k / n * S),
                 2 * lg * kA + X(2.0 * k / n * S)});
    c.push_back({"hd-allreduce", W, n, Op::kAllReduce, algorithm("halving-doubling"), 4 * lg * kA + X(2.0 * k / n * S),
                 4 * lg * kA + X(2.0 * k / n * S)});
    c.push_back({"hd-allgather", F, n, Op::kAllGather, algorithm("halving-doubling"), lg * kA + X(k / n * S),
                 lg * kA + X(k / n * S)});
    // Pairwise exchange all-to-all: n-1 steps of S/n.
    c.push_back({"hd-alltoall", F, n, Op::kAllToAll, algorithm("halving-doubling"), k * (kA + X(S / n)), k * (kA + X(S / n))});
    // Double binary tree: 2*floor(log2 n) levels of S/2 each.
    int h = 0;
    while ((2 << h) <= n) ++h;
    c.push_back({"dbt-allreduce", F, n, Op::kAllReduce, algorithm("double-binary-tree"), 2 * h * kA + X(h * S),
                 2 * h * kA + X(h * S)});
  }
  // Hand-worked n=4 and n=5 cases where routes share links (docs/model.md).
  c.push_back({"direct-reducescatter", R, 4, Op::kReduceScatter, algorithm("direct"), 2 * kA + X(3 * S / 4), 2 * kA + X(S / 4)});
  c.push_back({"direct-reducescatter", R, 5, Op::kReduceScatter, algorithm("direct"), 2 * kA + X(3 * S / 5), 2 * kA + X(S / 5)});
  c.push_back({"hd-allreduce", R, 4, Op::kAllReduce, algorithm("halving-doubling"), 6 * kA + X(2.5 * S), 6 * kA + X(1.5 * S)});
  c.push_back({"dbt-allreduce", R, 4, Op::kAllReduce, algorithm("double-binary-tree"), 8 * kA + X(5 * S), 8 * kA + X(2 * S)});
  c.push_back({"dbt-allreduce", W, 4, Op::kAllReduce, algorithm("double-binary-tree"), 8 * kA + X(3 * S), 8 * kA + X(2 * S)});
  return c;
}

std::string label(const Case& c) {
  return c.name + " on " + std::string(to_string(c.kind)) + " n=" + std::to_string(c.n);
}

TEST(ClosedForm, EveryAlgorithmOnEveryDimensionKind) {
  int checked = 0;
  for (const Case& c : cases()) {
    for (std::string backend : {"fluid", "analytical"}) {
      PlatformConfig p = platform({dim(c.kind, c.n, kB / 1e9, kA)}, backend);
      test::set_algorithm(p, c.op, c.alg);
      const double expected = backend == "fluid" ? c.fluid_ns : c.analytical_ns;
      const double got = test::time_ns(p, c.op, kS);
      EXPECT_NEAR(got, expected, expected * 1e-3) << label(c) << " backend " << backend;
      ++checked;
    }
  }
  EXPECT_GT(checked, 100);
}

TEST(ClosedForm, StepGranularityAgreesWithPhaseGranularity) {
  for (const Case& c : cases()) {
    PlatformConfig p = platform({dim(c.kind, c.n, kB / 1e9, kA)});
    test::set_algorithm(p, c.op, c.alg);
    p.network.granularity = Granularity::kStep;
    EXPECT_NEAR(test::time_ns(p, c.op, kS), c.fluid_ns, c.fluid_ns * 1e-3) << label(c);
  }
}

TEST(ClosedForm, EndpointDelayIsAddedPerStep) {
  PlatformConfig p = platform({dim(DimKind::kRing, 8, 100, kA)});
  p.collectives.endpoint_delay_ps = 10 * kPsPerNs;
  const double expected = 2 * 7 * (kA + 10 + xfer_ns(kS / 8));
  EXPECT_NEAR(test::time_ns(p, CollectiveOp::kAllReduce, kS), expected, expected * 1e-4);
}

TEST(ClosedForm, LinksPerNeighbourMultiplyBandwidth) {
  DimensionSpec d = dim(DimKind::kRing, 8, 100, kA);
  d.links_per_neighbour = 2;
  PlatformConfig p = platform({d});
  const double expected = 2 * 7 * (kA + kS / 8 / 200e9 * 1e9);
  EXPECT_NEAR(test::time_ns(p, CollectiveOp::kAllReduce, kS), expected, expected * 1e-4);
}

TEST(ClosedForm, BusBandwidthFollowsNcclTests) {
  // Large ring all-reduce: busbw approaches the link bandwidth.
  PlatformConfig p = platform({dim(DimKind::kRing, 8, 100, 0)});
  CollectiveRequestSpec req;
  const CollectiveResult r = run_collective(p, req, 1ull << 30);
  EXPECT_NEAR(r.busbw_GBps, 100.0, 1e-6);
  EXPECT_NEAR(r.algbw_GBps, 100.0 * 8 / 14, 1e-6);
  EXPECT_EQ(r.ranks, 8);
}

}  // namespace
}  // namespace acesim
