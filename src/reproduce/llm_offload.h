// `acesim reproduce llm-offload`: what an offload engine (ACE) buys for LLM
// training at scale on hgx-h100 clusters (docs/llm-offload.md). Each point
// is one workload and cluster size, simulated with the sm, ace and ideal
// executors; the settings are llm_offload_settings() for every point.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "engine/time.h"
#include "workload/llm/llm_graph.h"
#include "workload/llm/parallel_plan.h"

namespace acesim {

// One workload of the study: a model, how it is split, and the cluster
// sizes it runs at.
struct OffloadWorkload {
  std::string name;   // "llama3-70b-zero1"
  std::string model;  // a built-in model
  std::string what;   // one line for the report
  int tp = 1, ep = 1, zero = 1;
  bool sequence_parallel = true;
  int seq = 0;        // > 0: the sequence length instead of the model's
  std::vector<long long> gpus;
};

// The study's workloads, every size included.
std::vector<OffloadWorkload> llm_offload_workloads();

// Pipeline stages at a size: 8, or 4 where 8 would leave fewer than 2
// replicas (Llama-3 70B on 64 GPUs); 1 for the workloads without a pipeline.
int offload_pp(const OffloadWorkload& w, long long gpus);

struct OffloadRun {
  std::string executor;  // sm, ace, ideal
  TimePs iteration_ps = 0;
  double tflops_per_gpu = 0.0;
  // Means over the stages' followed ranks, in the measured iteration.
  TimePs compute_ps = 0, bubble_ps = 0, other_idle_ps = 0;
  TimePs exposed_ps[kLlmCommKinds] = {};  // by LlmComm
};

struct OffloadPoint {
  std::string workload;
  long long gpus = 0;
  ParallelPlan plan;
  std::string plan_text;        // describe_plan()
  double memory_per_gpu_GB = 0.0;
  std::vector<OffloadRun> runs;  // sm, ace, ideal in that order
  // sm's iteration time over `executor`'s.
  double speedup(const std::string& executor) const;
  const OffloadRun& run(const std::string& executor) const;
};

struct OffloadOptions {
  std::vector<std::string> workloads;  // empty: all
  long long max_gpus = 0;              // > 0: leave larger sizes out
  int jobs = 1;                        // points simulated in parallel
  std::FILE* progress = nullptr;       // a line per point when set
};

// Runs the points. Throws InputError for an unknown workload name.
std::vector<OffloadPoint> run_llm_offload(const OffloadOptions& options);

// The settings every point runs with, in words and flags.
std::string llm_offload_settings();

// The tables: speedups per workload and size, then each point's breakdown
// per executor, in Markdown. Every row names its workload and size, so a
// subset's rows are rows of the whole study's tables.
std::string llm_offload_tables(const std::vector<OffloadPoint>& points);

// Writes results.csv and report.md into out_dir (created if needed) and,
// with plots, speedup.png and breakdown.png (Debian's python3-matplotlib).
// Returns whether the plots were made.
bool write_llm_offload(const std::vector<OffloadPoint>& points, const std::string& out_dir, bool plots,
                       std::FILE* progress);

}  // namespace acesim
