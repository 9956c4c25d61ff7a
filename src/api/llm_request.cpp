// LLM training requests (llm_request.h).
#include "api/llm_request.h"

#include <string>

#include <fmt/format.h>

#include "api/per_executor.h"
#include "compute/kernel_pricer.h"
#include "config/input_error.h"
#include "config/units.h"
#include "workload/formats/format_registry.h"
#include "workload/formats/simai_workload.h"
#include "workload/llm/llm_chakra.h"
#include "workload/llm/llm_graph.h"
#include "workload/llm/simai_job.h"

namespace acesim::api {
namespace {

bool divides(long long t, const TransformerShape& m) {
  return m.heads % t == 0 && m.kv_heads % t == 0 && m.ffn_hidden % t == 0 && (m.moe_ffn_hidden % t == 0);
}

int checked(const std::optional<int>& v, const char* flag, int lo, int hi, int fallback) {
  if (!v) return fallback;
  if (*v < lo || *v > hi) {
    throw InputError(std::string(flag) + ": must be in " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " +
                     std::to_string(*v));
  }
  return *v;
}

}  // namespace

std::optional<TransformerShape> llm_shape(const TrainingRequest& o, const std::string& model) {
  if (const TransformerShape* s = find_transformer_shape(model)) return *s;
  if (model.ends_with(".yaml") || model.ends_with(".yml")) return read_transformer_file(model);
  if (!o.llm.given()) return std::nullopt;
  if (model != "gpt") {
    TrainingRequest::Llm plan = o.llm;
    plan.chakra_out.clear();
    if (!plan.given()) {
      throw InputError("--chakra-out applies to LLM plans (a transformer --model) and --kineto replays, not to '" + model + "'");
    }
    throw InputError("--tp/--pp/--dp/... apply to transformer models (gpt, the LLMs, model files), not '" + model + "'");
  }
  return gpt_shape(ModelOptions{});
}

ParallelPlan llm_plan(const TrainingRequest::Llm& o, const TransformerShape& m, const Topology& topo) {
  ParallelPlan p;
  const long long gpus = topo.num_npus();
  const int big = 1 << 20;
  const long long node = topo.dim(0).npus;
  p.tp = checked(o.tp, "--tp", 1, big, node <= big && divides(node, m) ? static_cast<int>(node) : 1);
  p.pp = checked(o.pp, "--pp", 1, big, 1);
  p.cp = checked(o.cp, "--cp", 1, big, 1);
  p.ep = checked(o.ep, "--ep", 1, big, 1);
  p.expert_tp = checked(o.expert_tp, "--expert-tensor-parallel-size", 1, big, 0);
  const long long rest = gpus / (static_cast<long long>(p.tp) * p.pp * p.cp);
  if (!o.dp && rest * p.tp * p.pp * p.cp != gpus) {
    throw InputError("--tp " + std::to_string(p.tp) + " x --pp " + std::to_string(p.pp) + " x --cp " +
                     std::to_string(p.cp) + " does not divide the platform's " + std::to_string(gpus) + " GPUs");
  }
  p.dp = checked(o.dp, "--dp", 1, big, static_cast<int>(std::max(1LL, rest)));
  p.zero = checked(o.zero, "--zero", 0, 3, 0);
  p.micro_batch = checked(o.micro_batch, "--micro-batch", 1, 1 << 16, 1);
  p.global_batch = checked(o.global_batch, "--global-batch", 1, 1 << 30, 0);
  if (!o.schedule.empty()) p.schedule = parse_pipe_schedule("--schedule", o.schedule);
  p.virtual_stages = checked(o.virtual_stages, "--virtual-stages", 1, 1024, 1);
  if (o.virtual_stages && *o.virtual_stages > 1 && o.schedule.empty()) p.schedule = PipeSchedule::kInterleaved;
  p.first_stage_layers = checked(o.first_stage_layers, "--decoder-first-pipeline-num-layers", 1, big, 0);
  p.last_stage_layers = checked(o.last_stage_layers, "--decoder-last-pipeline-num-layers", 1, big, 0);
  p.embedding_in_split = o.embedding_in_split;
  p.loss_in_split = o.loss_in_split;
  if (!o.recompute.empty()) p.recompute = parse_recompute("--recompute", o.recompute);
  if (!o.attention.empty()) p.attention = parse_attention_kernel("--attention", o.attention);
  if (!o.zero3_fetch.empty()) p.zero3_fetch = parse_zero3_fetch("--zero3-fetch", o.zero3_fetch);
  if (!o.reshard_after_forward.empty()) {
    p.reshard_after_forward = parse_reshard_after_forward("--reshard-after-forward", o.reshard_after_forward);
  }
  p.overlap_grad_reduce = o.overlap_grad_reduce;
  p.overlap_param_gather = o.overlap_param_gather;
  p.tp_comm_overlap = o.tp_comm_overlap;
  // Megatron-Core runs MoE layers with tensor parallelism only with
  // sequence parallelism; the plan says when it is turned on for that.
  p.sequence_parallel = o.sequence_parallel || (m.moe() && p.tp > 1);
  return p;
}

namespace {

// --iterations for a pipelined job: 1..100, default 2.
int llm_iterations(const TrainingRequest& o) {
  if (!o.iterations) return 2;
  if (*o.iterations < 1 || *o.iterations > 100) throw InputError("--iterations: must be in 1..100 for an LLM, got " + std::to_string(*o.iterations));
  return *o.iterations;
}

void run_jobs(const TrainingRequest& o, const StagedJob& job, const std::vector<std::string>& executors, TrainingRun& run) {
  if (o.trace_ranks_given) {
    throw InputError("--trace-npus does not apply to LLM plans and SimAI files: their trace follows the first rank of each pipeline stage");
  }
  LlmRunOptions ro;
  ro.full = o.platform.full;
  ro.allow_oom = o.llm.allow_oom;
  ro.trace_ranks = o.trace_ranks;
  per_executor(run.platform, executors, o.progress, run.llm, [&](const PlatformConfig& p, const Progress& progress) {
    ro.progress = progress;
    return run_llm(p, job, ro);
  });
}

}  // namespace

void run_llm_request(const TrainingRequest& o, const TransformerShape& shape, const std::vector<std::string>& executors,
                     const Topology& topo, TrainingRun& run) {
  if (o.batch) throw InputError("--batch applies to the layer-table models; an LLM takes --micro-batch and --global-batch");
  if (!o.stragglers.empty()) throw InputError("--straggler is not supported with LLM plans yet");
  LlmOptions lo;
  if (!o.precision.empty()) {
    if (const std::string why = set_llm_precision(lo, o.precision, run.platform.npu); !why.empty()) {
      throw InputError("--precision: " + why);
    }
  }
  lo.iterations = llm_iterations(o);
  std::shared_ptr<const KernelTimes> measured;
  if (!o.kernel_times.empty()) {
    if (run.platform.npu.gpu.empty()) {
      throw InputError("--kernel-times: the platform's npu names no GPU (npu.gpu) to match the file's rows against");
    }
    measured = std::make_shared<const KernelTimes>(KernelTimes::read(o.kernel_times, known_gpus()));
  }
  lo.pricer = make_kernel_pricer(run.platform.npu, measured, in_situ_setting(o.calibration, run.platform.npu, lo.bytes_per_element, topo.num_npus()));
  const ParallelPlan plan = llm_plan(o.llm, shape, topo);
  // Options the plan accepts but that change nothing of it: said, not
  // refused (a sweep over dp and zero keeps its points).
  if (plan.dp == 1 && plan.cp == 1) {
    if (o.llm.zero && *o.llm.zero > 0) {
      run.platform.warnings.push_back(fmt::format("--zero {}: with one data-parallel replica (dp 1) there is nothing to shard; "
                                                  "the run is ZeRO 0's", *o.llm.zero));
    }
    if (o.llm.overlap_grad_reduce) {
      run.platform.warnings.push_back("--overlap-grad-reduce: with one data-parallel replica (dp 1) no gradient is reduced");
    }
  }
  if (!o.llm.schedule.empty() && plan.pp == 1) {
    run.platform.warnings.push_back("--schedule " + o.llm.schedule + ": with one pipeline stage (pp 1) no schedule applies");
  }
  const LlmJob job(shape, plan, topo, lo);
  if (!o.llm.chakra_out.empty()) check_chakra_export_ranks(topo.num_npus());
  run_jobs(o, job, executors, run);
  // After the runs, so that a plan they refuse (memory) writes nothing.
  if (!o.llm.chakra_out.empty()) export_llm_chakra(job, topo, run.platform.npu, o.llm.chakra_out);
}

bool is_simai_request(const TrainingRequest& o) {
  if (o.workload_file.empty()) return false;
  if (!o.workload_format.empty()) {
    const WorkloadFormatEntry* f = workload_format_registry().find(o.workload_format);
    return f != nullptr && f->name == "simai";
  }
  return looks_like_simai(o.workload_file);
}

void run_simai_request(const TrainingRequest& o, const std::vector<std::string>& executors, const Topology& topo,
                       TrainingRun& run) {
  const TrainingRequest::Llm& l = o.llm;
  TrainingRequest::Llm fixed = l;  // what the file fixes: all but the schedule
  fixed.schedule.clear();
  if (l.allow_oom) throw InputError("--allow-oom: a SimAI file has no memory model, so nothing to allow; leave it out");
  if (fixed.given()) {
    throw InputError("--workload " + o.workload_file +
                     ": a SimAI file fixes its plan (model_parallel_NPU_group, ep, pp, ga); of the plan options only --schedule applies");
  }
  if (o.batch || !o.precision.empty()) throw InputError("--batch/--precision apply to built-in models; a SimAI file fixes its own sizes");
  if (!o.stragglers.empty()) throw InputError("--straggler is not supported with SimAI files yet");
  SimaiJobOptions so;
  so.iterations = llm_iterations(o);
  if (!l.schedule.empty()) so.schedule = parse_pipe_schedule("--schedule", l.schedule);
  SimaiWorkload workload = read_simai_workload(o.workload_file);
  if (!l.schedule.empty() && workload.pp == 1) {
    throw InputError("--schedule: " + o.workload_file + " has one pipeline stage (pp: 1), so no pipeline schedule applies");
  }
  const SimaiJob job(std::move(workload), topo, so);
  run_jobs(o, job, executors, run);
}

}  // namespace acesim::api
