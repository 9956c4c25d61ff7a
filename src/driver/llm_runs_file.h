// Measured LLM training runs in a CSV (docs/formats.md, "Runs files"): each
// row a run's platform preset, model (a built-in or models/NAME.yaml beside
// the file), plan as published and measured step time. `acesim reproduce
// llm-runs` checks the model against the repository's table
// (tests/data/llm-runs/runs.csv); `acesim calibrate runs` fits the in-situ
// parameters (compute/in_situ.h) to a user's own.
#pragma once

#include <string>
#include <vector>

#include "compute/in_situ.h"
#include "engine/time.h"

namespace acesim {

struct LlmRunRow {
  // From the file.
  std::string id, stack, platform, model;
  long long gpus = 0;
  int seq = 0;  // 0: the model's
  int tp = 1, pp = 1, cp = 1, ep = 1, vp = 1, dp = 1, micro_batch = 1, global_batch = 0, zero = 0;
  bool sequence_parallel = false, overlap = false, account = false, tp_comm_overlap = false;
  std::string fetch;  // ZeRO-3 parameter fetch: prefetch | blocking (empty: prefetch)
  int first = 0, last = 0;
  std::string recompute, precision, attention;
  double step_s = 0.0;     // measured (or derived from the published figure: `published`, `where`)
  std::string published, where;
  std::string location;  // file:line, for messages
  // What acesim gives.
  TimePs iteration_ps = 0;
  double mfu = 0.0;
  TimePs compute_ps = 0, bubble_ps = 0, exposed_ps = 0;
  TimePs compute_tensor_ps = 0;  // of compute_ps, GEMMs' and attention's (the rest memory-bound)
  double memory_GB = 0.0;
  double model_flops_per_gpu = 0.0;  // an iteration's, Megatron-LM's eq. 3 (recomputation included)
  double measured_tflops() const { return model_flops_per_gpu / step_s / 1e12; }
  double acesim_tflops() const { return model_flops_per_gpu / (static_cast<double>(iteration_ps) / 1e12) / 1e12; }
  // Measured / acesim step time - 1: positive when acesim is faster.
  double error() const { return step_s / (static_cast<double>(iteration_ps) / 1e12) - 1.0; }
};

struct LlmRunsFile {
  std::string path;
  std::string models_dir;             // the file's directory: models/NAME.yaml are read from it
  std::vector<std::string> comments;  // the file's comment lines
  std::vector<LlmRunRow> rows;
};

// Reads every row, refusing a malformed one with the file, line and column
// (InputError). `only` (ids, comma-separated): those rows; empty: all.
// `hint` is added to a message that the file cannot be read.
LlmRunsFile read_llm_runs_file(const std::string& path, const std::string& only = "", const std::string& hint = "");

// Simulates a row: its preset on its GPUs, its plan, 2 iterations (the
// second measured), memory reported and not enforced. With a calibration,
// its kernels in situ (the values for the row's architecture and
// precision).
void simulate_llm_run(LlmRunRow& row, const std::string& models_dir, const InSituCalibration* calibration = nullptr);

// exp(mean |ln(1 + e)|) - 1 over errors e = measured / predicted - 1: the
// typical error, either sign; 0 for none.
double geomean_error(const std::vector<double>& errors);

// The row's GPU architecture (its preset's npu.arch) and precision, as a
// calibration resolves them.
std::string llm_run_arch(const LlmRunRow& row);

}  // namespace acesim
