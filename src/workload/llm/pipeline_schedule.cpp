// Pipeline schedules (pipeline_schedule.h).
#include "workload/llm/pipeline_schedule.h"

#include <algorithm>

namespace acesim {
namespace {

// Megatron-Core's mapping of the k-th virtual micro-batch of a stage to its
// model chunk and micro-batch: groups of pp micro-batches run through every
// chunk in turn (backward: the chunks in reverse).
PipeOp virtual_op(int k, int pp, int v, bool backward) {
  PipeOp op;
  const int in_group = k % (pp * v);
  op.chunk = in_group / pp;
  if (backward) op.chunk = v - 1 - op.chunk;
  op.micro_batch = (k / (pp * v)) * pp + k % pp;
  op.backward = backward;
  return op;
}

}  // namespace

std::vector<PipeOp> pipeline_order(PipeSchedule schedule, int pp, int stage, int m, int v) {
  std::vector<PipeOp> out;
  if (schedule == PipeSchedule::kGpipe && pp > 1) {
    for (int mb = 0; mb < m; ++mb) out.push_back({0, mb, false});
    for (int mb = 0; mb < m; ++mb) out.push_back({0, mb, true});
    return out;
  }
  // One stage runs each micro-batch's backward right after its forward.
  if (schedule != PipeSchedule::kInterleaved) v = 1;
  const int total = m * v;
  int warmup = 0;
  if (v == 1) {
    warmup = std::min(pp - stage - 1, total);
  } else {
    // Megatron-Core: (pp - stage - 1) * 2 + (v - 1) * pp; everything when
    // the micro-batches are no more than the stages.
    warmup = m == pp ? total : std::min((pp - stage - 1) * 2 + (v - 1) * pp, total);
  }
  const auto fwd = [&](int k) { return v == 1 ? PipeOp{0, k, false} : virtual_op(k, pp, v, false); };
  const auto bwd = [&](int k) { return v == 1 ? PipeOp{0, k, true} : virtual_op(k, pp, v, true); };
  int f = 0, b = 0;
  for (; f < warmup; ++f) out.push_back(fwd(f));
  for (; f < total; ++f, ++b) {
    out.push_back(fwd(f));
    out.push_back(bwd(b));
  }
  for (; b < total; ++b) out.push_back(bwd(b));
  return out;
}

ChunkPos previous_chunk(int pp, int /*virtual_stages*/, int stage, int chunk) {
  const int g = chunk * pp + stage - 1;
  if (g < 0) return {};
  return {g % pp, g / pp};
}

ChunkPos next_chunk(int pp, int v, int stage, int chunk) {
  const int g = chunk * pp + stage + 1;
  if (g >= pp * v) return {};
  return {g % pp, g / pp};
}

}  // namespace acesim
