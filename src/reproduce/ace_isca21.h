// `acesim reproduce ace-isca21`: the ACE paper's evaluation grid
// (docs/reproduction.md).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "config/platform.h"
#include "driver/training_run.h"
#include "engine/progress.h"

namespace acesim {

struct ReproOptions {
  std::string out_dir = "ace-isca21";
  int jobs = 1;
  std::vector<int> sizes = {16, 32, 64, 128};
  std::vector<std::string> workloads = {"resnet50", "gnmt", "dlrm"};
  bool sensitivity = true;
  bool plots = true;
  // Progress: a live display, or else (step_lines) a line about every tenth
  // of the runs, or nothing.
  ProgressSink* live = nullptr;
  bool step_lines = true;
};

// One configuration of the endpoint the paper compares.
struct ReproConfig {
  std::string name;  // ideal, ace, no-overlap, baseline-u<K>-<hbm>
  std::string executor;  // its name in executor_registry()
  int units = 0;                                  // sm: compute units given to communication
  HbmSharing hbm = HbmSharing::kFair;
  double hbm_comm_share = 0.5;                    // static split
  bool blocking_gradients = false;                // no-overlap
};

struct ReproResult {
  std::string workload;
  int npus = 0;
  ReproConfig config;
  std::string study;   // sensitivity only: which parameter
  double value = 0.0;  // ... and its value
  TrainReport report;
  double network_utilization = 0.0;         // bytes sent / what the NPU's links could carry, whole run
  // The same bytes / what the links of each dimension could carry while
  // communication over it was in flight (the paper's "effective" utilization).
  double network_utilization_in_flight = 0.0;
  double hbm_bytes_per_network_byte = 0.0;  // communication's HBM traffic per byte sent
  double network_GBps_per_npu = 0.0;
  double hbm_comm_GBps_per_npu = 0.0;
};

// The workloads and sizes the grid may run (--workloads, --sizes).
const std::vector<std::string>& ace_isca21_workloads();
const std::vector<int>& ace_isca21_sizes();

std::vector<ReproConfig> repro_configs(const NpuConfig& npu);
// The preset resized to `npus` (16, 32, 64 or 128).
PlatformConfig repro_platform(int npus);
// Workload `name` (resnet50, gnmt, dlrm) for a topology.
Workload repro_workload(const std::string& name, const Topology& topo);

// Runs the grid (and the sensitivity studies) on `jobs` threads and writes
// results.csv, sensitivity.csv, report.md and the plots into out_dir.
// Progress goes to `progress`. Throws InputError for bad options.
void run_ace_isca21(const ReproOptions& options, std::FILE* progress);

}  // namespace acesim
