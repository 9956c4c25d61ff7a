// Lowers a training workload (a layer table: built-in models, ASTRA-sim 1.0
// tables) into one rank's work graph (docs/workloads.md, "Training loop").
// Every rank runs the same graph.
//
// Per iteration, on the compute stream:
//   forward, layer 0 .. L-1: wait until the layer's weight-gradient
//     collective of the previous iteration is done plus its update time (and
//     whatever else gates that forward: DLRM's embedding all-to-alls);
//     compute; issue the forward collective (a blocking one holds the stream
//     until done plus its update time).
//   backward, layer L-1 .. 0: recompute checkpointed forwards; weight-gradient
//     compute; issue its collective (non-blocking: it overlaps what follows);
//     input-gradient compute (not for layer 0: nothing consumes it); issue
//     the input-gradient collective (blocking, unless deferred to after
//     another layer's backward: then it gates its own layer's next forward).
// The last node waits for every collective still in flight (plus updates).
// Kernels with no work are left out; so are waits with nothing to wait for.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "workload/graph/work_graph.h"
#include "workload/workload.h"

namespace acesim {

// What a node of a lowered graph stands for, for the training report.
struct TrainingStep {
  static constexpr std::uint8_t kRecompute = 3;
  std::int32_t iteration = -1;
  std::int32_t layer = -1;  // -1: none (the start, the end)
  // PassKind (0..2), or kRecompute for a recomputed forward's collective.
  // A wait: the pass it is reported under.
  std::uint8_t pass = 0;
};

struct TrainingGraph {
  WorkGraph graph;
  std::vector<TrainingStep> steps;  // per node
};

// `runs(k)`: whether kernel k takes any time (the endpoint's isolated time > 0).
// Throws std::invalid_argument for a workload without layers or iterations,
// or whose collectives or recomputations name layers that do not exist.
TrainingGraph lower_training(const Workload& w, const std::function<bool(const Kernel&)>& runs);

}  // namespace acesim
