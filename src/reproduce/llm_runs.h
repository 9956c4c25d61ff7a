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

#include "driver/llm_runs_file.h"
#include "engine/time.h"

namespace acesim {

struct LlmRunsStudy {
  std::vector<std::string> sources;  // the file's `# source:` lines
  std::vector<LlmRunRow> rows;
  std::string calibration;  // the calibration file the rows were priced in situ with; empty: none
};

// Throws InputError naming the file, line and column of a malformed row.
// `only` (ids, comma-separated) runs a subset; empty: all. With a
// calibration file (compute/in_situ.h), every row in situ: InputError when
// it has no entry for a row's architecture.
// `jobs`: rows simulated at once (0: every core); the study is the same
// whatever it is.
LlmRunsStudy run_llm_runs(const std::string& data_dir, const std::string& only = "", const std::string& calibration_file = "",
                          int jobs = 0);
std::string llm_runs_tables(const LlmRunsStudy& study);
// Scaling series: rows of one stack, model, precision and plan shape (all
// but the data-parallel size and batches) at two or more GPU counts, in
// order of GPUs.
std::vector<std::vector<const LlmRunRow*>> llm_runs_series(const LlmRunsStudy& study);
void write_llm_runs(const LlmRunsStudy& study, const std::string& out_dir);

}  // namespace acesim
