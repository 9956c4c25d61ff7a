// Built-in model: GPT.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "config/input_error.h"
#include "workload/models/model_common.h"
#include "workload/models/model_registry.h"

namespace acesim::models {
namespace {

// Which dims carry tensor and data parallelism (model_dims default {0}).
std::pair<Group, Group> tp_dp_groups(const std::string& model, const ModelOptions& opt, const Topology& topo) {
  auto md = checked_dims(model, "model_dims", opt.model_dims, topo);
  if (md.empty()) md = {0};
  auto dd = checked_dims(model, "data_dims", opt.data_dims, topo);
  if (dd.empty()) {
    for (int d = 0; d < topo.num_dims(); ++d) {
      if (std::find(md.begin(), md.end(), d) == md.end()) dd.push_back(d);
    }
  } else {
    for (int d : dd) {
      if (std::find(md.begin(), md.end(), d) != md.end()) {
        fail(model, "dimension " + std::to_string(d) + " is in both data_dims and model_dims");
      }
    }
  }
  return {make_group(topo, md), make_group(topo, dd)};
}

void check_shape(const std::string& model, const TransformerShape& m, long long t) {
  if (m.layers < 1 || m.hidden < 1 || m.heads < 1 || m.kv_heads < 1 || m.ffn_hidden < 1 || m.seq < 1 || m.vocab < 1) {
    fail(model, "layers, hidden, heads, kv_heads, ffn_hidden, seq and vocab must all be >= 1");
  }
  if (m.head_dim < 0 || (m.head_dim == 0 && m.hidden % m.heads != 0)) {
    fail(model, "heads (" + std::to_string(m.heads) + ") must divide hidden (" + std::to_string(m.hidden) + ") when head_dim is not given");
  }
  if (m.heads % m.kv_heads != 0) {
    fail(model, "kv_heads (" + std::to_string(m.kv_heads) + ") must divide heads (" + std::to_string(m.heads) + ")");
  }
  // Megatron splits heads, key/value groups and the MLP's width over the
  // tensor-parallel ranks.
  if (m.heads % t != 0 || m.kv_heads % t != 0 || m.ffn_hidden % t != 0) {
    fail(model, "the tensor-parallel group (" + std::to_string(t) + " NPUs over model_dims) must divide heads (" +
                    std::to_string(m.heads) + "), kv_heads (" + std::to_string(m.kv_heads) + ") and ffn_hidden (" +
                    std::to_string(m.ffn_hidden) + ")");
  }
}

}  // namespace
}  // namespace acesim::models

namespace acesim {

using models::Common;
using models::Group;
using models::check_common;
using models::comm;
using models::kernel;
using models::no_input_grad;
using models::start;
using models::weighted_layer;

int TransformerShape::moe_layers() const {
  int n = 0;
  for (int i = 0; i < layers; ++i) n += is_moe_layer(i) ? 1 : 0;
  return n;
}

namespace {

// `routed` routed experts counted per MoE layer: all of them for the model's
// size, top_k for what one token uses. A dense model adds exact zeros, so its
// count is the dense formula's to the bit.
double transformer_parameters(const TransformerShape& m, int routed) {
  const double h = m.hidden, q = m.q_width(), kv = m.kv_width();  // query and key (and value) widths
  const double attention = h * (q + 2.0 * kv) + q * h;
  const double gemms = m.swiglu ? 3.0 : 2.0;
  const double mlp = gemms * h * m.ffn_hidden;
  const double experts_used = static_cast<double>(routed) + m.shared_experts;
  const double moe_mlp = experts_used * gemms * h * m.moe_ffn_hidden + h * m.experts;  // + router
  const int moe = m.moe_layers();
  return (m.layers - moe) * (attention + mlp) + moe * (attention + moe_mlp) +
         (m.tied_embeddings ? 1.0 : 2.0) * static_cast<double>(m.vocab) * h;
}

}  // namespace

double TransformerShape::parameters() const { return transformer_parameters(*this, experts); }
double TransformerShape::active_parameters() const { return transformer_parameters(*this, top_k); }

// A decoder-only transformer with Megatron-LM tensor parallelism (Shoeybi
// et al. 2019, arXiv 1909.08053). FLOPs per layer, forward: Q, K, V
// (2bsh(h + 2 kv)), scores and context (4bs^2h), output projection
// (2bsh^2), MLP (2bsh ffn per GEMM: two, or three gated). With kv = h and
// ffn = 4h that is Narayanan et al.'s 24bsh^2 + 4bs^2h (arXiv 2104.04473).
Workload build_transformer(const TransformerShape& m, const ModelOptions& opt, const Topology& topo) {
  // This layer table has no experts, routers or all-to-alls: running a MoE
  // shape on it would price a different model without saying so.
  if (m.moe()) {
    throw InputError("model " + m.name + ": mixture-of-experts models need the LLM plan: --tp/--ep (" +
                     std::to_string(m.experts) + " experts; the layer-table path runs dense transformers only)");
  }
  const Common c = check_common(m.name, opt, m.default_batch);
  // Named, not a structured binding: the lambda below captures them.
  const std::pair<Group, Group> groups = models::tp_dp_groups(c.model, opt, topo);
  const Group& model = groups.first;
  const Group& data = groups.second;
  const double t = model.npus;
  models::check_shape(c.model, m, static_cast<long long>(t));

  Workload w = start(m.name == "gpt" ? "GPT" : m.name, "HYBRID_TRANSFORMER", opt);
  const double b = c.batch, s = m.seq, h = m.hidden, q = m.q_width(), kv = m.kv_width();
  // Megatron pads the vocabulary to a multiple of 128 * t so that each rank
  // holds an equal slice (--make-vocab-size-divisible-by 128).
  const double unit = 128.0 * t;
  const double vocab = std::ceil(m.vocab / unit) * unit;
  const double act = b * s * h;          // one full activation tensor
  const double act_bytes = act * c.bpe;  // Megatron's tensor-parallel all-reduce size
  const double embedding_params = vocab * h / t;

  {
    // Vocabulary-parallel embedding: each rank looks up the tokens in its
    // slice; the partial results are summed by an all-reduce.
    Layer l;
    l.name = "embedding";
    l.forward.compute = kernel(0.0, act / t + act, c.bpe);
    l.forward.comm = comm(CollectiveOp::kAllReduce, act_bytes, model, /*blocking=*/true);
    no_input_grad(l);  // token ids
    l.weight_grad.compute = kernel(act / t, act + act / t, c.bpe);
    // Tied with the LM head: one all-reduce carries both contributions
    // (untied, the head reduces its own).
    l.weight_grad.comm = comm(CollectiveOp::kAllReduce, embedding_params * c.bpe, data, false);
    w.layers.push_back(l);
  }
  auto half = [&](const std::string& name, double flops, double params) {
    Layer l = weighted_layer(name, flops / t, params / t, act, act, params / t, data, c.bpe);
    // Row-parallel output sum (Megatron's g) in forward; its mirror (f) at
    // the half's input in backward.
    l.forward.comm = comm(CollectiveOp::kAllReduce, act_bytes, model, true);
    l.input_grad.comm = comm(CollectiveOp::kAllReduce, act_bytes, model, true);
    return l;
  };
  const double mlp_gemms = m.swiglu ? 3.0 : 2.0;
  for (int i = 1; i <= m.layers; ++i) {
    const std::string p = "block" + std::to_string(i);
    const double attention_flops = 2.0 * b * s * h * (q + 2.0 * kv) + 4.0 * b * s * s * q + 2.0 * b * s * h * q;
    w.layers.push_back(half(p + "_attention", attention_flops, h * (q + 2.0 * kv) + q * h));
    w.layers.push_back(half(p + "_mlp", mlp_gemms * 2.0 * b * s * h * m.ffn_hidden, mlp_gemms * h * m.ffn_hidden));
  }
  {
    // Logits (column-parallel over the vocabulary); the parallel
    // cross-entropy's small all-reduces (3 * b * s values) are left out.
    // Tied: its weight gradient is reduced with the embedding's; untied:
    // the head's own matrix has its own all-reduce.
    Layer l = weighted_layer("lm_head", 2.0 * b * s * h * vocab / t, vocab * h / t, act, b * s * vocab / t,
                             m.tied_embeddings ? 0.0 : embedding_params, data, c.bpe);
    l.input_grad.comm = comm(CollectiveOp::kAllReduce, act_bytes, model, true);
    w.layers.push_back(l);
  }
  // Megatron's eq. 3 counts the backward pass as twice the forward (no
  // recomputation here), so the model FLOPs are 3x the forward's.
  for (const Layer& layer : w.layers) w.model_flops_per_rank += 3.0 * layer.forward.compute.flops;
  return w;
}

}  // namespace acesim

namespace acesim {

TransformerShape gpt_shape(const ModelOptions& opt) {
  TransformerShape m;
  m.name = "gpt";
  m.layers = opt.gpt_layers;
  m.hidden = opt.gpt_hidden;
  m.heads = opt.gpt_heads;
  m.kv_heads = opt.gpt_heads;
  m.ffn_hidden = 4 * opt.gpt_hidden;
  m.seq = opt.gpt_seq;
  m.vocab = opt.gpt_vocab;
  m.default_batch = 8;
  m.linear_bias = true;  // GPT-2/3 blocks
  m.layernorm = true;
  return m;
}

}  // namespace acesim

namespace acesim::models {
namespace {

Workload build_gpt(const ModelOptions& opt, const Topology& topo) { return build_transformer(gpt_shape(opt), opt, topo); }

}  // namespace

void register_gpt(ModelRegistry& registry) {
  registry.add({{"gpt", {}, "GPT decoder: Megatron tensor parallel over model_dims, data parallel over the rest"}, build_gpt});
}

}  // namespace acesim::models
