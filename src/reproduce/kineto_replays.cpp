// `acesim reproduce kineto` (kineto_replays.h).
#include "reproduce/kineto_replays.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "config/csv.h"
#include "config/data_table.h"
#include "config/input_error.h"
#include "config/presets.h"

namespace acesim {
namespace {

constexpr long long kGpusPerNode = 8;
// One row per trace on the preset of the GPUs it ran on, and HTA's two
// sampled ranks together (each its own).
struct CaseSpec {
  std::vector<std::string> files;
  const char* preset;
};
const std::vector<CaseSpec> kCases = {{{"a100x2_nccl2.17_allreduce.rank0.json.gz"}, "hgx-a100"},
                                      {{"ws128_sampled.rank0.json.gz"}, "hgx-a100"},
                                      {{"ws128_sampled.rank1.json.gz"}, "hgx-a100"},
                                      {{"ws128_sampled.rank0.json.gz", "ws128_sampled.rank1.json.gz"}, "hgx-a100"},
                                      {{"alexnet_1gpu.json.gz"}, "hgx-a100"},
                                      {{"h200_gpt4l_1gpu.json.gz"}, "hgx-h200"}};

double ms(TimePs t) { return static_cast<double>(t) / 1e9; }
std::string pct(double e) { return fmt::format("{:+.2f}%", 100.0 * e); }

}  // namespace

KinetoStudy run_kineto_study(const std::string& data_dir) {
  KinetoStudy s;
  for (const CaseSpec& spec : kCases) {
    const std::vector<std::string>& files = spec.files;
    std::vector<kineto::Trace> traces;
    for (const std::string& f : files) traces.push_back(kineto::read_trace_file(data_dir + "/kineto/" + f));
    KinetoCase c;
    c.file = files.size() == 1 ? files[0] : "ws128_sampled.rank{0,1} (each rank its own)";
    const long long ranks = std::max(1, traces[0].world_size);
    c.nodes = (ranks + kGpusPerNode - 1) / kGpusPerNode;
    c.preset = spec.preset;
    PlatformConfig p = load_preset(*preset_registry().find(c.preset));
    set_nodes(p, c.nodes, c.file + ": nodes");
    KinetoRunOptions o;
    o.simulate_comm = false;
    c.measured = run_kineto(p, traces, o);
    o.simulate_comm = true;
    c.simulated = run_kineto(p, traces, o);
    s.cases.push_back(std::move(c));
  }
  return s;
}

std::string kineto_study_tables(const KinetoStudy& study) {
  std::string out =
      "| trace | GPU | ranks | platform | step | traced (ms) | replayed, durations as traced (ms) | error | replayed, communication "
      "simulated (ms) | error |\n|---|---|---:|---|---:|---:|---:|---:|---:|---:|\n";
  for (const KinetoCase& c : study.cases) {
    for (std::size_t i = 0; i < c.measured.steps.size(); ++i) {
      const KinetoStepRecord& m = c.measured.steps[i];
      const KinetoStepRecord& sim = c.simulated.steps[i];
      out += fmt::format("| {} | {} | {} | {} x{} | {} | {:.3f} | {:.3f} | {} | {:.3f} | {} |\n", c.file,
                         c.measured.device.empty() ? "-" : c.measured.device, c.measured.job_ranks, c.preset, c.nodes, m.number,
                         ms(m.measured_ps), ms(m.replayed_ps), pct(m.error()), ms(sim.replayed_ps), pct(sim.error()));
    }
  }
  out += "\n| trace | GPU activities | within 1 us of their traced start (durations as traced) | largest gap (us) | NCCL kernels | "
         "simulated on the platform | traced NCCL time (ms) | replayed NCCL time (ms) |\n|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const KinetoCase& c : study.cases) {
    const KinetoReplay& k = c.simulated.counts;
    out += fmt::format("| {} | {} | {} | {:.3f} | {} | {} | {:.3f} | {:.3f} |\n", c.file, c.measured.activities,
                       c.measured.activities_on_time, static_cast<double>(c.measured.largest_start_gap_ps) / 1e6,
                       k.collectives_simulated + k.collectives_measured, k.collectives_simulated, ms(c.simulated.comm_measured_ps),
                       ms(c.simulated.comm_replayed_ps));
  }
  return out;
}

void write_kineto_study(const KinetoStudy& study, const std::string& out_dir) {
  OutputFile csv = open_study_file(out_dir, "results.csv");
  csv << "trace,ranks,nodes,step,traced_ns,replayed_as_traced_ns,replayed_simulated_ns,activities,activities_on_time,"
         "collectives_simulated,collectives_traced\n";
  for (const KinetoCase& c : study.cases) {
    for (std::size_t i = 0; i < c.measured.steps.size(); ++i) {
      csv << (CsvLine() << c.file << c.measured.job_ranks << c.nodes << c.measured.steps[i].number << c.measured.steps[i].measured_ps / 1000
                        << c.measured.steps[i].replayed_ps / 1000 << c.simulated.steps[i].replayed_ps / 1000 << c.measured.activities
                        << c.measured.activities_on_time << c.simulated.counts.collectives_simulated
                        << c.simulated.counts.collectives_measured)
                 .text();
    }
  }
  OutputFile md = open_study_file(out_dir, "report.md");
  md << "# PyTorch profiler traces replayed (acesim reproduce kineto)\n\n"
        "HolisticTraceAnalysis's test traces (tests/data/kineto), each replayed by every rank of its job on hgx-a100 nodes.\n\n"
     << kineto_study_tables(study);
}

}  // namespace acesim
