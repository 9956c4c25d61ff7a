// SimAI / AICB workload files against SimAI-Analytical and acesim's own
// LLM model (simai.h).
#include "reproduce/simai.h"

#include <chrono>
#include <fstream>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "config/input_error.h"
#include "config/presets.h"
#include "config/csv.h"
#include "config/data_table.h"
#include "workload/llm/simai_job.h"

namespace acesim {
namespace {

constexpr const char* kPreset = "hgx-h100";
constexpr long long kGpusPerNode = 8;
// SimAI-Analytical's flags for the recorded figures, -nv 360 -nic 48.5, in
// its unit: GBps is 2^30 bytes/s (astra-sim/system/Common.hh); acesim's
// GB/s are 10^9 bytes/s.
constexpr double kGiB = 1073741824.0 / 1e9;
constexpr double kNvlinkGBps = 360.0 * kGiB;
constexpr double kNicGBps = 48.5 * kGiB;

double ms(TimePs t) { return static_cast<double>(t) / 1e9; }

PlatformConfig simai_platform(long long gpus, const std::string& where) {
  PlatformConfig platform = load_preset(*preset_registry().find(kPreset));
  if (gpus % kGpusPerNode != 0) throw InputError(fmt::format("{}: gpus {} is not a multiple of {}", where, gpus, kGpusPerNode));
  set_nodes(platform, gpus / kGpusPerNode, where + ": gpus");
  platform.dims.at(0).bandwidth_GBps = kNvlinkGBps;
  platform.dims.at(1).bandwidth_GBps = kNicGBps;
  return platform;
}

std::string pass_name(const LlmNodeTag& t) {
  if (t.micro_batch < 0 || t.pass == LlmPass::kOptimizer) return "step";
  return t.pass == LlmPass::kForward ? "forward" : "backward";
}

using CensusKey = std::tuple<std::string, std::string, std::string, double>;

// One rank's first iteration: its collectives and the messages it sends.
void count(const LlmRankGraph& g, std::map<CensusKey, std::pair<long long, long long>>& out, bool file) {
  for (std::uint32_t n = 0; n < g.graph.size(); ++n) {
    const LlmNodeTag& t = g.tags[n];
    if (t.iteration != 0) continue;
    const GraphNode& node = g.graph.node(n);
    std::string op;
    double bytes = 0.0;
    if (node.kind == WorkNodeKind::kCollective) {
      op = std::string(to_string(g.graph.collective(node.payload).op));
      bytes = g.graph.collective(node.payload).bytes;
    } else if (node.kind == WorkNodeKind::kSend) {
      op = "send";
      bytes = g.graph.message(node.payload).bytes;
    } else {
      continue;
    }
    auto& c = out[{std::string(to_string(t.comm)), pass_name(t), op, bytes}];
    (file ? c.first : c.second) += 1;
  }
}

std::vector<SimaiCensusRow> census(const SimaiJob& file_job, const LlmJob* model_job) {
  std::map<CensusKey, std::pair<long long, long long>> counts;
  count(file_job.build(0, false), counts, true);
  if (model_job != nullptr) count(model_job->build(0, false), counts, false);
  std::vector<SimaiCensusRow> rows;
  for (const auto& [k, c] : counts) rows.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k), std::get<3>(k), c.first, c.second});
  return rows;
}

void simulate(SimaiCase& c, const std::string& dir, const std::string& where) {
  const PlatformConfig platform = simai_platform(c.gpus, where);
  const Topology topo(platform.dims);
  const SimaiJob job(read_simai_workload(dir + "/" + c.file), topo);
  PlatformConfig ideal = platform;
  ideal.npu.executor = "ideal";
  c.ideal = run_llm(ideal, job);
  PlatformConfig sm = platform;
  sm.npu.executor = "sm";
  const auto t0 = std::chrono::steady_clock::now();
  c.sm = run_llm(sm, job);
  c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (c.model.empty()) {
    c.census = census(job, nullptr);
    return;
  }
  // The same job from acesim's model: Megatron-LM's distributed optimizer
  // (ZeRO 1: fp32 gradients reduce-scattered, bf16 parameters gathered),
  // micro-batch 1, no sequence parallelism, as AICB generated the file.
  ParallelPlan p;
  p.tp = c.tp;
  p.pp = c.pp;
  p.dp = static_cast<int>(c.gpus / (static_cast<long long>(c.tp) * c.pp));
  p.zero = 1;
  p.micro_batch = 1;
  p.global_batch = c.global_batch;
  LlmOptions lo;
  lo.iterations = 2;
  const LlmJob model(read_transformer_file(dir + "/" + c.model), p, topo, lo);
  if (model.plan().micro_batches() != job.workload().ga) {
    throw InputError(fmt::format("{}: the plan gives {} micro-batches per replica, the file ga {}", where,
                                 model.plan().micro_batches(), job.workload().ga));
  }
  c.census = census(job, &model);
}

TimePs exposed(const LlmReport& r) { return r.stage_iteration_ps - r.compute_ps - r.pipeline_bubble_ps; }
std::string pct(double a, double b) { return b > 0.0 ? fmt::format("{:+.1f}%", 100.0 * (a / b - 1.0)) : "-"; }

}  // namespace

SimaiStudy run_simai(const std::string& data_dir) {
  const std::string dir = data_dir + "/simai";
  const std::string path = dir + "/simai_analytical.csv";
  const DataTable table = read_data_table(path, " (give --data DIR, the repository's tests/data)");
  SimaiStudy study;
  for (const std::string& c : table.comments) {
    if (c.rfind("# source:", 0) == 0) study.source = c.substr(10);
  }
  for (const DataTable::Row& row : table.rows) {
    const std::string where = fmt::format("{}:{}", path, row.line);
    const std::vector<std::string>& f = row.fields;
    if (f.size() != 9) throw InputError(where + ": expected 9 fields (file,gpus,total_us,compute_us,exposed_comm_us,model,tp,pp,global_batch)");
    SimaiCase c;
    c.file = f[0];
    c.gpus = static_cast<long long>(data_number(f[1], where));
    c.simai_total_us = data_number(f[2], where);
    c.simai_compute_us = data_number(f[3], where);
    c.simai_exposed_us = data_number(f[4], where);
    if (f[5] != "none") c.model = f[5];
    c.tp = static_cast<int>(data_number(f[6], where));
    c.pp = static_cast<int>(data_number(f[7], where));
    c.global_batch = static_cast<int>(data_number(f[8], where));
    if (c.gpus < 1 || c.tp < 1 || c.pp < 1 || (!c.model.empty() && c.global_batch < 1)) {
      throw InputError(where + ": gpus, tp, pp (and global_batch with a model) must be positive");
    }
    simulate(c, dir, where);
    study.cases.push_back(std::move(c));
  }
  return study;
}

std::string simai_tables(const SimaiStudy& study) {
  std::string out =
      "| file | GPUs | plan | SimAI-Analytical iteration / compute / exposed (ms) | acesim ideal iteration / compute / "
      "bubble / exposed (ms) | ideal vs SimAI | acesim sm iteration (ms) | sm vs ideal |\n"
      "|---|---:|---|---:|---:|---:|---:|---:|\n";
  for (const SimaiCase& c : study.cases) {
    out += fmt::format("| `{}` | {} | {} | {:.1f} / {:.1f} / {:.1f} | {:.1f} / {:.1f} / {:.1f} / {:.1f} | {} | {:.1f} | {} |\n",
                       c.file, c.gpus, c.ideal.plan, c.simai_total_us / 1e3, c.simai_compute_us / 1e3,
                       c.simai_exposed_us / 1e3, ms(c.ideal.iteration_ps), ms(c.ideal.compute_ps),
                       ms(c.ideal.pipeline_bubble_ps), ms(exposed(c.ideal)),
                       pct(ms(c.ideal.iteration_ps), c.simai_total_us / 1e3), ms(c.sm.iteration_ps),
                       pct(ms(c.sm.iteration_ps), ms(c.ideal.iteration_ps)));
  }
  for (const SimaiCase& c : study.cases) {
    if (c.model.empty()) continue;
    out += fmt::format("\nOne rank's collectives per iteration (rank 0), `{}` against acesim's model `{}` with the same plan:\n\n",
                       c.file, c.model);
    out += "| group | pass | operation | bytes | in the file | in acesim's model |\n|---|---|---|---:|---:|---:|\n";
    for (const SimaiCensusRow& r : c.census) {
      out += fmt::format("| {} | {} | {} | {:.0f} | {} | {} |{}\n", r.group, r.pass, r.op, r.bytes, r.in_file, r.in_model,
                         r.in_file == r.in_model ? "" : " ≠");
    }
  }
  return out;
}

void write_simai(const SimaiStudy& study, const std::string& out_dir) {
  const auto open = [&](const std::string& name) { return open_study_file(out_dir, name); };
  OutputFile csv = open("results.csv");
  csv << "file,gpus,simai_total_us,simai_compute_us,simai_exposed_us,ideal_iteration_ns,ideal_compute_ns,"
         "ideal_bubble_ns,ideal_exposed_ns,sm_iteration_ns,sm_compute_ns,sm_bubble_ns,sm_exposed_ns\n";
  const auto ns = [](TimePs t) { return fmt::format("{:.3f}", static_cast<double>(t) / 1e3); };
  for (const SimaiCase& c : study.cases) {
    csv << fmt::format("{},{},{:g},{:g},{:g},{},{},{},{},{},{},{},{}\n", csv_field(c.file), c.gpus, c.simai_total_us, c.simai_compute_us,
                       c.simai_exposed_us, ns(c.ideal.iteration_ps), ns(c.ideal.compute_ps), ns(c.ideal.pipeline_bubble_ps),
                       ns(exposed(c.ideal)), ns(c.sm.iteration_ps), ns(c.sm.compute_ps), ns(c.sm.pipeline_bubble_ps),
                       ns(exposed(c.sm)));
  }
  OutputFile cen = open("census.csv");
  cen << "file,group,pass,operation,bytes,in_file,in_model\n";
  for (const SimaiCase& c : study.cases) {
    for (const SimaiCensusRow& r : c.census) {
      cen << fmt::format("{},{},{},{},{:.0f},{},{}\n", csv_field(c.file), r.group, r.pass, r.op, r.bytes, r.in_file,
                         c.model.empty() ? std::string() : std::to_string(r.in_model));
    }
  }
  OutputFile md = open("report.md");
  md << "# SimAI / AICB workload files in acesim\n\nSimAI-Analytical's figures: " << study.source
     << fmt::format("\n\nacesim: hgx-h100 nodes with NVLink {:.1f} GB/s and NICs {:.2f} GB/s (SimAI's 360 and 48.5 GiB/s), "
                    "1F1B, 2 iterations.\n\n",
                    kNvlinkGBps, kNicGBps)
     << simai_tables(study);
  csv.close();
  cen.close();
  md.close();
}

}  // namespace acesim
