#include "reproduce/llm_offload.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "compute/kernel_pricer.h"
#include "config/input_error.h"
#include "config/output_file.h"
#include "config/platform.h"
#include "config/presets.h"
#include "driver/llm_run.h"
#include "reproduce/plot_script.h"
#include "topology/topology.h"
#include "workload/models/models.h"

namespace acesim {
namespace {

constexpr const char* kPreset = "hgx-h100";
constexpr int kGpusPerNode = 8;
// Micro-batches per replica and iteration: 4 per pipeline stage, so the
// 1F1B bubble is (pp - 1) / (4 pp), under a quarter; 8 without a pipeline.
constexpr int kMicroBatchesPerStage = 4;
constexpr int kMicroBatchesWithoutPipeline = 8;
const std::vector<std::string> kExecutors = {"sm", "ace", "ideal"};

const TransformerShape& builtin_shape(const std::string& name) {
  if (const TransformerShape* s = find_transformer_shape(name)) return *s;
  throw InputError("llm-offload: no built-in model '" + name + "'");
}

ParallelPlan point_plan(const OffloadWorkload& w, long long gpus) {
  ParallelPlan p;
  p.tp = w.tp;
  p.pp = offload_pp(w, gpus);
  p.ep = w.ep;
  p.dp = static_cast<int>(gpus / (static_cast<long long>(p.tp) * p.pp));
  p.sequence_parallel = w.sequence_parallel;
  p.zero = w.zero;
  p.micro_batch = 1;
  const int m = p.pp > 1 ? kMicroBatchesPerStage * p.pp : kMicroBatchesWithoutPipeline;
  p.global_batch = m * p.dp;
  p.schedule = PipeSchedule::k1F1B;
  p.recompute = Recompute::kSelective;
  // Megatron-LM's overlap of the distributed optimizer's communication with
  // compute (ZeRO 1); ZeRO 3 reduces every micro-batch's gradients as they
  // come and prefetches its gathers regardless.
  p.overlap_grad_reduce = p.zero <= 1;
  p.overlap_param_gather = p.zero == 1 || p.zero == 2;
  return p;
}

OffloadRun simulate(const PlatformConfig& base, const LlmJob& job, const std::string& executor, double& memory_GB) {
  PlatformConfig platform = base;
  platform.npu.executor = executor;
  const LlmReport rep = run_llm(platform, job);
  memory_GB = rep.memory ? rep.memory->total_bytes() / 1e9 : 0.0;
  OffloadRun r;
  r.executor = executor;
  r.iteration_ps = rep.iteration_ps;
  r.tflops_per_gpu = rep.tflops_per_gpu;
  r.compute_ps = rep.compute_ps;
  r.bubble_ps = rep.pipeline_bubble_ps;
  for (int k = 0; k < kLlmCommKinds; ++k) r.exposed_ps[k] = rep.exposed_ps[k];
  TimePs other = 0;
  for (const LlmStageReport& s : rep.stages) other += s.other_idle_ps;
  r.other_idle_ps = rep.stages.empty() ? 0 : other / static_cast<TimePs>(rep.stages.size());
  return r;
}

void simulate_point(const OffloadWorkload& w, OffloadPoint& pt) {
  PlatformConfig platform = load_preset(*preset_registry().find(kPreset));
  set_nodes(platform, pt.gpus / kGpusPerNode, w.name + ": nodes");
  const Topology topo(platform.dims);
  TransformerShape shape = builtin_shape(w.model);
  if (w.seq > 0) shape.seq = w.seq;
  LlmOptions options;
  options.bytes_per_element = 2;  // bf16
  options.iterations = 2;
  options.pricer = make_kernel_pricer(platform.npu);  // kernels priced by shape (docs/compute.md)
  const LlmJob job(shape, pt.plan, topo, options);
  pt.plan_text = describe_plan(pt.plan);
  for (const std::string& e : kExecutors) pt.runs.push_back(simulate(platform, job, e, pt.memory_per_gpu_GB));
}

std::vector<OffloadPoint> plan_points(const OffloadOptions& o, std::vector<const OffloadWorkload*>& of) {
  static const std::vector<OffloadWorkload> all = llm_offload_workloads();
  std::vector<std::string> names;
  for (const OffloadWorkload& w : all) names.push_back(w.name);
  for (const std::string& n : o.workloads) {
    if (std::find(names.begin(), names.end(), n) == names.end()) {
      throw InputError(fmt::format("--workloads: unknown workload '{}' (one of {})", n, fmt::join(names, ", ")));
    }
  }
  std::vector<OffloadPoint> points;
  for (const OffloadWorkload& w : all) {
    if (!o.workloads.empty() && std::find(o.workloads.begin(), o.workloads.end(), w.name) == o.workloads.end()) continue;
    for (long long g : w.gpus) {
      if (o.max_gpus > 0 && g > o.max_gpus) continue;
      OffloadPoint pt;
      pt.workload = w.name;
      pt.gpus = g;
      pt.plan = point_plan(w, g);
      points.push_back(pt);
      of.push_back(&w);
    }
  }
  return points;
}

double ms(TimePs t) { return static_cast<double>(t) / 1e9; }
TimePs exposed(const OffloadRun& r, LlmComm c) { return r.exposed_ps[static_cast<int>(c)]; }

std::string speedup_table(const std::vector<OffloadPoint>& points) {
  std::string out =
      "| workload | GPUs | plan | sm iteration (s) | ace iteration (s) | ideal iteration (s) | ace speedup | ideal "
      "speedup | ace share of ideal's gain |\n|---|---:|---|---:|---:|---:|---:|---:|---:|\n";
  for (const OffloadPoint& p : points) {
    const double gain_ideal = p.speedup("ideal") - 1.0;
    const std::string share =
        gain_ideal > 0.001 ? fmt::format("{:.0f}%", 100.0 * (p.speedup("ace") - 1.0) / gain_ideal) : "-";
    out += fmt::format("| {} | {} | tp {}, pp {}, dp {}{} | {:.3f} | {:.3f} | {:.3f} | {:.3f} | {:.3f} | {} |\n",
                       p.workload, p.gpus, p.plan.tp, p.plan.pp, p.plan.dp,
                       p.plan.ep > 1 ? fmt::format(", ep {}", p.plan.ep) : "", ms(p.run("sm").iteration_ps) / 1e3,
                       ms(p.run("ace").iteration_ps) / 1e3, ms(p.run("ideal").iteration_ps) / 1e3, p.speedup("ace"),
                       p.speedup("ideal"), share);
  }
  return out;
}

std::string breakdown_table(const std::vector<OffloadPoint>& points) {
  std::string out =
      "| workload | GPUs | executor | iteration (ms) | TFLOP/s per GPU | compute (ms) | bubble (ms) | exposed tp (ms) | "
      "exposed ep (ms) | exposed pp (ms) | exposed dp (ms) | other idle (ms) |\n"
      "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const OffloadPoint& p : points) {
    for (const OffloadRun& r : p.runs) {
      out += fmt::format("| {} | {} | {} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} |\n",
                         p.workload, p.gpus, r.executor, ms(r.iteration_ps), r.tflops_per_gpu, ms(r.compute_ps),
                         ms(r.bubble_ps), ms(exposed(r, LlmComm::kTp)), ms(exposed(r, LlmComm::kEp)),
                         ms(exposed(r, LlmComm::kPp)), ms(exposed(r, LlmComm::kDp)), ms(r.other_idle_ps));
    }
  }
  return out;
}

void write_csv(const std::vector<OffloadPoint>& points, const std::string& path) {
  OutputFile csv(path, "--out");
  csv << "workload,gpus,tp,pp,dp,ep,zero,micro_batches,executor,iteration_time_ns,tflops_per_gpu,speedup_over_sm,"
         "compute_ns,pipeline_bubble_ns,exposed_tp_ns,exposed_cp_ns,exposed_ep_ns,exposed_pp_ns,exposed_dp_ns,"
         "other_idle_ns,memory_per_gpu_GB\n";
  const auto ns = [](TimePs t) { return fmt::format("{:.3f}", static_cast<double>(t) / 1e3); };
  for (const OffloadPoint& p : points) {
    for (const OffloadRun& r : p.runs) {
      csv << fmt::format("{},{},{},{},{},{},{},{},{},{},{:.4f},{:.5f},{},{},{},{},{},{},{},{},{:.2f}\n", p.workload,
                         p.gpus, p.plan.tp, p.plan.pp, p.plan.dp, p.plan.ep, p.plan.zero, p.plan.micro_batches(),
                         r.executor, ns(r.iteration_ps), r.tflops_per_gpu, p.speedup(r.executor), ns(r.compute_ps),
                         ns(r.bubble_ps), ns(exposed(r, LlmComm::kTp)), ns(exposed(r, LlmComm::kCp)),
                         ns(exposed(r, LlmComm::kEp)), ns(exposed(r, LlmComm::kPp)), ns(exposed(r, LlmComm::kDp)),
                         ns(r.other_idle_ps), p.memory_per_gpu_GB);
    }
  }
  csv.close();
}

}  // namespace

std::vector<OffloadWorkload> llm_offload_workloads() {
  const std::vector<long long> to_16k = {64, 256, 1024, 4096, 16384};
  return {
      {"llama3-70b-zero1", "llama3-70b",
       "Llama-3 70B, tp 8, pp 8 (4 at 64 GPUs), sequence parallel, ZeRO 1 (distributed optimizer) with overlapped "
       "gradient reduce-scatters and parameter all-gathers",
       8, 1, 1, true, 0, to_16k},
      {"llama3-70b-zero3", "llama3-70b",
       "as llama3-70b-zero1 with ZeRO 3 (FSDP-like): parameters gathered before each layer's forward and backward, "
       "one layer ahead, gradients reduce-scattered per micro-batch",
       8, 1, 3, true, 0, to_16k},
      {"mixtral-8x7b-ep8", "mixtral-8x7b",
       "Mixtral 8x7B at sequence 4,096, tp 1, pp 4, ep 8 (the experts' all-to-all inside a node), ZeRO 1 overlapped",
       1, 8, 1, false, 4096, {64, 256, 1024, 4096}},
      {"llama3-8b-tp8", "llama3-8b",
       "Llama-3 8B, tp 8 with sequence parallelism (its collectives block the next layer), no pipeline, ZeRO 1 "
       "overlapped",
       8, 1, 1, true, 0, to_16k},
  };
}

int offload_pp(const OffloadWorkload& w, long long gpus) {
  if (w.model == "llama3-8b") return 1;
  if (w.model == "mixtral-8x7b") return 4;
  return gpus / (static_cast<long long>(w.tp) * 8) >= 2 ? 8 : 4;
}

double OffloadPoint::speedup(const std::string& executor) const {
  return static_cast<double>(run("sm").iteration_ps) / static_cast<double>(run(executor).iteration_ps);
}

const OffloadRun& OffloadPoint::run(const std::string& executor) const {
  for (const OffloadRun& r : runs) {
    if (r.executor == executor) return r;
  }
  throw std::logic_error("llm-offload: no " + executor + " run");
}

std::vector<OffloadPoint> run_llm_offload(const OffloadOptions& o) {
  std::vector<const OffloadWorkload*> of;
  std::vector<OffloadPoint> points = plan_points(o, of);
  std::atomic<std::size_t> next{0};
  std::mutex mu;
  std::string error;
  auto worker = [&] {
    for (std::size_t i = next.fetch_add(1); i < points.size(); i = next.fetch_add(1)) {
      try {
        simulate_point(*of[i], points[i]);
      } catch (const std::exception& e) {
        const std::lock_guard<std::mutex> lock(mu);
        if (error.empty()) error = fmt::format("{} on {} GPUs: {}", points[i].workload, points[i].gpus, e.what());
        continue;
      }
      if (o.progress != nullptr) {
        const std::lock_guard<std::mutex> lock(mu);
        std::fprintf(o.progress, "reproduce: %s on %lld GPUs done\n", points[i].workload.c_str(), points[i].gpus);
        std::fflush(o.progress);
      }
    }
  };
  std::vector<std::thread> pool;
  const int n = std::max(1, std::min(o.jobs, static_cast<int>(points.size())));
  for (int t = 0; t < n; ++t) pool.emplace_back(worker);
  for (std::thread& t : pool) t.join();
  if (!error.empty()) throw InputError("llm-offload: " + error);
  return points;
}

std::string llm_offload_settings() {
  return fmt::format("--platform {} --nodes GPUs/{} --micro-batch 1 --global-batch m*dp (m = {} x pp micro-batches "
                     "per replica; {} without a pipeline) --schedule 1f1b --recompute selective "
                     "--overlap-grad-reduce --overlap-param-gather (ZeRO 1) --iterations 2 --precision bf16 "
                     "--compare sm,ace,ideal",
                     kPreset, kGpusPerNode, kMicroBatchesPerStage, kMicroBatchesWithoutPipeline);
}

std::string llm_offload_tables(const std::vector<OffloadPoint>& points) {
  return "Iteration time per executor and the speedup over sm:\n\n" + speedup_table(points) +
         "\nWhere each executor's iteration goes (means over the pipeline stages; exposed: the compute stream "
         "waiting for that communication):\n\n" +
         breakdown_table(points);
}

bool write_llm_offload(const std::vector<OffloadPoint>& points, const std::string& out_dir, bool plots,
                       std::FILE* progress) {
  create_output_directory(out_dir, "--out");
  const std::filesystem::path dir(out_dir);
  write_csv(points, (dir / "results.csv").string());
  const bool made = plots && run_plot_script(out_dir, "scripts/plot_llm_offload.py", progress);
  OutputFile md((dir / "report.md").string(), "--out");
  md << "# What an offload engine buys for LLM training (acesim reproduce llm-offload)\n\nSettings, every point: `"
     << llm_offload_settings() << "`\n\nWorkloads:\n\n";
  for (const OffloadWorkload& w : llm_offload_workloads()) md << "- `" << w.name << "`: " << w.what << "\n";
  md << "\n" << llm_offload_tables(points);
  if (made) {
    md << "\n![Speedup over sm against GPUs](speedup.png)\n\n![Where the iteration goes](breakdown.png)\n";
  } else if (plots) {
    md << "\n(Plots were not made: python3 with matplotlib was not found; install Debian's python3-matplotlib.)\n";
  }
  md.close();
  return made;
}

}  // namespace acesim
