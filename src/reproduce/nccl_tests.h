// `acesim reproduce nccl-tests`: acesim's presets against published
// nccl-tests measurements (docs/validation.md, section 2). Each table is a
// file of DATA/nccl-tests/ (its source, GPUs, NCCL version and health in
// its `#` header); DATA/nccl-tests/index.csv says which preset, node count,
// collective and forced algorithm stand for it. Nothing is fitted: the
// presets' numbers come from datasheets (presets/*.yaml).
#pragma once

#include <string>
#include <vector>

namespace acesim {

struct NcclTestsRow {
  double bytes = 0.0;
  double measured_busbw_GBps = 0.0;  // from the table: its busbw, or from its time when it gives one
  double acesim_busbw_GBps = 0.0;
  std::string algorithm, protocol;   // what acesim ran (empty: the platform's own plans)
  // acesim / measured bus bandwidth - 1: positive when acesim is faster.
  double error() const { return acesim_busbw_GBps / measured_busbw_GBps - 1.0; }
};

struct NcclTestsTable {
  std::string file, title, platform, op, algo;
  long long nodes = 1;
  std::string source;  // the file's `# source:` line
  std::vector<NcclTestsRow> rows;
  // exp(mean |ln(acesim / measured)|) - 1: the typical factor off, either
  // way, over the rows of at least `min_bytes` (all by default); 0 when
  // there are none.
  double geomean_error(double min_bytes = 0.0) const;
  int rows_from(double min_bytes) const;
};

// Throws InputError naming the file that is missing or malformed.
std::vector<NcclTestsTable> run_nccl_tests(const std::string& data_dir);

// The summary and one table per published table, in Markdown.
std::string nccl_tests_tables(const std::vector<NcclTestsTable>& tables);

// Writes results.csv and report.md into out_dir (created if needed).
void write_nccl_tests(const std::vector<NcclTestsTable>& tables, const std::string& out_dir);

}  // namespace acesim
