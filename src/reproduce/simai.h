// `acesim reproduce simai`: SimAI / AICB workload files (docs/validation.md,
// section 5). For each sample file of tests/data/simai:
//   - acesim runs it (ideal and sm executors) on hgx-h100 nodes with SimAI's
//     bandwidths (NVLink 360 GB/s, NIC 48.5 GB/s), beside what
//     SimAI-Analytical reports for it: compute, exposed communication and
//     the iteration;
//   - where the file is a model acesim knows (GPT-13B), every collective of
//     one rank's iteration, by group, pass, operation and size, in the file
//     and in acesim's own LLM model for the same plan.
#pragma once

#include <string>
#include <vector>

#include "driver/llm_run.h"

namespace acesim {

// One kind of communication of one rank's iteration: how many the file
// issues and how many acesim's model does.
struct SimaiCensusRow {
  std::string group;  // tp, ep, dp, pp
  std::string pass;   // forward, backward, step (outside the micro-batches)
  std::string op;     // all-reduce, ..., send
  double bytes = 0.0;
  long long in_file = 0;
  long long in_model = 0;
};

struct SimaiCase {
  std::string file;
  long long gpus = 0;
  // SimAI-Analytical's figures, µs.
  double simai_total_us = 0.0, simai_compute_us = 0.0, simai_exposed_us = 0.0;
  std::string model;  // acesim model file compared with, or empty
  int tp = 1, pp = 1, global_batch = 0;
  LlmReport ideal, sm;
  std::vector<SimaiCensusRow> census;
  double seconds = 0.0;  // wall time of the sm run (not in report.md: it varies)
};

struct SimaiStudy {
  std::string source;
  std::vector<SimaiCase> cases;
};

// Reads data_dir/simai (simai_analytical.csv and the files it names).
// Throws InputError naming the file and line.
SimaiStudy run_simai(const std::string& data_dir);
// The markdown tables (docs/validation.md, section 5 holds them).
std::string simai_tables(const SimaiStudy& study);
// Writes out_dir/report.md, results.csv and census.csv.
void write_simai(const SimaiStudy& study, const std::string& out_dir);

}  // namespace acesim
