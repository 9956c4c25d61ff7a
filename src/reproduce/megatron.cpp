#include "reproduce/megatron.h"

#include <algorithm>
#include <fstream>

#include <fmt/format.h>

#include "compute/kernel_pricer.h"
#include "config/input_error.h"
#include "config/platform.h"
#include "config/presets.h"
#include "driver/llm_run.h"
#include "config/csv.h"
#include "config/data_table.h"
#include "topology/topology.h"
#include "workload/llm/llm_graph.h"
#include "workload/models/models.h"

namespace acesim {
namespace {

// Selene's DGX A100 nodes: the preset's 8 GPUs per node on NVSwitch, one
// 200 Gb/s HDR NIC per GPU (rails where Selene has a fat-tree: both give each
// GPU its NIC's full rate to any other node).
constexpr const char* kPreset = "hgx-a100";
constexpr int kGpusPerNode = 8;
constexpr int kVirtualStages = 2;  // Table 1 ran interleaved; the paper does not say with how many chunks

int int_field(const std::string& text, const std::string& where) {
  return static_cast<int>(data_number(text, where));
}

// Interleaved with kVirtualStages chunks where pipelining and the shape
// allow it (layers split evenly over the chunks, micro-batches a multiple
// of the stages, as Megatron-LM requires), else 1F1B.
void plan_row(MegatronRow& r, const std::string& where) {
  const long long model_parallel = static_cast<long long>(r.tp) * r.pp;
  if (r.gpus % kGpusPerNode != 0 || r.gpus % model_parallel != 0) {
    throw InputError(fmt::format("{}: {} GPUs are not whole nodes of {} split into tp {} x pp {}", where, r.gpus,
                                 kGpusPerNode, r.tp, r.pp));
  }
  r.dp = static_cast<int>(r.gpus / model_parallel);
  const bool interleave = r.pp > 1 && r.layers % (r.pp * kVirtualStages) == 0 && r.batch % r.dp == 0 &&
                          (r.batch / r.dp) % r.pp == 0;
  r.schedule = interleave ? "interleaved" : "1f1b";
  r.virtual_stages = interleave ? kVirtualStages : 1;
}

MegatronRow read_row(const std::vector<std::string>& f, const std::string& where) {
  MegatronRow r;
  r.model = f[0];
  r.params_billion = data_number(f[1], where);
  r.heads = int_field(f[2], where);
  r.hidden = int_field(f[3], where);
  r.layers = int_field(f[4], where);
  r.tp = int_field(f[5], where);
  r.pp = int_field(f[6], where);
  r.gpus = static_cast<long long>(data_number(f[7], where));
  r.batch = int_field(f[8], where);
  r.measured_tflops = data_number(f[9], where);
  r.model_file = f[10];
  if (f[11] != "yes" && f[11] != "no") throw InputError(where + ": simulate must be yes or no, got '" + f[11] + "'");
  r.simulated = f[11] == "yes";
  if (r.tp < 1 || r.pp < 1 || r.gpus < 1 || r.batch < 1 || r.measured_tflops <= 0.0) {
    throw InputError(where + ": tp, pp, gpus, batch and tflops_per_gpu must be positive");
  }
  plan_row(r, where);
  return r;
}

TransformerShape row_shape(const MegatronRow& r, const std::string& path) {
  TransformerShape s = read_transformer_file(path);
  if (s.layers != r.layers || s.hidden != r.hidden || s.heads != r.heads) {
    throw InputError(fmt::format("{}: layers {}, hidden {}, heads {} are not its table row's ({}, {}, {})", path,
                                 s.layers, s.hidden, s.heads, r.layers, r.hidden, r.heads));
  }
  return s;
}

ParallelPlan row_plan(const MegatronRow& r) {
  ParallelPlan p;
  p.tp = r.tp;
  p.pp = r.pp;
  p.dp = r.dp;
  p.micro_batch = 1;
  p.global_batch = r.batch;
  p.schedule = r.schedule == "interleaved" ? PipeSchedule::kInterleaved : PipeSchedule::k1F1B;
  p.virtual_stages = r.virtual_stages;
  p.recompute = Recompute::kFull;
  p.attention = AttentionKernel::kUnfused;
  return p;  // gradient reduction after the backward: Megatron-LM's default
}

void simulate_row(MegatronRow& r, const std::string& models_dir) {
  PlatformConfig platform = load_preset(*preset_registry().find(kPreset));
  set_nodes(platform, r.gpus / kGpusPerNode, r.model + ": nodes");
  const Topology topo(platform.dims);
  LlmOptions options;
  options.bytes_per_element = 2;  // bf16
  options.iterations = 2;
  options.pricer = make_kernel_pricer(platform.npu);  // kernels priced by shape (docs/compute.md)
  const LlmJob job(row_shape(r, models_dir + "/" + r.model_file), row_plan(r), topo, options);
  const LlmReport rep = run_llm(platform, job);
  r.acesim_tflops = rep.tflops_per_gpu;
  r.iteration_ps = rep.iteration_ps;
  r.exposed_tp_ps = rep.exposed_ps[static_cast<int>(LlmComm::kTp)];
  r.exposed_dp_ps = rep.exposed_ps[static_cast<int>(LlmComm::kDp)];
  r.exposed_pp_ps = rep.exposed_ps[static_cast<int>(LlmComm::kPp)];
  r.bubble_ps = rep.pipeline_bubble_ps;
  r.memory_bytes = rep.memory ? rep.memory->total_bytes() : 0.0;
}

std::string ms(TimePs t) { return fmt::format("{:.1f}", static_cast<double>(t) / 1e9); }

std::string plan_text(const MegatronRow& r) {
  if (r.pp == 1) return "no pipeline";
  return r.schedule == "interleaved" ? fmt::format("interleaved, v {}", r.virtual_stages) : r.schedule;
}

// Whether two changes go the same way, a change under 1% counting as flat.
std::string direction(double change) {
  if (change > 0.01) return "up";
  if (change < -0.01) return "down";
  return "flat";
}

std::string trend_text(const std::vector<const MegatronRow*>& run) {
  if (run.size() < 2) return "";
  std::string out =
      "\n| from | to | measured change | acesim change | same direction |\n|---|---|---:|---:|---|\n";
  int same = 0;
  for (std::size_t i = 1; i < run.size(); ++i) {
    const double m = run[i]->measured_tflops / run[i - 1]->measured_tflops - 1.0;
    const double a = run[i]->acesim_tflops / run[i - 1]->acesim_tflops - 1.0;
    const bool agree = direction(m) == direction(a);
    same += agree ? 1 : 0;
    out += fmt::format("| {} | {} | {:+.1f}% | {:+.1f}% | {} |\n", run[i - 1]->model, run[i]->model, 100.0 * m,
                       100.0 * a, agree ? "yes" : "no");
  }
  const auto spread = [&](auto value) {
    const auto [lo, hi] = std::minmax_element(run.begin(), run.end(),
                                              [&](const MegatronRow* x, const MegatronRow* y) { return value(x) < value(y); });
    return fmt::format("{:.0f}-{:.0f} TFLOP/s ({:.1f}% apart)", value(*lo), value(*hi), 100.0 * (value(*hi) / value(*lo) - 1.0));
  };
  out += fmt::format("\nPer-GPU throughput over the simulated rows: measured {}, acesim {}; {} of {} steps go the same "
                     "way (a change under 1% counts as flat).\n",
                     spread([](const MegatronRow* r) { return r->measured_tflops; }),
                     spread([](const MegatronRow* r) { return r->acesim_tflops; }), same, run.size() - 1);
  return out;
}

}  // namespace

std::string megatron_settings() {
  return fmt::format("--platform {} --nodes GPUs/{} --tp t --pp p --dp GPUs/(t p) --global-batch B --micro-batch 1 "
                     "--recompute full --attention unfused --schedule interleaved --virtual-stages {} (1f1b where p = 1 "
                     "or the layers or micro-batches do not split) --iterations 2 --precision bf16",
                     kPreset, kGpusPerNode, kVirtualStages);
}

MegatronStudy run_megatron(const std::string& data_dir) {
  const std::string dir = data_dir + "/megatron";
  const std::string path = dir + "/table1.csv";
  const DataTable table = read_data_table(path, " (give --data DIR, the repository's tests/data)");
  MegatronStudy study;
  for (const std::string& c : table.comments) {
    if (c.rfind("# source:", 0) == 0) study.source = c.substr(10);
  }
  for (const DataTable::Row& row : table.rows) {
    const std::string where = fmt::format("{}:{}", path, row.line);
    if (row.fields.size() != 12) {
      throw InputError(where + ": expected 12 fields (model,params_billion,heads,hidden,layers,tp,pp,gpus,batch,"
                               "tflops_per_gpu,model_file,simulate)");
    }
    MegatronRow r = read_row(row.fields, where);
    if (r.simulated) simulate_row(r, dir + "/models");
    study.rows.push_back(r);
  }
  return study;
}

std::string megatron_tables(const MegatronStudy& study) {
  std::string out =
      "| model | GPUs | t | p | d | batch | schedule | measured TFLOP/s | acesim TFLOP/s | error | exposed tp (ms) | "
      "exposed dp (ms) | exposed pp (ms) | bubble (ms) | iteration (s) | memory per GPU (GB) |\n"
      "|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  std::vector<const MegatronRow*> run;
  for (const MegatronRow& r : study.rows) {
    const std::string head = fmt::format("| {} | {} | {} | {} | {} | {} | {} | {:.0f} | ", r.model, r.gpus, r.tp, r.pp,
                                         r.dp, r.batch, plan_text(r), r.measured_tflops);
    if (!r.simulated) {
      out += head + "pending: needs per-stage symmetry (issue 16, item 8) | | | | | | | |\n";
      continue;
    }
    run.push_back(&r);
    out += head + fmt::format("{:.1f} | {:+.1f}% | {} | {} | {} | {} | {:.3f} | {:.1f} |\n", r.acesim_tflops,
                              100.0 * r.error(), ms(r.exposed_tp_ps), ms(r.exposed_dp_ps), ms(r.exposed_pp_ps),
                              ms(r.bubble_ps), static_cast<double>(r.iteration_ps) / 1e12, r.memory_bytes / 1e9);
  }
  return out + trend_text(run);
}

void write_megatron(const MegatronStudy& study, const std::string& out_dir) {
  OutputFile csv = open_study_file(out_dir, "results.csv");
  csv << "model,gpus,tp,pp,dp,batch,schedule,virtual_stages,measured_tflops_per_gpu,simulated,acesim_tflops_per_gpu,"
         "error,iteration_time_ns,exposed_tp_ns,exposed_dp_ns,exposed_pp_ns,pipeline_bubble_ns,memory_per_gpu_bytes\n";
  for (const MegatronRow& r : study.rows) {
    csv << fmt::format("{},{},{},{},{},{},{},{},{:g},{},", csv_field(r.model), r.gpus, r.tp, r.pp, r.dp, r.batch, r.schedule,
                       r.virtual_stages, r.measured_tflops, r.simulated ? "yes" : "no");
    if (!r.simulated) {
      csv << ",,,,,,,\n";
      continue;
    }
    const auto ns = [](TimePs t) { return fmt::format("{:.3f}", static_cast<double>(t) / 1e3); };
    csv << fmt::format("{:.4f},{:.5f},{},{},{},{},{},{:.0f}\n", r.acesim_tflops, r.error(), ns(r.iteration_ps),
                       ns(r.exposed_tp_ps), ns(r.exposed_dp_ps), ns(r.exposed_pp_ps), ns(r.bubble_ps), r.memory_bytes);
  }
  OutputFile md = open_study_file(out_dir, "report.md");
  md << "# acesim against Megatron-LM on DGX A100 (arXiv 2104.04473, Table 1)\n\n"
     << "Source: " << study.source << "\n\nSettings, every row: `" << megatron_settings() << "`\n\n"
     << megatron_tables(study);
  csv.close();
  md.close();
}

}  // namespace acesim
