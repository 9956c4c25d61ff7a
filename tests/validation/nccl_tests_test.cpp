// The GPU presets against published nccl-tests measurements
// (docs/validation.md, section 2): the published tables stay what the study
// computes, and each table's geomean error within its bound.
#include <cmath>
#include <map>

#include <gtest/gtest.h>

#include "config/input_error.h"
#include "reproduce/nccl_tests.h"
#include "test_paths.h"

namespace acesim {
namespace {

const std::vector<NcclTestsTable>& study() {
  static const std::vector<NcclTestsTable> tables = run_nccl_tests(test::data_dir());
  return tables;
}

std::string doc_tables() { return test::doc_tables("docs/validation.md", "nccl-tests"); }

TEST(NcclTests, DocumentedTablesAreWhatTheStudyComputes) {
  EXPECT_EQ(doc_tables(), nccl_tests_tables(study()))
      << "docs/validation.md section 2 is out of date: paste `acesim reproduce nccl-tests`'s tables";
}

// Today's errors, as docs/validation.md states them (issue 15's goals are
// 10% on 8-GPU H100 all-reduce and 15% across nodes): a change that makes a
// table worse fails here; one that makes it better lowers its bound.
// Modelling NVLS-tree raised the 2x8 and 4x8 H100 defaults' bounds (23.4 ->
// 28.9%, 24.7 -> 26.4%: medium sizes now run NVLS-tree, whose ramp to its
// peak is not modelled, docs/validation.md) and lowered 2x8 H200's (21.1 ->
// 9.7%). Modelling NVLS's kernel pipeline (its fill and per-iteration
// synchronisation) lowered every NVLS and NVLS-tree table: 8x H100 6.9 ->
// 2.0%, Together 17.3 -> 12.7%, DGX 41.5 -> 36.2%, Azure 15.6 -> 10.1%, 8x
// H200 8.0 -> 3.8% and 7.5 -> 3.4%, 2x8 H100 28.2 -> 17.3%, 2x8 H200 9.7 ->
// 2.5%, 4x8 H100 26.4 -> 19.9%.
TEST(NcclTests, EachTableStaysWithinItsBound) {
  const std::map<std::string, double> bound = {
      {"8x H100 all-reduce (default: NVLS)", 0.025},
      {"8x H200 all-reduce (default: NVLS)", 0.045},
      {"8x H100 reduce-scatter (ring)", 0.050},
      {"8x A100 all-reduce (default)", 0.285},
      {"2x8 H100 all-reduce (ring; 24 CTAs)", 0.090},
      {"2x8 H100 all-reduce (default: NVLS-tree)", 0.180},
      {"2x8 H200 all-reduce (default: NVLS-tree)", 0.030},
      {"4x8 H100 all-reduce (default)", 0.205},
      {"8x H100 all-reduce (ring; Together)", 0.185},
      {"8x H100 all-reduce (default: NVLS; Together)", 0.135},
      {"8x H100 all-reduce (default: NVLS; NVIDIA DGX)", 0.370},
      {"8x H100 all-reduce (default: NVLS; Azure)", 0.110},
      {"8x H200 all-reduce (default: NVLS; Azure NCCL 2.26)", 0.040},
      {"8x H100 all-gather (ring; Together)", 0.485},
      {"8x H100 all-gather (default; Together)", 0.495},
      {"8x H100 reduce-scatter (ring; Together)", 0.470},
      {"8x H100 reduce-scatter (default; Together)", 0.475},
      {"8x B200 all-reduce (ring; peak)", 0.040},
      {"8x B200 all-reduce (NVLS; peak)", 0.025},
      {"8x B200 all-gather (ring; peak)", 0.075},
      {"8x A100 all-gather (default)", 0.240},
      {"8x A100 all-to-all (default)", 0.110},
      {"2x8 A100 all-reduce (default)", 0.120},
      {"2x8 A100 all-gather (default)", 0.165},
      {"2x8 A100 all-to-all (default)", 0.755},
      {"8x MI300X all-reduce (default; RCCL 2.22.3)", 0.035},
      {"8x MI300X all-reduce (default; independent run)", 0.035},
      {"8x MI355X all-reduce (default; OCI large sizes)", 0.045},
      {"8x MI355X all-to-all (default; OCI large sizes)", 0.045},
      {"8x MI355X all-reduce (default; OCI Pollara large sizes)", 0.050},
      {"8x MI355X all-to-all (default; OCI Pollara large sizes)", 0.045},
      {"2x8 MI355X all-reduce (default; OCI Pollara large sizes)", 0.080},
      {"2x8 MI355X all-to-all (default; OCI Pollara large sizes)", 0.045},
      {"4x8 MI355X all-reduce (default; OCI Pollara large sizes)", 0.075},
      {"4x8 MI355X all-to-all (default; OCI Pollara large sizes)", 0.140},
      {"2x8 MI355X all-reduce (default; Pollara)", 0.215},
  };
  ASSERT_EQ(study().size(), bound.size());
  for (const NcclTestsTable& t : study()) {
    SCOPED_TRACE(t.title);
    ASSERT_TRUE(bound.count(t.title));
    EXPECT_LE(t.geomean_error(), bound.at(t.title));
    // Full tables have at least 5 sizes; the B200 peaks publish one,
    // Microsoft's MSCCL++ baselines two or three, OCI's MI355X pages their
    // two largest.
    const bool few = t.title.find("peak") != std::string::npos || t.file.find("mscclpp") != std::string::npos ||
                     t.file.find("_large_") != std::string::npos;
    EXPECT_GE(t.rows.size(), few ? 1u : 5u);
  }
}

// The goals where the links and the algorithm set the time (from
// 64 MiB; below, the launch latency of the harness dominates and varies:
// 13.7 us at 8 B in NVIDIA's DGX sample, 37 us in Together's, same GPUs):
// 10% on 8-GPU H100 collectives (all-reduce, all-gather, reduce-scatter;
// Together's all-gather ring at 6.3% is the worst), 15% across H100 nodes
// (4 nodes at 6.4%).
TEST(NcclTests, LargeSizesMeetTheGoalsOnH100) {
  int checked = 0;
  for (const NcclTestsTable& t : study()) {
    if (t.platform != "hgx-h100" || t.rows_from(64.0 * 1048576.0) == 0) continue;
    SCOPED_TRACE(t.title);
    EXPECT_LE(t.geomean_error(64.0 * 1048576.0), t.nodes == 1 ? 0.10 : 0.15);
    ++checked;
  }
  EXPECT_EQ(checked, 13);  // 10 one-node tables, 3 across nodes
}

// 8x MI300X all-reduce (AMD's table, RCCL 2.22.3, and an independent run
// of 1 MiB to 8 GiB): every row from 1 KiB on within 5%, MSCCL's all-pairs
// (to 16 MiB) and the rings spread over the xGMI mesh (from 32 MiB). Four
// rows of AMD's table calibrate the all-pairs constants (1 KiB, 256 KiB,
// 1 MiB, 16 MiB: src/collective/nccl_model.cpp); its other rows from 1 KiB
// on and all 7 of the independent run test. The 8-byte row (16.6 us, slower
// than 1 KiB's 13.1) is left out.
TEST(NcclTests, Mi300xAllReduceWithinFivePercent) {
  int checked = 0;
  for (const NcclTestsTable& t : study()) {
    if (t.platform != "mi300x") continue;
    for (const NcclTestsRow& r : t.rows) {
      if (r.bytes < 1024.0) continue;
      SCOPED_TRACE(std::to_string(r.bytes) + " bytes");
      EXPECT_LE(std::abs(r.error()), 0.05);
      EXPECT_EQ(r.algorithm.rfind(r.bytes <= 16.0 * 1048576.0 ? "allpairs" : "ring", 0), 0u) << r.algorithm;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 26);
}

// 8x MI355X (gfx950), where the links set the time (1 GiB and up): the
// xGMI rate is derived from the datasheet and MI300X's measured link
// efficiency, nothing MI355X's tables say, so every all-reduce row tests;
// RCCL's point-to-point constant comes from the ConnectX-7 table's one-node
// all-to-all over all-reduce. All-reduce within 5% on one node and 8%
// across two and four; all-to-all within 5% on one and two nodes. Four
// nodes' all-to-all is 14% fast and says so (docs/validation.md: the rails'
// cross-rail traffic).
TEST(NcclTests, Mi355xLargeSizesWithinTheirBounds) {
  int checked = 0;
  for (const NcclTestsTable& t : study()) {
    if (t.platform != "mi355x") continue;
    for (const NcclTestsRow& r : t.rows) {
      if (r.bytes < 1073741824.0) continue;
      SCOPED_TRACE(t.title + ", " + std::to_string(r.bytes) + " bytes");
      const bool a2a = t.op == "all-to-all";
      const double bound = t.nodes == 4 && a2a ? 0.145 : a2a ? 0.05 : t.nodes == 1 ? 0.05 : 0.08;
      EXPECT_LE(std::abs(r.error()), bound);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 19);  // 8 two-row tables, 3 rows of the full 2-node one
}

// NVLS and NVLS-tree at the sizes training moves (1 to 128 MiB): within 10%
// of every published row where NCCL ran them (docs/validation.md, section
// 2: the kernel's pipeline, docs/model.md). Two rows miss, slow, and say so:
// nccl-tests#309's 2x8 H100 table at 4 and 8 MiB, where its own ramp dips
// (9 us per MiB from 4 to 8 MiB, against 4 us from 128 MiB on).
TEST(NcclTests, NvlsRampWithinTenPercent) {
  const std::map<std::pair<std::string, double>, double> known_misses = {
      {{"2x8 H100 all-reduce (default: NVLS-tree)", 4.0 * 1048576.0}, 0.150},
      {{"2x8 H100 all-reduce (default: NVLS-tree)", 8.0 * 1048576.0}, 0.195},
  };
  int checked = 0;
  for (const NcclTestsTable& t : study()) {
    for (const NcclTestsRow& r : t.rows) {
      if (r.algorithm.rfind("nvls", 0) != 0 || r.bytes < 1048576.0 || r.bytes > 128.0 * 1048576.0) continue;
      SCOPED_TRACE(t.title + ", " + std::to_string(r.bytes) + " bytes");
      const auto miss = known_misses.find({t.title, r.bytes});
      EXPECT_LE(std::abs(r.error()), miss == known_misses.end() ? 0.10 : miss->second);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 49);  // 36 rows on one node, 8 on two, 5 on four
}

TEST(NcclTests, BusBandwidthComesFromThePublishedTimes) {
  // nccl-tests#290, 4 GiB: 15870 us on 8 GPUs: 4294967296 / 15870e-6 s x 2(7/8)
  // = 473.6 GB/s, the busbw it prints.
  for (const NcclTestsTable& t : study()) {
    if (t.title != "8x H100 all-reduce (default: NVLS)") continue;
    EXPECT_NEAR(t.rows.back().measured_busbw_GBps, 473.6, 0.05);
    return;
  }
  ADD_FAILURE() << "table missing";
}

TEST(NcclTests, MissingDataIsAnInputError) {
  EXPECT_THROW(run_nccl_tests("/nonexistent"), InputError);
}

}  // namespace
}  // namespace acesim
