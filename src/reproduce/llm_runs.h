// `acesim reproduce llm-runs`: LLM training against published end-to-end
// runs of several training stacks (docs/validation.md, section 7):
// DATA/llm-runs/runs.csv holds each run with its source, its GPU's preset,
// its model (a built-in or DATA/llm-runs/models/NAME.yaml) and its own plan
// as published; every row runs on acesim's defaults for what the plan does
// not state. Nothing is fitted to the rows: they test the compute model
// (docs/compute.md), the collectives and the schedules together.
#pragma once

#include <string>
#include <vector>

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
  // What acesim gives.
  TimePs iteration_ps = 0;
  double mfu = 0.0;
  TimePs compute_ps = 0, bubble_ps = 0, exposed_ps = 0;
  double memory_GB = 0.0;
  double model_flops_per_gpu = 0.0;  // an iteration's, Megatron-LM's eq. 3 (recomputation included)
  double measured_tflops() const { return model_flops_per_gpu / step_s / 1e12; }
  double acesim_tflops() const { return model_flops_per_gpu / (static_cast<double>(iteration_ps) / 1e12) / 1e12; }
  // Measured / acesim step time - 1: positive when acesim is faster.
  double error() const { return step_s / (static_cast<double>(iteration_ps) / 1e12) - 1.0; }
};

struct LlmRunsStudy {
  std::vector<std::string> sources;  // the file's `# source:` lines
  std::vector<LlmRunRow> rows;
};

// Throws InputError naming the file, line and column of a malformed row.
// `only` (ids, comma-separated) runs a subset; empty: all.
LlmRunsStudy run_llm_runs(const std::string& data_dir, const std::string& only = "");
std::string llm_runs_tables(const LlmRunsStudy& study);
// Scaling series: rows of one stack, model, precision and plan shape (all
// but the data-parallel size and batches) at two or more GPU counts, in
// order of GPUs.
std::vector<std::vector<const LlmRunRow*>> llm_runs_series(const LlmRunsStudy& study);
void write_llm_runs(const LlmRunsStudy& study, const std::string& out_dir);

}  // namespace acesim
