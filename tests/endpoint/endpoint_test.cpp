// Closed-form checks of endpoint contention (docs/model.md, "Endpoint").
#include <gtest/gtest.h>

#include "collective/collective_engine.h"
#include "report/characterization.h"
#include "support.h"

namespace acesim {
namespace {

using test::dim;
using test::platform;

constexpr double kS = 64.0 * 1024 * 1024;

// One ring of n NPUs, no latency, 1 chunk, the given executor.
PlatformConfig ring(int n, double link_GBps, const std::string& e) {
  PlatformConfig p = platform({dim(DimKind::kRing, n, link_GBps, 0)});
  p.npu = default_npu();
  p.npu.executor = e;
  return p;
}

double run_ns(const PlatformConfig& p, CollectiveOp op, double bytes = kS) { return test::time_ns(p, op, bytes); }

TEST(Endpoint, IdealEqualsTheNetworkOnlyAnswer) {
  for (CollectiveOp op : kAllCollectiveOps) {
    PlatformConfig p = platform({dim(DimKind::kRing, 4, 200, 20), dim(DimKind::kSwitch, 4, 100, 500)});
    p.collectives.chunks = 8;
    p.npu.executor = "ideal";
    // Network-only: a collective engine with no endpoint at all.
    Simulation sim;
    const Topology topo(p.dims);
    auto net = make_network(p.network, sim, topo);
    CollectiveEngine engine(sim, topo, *net, p.collectives);
    CollectiveRequest r;
    r.op = op;
    r.bytes = kS;
    const CollectiveId id = engine.create(r);
    engine.arrive_all(id);
    sim.run();
    EXPECT_DOUBLE_EQ(run_ns(p, op), ps_to_ns(engine.finish_time(id))) << to_string(op);
  }
}

TEST(Endpoint, HbmBoundSmAllReduceMovesBytesAtHbmOverItsTrafficFactor) {
  // Links and compute units far faster than HBM: a ring all-reduce's bytes
  // leave each NPU at H / 3.5 (3.5 HBM bytes per byte sent, ACE.md).
  PlatformConfig p = ring(8, 10'000, "sm");
  p.npu.hbm_GBps = 100;
  p.npu.sm.copy_GBps_per_unit = 10'000;
  p.npu.sm.reduce_GBps_per_unit = 10'000;
  const double sent = 2.0 * 7 / 8 * kS;
  const double expected = sent * 3.5 / 100e9 * 1e9;
  EXPECT_NEAR(run_ns(p, CollectiveOp::kAllReduce), expected, expected * 1e-6);
  CollectiveRequestSpec req;
  const CollectiveResult r = run_collective(p, req, static_cast<std::uint64_t>(kS));
  EXPECT_NEAR(r.hbm_per_network_byte(), 3.5, 1e-9);
  EXPECT_NEAR(r.network_GBps(), 100.0 / 3.5, 1e-6);
  // Reduce-scatter: 5 HBM bytes per byte sent; all-gather and all-to-all: 2.
  EXPECT_NEAR(run_ns(p, CollectiveOp::kReduceScatter), 7.0 / 8 * kS * 5 / 100, 1.0);
  EXPECT_NEAR(run_ns(p, CollectiveOp::kAllGather), 7.0 / 8 * kS * 2 / 100, 1.0);
}

TEST(Endpoint, SmThroughputIsBoundedByItsUnits) {
  // 4 units x 10 GB/s copy = 40 GB/s: an all-gather sends at 40 GB/s;
  // reduce steps at 10 x (8/10): the reduce-scatter at 4 x 8 = 32 GB/s.
  PlatformConfig p = ring(8, 1000, "sm");
  p.npu.hbm_GBps = 1e6;
  p.npu.sm.units = 4;
  p.npu.sm.copy_GBps_per_unit = 10;
  p.npu.sm.reduce_GBps_per_unit = 8;
  EXPECT_NEAR(run_ns(p, CollectiveOp::kAllGather), 7.0 / 8 * kS / 40, 1.0);
  EXPECT_NEAR(run_ns(p, CollectiveOp::kReduceScatter), 7.0 / 8 * kS / 32, 1.0);
  // All-reduce: half reduce, half copy steps: cost (1.25 + 1) / 2 per byte.
  EXPECT_NEAR(run_ns(p, CollectiveOp::kAllReduce), 2.0 * 7 / 8 * kS * 1.125 / 40, 1.0);
}

TEST(Endpoint, AceRunsAtLinkRateWhenNothingElseBinds) {
  PlatformConfig p = ring(8, 100, "ace");
  p.npu.ace.sram_bytes = 1ull << 30;
  const PlatformConfig ideal = ring(8, 100, "ideal");
  for (CollectiveOp op : kAllCollectiveOps) EXPECT_DOUBLE_EQ(run_ns(p, op), run_ns(ideal, op)) << to_string(op);
  CollectiveRequestSpec req;
  const CollectiveResult r = run_collective(p, req, static_cast<std::uint64_t>(kS));
  // HBM: the input read once and the output written once: 2S per NPU.
  EXPECT_DOUBLE_EQ(r.hbm_bytes, 2 * kS);
}

TEST(Endpoint, AceAluBinds) {
  // Reduce-scatter: every received byte is reduced; ALU 10 GB/s < link 100.
  PlatformConfig p = ring(8, 100, "ace");
  p.npu.ace.sram_bytes = 1ull << 30;
  p.npu.ace.alu_GBps = 10;
  EXPECT_NEAR(run_ns(p, CollectiveOp::kReduceScatter), 7.0 / 8 * kS / 10, 1.0);
  // All-gather reduces nothing: link rate.
  EXPECT_NEAR(run_ns(p, CollectiveOp::kAllGather), 7.0 / 8 * kS / 100, 1.0);
}

TEST(Endpoint, AceDmaBinds) {
  // All-gather: DMA reads the S/8 input and writes the S output.
  PlatformConfig p = ring(8, 100, "ace");
  p.npu.ace.sram_bytes = 1ull << 30;
  p.npu.ace.dma_GBps = 10;
  EXPECT_NEAR(run_ns(p, CollectiveOp::kAllGather), 9.0 / 8 * kS / 10, 1.0);
}

TEST(Endpoint, AceSramBoundsChunksInFlight) {
  // 2D hierarchical all-reduce, 4 chunks, one active chunk per dimension.
  // SRAM for one chunk: chunks go through all three phases one at a time.
  PlatformConfig p = platform({dim(DimKind::kRing, 4, 200, 0), dim(DimKind::kRing, 4, 50, 0)});
  p.collectives.chunks = 4;
  p.npu.executor = "ace";
  const double c = kS / 4;
  p.npu.ace.sram_bytes = static_cast<std::uint64_t>(c);
  const double ta = 0.75 * c / 200;           // RS or AG on dimension 0, ns
  const double tb = 2 * 0.75 * (c / 4) / 50;  // AR on dimension 1
  EXPECT_NEAR(test::time_ns(p, CollectiveOp::kAllReduce, kS), 4 * (2 * ta + tb), 1.0);
  // SRAM for all four: pipelined, as with the ideal endpoint.
  p.npu.ace.sram_bytes = static_cast<std::uint64_t>(4 * c);
  PlatformConfig ideal = p;
  ideal.npu.executor = "ideal";
  EXPECT_DOUBLE_EQ(test::time_ns(p, CollectiveOp::kAllReduce, kS), test::time_ns(ideal, CollectiveOp::kAllReduce, kS));
  EXPECT_LT(test::time_ns(p, CollectiveOp::kAllReduce, kS), 4 * (2 * ta + tb) - 1.0);
}

TEST(Endpoint, AceChunkLargerThanSramIsStreamedInPieces) {
  // A 2 MiB chunk through 1 MiB of SRAM: 4 pieces of half the SRAM, each a
  // chunk of its own, as if the platform had asked for 4 chunks.
  PlatformConfig p = ring(8, 100, "ace");
  p.npu.ace.sram_bytes = 1 << 20;
  PlatformConfig four = p;
  four.collectives.chunks = 4;
  EXPECT_DOUBLE_EQ(run_ns(p, CollectiveOp::kAllReduce, 2 << 20), run_ns(four, CollectiveOp::kAllReduce, 2 << 20));
  p.collectives.max_chunk_bytes = 1 << 20;  // chunks that fit run whole
  EXPECT_NO_THROW(run_ns(p, CollectiveOp::kAllReduce, 8 << 20));
}

TEST(Endpoint, KernelRunsAtItsRoofline) {
  PlatformConfig p = ring(2, 100, "ideal");
  const CollectiveRequestSpec req;
  // Compute-bound: 2*4096^3 FLOPs at 80 x 1.5 TFLOP/s.
  const Kernel gemm = gemm_kernel(4096, 4096, 4096);
  const OverlapResult o = run_overlap(p, gemm, req, 1 << 20);
  EXPECT_NEAR(ps_to_seconds(o.kernel_alone_ps), 2.0 * 4096 * 4096 * 4096 / 120e12, 1e-12);
  // Memory-bound: 9 GB of HBM traffic at 900 GB/s.
  Kernel stream;
  stream.flops = 1e9;
  stream.hbm_bytes = 9e9;
  EXPECT_NEAR(ps_to_seconds(run_overlap(p, stream, req, 1 << 20).kernel_alone_ps), 0.01, 1e-12);
}

TEST(Endpoint, KernelSlowsByTheUnitsACollectiveHolds) {
  // A pure-compute kernel; an sm collective holds 20 of 80 units for its
  // whole (longer) duration: the kernel runs at 60/80 of its speed.
  PlatformConfig p = ring(8, 1, "sm");  // slow links: a long collective
  p.npu.sm.units = 20;
  Kernel k;
  k.flops = 120e12 * 1e-3;  // 1 ms alone
  const CollectiveRequestSpec req;
  const OverlapResult o = run_overlap(p, k, req, 64 << 20);
  ASSERT_GT(o.collective_alone_ps, 2 * kPsPerMs);
  EXPECT_NEAR(ps_to_seconds(o.kernel_overlapped_ps), 1e-3 * 80 / 60, 1e-12);
  EXPECT_NEAR(o.kernel_slowdown(), 80.0 / 60 - 1, 1e-9);
  // ACE and the ideal executor take no unit: no slowdown.
  p.npu.executor = "ace";
  p.collectives.max_chunk_bytes = 1 << 20;
  EXPECT_NEAR(run_overlap(p, k, req, 64 << 20).kernel_slowdown(), 0.0, 1e-12);
}

TEST(Endpoint, FairHbmSharingGivesEqualRelativeProgress) {
  // A memory-bound kernel (H at full speed) and an HBM-bound sm all-reduce
  // that would need c = 3.5 x link rate of HBM at full speed. Fair sharing
  // gives both the same rate: lambda = H / (H + c).
  PlatformConfig p = ring(8, 100, "sm");
  p.npu.hbm_GBps = 900;
  p.npu.sm.copy_GBps_per_unit = 1e4;
  p.npu.sm.reduce_GBps_per_unit = 1e4;
  Kernel k;
  k.hbm_bytes = 0.9e9;  // 1 ms alone
  const CollectiveRequestSpec req;
  const OverlapResult o = run_overlap(p, k, req, 1ull << 30);
  const double lambda = 900.0 / (900.0 + 3.5 * 100.0);
  ASSERT_GT(ps_to_seconds(o.collective_alone_ps), 2e-3);
  EXPECT_NEAR(ps_to_seconds(o.kernel_overlapped_ps), 1e-3 / lambda, 1e-9);
}

TEST(Endpoint, HbmPoliciesDecideWhoWaits) {
  PlatformConfig p = ring(8, 100, "sm");
  p.npu.hbm_GBps = 900;
  p.npu.sm.copy_GBps_per_unit = 1e4;
  p.npu.sm.reduce_GBps_per_unit = 1e4;
  Kernel k;
  k.hbm_bytes = 0.9e9;  // needs all of HBM for 1 ms
  const CollectiveRequestSpec req;
  // Compute first: the kernel is not slowed at all.
  p.npu.hbm_sharing = HbmSharing::kComputePriority;
  EXPECT_NEAR(ps_to_seconds(run_overlap(p, k, req, 1ull << 30).kernel_overlapped_ps), 1e-3, 1e-9);
  // Communication first: it takes its 350 GB/s, the kernel gets 550.
  p.npu.hbm_sharing = HbmSharing::kCommPriority;
  EXPECT_NEAR(ps_to_seconds(run_overlap(p, k, req, 1ull << 30).kernel_overlapped_ps), 1e-3 * 900 / 550, 1e-9);
  // Static split: the kernel owns 70% of HBM whatever happens.
  p.npu.hbm_sharing = HbmSharing::kStatic;
  p.npu.hbm_comm_share = 0.3;
  EXPECT_NEAR(ps_to_seconds(run_overlap(p, k, req, 1ull << 30).kernel_overlapped_ps), 1e-3 / 0.7, 1e-9);
}

TEST(Endpoint, TimedKernelsSlowUnlessFixed) {
  PlatformConfig p = ring(8, 1, "sm");
  p.npu.sm.units = 40;
  Kernel k;
  k.time_ps = kPsPerMs;
  const CollectiveRequestSpec req;
  // Taken to have run on all 80 units: half of them gone doubles its time.
  EXPECT_NEAR(ps_to_seconds(run_overlap(p, k, req, 64 << 20).kernel_overlapped_ps), 2e-3, 1e-9);
  p.npu.fixed_kernel_times = true;
  EXPECT_EQ(run_overlap(p, k, req, 64 << 20).kernel_overlapped_ps, kPsPerMs);
}

TEST(Endpoint, StatisticsPerNpu) {
  PlatformConfig p = platform({dim(DimKind::kRing, 4, 100, 0), dim(DimKind::kRing, 2, 100, 0)});
  p.npu.executor = "sm";
  CollectiveRequestSpec req;
  const CollectiveResult r = run_collective(p, req, static_cast<std::uint64_t>(kS));
  // Hierarchical: RS 3/4 S and AG 3/4 S on dimension 0, AR of S/4 on dimension 1 (2 x 1/2 x S/4).
  ASSERT_EQ(r.network_bytes_per_dim.size(), 2u);
  EXPECT_NEAR(r.network_bytes_per_dim[0], 1.5 * kS, 1.0);
  EXPECT_NEAR(r.network_bytes_per_dim[1], 0.25 * kS, 1.0);
  EXPECT_NEAR(r.hbm_bytes, 0.75 * kS * 5 + 0.75 * kS * 2 + 0.25 * kS * 3.5, 1.0);
  // 8 units held for the whole collective.
  EXPECT_NEAR(r.comm_unit_seconds, 8 * ps_to_seconds(r.time_ps), 1e-12);
}

}  // namespace
}  // namespace acesim
