// One simulation of LLM training (workload/llm/llm_graph.h) and its summary:
// what `acesim run --model NAME --tp ...` reports (docs/models.md, "LLM
// training"). Every rank runs its own graph; with a symmetric plan (one
// stage, no context parallelism, every group whole topology dimensions) and
// platform one rank stands for all.
//
// The report follows one rank per pipeline stage (the first of the stage).
// Its compute stream's idle time in the measured iteration is attributed to
// what it waited for: the communication that finished last among what the
// next kernel needed, by kind (tp, cp, ep, pp, dp). Waiting for a pipeline
// message is the bubble until the message was sent, and pp communication
// after.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/platform.h"
#include "engine/progress.h"
#include "engine/time.h"
#include "workload/llm/llm_graph.h"
#include "workload/llm/memory.h"
#include "workload/llm/staged_job.h"

namespace acesim {

struct LlmRunOptions {
  bool full = false;      // simulate every rank even when one could stand for all
  bool allow_oom = false;  // run a plan that does not fit in the GPUs' HBM (else InputError)
  int trace_ranks = 0;    // > 0: keep the timelines of each stage's first rank for a trace
  Progress progress;
};

struct LlmStageReport {
  int stage = 0;
  Rank rank = 0;         // the rank followed
  TimePs iteration_ps = 0;  // its own measured iteration (optimizer step to optimizer step)
  TimePs compute_ps = 0;
  TimePs bubble_ps = 0;
  TimePs exposed_ps[kLlmCommKinds] = {};  // by LlmComm
  TimePs other_idle_ps = 0;               // idle for none of those
  // The compute time by KernelKind; empty where the workload does not say
  // what its kernels are.
  std::vector<TimePs> compute_by_kind_ps;
  std::optional<MemoryBreakdown> memory;  // per GPU of the stage; none: not modelled
};

struct LlmSpan {
  int stage = 0;
  LlmNodeTag tag;
  bool compute = true;  // else communication (tag.comm says which)
  std::string what;     // kernel, collective or message
  TimePs begin = 0, end = 0;
};

struct LlmReport {
  std::string model;
  std::string platform;
  std::string executor;
  std::string plan;  // "tp 8, pp 8, dp 16, ..."
  long long npus = 0;
  long long simulated_ranks = 0;
  std::string simulation;
  int iterations = 0;
  int micro_batches = 0;
  std::vector<TimePs> iteration_end_ps;  // the last rank's optimizer step of each iteration
  TimePs iteration_ps = 0;               // between the last two
  TimePs total_ps = 0;
  // Megatron-LM's count (eq. 3, recomputation included) and PaLM's (without).
  double model_flops_per_gpu = 0.0;
  double model_flops_no_recompute_per_gpu = 0.0;
  double tflops_per_gpu = 0.0;  // Megatron-LM's count per second
  // Over the dense BF16 peak (npu.peak_flops()), whatever the precision
  // run: MFU PaLM's count (no recomputation), HFU Megatron-LM's.
  double mfu = 0.0;
  double hfu = 0.0;
  // Means over the stages' followed ranks, each over its own measured
  // iteration (optimizer step to optimizer step): they add up to
  // stage_iteration_ps.
  TimePs stage_iteration_ps = 0;
  TimePs compute_ps = 0;
  TimePs pipeline_bubble_ps = 0;
  TimePs exposed_ps[kLlmCommKinds] = {};
  TimePs other_idle_ps = 0;
  std::vector<TimePs> compute_by_kind_ps;  // by KernelKind, as the stages'; empty: not known
  std::vector<LlmStageReport> stages;
  std::optional<MemoryBreakdown> memory;  // the stage that needs most; none: not modelled
  double hbm_capacity_GB = 0.0;  // 0: unknown
  bool fits = true;
  std::vector<LlmSpan> spans;  // with trace_ranks
  std::size_t collectives = 0;
  std::size_t messages = 0;
  std::uint64_t events = 0;
  // Every GPU over the whole run (docs/model.md, "Energy"); none without
  // the platform's energy model.
  std::optional<double> energy_J;
  // The simulated ranks' kernels: priced from a kernel-times file, by the
  // compute model (compute_model names its architecture), at constant
  // efficiencies.
  std::uint64_t kernels_measured = 0;
  std::uint64_t kernels_modelled = 0;
  std::uint64_t kernels_constant = 0;
  std::string compute_model;
  std::string kernel_times;  // the file, if any
  // The in-situ parameters (compute/in_situ.h): the calibration file (empty:
  // none, isolated kernels) and the values it gave.
  std::string calibration;
  InSitu in_situ;
  // What a checkpoint saves (StagedJob::model_state_bytes); 0: not known.
  double model_state_bytes = 0.0;
  std::string model_state_text;
};

// The pipeline stage that needs most memory per GPU (the first of equals);
// none when the job does not model memory.
std::optional<MemoryBreakdown> worst_stage_memory(const StagedJob& job);

// Throws InputError for plans the platform cannot run or whose memory does
// not fit in its HBM (without allow_oom), and SimulationStuck when the run
// cannot finish.
LlmReport run_llm(const PlatformConfig& platform, const StagedJob& job, const LlmRunOptions& options = {});

}  // namespace acesim
