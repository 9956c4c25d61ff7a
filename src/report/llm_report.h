// Reports of an LLM training run (driver/llm_run.h): text, side-by-side
// comparison, JSON, CSV and a Chrome/Perfetto trace with one track per
// pipeline stage.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "config/platform.h"
#include "driver/llm_run.h"

namespace acesim {

// "# kernels: ..." saying where the kernels' times came from; empty when
// every kernel ran at the constant efficiencies.
std::string format_kernel_sources(const LlmReport& r);
// The compute time by kernel kind, a line each, largest first; empty when
// the workload does not say what its kernels are.
std::string format_compute_by_kind(const LlmReport& r);
std::string format_llm(const LlmReport& r, const PlatformConfig& platform);
std::string format_llm_comparison(const std::vector<LlmReport>& runs, const PlatformConfig& platform);
nlohmann::json llm_json(const LlmReport& r);
// Writes DIR/stages.csv (one row per pipeline stage), DIR/kernels.csv
// (compute time by stage and kernel kind, where known) and, with spans,
// DIR/timeline.csv. Throws InputError when it cannot.
void write_llm_csv(const LlmReport& r, const std::string& dir);
nlohmann::json llm_trace(const LlmReport& r);

}  // namespace acesim
