// The ACE paper's characterization of the endpoint, as studies one command
// runs (acesim characterize; docs/characterization.md):
//   units    achieved collective bandwidth vs compute units given to communication
//   hbm      achieved collective bandwidth vs available HBM bandwidth
//   overlap  slowdown of a compute kernel while a collective overlaps it
//   traffic  HBM bytes per network byte, sm vs ace, for every operation
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "driver/collective_run.h"
#include "endpoint/endpoint.h"
#include "engine/progress.h"

namespace acesim {

// A GEMM C[M,N] = A[M,K] B[K,N]: 2MNK FLOPs; A, B read and C written once.
Kernel gemm_kernel(double m, double n, double k, double bytes_per_element = 2.0);

struct OverlapResult {
  TimePs kernel_alone_ps = 0;
  TimePs kernel_overlapped_ps = 0;
  TimePs collective_alone_ps = 0;
  TimePs collective_overlapped_ps = 0;
  double kernel_slowdown() const;      // overlapped / alone - 1
  double collective_slowdown() const;
};

// Every NPU starts `kernel` at time 0 and the collective at
// `collective_start_ps` (SPMD). collective_overlapped_ps is the collective's
// end, from time 0.
OverlapResult run_overlap(const PlatformConfig& platform, const Kernel& kernel, const CollectiveRequestSpec& req,
                          std::uint64_t bytes, TimePs collective_start_ps = 0);

struct StudyRow {
  std::string config;  // e.g. "sm units=8", "ace", "ideal"
  double x = 0.0;      // the swept value (units, HBM GB/s), 0 where none
  CollectiveResult result;
  OverlapResult overlap;  // overlap study only
};

struct Study {
  std::string name;
  std::string x_label;
  std::vector<StudyRow> rows;
};

// The channels NCCL's model runs `req` with on the platform (one compute
// unit each); 0 where NCCL's model does not run it.
int nccl_channels(const PlatformConfig& p, const CollectiveRequestSpec& req, std::uint64_t bytes);

std::vector<std::string> study_names();
// Throws InputError for an unknown study name.
Study run_study(const std::string& name, const PlatformConfig& platform, const CollectiveRequestSpec& req,
                std::uint64_t bytes, const Kernel& kernel, const Progress& progress = {});
}  // namespace acesim
