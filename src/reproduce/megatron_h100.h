// `acesim reproduce megatron-h100`: LLM training against NVIDIA's published
// BF16 step times of NeMo / Megatron-Core on DGX H100 (docs/validation.md,
// "LLM training: Megatron-Core on DGX H100"). DATA/megatron/h100.csv holds
// the rows (Llama 3.1 8B, 70B, 405B and GPT-3 175B, 8 to 2,048 GPUs) with
// their source; every row runs with the same settings
// (megatron_h100_settings()), those of the published runs' configuration:
// nothing is fitted per row.
#pragma once

#include <string>
#include <vector>

#include "engine/time.h"

namespace acesim {

struct H100Row {
  // From the published table.
  std::string model;  // acesim built-in
  std::string row;    // the source table's column
  long long gpus = 0;
  int tp = 1, pp = 1, cp = 1, vp = 1, dp = 1;
  int global_batch = 0;
  bool sequence_parallel = false;
  bool tp_comm_overlap = false;  // --tp-comm-overlap, as the run's configuration sets it
  double step_s = 0.0;  // measured seconds per step
  // What acesim gives.
  TimePs iteration_ps = 0;
  double mfu = 0.0;  // acesim's MFU (these runs recompute nothing: their HFU too)
  TimePs compute_ps = 0, bubble_ps = 0, exposed_tp_ps = 0, exposed_cp_ps = 0, exposed_pp_ps = 0, exposed_dp_ps = 0;
  double memory_GB = 0.0;
  // Measured / acesim step time - 1: positive when acesim is faster.
  double error() const { return step_s / (static_cast<double>(iteration_ps) / 1e12) - 1.0; }
};

struct H100Study {
  std::string source;
  std::vector<H100Row> rows;
};

std::string megatron_h100_settings();
// Throws InputError naming the file and line of a malformed row.
H100Study run_megatron_h100(const std::string& data_dir);
std::string megatron_h100_tables(const H100Study& study);
void write_megatron_h100(const H100Study& study, const std::string& out_dir);

}  // namespace acesim
