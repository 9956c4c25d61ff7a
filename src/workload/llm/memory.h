// The per-GPU memory footprint of an LLM training plan (docs/models.md,
// "Memory"): weights, gradients and optimizer states of the parameters a rank
// holds (mixed-precision Adam, sharded by ZeRO stage / Megatron-LM's
// distributed optimizer), and the activations it keeps for the backward pass
// (Korthikanti et al., arXiv 2205.05198), by pipeline stage.
//
// Sizes are bytes; "GB" is 10^9 bytes throughout, as NpuConfig's
// hbm_capacity_GB and NVIDIA's datasheets count them.
#pragma once

#include <string>

#include "workload/llm/parallel_plan.h"

namespace acesim {

struct TransformerShape;
struct ParallelPlan;

// Bytes per parameter of mixed-precision Adam, each part over its ZeRO
// sharding: weights (bytes_per_element), gradients (grad_bytes: Megatron-LM
// keeps fp32 main gradients, 4; the ZeRO paper fp16 ones, 2) and optimizer
// states (an fp32 master copy unless the weights are fp32 already, and two
// fp32 moments). zero 1 divides the optimizer states by the data-parallel
// size d, 2 also the gradients, 3 also the weights (ZeRO, arXiv 1910.02054,
// §5): zero 1 at bf16 is Megatron's distributed optimizer, 6 + 12/d.
struct BytesPerParameter {
  double weights = 0.0, gradients = 0.0, optimizer = 0.0;
  double total() const { return weights + gradients + optimizer; }
};
BytesPerParameter bytes_per_parameter(int zero, double d, int bytes_per_element, int grad_bytes = 4);

// Parameters (biases and norms left out) that one rank of pipeline stage
// `stage` holds before ZeRO sharding: dense ones (attention, dense MLPs,
// routers, shared experts, embedding, LM head; split over tp, except the
// routers; states sharded over dp * cp) and routed experts' (experts / ep
// whole experts: expert tensor parallelism 1, as the LLM generator runs
// them; states sharded over tp * cp * dp / ep).
struct StageParameters {
  double dense = 0.0, expert = 0.0;
  double total() const { return dense + expert; }
};
StageParameters stage_parameters(const TransformerShape& shape, const ParallelPlan& plan, int stage);

// Megatron-LM's padded vocabulary: the next multiple of 128 * tp.
long long padded_vocab(int vocab, int tp);

// Activation bytes one rank keeps for transformer layer `layer` (from 0) and
// one micro-batch, by the plan's tensor/sequence/context parallelism and
// recomputation.
double layer_activation_bytes(const TransformerShape& shape, const ParallelPlan& plan, int layer,
                              int bytes_per_element, AttentionKernel attention = AttentionKernel::kFused);

// Micro-batches whose activations stage `stage` holds at its peak, counted
// in units of all its layers (interleaved: model chunks in flight / virtual
// stages, so it may be fractional).
double micro_batches_in_flight(const ParallelPlan& plan, int stage);

struct MemoryBreakdown {
  int stage = 0;
  double weights_bytes = 0.0;
  double gradients_bytes = 0.0;
  double optimizer_bytes = 0.0;
  double activations_bytes = 0.0;
  double parameters = 0.0;               // held by the rank, before ZeRO sharding
  double micro_batches_in_flight = 0.0;  // as micro_batches_in_flight()
  double total_bytes() const { return weights_bytes + gradients_bytes + optimizer_bytes + activations_bytes; }
};

// One rank of pipeline stage `stage` (0 .. pp-1). bytes_per_element: 2 for
// bf16/fp16 weights and activations, 4 for fp32. The plan must have passed
// check_plan; throws std::invalid_argument for a stage out of range.
MemoryBreakdown memory_per_gpu(const TransformerShape& shape, const ParallelPlan& plan, int stage,
                               int bytes_per_element = 2, AttentionKernel attention = AttentionKernel::kFused);

// The stage that needs most (the first of equals); its `stage` says which.
MemoryBreakdown worst_stage_memory(const TransformerShape& shape, const ParallelPlan& plan,
                                   int bytes_per_element = 2, AttentionKernel attention = AttentionKernel::kFused);

// Whether it fits in hbm_capacity_GB (always true when the capacity is 0,
// unknown).
bool fits_in_hbm(const MemoryBreakdown& m, double hbm_capacity_GB);

// One line: "stage 0: weights 12.3 GB, gradients 24.6 GB, optimizer 9.2 GB,
// activations 40.1 GB, total 86.2 GB > 80 GB HBM" (or "<=", or "HBM
// capacity unknown" for 0).
std::string format_memory(const MemoryBreakdown& m, double hbm_capacity_GB);

// Why the activations are what they are, for a refusal: "its activations
// are 22.5 micro-batches' worth of its layers, in flight at the interleaved
// schedule's peak".
std::string activations_why(const MemoryBreakdown& m, const ParallelPlan& plan);

}  // namespace acesim
