// acesim reproduce offload (docs/reproduction.md, section 5): ConCCL's
// configurations in the measured order, the mechanisms' closed forms, the
// PyTorch copy-engine pair within its stated errors, and the doc's tables
// what the study computes.
#include <cmath>

#include <gtest/gtest.h>

#include "reproduce/offload.h"
#include "test_paths.h"

namespace acesim {
namespace {

const OffloadStudy& study() {
  static const OffloadStudy s = run_offload_study();
  return s;
}

const OverlapScenario& pair(const std::string& gemm, CollectiveOp op, double mib) {
  for (const OverlapScenario& s : study().conccl) {
    if (s.gemm == gemm && s.op == op && s.bytes == mib * 1024 * 1024) return s;
  }
  throw std::logic_error("no pair " + gemm);
}

TEST(Offload, ConcclConfigurationsInTheMeasuredOrder) {
  ASSERT_EQ(study().conccl.size(), 24u);
  // Measured: 21% < 42% (prioritized or partitioned) < 72% (DMA).
  EXPECT_LT(study().mean_share("c3"), study().mean_share("prioritized"));
  EXPECT_LE(study().mean_share("prioritized"), study().mean_share("partitioned"));
  EXPECT_LT(study().mean_share("partitioned"), study().mean_share("dma"));
  // Every pair: a configuration that takes fewer CUs from the GEMM earlier
  // never ends later.
  for (const OverlapScenario& s : study().conccl) {
    SCOPED_TRACE(s.gemm + " " + std::string(to_string(s.op)));
    EXPECT_LE(s.config("prioritized").end_ps(), s.config("c3").end_ps());
    EXPECT_LE(s.config("partitioned").end_ps(), s.config("prioritized").end_ps());
    EXPECT_GE(s.config("c3").end_ps(), s.ideal_ps());
    EXPECT_LE(s.config("c3").end_ps(), s.serial_ps());
  }
}

TEST(Offload, LaunchedTogetherTheCollectiveWaitsForTheLastWave) {
  // 4 x 4096 x 4096 GEMM: 4 x 16 x 16 = 1024 tiles of 256 x 256 over 304
  // CUs, 4 waves: the collective starts at 3/4 of the GEMM's time alone.
  const OverlapScenario& four = pair("4x4096x4096x4096", CollectiveOp::kAllGather, 256);
  EXPECT_EQ(four.waves, 4);
  EXPECT_EQ(four.config("c3").start_ps, four.gemm_ps * 3 / 4);
  // 256 tiles: one wave, the collective starts at once (as prioritized).
  const OverlapScenario& one = pair("1x4096x4096x4096", CollectiveOp::kAllGather, 64);
  EXPECT_EQ(one.waves, 1);
  EXPECT_EQ(one.config("c3").start_ps, 0);
  EXPECT_EQ(one.config("c3").end_ps(), one.config("prioritized").end_ps());
}

TEST(Offload, PrioritizedGemmLosesTheChannelsShareWhileTheCollectiveRuns) {
  // The collective ends first and is not slowed; meanwhile the GEMM runs on
  // (304 - c) of 304 CUs: it ends at g + t_c * c / 304.
  const OverlapScenario& s = pair("4x4096x4096x4096", CollectiveOp::kAllGather, 16);
  const OverlapConfigResult& r = s.config("prioritized");
  ASSERT_GT(r.channels, 0);
  EXPECT_EQ(r.collective_ps, s.comm_ps);
  const double expected = static_cast<double>(s.gemm_ps) + static_cast<double>(s.comm_ps) * r.channels / 304.0;
  EXPECT_NEAR(static_cast<double>(r.kernel_ps) / expected, 1.0, 1e-3);
  // ACE and the SDMA engines take no CU: the GEMM keeps its time alone.
  EXPECT_NEAR(static_cast<double>(s.config("dma").kernel_ps) / static_cast<double>(s.gemm_ps), 1.0, 1e-3);
  EXPECT_NEAR(static_cast<double>(s.config("ace").kernel_ps) / static_cast<double>(s.gemm_ps), 1.0, 1e-3);
}

TEST(Offload, PytorchCopyEnginePairWithinItsStatedErrors) {
  // PyTorch PR 172714 on 8 H100: 2.96 ms serial, 2.02 overlapped on NCCL's
  // kernels, 1.77 on its copy engines (docs/reproduction.md: acesim 3-12%
  // fast, the order right).
  const OverlapScenario& p = study().pytorch;
  const double serial = static_cast<double>(p.serial_ps()) / 1e9;
  const double sm = static_cast<double>(p.config("prioritized").end_ps()) / 1e9;
  const double ce = static_cast<double>(p.config("dma").end_ps()) / 1e9;
  EXPECT_NEAR(serial / 2.96 - 1.0, -0.031, 0.01);
  EXPECT_NEAR(sm / 2.02 - 1.0, -0.109, 0.01);
  EXPECT_NEAR(ce / 1.77 - 1.0, -0.117, 0.01);
  EXPECT_GT(serial, sm);
  EXPECT_GT(sm, ce);
}

TEST(Offload, DmaSweepCoversBothCollectivesAtEverySize) {
  // 1 KiB to 1 GiB by 2: 21 sizes each; ACE runs RCCL's schedule without
  // the kernels' units, no slower than RCCL alone.
  ASSERT_EQ(study().sweep.size(), 42u);
  for (const SweepRow& r : study().sweep) {
    EXPECT_GT(r.dma_ps, 0);
    EXPECT_LE(r.ace_ps, r.library_ps);
  }
  // The all-gathers fill the xGMI links at 1 GiB: within 1% of each other.
  EXPECT_EQ(study().sweep[20].op, CollectiveOp::kAllGather);
  EXPECT_NEAR(study().sweep[20].dma_over_library(), 1.0, 0.01);
  // RCCL's all-to-all moves a byte at 1 / 1.1277 of its ring's rate
  // (nccl_model.cpp), the engines at the links': 0.89 at 1 GiB.
  EXPECT_EQ(study().sweep[41].op, CollectiveOp::kAllToAll);
  EXPECT_NEAR(study().sweep[41].dma_over_library(), 360.71 / 406.76, 0.01);
}

// The host-driven DMA collective at 1 KiB on 8 MI300X: NCCL's
// copy-engine structure (two barriers and the copies, 6 us each: the
// preset's latency_ns), the host issuing its 7 peers' commands in series
// (3 us for each after the first: host_issue_ns) and one xGMI link's 0.5
// us; the copies' bytes add nanoseconds.
TEST(Offload, DmaSmallSizesPayTheHostsSerialIssue) {
  const SweepRow& r = study().sweep[0];
  ASSERT_EQ(r.bytes, 1024.0);
  EXPECT_NEAR(ps_to_us(r.dma_ps), 3 * 6.0 + 6 * 3.0 + 0.5, 0.05);
  // DMA-Latte's crossover (tens of MB): all-to-all where the engines'
  // better rate pays back the fixed cost, between 64 and 128 MiB;
  // all-gather never (RCCL's ring fills the links as the engines do).
  const double x = study().crossover_bytes(CollectiveOp::kAllToAll);
  EXPECT_GT(x, 64.0 * 1048576.0);
  EXPECT_LT(x, 128.0 * 1048576.0);
  EXPECT_EQ(study().crossover_bytes(CollectiveOp::kAllGather), 0.0);
}

TEST(Offload, DocumentedTablesAreWhatTheStudyComputes) {
  EXPECT_EQ(test::doc_tables("docs/reproduction.md", "offload"), offload_tables(study()))
      << "docs/reproduction.md section 5 is out of date: scripts/update-doc-tables.py offload";
}

}  // namespace
}  // namespace acesim
