// LLM training as work graphs, one per rank (docs/models.md, "LLM
// training"): a transformer's layers split over a Megatron-LM parallel plan
// (parallel_plan.h), each stage running its micro-batches in its pipeline
// schedule's order (pipeline_schedule.h), with the communication each kind
// of parallelism implies:
//   tp  all-reduce after attention and MLP, forward and backward; with
//       sequence parallelism all-gather before and reduce-scatter after
//   cp  the ring exchange of keys and values around the context-parallel
//       ranks (and of their gradients in backward)
//   ep  all-to-all dispatch and combine around each MoE layer's experts
//   pp  activations to the next stage, gradients to the previous one
//   dp  gradients: all-reduce (ZeRO 0) or reduce-scatter (ZeRO >= 1) per
//       layer as the last micro-batch's backward produces them (every
//       micro-batch's with ZeRO >= 2); parameters all-gathered after the
//       optimizer step (ZeRO 1-2) or before each use (ZeRO 3, prefetched one
//       layer ahead); tied embeddings reduced between the first and last stage
// Every kernel is priced by its shape (compute/compute_model.h) where the
// NPU has a compute model, else through the NPU's roofline with the
// efficiencies below.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compute/kernel_pricer.h"
#include "topology/topology.h"
#include "workload/graph/work_graph.h"
#include "workload/llm/parallel_plan.h"
#include "workload/llm/staged_job.h"
#include "workload/models/models.h"

namespace acesim {

// Fractions of the datasheet peaks that kernels reach (docs/models.md,
// "Kernel efficiencies" has their sources).
struct LlmEfficiency {
  double gemm = 1.0;                // dense GEMMs, of peak FLOP/s
  double attention_forward = 1.0;   // fused (flash) attention, of peak FLOP/s
  double attention_backward = 1.0;
  double hbm = 1.0;                 // every kernel, of peak HBM bandwidth
};
LlmEfficiency default_llm_efficiency();

enum class LlmComm : std::uint8_t { kNone, kTp, kCp, kEp, kPp, kDp };
inline constexpr int kLlmCommKinds = 6;
std::string_view to_string(LlmComm c);

enum class LlmPass : std::uint8_t { kForward, kBackward, kRecompute, kOptimizer };

// What a node stands for, for the report.
struct LlmNodeTag {
  std::int32_t iteration = 0;
  LlmComm comm = LlmComm::kNone;  // communication nodes: their kind
  LlmPass pass = LlmPass::kForward;
  std::int16_t chunk = 0;        // model chunk of the stage
  std::int32_t micro_batch = -1;  // -1: none (the optimizer step)
  std::int32_t layer = -1;        // -1: none (the embedding, the head, the optimizer)
};
std::string_view to_string(LlmPass p);

struct LlmRankGraph {
  WorkGraph graph;
  std::vector<LlmNodeTag> tags;             // per node
  std::vector<std::uint32_t> iteration_end;  // per iteration: the node after which the rank is done with it
  // Optional: what a node with this tag stands for in the job's own terms
  // (a SimAI row's name), added to the timeline's and the trace's spans.
  // It may refer to the job, which outlives the runs of its graphs.
  std::function<std::string(const LlmNodeTag&)> label;
  // Kernels priced from a kernel-times file, by the compute model, and at
  // the constant efficiencies (no model for the NPU).
  std::uint64_t kernels_measured = 0;
  std::uint64_t kernels_modelled = 0;
  std::uint64_t kernels_constant = 0;
  // Per kernel of the graph (its payload), what kind of kernel it is; none
  // for host work and for builders that do not say (then the report has no
  // compute breakdown by kind).
  std::vector<std::optional<KernelKind>> kernel_kinds;
};

// How FP8 GEMM operands are scaled (Transformer Engine's recipes): delayed
// (a per-tensor scale from an amax history, the amaxes reduced where each
// chunk's FP8 region ends), current (a per-tensor scale from the tensor's
// own amax, an extra read before each cast) and MXFP8 (an E8M0 scale per 32
// values, rowwise and columnwise quantised apart, no amaxes to reduce).
enum class Fp8Recipe : std::uint8_t { kDelayed, kCurrent, kMxfp8 };

struct LlmOptions {
  int bytes_per_element = 2;
  Fp8Recipe fp8_recipe = Fp8Recipe::kDelayed;  // with bytes_per_element 1
  // Per-tensor FP8 keeps a transposed copy of the operands a backward GEMM
  // reads (Hopper); not on tensor cores that take either layout (npu.mxfp8).
  bool fp8_transposes = true;
  int iterations = 2;
  LlmEfficiency efficiency = default_llm_efficiency();
  // Prices each kernel by its shape (compute/kernel_pricer.h); none, or one
  // without a model, leaves the rest at `efficiency`.
  std::shared_ptr<const KernelPricer> pricer;
};

// The precisions an LLM trains at: the layer-table models' (fp8 is FP8
// with delayed scaling) and fp8-cs (current scaling) and mxfp8.
std::vector<std::string> llm_precision_names();
// fp8-cs and mxfp8: names only an LLM takes.
bool llm_only_precision(std::string_view name);
// Sets `o`'s precision from its name for `npu`; what is wrong (an unknown
// name, a GPU without the tensor cores it needs), or an empty string.
std::string set_llm_precision(LlmOptions& o, std::string_view name, const NpuConfig& npu);

// The group a collective runs on: whole topology dimensions when its ranks
// are all the NPUs of some dimensions around the first and every such group
// runs the same program (`listed` false: one pipeline stage), else the
// listed ranks (NCCL's model still runs them as a communicator of those
// ranks, collective_engine.h). None for a group of one.
std::optional<CollectiveSpec> llm_group_spec(const std::vector<Rank>& ranks, const Topology& topo, bool listed);

class LlmJob final : public StagedJob {
 public:
  // Checks the plan (check_plan) against the shape and the topology's NPUs.
  LlmJob(TransformerShape shape, ParallelPlan plan, const Topology& topo, LlmOptions options = {});
  LlmJob(TransformerShape, ParallelPlan, const Topology&&, LlmOptions = {}) = delete;  // it keeps the topology

  // Rank r's graph: its stage's passes in schedule order. Its collectives
  // run over topology dimensions where a group is whole dimensions and every
  // rank runs the same program (one stage), else, or with `listed`, over
  // their listed ranks.
  LlmRankGraph build(Rank r, bool listed = false) const override;

  const TransformerShape& shape() const { return shape_; }
  const ParallelPlan& plan() const override { return plan_; }
  const RankLayout& layout() const override { return layout_; }
  const LlmOptions& options() const { return options_; }
  // Model FLOPs per GPU and iteration as Megatron-LM counts them (arXiv
  // 2104.04473 eq. 3 generalised: 3x the forward's FLOPs, 4x with full
  // recomputation, attention scores counted whole; MoE: the experts a token
  // takes), over all GPUs.
  double model_flops_per_gpu() const override { return flops_per_gpu(true); }
  // Without recomputation: 3x the forward's FLOPs, PaLM's model FLOPs
  // (arXiv 2204.02311 appendix B: 6N + 12 L s (heads x head_dim) per token,
  // N the matrices' parameters, the LM head's included).
  double model_flops_no_recompute_per_gpu() const override { return flops_per_gpu(false); }
  // The vocabulary Megatron-LM pads to a multiple of 128 x tp.
  double padded_vocab() const;
  // The layers of each stage and model chunk (even, or Megatron-LM's uneven split).
  const LayerSplit& split() const { return split_; }
  // About how many nodes one rank's graph holds, at most (llm_graph_test
  // compares it with built graphs): nodes_per_layer() per layer of the
  // stage with most and micro-batch.
  double estimated_nodes_per_rank() const override {
    return nodes_per_layer() * split_.most_stage_layers() * plan_.micro_batches() * options_.iterations;
  }
  // 60 per layer and micro-batch (forward, backward and their collectives;
  // 90 with a recomputed forward), and with context parallelism each pass
  // through attention (forward, backward, a recomputation) cp blocks of
  // compute and cp - 1 sends and receives around the ring instead of one
  // kernel.
  double nodes_per_layer() const;
  double estimated_bytes_per_rank() const override {
    const double ring = ring_nodes_per_rank();
    return kBytesPerNode * (estimated_nodes_per_rank() - ring) + kBytesPerRingNode * ring;
  }
  // Of those nodes, the context-parallel ring's beyond one kernel per pass.
  double ring_nodes_per_rank() const {
    return 3.0 * (plan_.cp - 1) * attention_passes() * split_.most_stage_layers() * plan_.micro_batches() *
           options_.iterations;
  }
  // How many passes through attention a layer makes per micro-batch.
  int attention_passes() const { return plan_.recompute == Recompute::kNone ? 2 : 3; }
  std::string estimate_terms() const override;
  std::string name() const override { return shape_.name; }
  std::string plan_text() const override;
  int iterations() const override { return options_.iterations; }
  // memory_per_gpu of the stage, at the plan's attention kernel.
  std::optional<MemoryBreakdown> stage_memory(int stage) const override;
  // The parameters times the weights' and optimizer states' bytes of each
  // (bytes_per_parameter without ZeRO: 14 B at bf16).
  double model_state_bytes() const override;
  std::string model_state_text() const override;
  std::string kernel_times() const override {
    return options_.pricer && options_.pricer->measured() ? options_.pricer->measured()->path() : std::string();
  }
  std::string calibration() const override { return options_.pricer ? options_.pricer->in_situ().file : std::string(); }
  InSitu in_situ() const override { return options_.pricer ? options_.pricer->in_situ().values : InSitu{}; }

 private:
  double flops_per_gpu(bool with_recompute) const;

  TransformerShape shape_;
  ParallelPlan plan_;
  const Topology& topo_;
  LlmOptions options_;
  RankLayout layout_;
  LayerSplit split_;
};

}  // namespace acesim
