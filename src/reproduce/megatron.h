// `acesim reproduce megatron`: LLM training against Megatron-LM's published
// throughput on DGX A100 (docs/validation.md, "LLM training: Megatron-LM on
// DGX A100"). DATA/megatron/table1.csv holds the rows of arXiv 2104.04473's
// Table 1 and which of them acesim simulates today; DATA/megatron/models/
// their shapes. Every row runs with the same settings (megatron_settings()),
// from the paper's section 5 and Megatron-LM as of 2021: nothing is fitted
// per row.
#pragma once

#include <string>
#include <vector>

#include "engine/time.h"

namespace acesim {

struct MegatronRow {
  // From the published table.
  std::string model;  // "GPT 1.7B"
  std::string model_file;
  double params_billion = 0.0;
  int heads = 0, hidden = 0, layers = 0;
  int tp = 1, pp = 1;
  long long gpus = 0;
  int batch = 0;  // global batch, sequences
  double measured_tflops = 0.0;
  bool simulated = false;  // false: pending (too slow to simulate today)
  // The plan the settings give the row.
  int dp = 1;
  std::string schedule;  // "1f1b" or "interleaved"
  int virtual_stages = 1;
  // What acesim gives (simulated rows only).
  double acesim_tflops = 0.0;
  TimePs iteration_ps = 0;
  TimePs exposed_tp_ps = 0, exposed_dp_ps = 0, exposed_pp_ps = 0, bubble_ps = 0;
  double memory_bytes = 0.0;
  // acesim / measured TFLOP/s per GPU - 1: positive when acesim is faster.
  double error() const { return acesim_tflops / measured_tflops - 1.0; }
};

struct MegatronStudy {
  std::string source;  // the table's `# source:` line
  std::vector<MegatronRow> rows;  // in the table's order, pending ones included
};

// The settings every row runs with, as one line of `acesim run` flags.
std::string megatron_settings();

// Runs the rows marked to simulate. Throws InputError naming the file that
// is missing or malformed, or a model file whose shape is not its row's.
MegatronStudy run_megatron(const std::string& data_dir);

// The table per row and the trend across rows, in Markdown.
std::string megatron_tables(const MegatronStudy& study);

// Writes results.csv and report.md into out_dir (created if needed).
void write_megatron(const MegatronStudy& study, const std::string& out_dir);

}  // namespace acesim
