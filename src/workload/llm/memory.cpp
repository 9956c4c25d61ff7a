// The per-GPU memory footprint of an LLM training plan (memory.h; every
// formula and its source: docs/models.md, "Memory").
#include "workload/llm/memory.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "workload/llm/parallel_plan.h"
#include "workload/models/models.h"

namespace acesim {
namespace {

// Keys' (and values') width; a shape without kv_heads has one per head.
double kv_width(const TransformerShape& m) { return m.kv_heads > 0 ? m.kv_width() : m.q_width(); }

// Weight matrices of width f in one MLP: up and down, plus the gate of SwiGLU.
double mlp_matrices(const TransformerShape& m) { return m.swiglu ? 3.0 : 2.0; }

// Tensors of width f an MLP keeps for backward: GeLU's input and output
// (Korthikanti's 8sbh + 8sbh at f = 4h); SwiGLU with Megatron-LM's fused
// bias-SwiGLU kernel, the gate and up projections and their product.
double mlp_saved_tensors(const TransformerShape& m) { return m.swiglu ? 3.0 : 2.0; }

// Layers [first, last) of stage `stage` (all its model chunks).
template <typename F>
void for_each_layer(const TransformerShape& m, const ParallelPlan& p, int stage, F&& f) {
  const LayerSplit split(p, m.layers);
  for (int j = 0; j < std::max(1, p.virtual_stages); ++j) {
    const int first = split.first_layer(stage, j);
    for (int l = first; l < first + split.chunk_layers(stage, j); ++l) f(l);
  }
}

std::string gb(double bytes) { return fmt::format("{:.1f} GB", bytes / 1e9); }

}  // namespace

BytesPerParameter bytes_per_parameter(int zero, double d, int bytes_per_element, int grad_bytes) {
  BytesPerParameter b;
  b.weights = bytes_per_element;
  b.gradients = grad_bytes;
  // Adam's two fp32 moments, and an fp32 master copy of low-precision weights.
  b.optimizer = 8.0 + (bytes_per_element < 4 ? 4.0 : 0.0);
  if (zero >= 1) b.optimizer /= d;
  if (zero >= 2) b.gradients /= d;
  if (zero >= 3) b.weights /= d;
  return b;
}

long long padded_vocab(int vocab, int tp) {
  const long long multiple = 128LL * tp;
  return (vocab + multiple - 1) / multiple * multiple;
}

StageParameters stage_parameters(const TransformerShape& m, const ParallelPlan& p, int stage) {
  const double h = m.hidden, t = p.tp;
  const double attention = (h * (m.q_width() + 2.0 * kv_width(m)) + m.q_width() * h) / t;
  const double expert = mlp_matrices(m) * h * m.moe_ffn_hidden;  // a whole expert
  StageParameters s;
  for_each_layer(m, p, stage, [&](int layer) {
    s.dense += attention;
    if (!m.is_moe_layer(layer)) {
      s.dense += mlp_matrices(m) * h * m.ffn_hidden / t;
      return;
    }
    s.dense += h * m.experts;  // the router, replicated over the tensor-parallel ranks
    s.dense += m.shared_experts * expert / t;  // shared experts split as a dense MLP
    s.expert += static_cast<double>(m.experts) / p.ep * expert / p.etp();  // split over the expert-tp ranks
  });
  const double embedding = static_cast<double>(padded_vocab(m.vocab, p.tp)) * h / t;
  if (stage == 0) s.dense += embedding;
  // The last stage's LM head; a tied one is the embedding itself only when
  // one stage holds both (Megatron-LM keeps a copy on the last stage and
  // all-reduces the two gradients).
  if (stage == p.pp - 1 && (!m.tied_embeddings || p.pp > 1)) s.dense += embedding;
  return s;
}

double layer_activation_bytes(const TransformerShape& m, const ParallelPlan& p, int layer, int bytes_per_element,
                              AttentionKernel attention) {
  const double beta = bytes_per_element, t = p.tp;
  const double s_local = static_cast<double>(m.seq) / p.cp, b = p.micro_batch, h = m.hidden;
  const double tokens = s_local * b;
  const double seq_split = p.sequence_parallel ? t : 1.0;
  if (p.recompute == Recompute::kFull) return beta * tokens * h / seq_split;  // the layer's input only
  // Outside the tensor-parallel regions, split only with sequence parallelism:
  // two norms' inputs, the QKV and MLP inputs, two 1-byte dropout masks.
  double outside = (4.0 * beta + 2.0) * tokens * h;
  // Inside them, split over tp: Q, K, V and the output projection's input ...
  double inside = beta * tokens * (2.0 * m.q_width() + 2.0 * kv_width(m));
  if (attention != AttentionKernel::kUnfused) {
    // ... and fused attention's fp32 softmax statistics (log-sum-exp) per
    // head and query; recomputation changes nothing here.
    inside += 4.0 * m.heads * tokens;
  } else if (p.recompute == Recompute::kNone) {
    // ... or the unfused attention core: softmax output, its dropout mask
    // and output, s/cp query rows against all s keys.
    inside += (2.0 * beta + 1.0) * m.heads * b * s_local * m.seq;
  }
  double routed = 0.0;
  if (!m.is_moe_layer(layer)) {
    inside += mlp_saved_tensors(m) * beta * tokens * m.ffn_hidden;
  } else {
    outside += 4.0 * tokens * m.experts;  // fp32 router probabilities
    const double width = mlp_saved_tensors(m) * beta * tokens * m.moe_ffn_hidden;
    inside += m.shared_experts * width;
    // Each rank routes its (sequence-parallel) share of the tokens top_k
    // times; balanced routing brings as many back, all-gathered over the
    // expert-tp ranks (expert tensor parallelism etp), each keeping 1/etp of
    // the inner tensors: the experts' inputs and inner tensors.
    routed = m.top_k * (beta * tokens * h * p.etp() + width) / seq_split;
  }
  return outside / seq_split + inside / t + routed;
}

double micro_batches_in_flight(const ParallelPlan& p, int stage) {
  const double m = p.micro_batches();
  if (p.pp == 1) return 1.0;  // each micro-batch's backward runs before the next forward
  if (p.schedule == PipeSchedule::kGpipe) return m;
  if (p.schedule == PipeSchedule::kInterleaved && p.virtual_stages > 1) {
    // Megatron-LM's interleaved warm-up, 2 (pp - stage - 1) + (v - 1) pp
    // chunk forwards, and one more in the steady state; each chunk is 1/v of
    // the stage's layers. Stage 0: pp (1 + (pp - 1) / (pp v)) (Korthikanti §4.2.3).
    const double v = p.virtual_stages;
    if (p.micro_batches() == p.pp) return m;  // every forward first (Megatron-Core's all-warm-up case)
    const double chunks = 2.0 * (p.pp - stage - 1) + (v - 1.0) * p.pp + 1.0;
    return std::min(chunks, m * v) / v;
  }
  return std::min(static_cast<double>(p.pp - stage), m);  // 1F1B
}

MemoryBreakdown memory_per_gpu(const TransformerShape& m, const ParallelPlan& p, int stage, int bytes_per_element,
                               AttentionKernel attention) {
  if (stage < 0 || stage >= p.pp) {
    throw std::invalid_argument("memory_per_gpu: stage " + std::to_string(stage) + " outside 0.." +
                                std::to_string(p.pp - 1));
  }
  MemoryBreakdown r;
  r.stage = stage;
  const StageParameters params = stage_parameters(m, p, stage);
  r.parameters = params.total();
  const double d_dense = static_cast<double>(p.dp) * p.cp;
  // Every context- and data-parallel rank holding the same experts (with
  // whole experts, every tensor-parallel one too) shares their states
  // (RankLayout::expert_dp_group).
  const double d_expert = static_cast<double>(p.tp / p.etp()) * p.cp * p.dp / p.ep;
  BytesPerParameter dense = bytes_per_parameter(p.zero, d_dense, bytes_per_element);
  BytesPerParameter expert = bytes_per_parameter(p.zero, d_expert, bytes_per_element);
  if (p.zero3_keeps_params()) {
    // Kept from the forward to the backward: at the peak (the last
    // micro-batch's forward done) every layer's parameters are whole.
    dense.weights = bytes_per_element;
    expert.weights = bytes_per_element;
  }
  r.weights_bytes = params.dense * dense.weights + params.expert * expert.weights;
  r.gradients_bytes = params.dense * dense.gradients + params.expert * expert.gradients;
  r.optimizer_bytes = params.dense * dense.optimizer + params.expert * expert.optimizer;

  double per_micro_batch = 0.0;
  for_each_layer(m, p, stage, [&](int layer) { per_micro_batch += layer_activation_bytes(m, p, layer, bytes_per_element, attention); });
  const double beta = bytes_per_element, t = p.tp;
  const double tokens = static_cast<double>(m.seq) / p.cp * p.micro_batch;
  const double seq_split = p.sequence_parallel ? t : 1.0;
  // Stage 0: the int64 token ids (on every tensor-parallel rank) and the
  // embedding's 1-byte dropout mask.
  if (stage == 0) per_micro_batch += 8.0 * tokens + tokens * m.hidden / seq_split;
  r.micro_batches_in_flight = micro_batches_in_flight(p, stage);
  r.activations_bytes = r.micro_batches_in_flight * per_micro_batch;
  if (stage == p.pp - 1) {
    // Final norm and LM-head inputs, and the fp32 logits, for the micro-batches
    // whose backward has not started: one, or all of them under GPipe.
    const double head = 2.0 * beta * tokens * m.hidden / seq_split +
                        4.0 * tokens * static_cast<double>(padded_vocab(m.vocab, p.tp)) / t;
    const bool all = p.schedule == PipeSchedule::kGpipe && p.pp > 1;
    r.activations_bytes += head * (all ? p.micro_batches() : 1.0);
  }
  return r;
}

MemoryBreakdown worst_stage_memory(const TransformerShape& m, const ParallelPlan& p, int bytes_per_element,
                                   AttentionKernel attention) {
  MemoryBreakdown worst = memory_per_gpu(m, p, 0, bytes_per_element, attention);
  for (int s = 1; s < p.pp; ++s) {
    const MemoryBreakdown b = memory_per_gpu(m, p, s, bytes_per_element, attention);
    if (b.total_bytes() > worst.total_bytes()) worst = b;
  }
  return worst;
}

bool fits_in_hbm(const MemoryBreakdown& m, double hbm_capacity_GB) {
  return hbm_capacity_GB <= 0.0 || m.total_bytes() <= hbm_capacity_GB * 1e9;
}

std::string format_memory(const MemoryBreakdown& m, double hbm_capacity_GB) {
  std::string out = fmt::format("stage {}: weights {}, gradients {}, optimizer {}, activations {}, total {}", m.stage,
                                gb(m.weights_bytes), gb(m.gradients_bytes), gb(m.optimizer_bytes),
                                gb(m.activations_bytes), gb(m.total_bytes()));
  if (hbm_capacity_GB <= 0.0) return out + " (HBM capacity unknown)";
  return out + fmt::format(" {} {:g} GB HBM", fits_in_hbm(m, hbm_capacity_GB) ? "<=" : ">", hbm_capacity_GB);
}

std::string activations_why(const MemoryBreakdown& m, const ParallelPlan& plan) {
  const char* schedule = plan.virtual_stages > 1 ? "interleaved" : plan.pp > 1 ? "1F1B" : "gradient accumulation";
  return fmt::format("its activations are {:.4g} {} worth of its layers, in flight at the {} schedule's peak", m.micro_batches_in_flight,
                     m.micro_batches_in_flight == 1.0 ? "micro-batch's" : "micro-batches'", schedule);
}

}  // namespace acesim
