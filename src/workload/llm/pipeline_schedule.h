// The order in which one pipeline stage runs its micro-batches' forward and
// backward passes (docs/models.md, "Pipeline schedules"):
//   gpipe        every forward, then every backward (Huang et al. 2019)
//   1f1b         PipeDream-Flush: stage i runs pp-i-1 forwards, then
//                alternates one forward and one backward, then drains
//                (Narayanan et al. 2021, arXiv 2104.04473 section 2.2.1)
//   interleaved  each stage holds v model chunks; Megatron-LM's order of
//                virtual micro-batches (section 2.2.2; Megatron-Core's
//                forward_backward_pipelining_with_interleaving)
#pragma once

#include <vector>

#include "workload/llm/parallel_plan.h"

namespace acesim {

struct PipeOp {
  int chunk = 0;        // model chunk of the stage (0 .. virtual_stages-1)
  int micro_batch = 0;  // 0 .. micro-batches-1
  bool backward = false;
};

// Stage `stage`'s passes in order: m * v forwards and m * v backwards.
std::vector<PipeOp> pipeline_order(PipeSchedule schedule, int pp, int stage, int micro_batches, int virtual_stages);

// Model chunk `chunk` of stage `stage` is the g-th slice of the layers,
// g = chunk * pp + stage; these give the stage and chunk holding the slice
// before and after it (-1 when there is none).
struct ChunkPos {
  int stage = -1;
  int chunk = -1;
  bool valid() const { return stage >= 0; }
};
ChunkPos previous_chunk(int pp, int virtual_stages, int stage, int chunk);
ChunkPos next_chunk(int pp, int virtual_stages, int stage, int chunk);

}  // namespace acesim
