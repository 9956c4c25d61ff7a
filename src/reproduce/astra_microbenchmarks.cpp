#include "reproduce/astra_microbenchmarks.h"

#include <algorithm>
#include <cmath>
#include <fstream>

#include <fmt/format.h>

#include "chakra/chakra_trace.h"
#include "config/input_error.h"
#include "config/platform.h"
#include "driver/chakra_run.h"
#include "config/csv.h"
#include "config/data_table.h"

namespace acesim {
namespace {

struct CsvRow {
  std::string op, network, system;
  int npus = 0;
  double aware_ns = 0.0, unaware_ns = 0.0;
};

std::vector<CsvRow> read_results(const std::string& path) {
  // op,npus,network,system,congestion_aware_ns,congestion_unaware_ns
  const DataTable table = read_data_table(path, " (give --data DIR, the repository's tests/data)");
  std::vector<CsvRow> rows;
  for (const DataTable::Row& row : table.rows) {
    const std::vector<std::string>& f = row.fields;
    const std::string where = fmt::format("{}:{}", path, row.line);
    if (f.size() != 6) throw InputError(fmt::format("{}: expected 6 fields, got {}", where, f.size()));
    CsvRow r;
    r.op = f[0];
    r.network = f[2];
    r.system = f[3];
    r.npus = static_cast<int>(data_number(f[1], where));
    r.aware_ns = data_number(f[4], where);
    r.unaware_ns = data_number(f[5], where);
    if (r.npus < 2 || !(r.aware_ns > 0.0) || !(r.unaware_ns > 0.0)) {
      throw InputError(where + ": NPUs must be >= 2 and times > 0");
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

// What the differences add to acesim's figure on a one-dimension platform,
// following ASTRA-sim's own algorithms: each chunk of `chunk` bytes per rank
// takes `steps` steps of `message` bytes; chunks run `active` at a time, in
// `rounds` rounds.
struct Closed {
  double memory_ns = 0.0;      // kReductionMemory
  double all_to_all_ns = 0.0;  // kAllToAllSteps: the latencies of the extra steps
  // kStoreAndForward and kFifoLinks, congestion-aware only. A step of one
  // round takes, in ASTRA-sim, the longer of the link's busy time (active x
  // t, messages one after another) and one message's own trip (t per
  // store-and-forward hop plus latency and endpoint delay); in acesim's fluid
  // backend the active messages share the link fairly and then all wait the
  // latency: active x t + overhead.
  double links_ns = 0.0;
};

Closed closed_forms(const CsvRow& row, const PlatformConfig& p, double comm_size, std::vector<AstraDifference>& common,
                    bool& switch_dim) {
  const DimensionSpec& d = p.dims.at(0);
  const double n = d.npus;
  const double active = p.collectives.active_chunks_per_dim;
  const double chunk = comm_size / p.collectives.chunks;
  const double rounds = std::ceil(static_cast<double>(p.collectives.chunks) / active);
  switch_dim = d.kind == DimKind::kSwitch;
  const double hops = switch_dim ? 2.0 : 1.0;
  const double overhead_ns = hops * d.latency_ns + static_cast<double>(p.collectives.endpoint_delay_ps) / 1000.0;
  double steps = n - 1, message = chunk / n;
  Closed c;
  if (row.op == "all_reduce") steps = 2 * (n - 1);
  if (row.op == "all_gather") message = chunk;
  if ((row.op == "all_reduce" || row.op == "reduce_scatter") && p.local_mem_bw_GBps) {
    common.push_back(AstraDifference::kReductionMemory);
    c.memory_ns = rounds * (n - 1) * 3.0 * (chunk / n) / *p.local_mem_bw_GBps;
  }
  if (row.op == "all_to_all" && p.collectives.op(CollectiveOp::kAllToAll).per_dim.at(0) == algorithm("ring")) {
    common.push_back(AstraDifference::kAllToAllSteps);
    const double astra_steps = n * (n - 1) / 2;
    c.all_to_all_ns = rounds * (astra_steps - steps) * overhead_ns;
    steps = astra_steps;
  }
  const double t = message / d.bandwidth_GBps;  // ns: 1 GB/s is 1 byte/ns
  c.links_ns = rounds * steps * (std::max(active * t, hops * t + overhead_ns) - (active * t + overhead_ns));
  return c;
}

AstraMicrobenchmark run_row(const CsvRow& row, const std::string& data_dir) {
  const std::string base = data_dir + "/astra-sim-2.0/";
  PlatformConfig p =
      load_astra_platform(base + "network/" + row.network + ".yml", base + "system/" + row.system + ".json");
  if (p.dims.size() != 1) throw InputError(base + "network/" + row.network + ".yml: the study needs one dimension");
  const std::string prefix = fmt::format("{}/chakra-et/{}_{}npus_1MB/{}", data_dir, row.op, row.npus, row.op);
  const std::vector<chakra::Trace> traces = chakra::read_traces(prefix, row.npus);
  check_chakra_traces(traces, p.dims[0].npus);
  double comm_size = 0.0;
  for (const chakra::Node& n : traces[0].nodes) {
    if (n.comm_size) comm_size = static_cast<double>(*n.comm_size);
  }
  AstraMicrobenchmark m;
  m.op = row.op;
  m.npus = row.npus;
  m.network = row.network;
  m.system = row.system;
  std::vector<AstraDifference> common;
  bool switch_dim = false;
  const Closed c = closed_forms(row, p, comm_size, common, switch_dim);
  p.network.backend = "analytical";
  m.unaware.astra_ns = row.unaware_ns;
  m.unaware.acesim_ns = static_cast<double>(run_chakra(p, traces, prefix).total_ps) / 1000.0;
  m.unaware.differences = common;
  m.unaware.adjusted_ns = m.unaware.acesim_ns + c.memory_ns + c.all_to_all_ns;
  p.network.backend = "fluid";
  m.aware.astra_ns = row.aware_ns;
  m.aware.acesim_ns = static_cast<double>(run_chakra(p, traces, prefix).total_ps) / 1000.0;
  m.aware.differences = common;
  if (switch_dim) m.aware.differences.push_back(AstraDifference::kStoreAndForward);
  if (p.collectives.active_chunks_per_dim > 1) m.aware.differences.push_back(AstraDifference::kFifoLinks);
  m.aware.adjusted_ns = m.aware.acesim_ns + c.memory_ns + c.all_to_all_ns + c.links_ns;
  return m;
}

std::string codes(const std::vector<AstraDifference>& ds) {
  std::string s;
  for (AstraDifference d : ds) s += difference_code(d);
  return s;
}

std::string percent(double x) { return fmt::format("{:+.1f}%", 100.0 * x); }

void table(std::string& out, const std::vector<AstraMicrobenchmark>& rows, bool aware) {
  out += aware ? "| op | NPUs | network | system | ASTRA-sim congestion-aware (µs) | acesim fluid (µs) | error | "
                 "differences | acesim with ASTRA-sim's choices (µs) | error |\n"
               : "| op | NPUs | network | system | ASTRA-sim congestion-unaware (µs) | acesim analytical (µs) | error | "
                 "differences | acesim with ASTRA-sim's choices (µs) | error |\n";
  out += "|---|---:|---|---|---:|---:|---:|---|---:|---:|\n";
  for (const AstraMicrobenchmark& m : rows) {
    const AstraComparison& c = aware ? m.aware : m.unaware;
    std::string adjusted = "—", adjusted_error = "—";
    if (c.adjusted_ns && !c.differences.empty()) {
      adjusted = fmt::format("{:.3f}", *c.adjusted_ns / 1000.0);
      adjusted_error = percent((*c.adjusted_ns - c.astra_ns) / c.astra_ns);
    }
    out += fmt::format("| {} | {} | {} | {} | {:.3f} | {:.3f} | {} | {} | {} | {} |\n", m.op, m.npus, m.network,
                       m.system, c.astra_ns / 1000.0, c.acesim_ns / 1000.0, percent(c.error()), codes(c.differences),
                       adjusted, adjusted_error);
  }
}

}  // namespace

char difference_code(AstraDifference d) {
  switch (d) {
    case AstraDifference::kReductionMemory: return 'M';
    case AstraDifference::kAllToAllSteps: return 'A';
    case AstraDifference::kStoreAndForward: return 'S';
    case AstraDifference::kFifoLinks: return 'F';
  }
  return '?';
}

std::vector<AstraMicrobenchmark> run_astra_microbenchmarks(const std::string& data_dir) {
  std::vector<AstraMicrobenchmark> out;
  for (const CsvRow& row : read_results(data_dir + "/astra-sim-2.0/results/microbenchmarks.csv")) {
    out.push_back(run_row(row, data_dir));
  }
  return out;
}

std::string astra_microbenchmark_tables(const std::vector<AstraMicrobenchmark>& rows) {
  std::string out = "Congestion-unaware: ASTRA-sim's analytical backend against acesim's `analytical`.\n\n";
  table(out, rows, false);
  out += "\nCongestion-aware: ASTRA-sim's congestion-aware analytical backend against acesim's `fluid`.\n\n";
  table(out, rows, true);
  return out;
}

void write_astra_microbenchmarks(const std::vector<AstraMicrobenchmark>& rows, const std::string& out_dir) {
  const auto open = [&](const std::string& name) { return open_study_file(out_dir, name); };
  OutputFile csv = open("results.csv");
  csv << "op,npus,network,system,astra_aware_ns,acesim_fluid_ns,fluid_error,fluid_differences,fluid_adjusted_ns,"
         "astra_unaware_ns,acesim_analytical_ns,analytical_error,analytical_differences,analytical_adjusted_ns\n";
  const auto adjusted = [](const AstraComparison& c) {
    return c.adjusted_ns ? fmt::format("{:.3f}", *c.adjusted_ns) : std::string();
  };
  for (const AstraMicrobenchmark& m : rows) {
    csv << fmt::format("{},{},{},{},{:.3f},{:.3f},{:.5f},{},{},{:.3f},{:.3f},{:.5f},{},{}\n", m.op, m.npus, csv_field(m.network),
                       csv_field(m.system), m.aware.astra_ns, m.aware.acesim_ns, m.aware.error(), codes(m.aware.differences),
                       adjusted(m.aware), m.unaware.astra_ns, m.unaware.acesim_ns, m.unaware.error(),
                       codes(m.unaware.differences), adjusted(m.unaware));
  }
  OutputFile md = open("report.md");
  md << "# acesim against ASTRA-sim 2.0 on its example microbenchmarks\n\n"
     << "Differences: M reduction memory, A all-to-all steps, S store-and-forward at the switch, "
        "F FIFO links with several chunks active (docs/validation.md explains each).\n\n"
     << astra_microbenchmark_tables(rows);
  csv.close();
  md.close();
}

}  // namespace acesim
