// `acesim reproduce kineto`: PyTorch profiler traces of real runs replayed
// on the platform they ran on (docs/validation.md, section 8). For each
// trace of tests/data/kineto (HolisticTraceAnalysis's test data, and one
// acesim took on an H200 with tools/kineto-capture): every ProfilerStep
// traced, replayed with every duration as traced, and replayed with its
// NCCL kernels simulated on nodes of its GPUs (hgx-a100, hgx-h200); the
// sampled 128-rank job's two traces also together, each rank its own
// (steps: the slower rank's); the traced ranks' GPU activities within 1 us
// of their traced start.
#pragma once

#include <string>
#include <vector>

#include "driver/kineto_run.h"

namespace acesim {

struct KinetoCase {
  std::string file;   // under data_dir/kineto (several: a label)
  std::string preset;  // the platform it replays on: its GPUs'
  long long nodes = 1;
  KinetoReport measured, simulated;
};

struct KinetoStudy {
  std::vector<KinetoCase> cases;
};

// The traces data_dir/kineto holds, in a fixed order. Throws InputError.
KinetoStudy run_kineto_study(const std::string& data_dir);
// The markdown tables (docs/validation.md, section 8 holds them).
std::string kineto_study_tables(const KinetoStudy& study);
// Writes out_dir/report.md and results.csv.
void write_kineto_study(const KinetoStudy& study, const std::string& out_dir);

}  // namespace acesim
