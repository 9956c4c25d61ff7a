// A SimAI / AICB workload file (workload/formats/simai_workload.h) as a
// pipelined training job (docs/workloads.md, "SimAI workloads"). Ranks are
// laid out as Megatron-LM does (tensor innermost, then expert and data,
// pipeline outermost) for the file's tp, ep, pp and dp = GPUs / (tp pp).
// Every stage runs the file's rows (SimAI's file is one stage's program):
//   iteration  the rows before the micro-batches, forward; the ga
//              micro-batches in the pipeline schedule's order (1F1B unless
//              asked); the rows after them, forward then backward; the
//              rows before, backward; then the rank waits for all its
//              collectives
//   forward    of a micro-batch: receive the activation (pp_comm bytes)
//              from the previous stage; per row, its forward compute, then
//              its forward collective, blocking; send to the next stage
//   backward   receive the gradient from the next stage; per row from the
//              last: input-gradient compute, its collective (blocking),
//              weight-gradient compute, its collective (not blocking,
//              waited for at the iteration's end); send to the previous
//              stage
// Compute entries are kernels given as times (they hold the compute units
// and a share of HBM, so `sm` communication beside them slows them);
// entries of 0 or 1 ns (AICB's placeholder for no time) are not run.
#pragma once

#include <string>

#include "topology/topology.h"
#include "workload/formats/simai_workload.h"
#include "workload/llm/llm_graph.h"
#include "workload/llm/staged_job.h"

namespace acesim {

struct SimaiJobOptions {
  int iterations = 2;
  PipeSchedule schedule = PipeSchedule::k1F1B;  // 1f1b or gpipe (the file has no model chunks)
};

class SimaiJob final : public StagedJob {
 public:
  // Throws InputError when the file's plan does not fit the topology's GPUs.
  SimaiJob(SimaiWorkload workload, const Topology& topo, SimaiJobOptions options = {});
  SimaiJob(SimaiWorkload, const Topology&&, SimaiJobOptions = {}) = delete;  // it keeps the topology

  std::string name() const override { return workload_.file; }
  std::string plan_text() const override;
  const ParallelPlan& plan() const override { return plan_; }
  const RankLayout& layout() const override { return layout_; }
  int iterations() const override { return options_.iterations; }
  LlmRankGraph build(Rank r, bool listed) const override;
  double estimated_nodes_per_rank() const override {
    return 8.0 * static_cast<double>(workload_.rows.size()) * options_.iterations;
  }
  std::string estimate_terms() const override {
    return std::to_string(workload_.rows.size()) + " rows x " + std::to_string(options_.iterations) + " iterations x 8 nodes per row";
  }
  double model_flops_per_gpu() const override { return 0.0; }  // the file gives times
  double model_flops_no_recompute_per_gpu() const override { return 0.0; }
  std::optional<MemoryBreakdown> stage_memory(int) const override { return std::nullopt; }

  const SimaiWorkload& workload() const { return workload_; }
  // The ranks of rank r's group of kind g (SimAI's TP, EP, DP_EP, DP).
  std::vector<Rank> group(Rank r, SimaiGroup g) const;

 private:
  SimaiWorkload workload_;
  const Topology& topo_;
  SimaiJobOptions options_;
  ParallelPlan plan_;
  RankLayout layout_;
};

}  // namespace acesim
