// LLM training against NeMo / Megatron-Core on DGX H100 (megatron_h100.h).
#include "reproduce/megatron_h100.h"

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

constexpr const char* kPreset = "hgx-h100";
constexpr int kGpusPerNode = 8;

const TransformerShape& builtin(const std::string& name, const std::string& where) {
  if (const TransformerShape* s = find_transformer_shape(name)) return *s;
  throw InputError(where + ": '" + name + "' is not a built-in transformer");
}

int positive(const std::string& text, const std::string& where, const char* what) {
  const double v = data_number(text, where);
  if (v < 1 || v != static_cast<double>(static_cast<int>(v))) throw InputError(fmt::format("{}: {} must be a positive integer, got '{}'", where, what, text));
  return static_cast<int>(v);
}

H100Row read_row(const std::vector<std::string>& f, const std::string& where) {
  H100Row r;
  r.model = f[0];
  r.gpus = positive(f[1], where, "gpus");
  r.tp = positive(f[2], where, "tp");
  r.pp = positive(f[3], where, "pp");
  r.cp = positive(f[4], where, "cp");
  r.vp = positive(f[5], where, "vp");
  r.global_batch = positive(f[6], where, "global_batch");
  if (f[7] != "yes" && f[7] != "no") throw InputError(where + ": sequence_parallel must be yes or no, got '" + f[7] + "'");
  r.sequence_parallel = f[7] == "yes";
  if (f[8] != "yes" && f[8] != "no") throw InputError(where + ": tp_comm_overlap must be yes or no, got '" + f[8] + "'");
  r.tp_comm_overlap = f[8] == "yes";
  r.step_s = data_number(f[9], where);
  if (!(r.step_s > 0.0)) throw InputError(where + ": step_s must be positive");
  r.row = f[10];
  const long long mp = static_cast<long long>(r.tp) * r.pp * r.cp;
  if (r.gpus % kGpusPerNode != 0 || r.gpus % mp != 0) {
    throw InputError(fmt::format("{}: {} GPUs are not whole nodes of {} split into tp {} x pp {} x cp {}", where, r.gpus,
                                 kGpusPerNode, r.tp, r.pp, r.cp));
  }
  r.dp = static_cast<int>(r.gpus / mp);
  return r;
}

ParallelPlan plan_of(const H100Row& r) {
  ParallelPlan p;
  p.tp = r.tp;
  p.pp = r.pp;
  p.cp = r.cp;
  p.dp = r.dp;
  p.sequence_parallel = r.sequence_parallel;
  p.zero = 1;  // the distributed optimizer
  p.micro_batch = 1;
  p.global_batch = r.global_batch;
  p.schedule = r.vp > 1 ? PipeSchedule::kInterleaved : PipeSchedule::k1F1B;
  p.virtual_stages = r.vp;
  p.recompute = Recompute::kNone;
  // Transformer Engine runs cuDNN's fused attention on Hopper (it drops
  // FlashAttention "to give FusedAttention preference on Hopper+").
  p.attention = AttentionKernel::kCudnn;
  p.overlap_grad_reduce = true;
  p.overlap_param_gather = true;
  p.tp_comm_overlap = r.tp_comm_overlap;
  return p;
}

void simulate(H100Row& r, const std::string& where) {
  PlatformConfig platform = load_preset(*preset_registry().find(kPreset));
  set_nodes(platform, r.gpus / kGpusPerNode, where + ": nodes");
  const Topology topo(platform.dims);
  LlmOptions options;
  options.bytes_per_element = 2;  // bf16
  options.iterations = 2;
  options.pricer = make_kernel_pricer(platform.npu);  // kernels priced by shape (docs/compute.md)
  const LlmJob job(builtin(r.model, where), plan_of(r), topo, options);
  LlmRunOptions ro;
  ro.allow_oom = true;  // the memory is reported beside the row (acesim keeps fp32 gradients)
  const LlmReport rep = run_llm(platform, job, ro);
  r.iteration_ps = rep.iteration_ps;
  r.mfu = rep.mfu;
  r.compute_ps = rep.compute_ps;
  r.bubble_ps = rep.pipeline_bubble_ps;
  r.exposed_tp_ps = rep.exposed_ps[static_cast<int>(LlmComm::kTp)];
  r.exposed_cp_ps = rep.exposed_ps[static_cast<int>(LlmComm::kCp)];
  r.exposed_pp_ps = rep.exposed_ps[static_cast<int>(LlmComm::kPp)];
  r.exposed_dp_ps = rep.exposed_ps[static_cast<int>(LlmComm::kDp)];
  r.memory_GB = rep.memory ? rep.memory->total_bytes() / 1e9 : 0.0;
}

std::string s3(TimePs t) { return fmt::format("{:.3f}", static_cast<double>(t) / 1e12); }
std::string ms(TimePs t) { return fmt::format("{:.0f}", static_cast<double>(t) / 1e9); }

}  // namespace

std::string megatron_h100_settings() {
  return fmt::format("--platform {} --nodes GPUs/{} --model NAME --tp t --pp p --cp c --dp GPUs/(t p c) --global-batch B "
                     "--micro-batch 1 [--sequence-parallel] [--tp-comm-overlap] --schedule interleaved --virtual-stages v (1f1b where v = 1) "
                     "--zero 1 --overlap-grad-reduce --overlap-param-gather --recompute none --attention cudnn "
                     "--precision bf16 --iterations 2 --allow-oom",
                     kPreset, kGpusPerNode);
}

H100Study run_megatron_h100(const std::string& data_dir) {
  const std::string path = data_dir + "/megatron/h100.csv";
  const DataTable table = read_data_table(path, " (give --data DIR, the repository's tests/data)");
  H100Study study;
  for (const std::string& c : table.comments) {
    if (c.rfind("# source:", 0) == 0) study.source = c.substr(10);
  }
  for (const DataTable::Row& row : table.rows) {
    const std::string where = fmt::format("{}:{}", path, row.line);
    if (row.fields.size() != 11) {
      throw InputError(where + ": expected 11 fields (model,gpus,tp,pp,cp,vp,global_batch,sequence_parallel,tp_comm_overlap,step_s,row)");
    }
    H100Row r = read_row(row.fields, where);
    simulate(r, where);
    study.rows.push_back(r);
  }
  return study;
}

std::string megatron_h100_tables(const H100Study& study) {
  std::string out =
      "| model | GPUs | t | p | c | v | d | batch | measured step (s) | acesim step (s) | error | acesim MFU | compute "
      "(ms) | bubble (ms) | exposed tp (ms) | exposed cp (ms) | exposed pp (ms) | exposed dp (ms) | memory per GPU (GB) |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  double lo = 1e9, hi = -1e9;
  int within = 0;
  for (const H100Row& r : study.rows) {
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {:.2f} | {} | {:+.1f}% | {:.1f}% | {} | {} | {} | {} | {} | {} | {:.1f} |\n",
                       r.model, r.gpus, r.tp, r.pp, r.cp, r.vp, r.dp, r.global_batch, r.step_s, s3(r.iteration_ps),
                       100.0 * r.error(), 100.0 * r.mfu, ms(r.compute_ps), ms(r.bubble_ps), ms(r.exposed_tp_ps),
                       ms(r.exposed_cp_ps), ms(r.exposed_pp_ps), ms(r.exposed_dp_ps), r.memory_GB);
    lo = std::min(lo, r.error());
    hi = std::max(hi, r.error());
    within += std::abs(r.error()) <= 0.15 ? 1 : 0;
  }
  // Weak scaling: each model's step from its fewest to its most GPUs.
  std::string trend;
  for (std::size_t i = 0; i < study.rows.size(); ++i) {
    for (std::size_t j = i + 1; j < study.rows.size(); ++j) {
      const H100Row& a = study.rows[i];
      const H100Row& b = study.rows[j];
      if (a.model != b.model) continue;
      trend += fmt::format("| {} | {} -> {} | {:+.1f}% | {:+.1f}% |\n", a.model, a.gpus, b.gpus, 100.0 * (b.step_s / a.step_s - 1.0),
                           100.0 * (static_cast<double>(b.iteration_ps) / static_cast<double>(a.iteration_ps) - 1.0));
    }
  }
  if (!study.rows.empty()) {
    out += fmt::format("\nError (measured / acesim step time - 1; positive: acesim faster): {:+.1f}% to {:+.1f}%, {} of {} rows within 15%.\n",
                       100.0 * lo, 100.0 * hi, within, study.rows.size());
  }
  if (!trend.empty()) {
    out += "\n| model | GPUs (weak scaling, batch grows with d) | measured step change | acesim step change |\n|---|---|---:|---:|\n" + trend;
  }
  return out;
}

void write_megatron_h100(const H100Study& study, const std::string& out_dir) {
  OutputFile csv = open_study_file(out_dir, "results.csv");
  csv << "model,gpus,tp,pp,cp,vp,dp,global_batch,sequence_parallel,measured_step_s,acesim_step_s,error,acesim_mfu,compute_ns,"
         "pipeline_bubble_ns,exposed_tp_ns,exposed_cp_ns,exposed_pp_ns,exposed_dp_ns,memory_per_gpu_GB\n";
  const auto ns = [](TimePs t) { return fmt::format("{:.3f}", static_cast<double>(t) / 1e3); };
  for (const H100Row& r : study.rows) {
    csv << fmt::format("{},{},{},{},{},{},{},{},{},{:g},{},{:.5f},{:.5f},{},{},{},{},{},{},{:.2f}\n", csv_field(r.model), r.gpus, r.tp, r.pp,
                       r.cp, r.vp, r.dp, r.global_batch, r.sequence_parallel ? "yes" : "no", r.step_s, s3(r.iteration_ps),
                       r.error(), r.mfu, ns(r.compute_ps), ns(r.bubble_ps), ns(r.exposed_tp_ps), ns(r.exposed_cp_ps),
                       ns(r.exposed_pp_ps), ns(r.exposed_dp_ps), r.memory_GB);
  }
  OutputFile md = open_study_file(out_dir, "report.md");
  md << "# acesim against NeMo / Megatron-Core on DGX H100 (BF16)\n\nSource: " << study.source << "\n\nSettings, every row: `"
     << megatron_h100_settings() << "`\n\n"
     << megatron_h100_tables(study);
  csv.close();
  md.close();
}

}  // namespace acesim
