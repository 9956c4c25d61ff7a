// A training workload: layers with three compute passes and a communication
// per pass, and how many iterations to run (docs/workloads.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collective/types.h"
#include "endpoint/endpoint.h"

namespace acesim {

enum class PassKind { kForward, kInputGrad, kWeightGrad };
std::string_view to_string(PassKind p);

// A collective issued after a pass's compute.
struct CommSpec {
  std::optional<CollectiveOp> op;  // none: the pass communicates nothing
  double bytes = 0.0;              // nccl-tests convention (see docs/model.md)
  std::vector<int> dims;           // topology dimensions of its groups; empty: all
  // Blocking: the rank's compute waits for it (model-parallel activations).
  // Non-blocking: issued and overlapped (data-parallel weight gradients).
  bool blocking = true;
  // Forward collectives only: >= 0 makes it non-blocking, and the forward
  // of that layer waits for it (DLRM's embedding all-to-all before the top MLP).
  int wait_before_forward_layer = -1;
  // Input-gradient collectives only: >= 0 issues it, non-blocking, right
  // after the backward of that layer instead of at its own layer; the next
  // forward of its own layer waits for it (DLRM's embedding-gradient all-to-all).
  int issue_after_backward_layer = -1;
};

struct Pass {
  Kernel compute;  // FLOPs + HBM bytes through the NPU model, or a time
  CommSpec comm;
};

struct Layer {
  std::string name;
  Pass forward;
  Pass input_grad;
  Pass weight_grad;
  // Added after each of this layer's collectives completes before what
  // waits on it may go on (ASTRA-sim's "update delay"; the optimizer step
  // for weight gradients).
  TimePs update_ps = 0;
  // Activation checkpointing: when back-propagation reaches this layer, the
  // forward passes of these layers run again first.
  std::vector<int> recompute_forward;
};

struct Workload {
  std::string name;         // e.g. "ResNet-50" or the file it came from
  std::string parallelism;  // e.g. "DATA", "HYBRID_TRANSFORMER"
  std::vector<Layer> layers;
  int iterations = 2;
  bool forward_only = false;  // inference: no backward pass
  // Model FLOPs one rank does per iteration as Megatron-LM counts them
  // (arXiv 2104.04473, eq. 3: forward and backward, 3x the forward's
  // FLOPs); 0 where the model has no such count.
  double model_flops_per_rank = 0.0;
};

// Totals of a workload as given (for tests and reports): compute per pass
// given as time, and bytes per collective type.
struct WorkloadTotals {
  TimePs forward_ps = 0;
  TimePs input_grad_ps = 0;
  TimePs weight_grad_ps = 0;
  double flops = 0.0;
  double comm_bytes[4] = {0, 0, 0, 0};  // by CollectiveOp
  int collectives = 0;
};
WorkloadTotals totals(const Workload& w);

}  // namespace acesim
