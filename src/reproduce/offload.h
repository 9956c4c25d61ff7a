// `acesim reproduce offload`: compute beside communication on real GPUs,
// acesim beside the published measurements of the offload paths that ship
// (docs/reproduction.md, "Offload engines as they ship"):
//   conccl    a GEMM and a collective at once on 8 MI300X (ConCCL, arXiv
//             2412.14335): the share of the ideal speedup each way of
//             running them reaches: launched together (c3), the
//             collective first (prioritized), the best reservation of CUs
//             for it (partitioned), on the SDMA engines (dma), on ACE;
//   pytorch   an 8192^3 GEMM beside a 512 MiB all-gather on 8 H100 (PyTorch
//             PR 172714): one after the other, overlapped with NCCL's
//             kernels, overlapped with its copy engines;
//   dma-sweep the SDMA all-gather and all-to-all against RCCL's by size on
//             8 MI300X (DMA-Latte, arXiv 2511.06605): where each is faster.
// Every figure is simulated from the presets (mi300x, hgx-h100); the GEMMs'
// times alone are OpenXLA's measured table (MI300X) or the compute model
// (H100). Nothing here is fitted to the papers' results.
#pragma once

#include <string>
#include <vector>

#include <cstdio>

#include "algorithm/collective_op.h"
#include "engine/time.h"

namespace acesim {

// One way of running the pair, and what it reached.
struct OverlapConfigResult {
  std::string config;      // c3, prioritized, partitioned, dma, ace
  int channels = 0;        // the collective's channels (CUs), 0: none
  TimePs start_ps = 0;     // when the collective started
  TimePs kernel_ps = 0;    // the GEMM's end
  TimePs collective_ps = 0;  // the collective's end
  TimePs end_ps() const { return kernel_ps > collective_ps ? kernel_ps : collective_ps; }
};

struct OverlapScenario {
  std::string gemm;        // "1x4096x4096x4096" (batch x m x n x k)
  CollectiveOp op = CollectiveOp::kAllGather;
  double bytes = 0.0;      // nccl-tests size
  TimePs gemm_ps = 0;      // alone
  TimePs comm_ps = 0;      // the library's collective alone
  int waves = 0;           // the GEMM's waves of workgroups
  std::vector<OverlapConfigResult> configs;
  TimePs serial_ps() const { return gemm_ps + comm_ps; }
  TimePs ideal_ps() const { return gemm_ps > comm_ps ? gemm_ps : comm_ps; }
  // G-long, C-long or GC-equal (one within 15% of the other).
  std::string kind() const;
  // (serial / end - 1) / (serial / ideal - 1): the share of the ideal
  // speedup that `config` realizes.
  double share(const std::string& config) const;
  const OverlapConfigResult& config(const std::string& name) const;
};

struct SweepRow {
  CollectiveOp op = CollectiveOp::kAllGather;
  double bytes = 0.0;
  TimePs library_ps = 0;  // RCCL's kernels (sm)
  TimePs dma_ps = 0;      // the SDMA engines
  TimePs ace_ps = 0;
  // Mean power per GPU over the collective (the preset's energy model).
  double library_W = 0.0, dma_W = 0.0;
  double dma_over_library() const { return static_cast<double>(dma_ps) / static_cast<double>(library_ps); }
};

struct OffloadStudy {
  std::vector<OverlapScenario> conccl;
  OverlapScenario pytorch;  // configs: prioritized (NCCL's kernels), dma, ace
  std::vector<SweepRow> sweep;
  // The mean share of ideal per configuration over the ConCCL scenarios.
  double mean_share(const std::string& config) const;
  // The size from which the DMA collective is at least as fast as the
  // library's at every larger size of the sweep: where their times cross,
  // interpolated in log size and log time between the two sizes around it
  // (the sweep's first size when it is faster throughout); 0 when it never
  // is.
  double crossover_bytes(CollectiveOp op) const;
};

// The configurations of the ConCCL study, in their order.
std::vector<std::string> conccl_configs();

OffloadStudy run_offload_study();

// The tables `acesim reproduce offload` prints (docs/reproduction.md keeps
// them), in Markdown.
std::string offload_tables(const OffloadStudy& s);

// Writes results.csv, report.md and (with plots) plots.py into out_dir.
// Returns whether the plots were drawn.
bool write_offload(const OffloadStudy& s, const std::string& out_dir, bool plots, std::FILE* log);

}  // namespace acesim
