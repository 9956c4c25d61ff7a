// Built-in model: GPT.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "workload/models/model_common.h"
#include "workload/models/model_registry.h"

namespace acesim::models {
namespace {

// A GPT-2/GPT-3 decoder-only transformer with Megatron-LM tensor parallelism
// (Shoeybi et al. 2019, arXiv 1909.08053; FLOPs from Narayanan et al. 2021,
// arXiv 2104.04473: 24Bsh^2 + 4Bs^2h forward per layer).
Workload build_gpt(const ModelOptions& opt, const Topology& topo) {
  const Common c = check_common("gpt", opt, 8);
  if (opt.gpt_layers < 1 || opt.gpt_hidden < 1 || opt.gpt_heads < 1 || opt.gpt_seq < 1 || opt.gpt_vocab < 1) {
    fail(c.model, "gpt_layers, gpt_hidden, gpt_heads, gpt_seq and gpt_vocab must all be >= 1");
  }
  if (opt.gpt_hidden % opt.gpt_heads != 0) {
    fail(c.model, "gpt_heads (" + std::to_string(opt.gpt_heads) + ") must divide gpt_hidden (" +
                      std::to_string(opt.gpt_hidden) + ")");
  }
  auto md = checked_dims(c.model, "model_dims", opt.model_dims, topo);
  if (md.empty()) md = {0};
  auto dd = checked_dims(c.model, "data_dims", opt.data_dims, topo);
  if (dd.empty()) {
    for (int d = 0; d < topo.num_dims(); ++d) {
      if (std::find(md.begin(), md.end(), d) == md.end()) dd.push_back(d);
    }
  } else {
    for (int d : dd) {
      if (std::find(md.begin(), md.end(), d) != md.end()) {
        fail(c.model, "dimension " + std::to_string(d) + " is in both data_dims and model_dims");
      }
    }
  }
  const Group model = make_group(topo, md);
  const Group data = make_group(topo, dd);
  const double t = model.npus;
  const long long ti = static_cast<long long>(t);
  if (opt.gpt_heads % ti != 0 || opt.gpt_hidden % ti != 0) {
    fail(c.model, "the tensor-parallel group (" + std::to_string(ti) + " NPUs over model_dims) must divide gpt_heads (" +
                      std::to_string(opt.gpt_heads) + ") and gpt_hidden (" + std::to_string(opt.gpt_hidden) + ")");
  }

  Workload w = start("GPT", "HYBRID_TRANSFORMER", opt);
  const double b = c.batch, s = opt.gpt_seq, h = opt.gpt_hidden;
  // Megatron pads the vocabulary to a multiple of 128 * t so that each rank
  // holds an equal slice (--make-vocab-size-divisible-by 128).
  const double unit = 128.0 * t;
  const double vocab = std::ceil(opt.gpt_vocab / unit) * unit;
  const double act = b * s * h;          // one full activation tensor
  const double act_bytes = act * c.bpe;  // Megatron's tensor-parallel all-reduce size

  {
    // Vocabulary-parallel embedding: each rank looks up the tokens in its
    // slice; the partial results are summed by an all-reduce.
    Layer l;
    l.name = "embedding";
    const double params = vocab * h / t;
    l.forward.compute = kernel(0.0, act / t + act, c.bpe);
    l.forward.comm = comm(CollectiveOp::kAllReduce, act_bytes, model, /*blocking=*/true);
    no_input_grad(l);  // token ids
    l.weight_grad.compute = kernel(act / t, act + act / t, c.bpe);
    // Tied with the LM head: one all-reduce carries both contributions.
    l.weight_grad.comm = comm(CollectiveOp::kAllReduce, params * c.bpe, data, false);
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
  for (int i = 1; i <= opt.gpt_layers; ++i) {
    const std::string p = "block" + std::to_string(i);
    // QKV (6bsh^2) + scores (2bs^2h) + context (2bs^2h) + output projection (2bsh^2).
    w.layers.push_back(half(p + "_attention", 8.0 * b * s * h * h + 4.0 * b * s * s * h, 4.0 * h * h));
    // h -> 4h -> h.
    w.layers.push_back(half(p + "_mlp", 16.0 * b * s * h * h, 8.0 * h * h));
  }
  {
    // Logits against the tied embedding (column-parallel over the vocabulary);
    // the parallel cross-entropy's small all-reduces (3 * b * s values) are
    // left out. Its weight gradient is reduced with the embedding's.
    Layer l = weighted_layer("lm_head", 2.0 * b * s * h * vocab / t, vocab * h / t, act, b * s * vocab / t, 0.0,
                             data, c.bpe);
    l.input_grad.comm = comm(CollectiveOp::kAllReduce, act_bytes, model, true);
    w.layers.push_back(l);
  }
  return w;
}

}  // namespace

void register_gpt(ModelRegistry& registry) {
  registry.add({{"gpt", {}, "GPT decoder: Megatron tensor parallel over model_dims, data parallel over the rest"}, build_gpt});
}

}  // namespace acesim::models
