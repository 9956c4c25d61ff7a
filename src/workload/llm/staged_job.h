// A training job of pipeline stages as run_llm (driver/llm_run.h) runs it:
// a Megatron-LM-style rank layout and one work graph per rank. Two kinds
// exist: LlmJob (llm_graph.h), built from a model and a parallel plan, and
// SimaiJob (simai_job.h), built from a SimAI/AICB workload file's rows.
#pragma once

#include <optional>
#include <string>

#include "compute/in_situ.h"
#include "workload/llm/memory.h"
#include "workload/llm/parallel_plan.h"

namespace acesim {

struct LlmRankGraph;

class StagedJob {
 public:
  virtual ~StagedJob() = default;

  // What the report calls the model, and the plan in words.
  virtual std::string name() const = 0;
  virtual std::string plan_text() const = 0;
  // The plan's sizes (tp, cp, ep, dp, pp, micro-batches): the rank layout
  // and which ranks stand for a stage follow from them.
  virtual const ParallelPlan& plan() const = 0;
  virtual const RankLayout& layout() const = 0;
  virtual int iterations() const = 0;
  // Rank r's graph: its stage's passes in schedule order. Its collectives
  // run over topology dimensions where a group is whole dimensions and
  // every rank runs the same program, else (or with `listed`) over their
  // listed ranks.
  virtual LlmRankGraph build(Rank r, bool listed) const = 0;
  // About how many nodes one rank's graph holds (to refuse runs too big to hold).
  virtual double estimated_nodes_per_rank() const = 0;
  // What that estimate multiplies, in words ("2 micro-batches x 32 layers ...").
  virtual std::string estimate_terms() const = 0;
  // The memory those nodes take while the run holds them, with what the
  // executor keeps for each: kBytesPerNode, and kBytesPerRingNode for the
  // blocks, sends and receives of a context-parallel ring (their messages
  // and pending matches). Measured on Llama 3 8B: about 57 B a node with
  // --full on 1,024 GPUs; about 370 B a ring node with tp 8 and cp 16, 32
  // and 64 (45, 154 and 572 MB).
  static constexpr double kBytesPerNode = 64.0;
  static constexpr double kBytesPerRingNode = 400.0;
  virtual double estimated_bytes_per_rank() const { return kBytesPerNode * estimated_nodes_per_rank(); }
  // The kernel-times file whose rows price its kernels, if any.
  virtual std::string kernel_times() const { return {}; }
  // The calibration file whose in-situ parameters its kernels were priced
  // with (compute/in_situ.h), and their values; none: isolated kernels.
  virtual std::string calibration() const { return {}; }
  virtual InSitu in_situ() const { return {}; }
  // Model FLOPs per GPU and iteration as Megatron-LM counts them (its
  // eq. 3, recomputation included: tflops_per_gpu and the HFU); 0: not counted.
  virtual double model_flops_per_gpu() const = 0;
  // The same without recomputation, as PaLM counts model FLOPs (arXiv
  // 2204.02311 appendix B: the MFU); 0: not counted.
  virtual double model_flops_no_recompute_per_gpu() const = 0;
  // Memory per GPU of pipeline stage `stage`; none: not modelled.
  virtual std::optional<MemoryBreakdown> stage_memory(int stage) const = 0;
  // What a checkpoint saves, over the whole job: one copy of the weights
  // and the optimizer states (driver/goodput.h); 0: not known. And how
  // that was counted, in words.
  virtual double model_state_bytes() const { return 0.0; }
  virtual std::string model_state_text() const { return {}; }
};

}  // namespace acesim
