#include "workload/models.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace acesim {
namespace {

// Sizes below are element counts (parameters, activations) as doubles; they
// become bytes through ModelOptions::bytes_per_element.

const std::vector<std::string> kModelNames = {"resnet50", "gnmt", "dlrm", "gpt"};

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

[[noreturn]] void fail(const std::string& model, const std::string& what) {
  throw std::invalid_argument("model '" + model + "': " + what);
}

// The groups of a layout: dimension lists and the NPUs in each group.
struct Group {
  std::vector<int> dims;
  double npus = 1.0;  // product of the dims' sizes; 1 = nothing to communicate
};

Group make_group(const Topology& topo, std::vector<int> dims) {
  Group g;
  for (int d : dims) g.npus *= topo.dim(d).npus;
  g.dims = std::move(dims);
  return g;
}

std::vector<int> all_dims(const Topology& topo) {
  std::vector<int> v;
  for (int d = 0; d < topo.num_dims(); ++d) v.push_back(d);
  return v;
}

// Checks a list of dimensions against the topology; empty stays empty.
std::vector<int> checked_dims(const std::string& model, const char* what, const std::vector<int>& dims,
                              const Topology& topo) {
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= topo.num_dims()) {
      fail(model, std::string(what) + " names dimension " + std::to_string(dims[i]) + "; the topology has " +
                      std::to_string(topo.num_dims()) + " (0.." + std::to_string(topo.num_dims() - 1) + ")");
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (dims[j] == dims[i]) fail(model, std::string(what) + " lists dimension " + std::to_string(dims[i]) + " twice");
    }
  }
  return dims;
}

// A collective, or none when its group is a single NPU (nothing to exchange).
CommSpec comm(CollectiveOp op, double bytes, const Group& g, bool blocking) {
  CommSpec c;
  if (g.npus <= 1.0 || bytes <= 0.0) return c;
  c.op = op;
  c.bytes = bytes;
  c.dims = g.dims;
  c.blocking = blocking;
  return c;
}

Kernel kernel(double flops, double hbm_elements, double bpe) {
  Kernel k;
  k.flops = flops;
  k.hbm_bytes = hbm_elements * bpe;
  return k;  // time_ps stays -1: FLOP/byte-based
}

// A layer with weights: forward F FLOPs, input-gradient and weight-gradient
// each ~F. Every pass moves weights + input + output activations through
// HBM (forward: read weights and input, write output; input-grad: read
// weights and output gradients, write input gradients; weight-grad: read
// input and output gradients, write weight gradients). The weight-gradient
// all-reduce carries `params` (per rank) over the data-parallel group.
Layer weighted_layer(std::string name, double flops, double weights, double in, double out, double params,
                     const Group& data, double bpe) {
  Layer l;
  l.name = std::move(name);
  const Kernel k = kernel(flops, weights + in + out, bpe);
  l.forward.compute = k;
  l.input_grad.compute = k;
  l.weight_grad.compute = k;
  l.weight_grad.comm = comm(CollectiveOp::kAllReduce, params * bpe, data, /*blocking=*/false);
  return l;
}

// The first layer of a network (or any layer whose input is not a
// differentiable tensor: raw images, token ids, dense features) computes no
// input gradient.
void no_input_grad(Layer& l) { l.input_grad.compute = Kernel{0.0, 0.0, -1}; }

struct Common {
  std::string model;
  double bpe = 2.0;
  double batch = 0.0;
};

Common check_common(const std::string& model, const ModelOptions& opt, int default_batch) {
  if (opt.batch_per_npu < 0) fail(model, "batch_per_npu must be >= 0 (0 = the model's default)");
  const int b = opt.bytes_per_element;
  if (b != 1 && b != 2 && b != 4 && b != 8) {
    fail(model, "bytes_per_element must be 1, 2, 4 or 8, not " + std::to_string(b));
  }
  if (opt.iterations < 1) fail(model, "iterations must be >= 1, not " + std::to_string(opt.iterations));
  Common c;
  c.model = model;
  c.bpe = b;
  c.batch = opt.batch_per_npu > 0 ? opt.batch_per_npu : default_batch;
  return c;
}

// Data-parallel models: weight gradients all-reduced over data_dims (empty:
// all); no model-parallel dimensions.
Group data_parallel_group(const Common& c, const ModelOptions& opt, const Topology& topo) {
  if (!opt.model_dims.empty()) fail(c.model, "is data parallel only; model_dims must be empty");
  const auto dims = checked_dims(c.model, "data_dims", opt.data_dims, topo);
  return make_group(topo, dims.empty() ? all_dims(topo) : dims);
}

Workload start(const std::string& name, const std::string& parallelism, const ModelOptions& opt) {
  Workload w;
  w.name = name;
  w.parallelism = parallelism;
  w.iterations = opt.iterations;
  return w;
}

// ---------------------------------------------------------------- ResNet-50
// He et al. 2016 (arXiv 1512.03385), Table 1, 50-layer column, with the
// stride of a downsampling block on its 3x3 convolution (torchvision's and
// MLPerf's "v1.5"). Batch-norm scale and shift (2 per output channel) are
// counted as parameters of the convolution before them; BN, ReLU, pooling
// and residual additions are not counted as FLOPs (< 1% of the total).
Workload resnet50(const ModelOptions& opt, const Topology& topo) {
  const Common c = check_common("resnet50", opt, 32);
  const Group data = data_parallel_group(c, opt, topo);
  Workload w = start("ResNet-50", "DATA", opt);
  const double b = c.batch;

  // A k x k convolution, cin -> cout channels, input hin x hin, given stride, padding "same".
  auto conv = [&](const std::string& name, int k, double cin, double cout, double hin, int stride) {
    const double hout = hin / stride;
    const double weights = double(k) * k * cin * cout;
    const double params = weights + 2.0 * cout;  // + BN gamma, beta
    const double flops = 2.0 * weights * hout * hout * b;
    w.layers.push_back(
        weighted_layer(name, flops, params, b * cin * hin * hin, b * cout * hout * hout, params, data, c.bpe));
    return hout;
  };

  double h = conv("conv1", 7, 3, 64, 224, 2);  // 224 -> 112
  no_input_grad(w.layers.back());
  h /= 2;  // 3x3 max pool, stride 2: 112 -> 56
  struct Stage {
    int blocks;
    double mid, out;
    int stride;
  };
  const Stage stages[4] = {{3, 64, 256, 1}, {4, 128, 512, 2}, {6, 256, 1024, 2}, {3, 512, 2048, 2}};
  double cin = 64;
  for (int s = 0; s < 4; ++s) {
    const Stage& st = stages[s];
    for (int j = 0; j < st.blocks; ++j) {
      const std::string p = "res" + std::to_string(s + 2) + std::string(1, char('a' + j)) + "_branch";
      const int stride = j == 0 ? st.stride : 1;
      if (j == 0) conv(p + "1", 1, cin, st.out, h, stride);  // projection shortcut
      conv(p + "2a", 1, cin, st.mid, h, 1);
      const double hout = conv(p + "2b", 3, st.mid, st.mid, h, stride);
      conv(p + "2c", 1, st.mid, st.out, hout, 1);
      h = hout;
      cin = st.out;
    }
  }
  // Global average pool (7x7 -> 1, folded), then the 2048 -> 1000 classifier with bias.
  const double fc = 2048.0 * 1000.0 + 1000.0;
  w.layers.push_back(weighted_layer("fc1000", 2.0 * 2048.0 * 1000.0 * b, fc, b * 2048.0, b * 1000.0, fc, data, c.bpe));
  return w;
}

// --------------------------------------------------------------------- GNMT
// Wu et al. 2016 (arXiv 1609.08144), Section 3: 8 encoder LSTM layers (the
// first bidirectional), 8 decoder LSTM layers, additive attention from the
// bottom decoder layer fed to every decoder layer; 1024 units. The decoder
// wiring follows the TensorFlow NMT "gnmt" model: every decoder layer's
// input is concatenated with the attention context (2048 inputs).
Workload gnmt(const ModelOptions& opt, const Topology& topo) {
  const Common c = check_common("gnmt", opt, 64);
  const Group data = data_parallel_group(c, opt, topo);
  Workload w = start("GNMT", "DATA", opt);
  const double b = c.batch;
  const double h = 1024, e = 1024, vocab = 32000;
  const double src = 50, tgt = 50;  // tokens per sentence

  // Embedding lookup: reads the rows of its tokens and writes them out; its
  // gradient rows are scattered into the (dense) table gradient, which is
  // all-reduced whole.
  auto embedding = [&](const std::string& name, double tokens) {
    Layer l;
    l.name = name;
    const double params = vocab * e;
    l.forward.compute = kernel(0.0, 2.0 * tokens * e, c.bpe);
    l.weight_grad.compute = kernel(tokens * e, 2.0 * tokens * e, c.bpe);
    l.weight_grad.comm = comm(CollectiveOp::kAllReduce, params * c.bpe, data, false);
    no_input_grad(l);  // token ids
    w.layers.push_back(l);
  };
  // One LSTM direction: 4 gates of (input + hidden) x hidden weights and one
  // bias each; 2 * 4 * (in + h) * h FLOPs per token.
  auto lstm_params = [&](double in) { return 4.0 * (in + h) * h + 4.0 * h; };
  auto lstm_flops = [&](double in) { return 2.0 * 4.0 * (in + h) * h; };
  auto lstm = [&](const std::string& name, double in, double tokens, int directions) {
    const double params = directions * lstm_params(in);
    w.layers.push_back(weighted_layer(name, directions * lstm_flops(in) * tokens, params, tokens * in,
                                      tokens * h * directions, params, data, c.bpe));
  };

  embedding("encoder_embedding", b * src);
  lstm("encoder_lstm1", e, b * src, 2);       // bidirectional: 2 x 1024 outputs
  lstm("encoder_lstm2", 2 * h, b * src, 1);
  for (int i = 3; i <= 8; ++i) lstm("encoder_lstm" + std::to_string(i), h, b * src, 1);

  embedding("decoder_embedding", b * tgt);
  lstm("decoder_lstm1", e + h, b * tgt, 1);  // embedding + attention context
  {
    // Additive attention (Bahdanau): score = v . tanh(W_q q + W_k k).
    // W_k on every source state, W_q on every query, then per (query, source)
    // pair a 2h-FLOP score dot product and a 2h-FLOP weighted sum.
    const double params = 2.0 * h * h + h;
    const double flops = 2.0 * h * h * b * src + 2.0 * h * h * b * tgt + 4.0 * h * b * src * tgt;
    const double in = b * src * h + b * tgt * h;  // encoder outputs, queries
    w.layers.push_back(weighted_layer("attention", flops, params, in, b * tgt * h, params, data, c.bpe));
  }
  for (int i = 2; i <= 8; ++i) lstm("decoder_lstm" + std::to_string(i), h + h, b * tgt, 1);
  {
    // Projection to the vocabulary (with bias) and softmax (folded).
    const double params = h * vocab + vocab;
    w.layers.push_back(weighted_layer("softmax", 2.0 * h * vocab * b * tgt, params, b * tgt * h,
                                      b * tgt * vocab, params, data, c.bpe));
  }
  return w;
}

// --------------------------------------------------------------------- DLRM
// Naumov et al. 2019 (arXiv 1906.00091) with MLPerf's Criteo Terabyte
// configuration: 13 dense and 26 sparse features, embedding dimension 128,
// bottom MLP 13-512-256-128, dot interaction, top MLP 479-1024-1024-512-256-1.
Workload dlrm(const ModelOptions& opt, const Topology& topo) {
  const Common c = check_common("dlrm", opt, 512);
  auto dd = checked_dims(c.model, "data_dims", opt.data_dims, topo);
  auto md = checked_dims(c.model, "model_dims", opt.model_dims, topo);
  const Group data = make_group(topo, dd.empty() ? all_dims(topo) : dd);
  const Group model = make_group(topo, md.empty() ? all_dims(topo) : md);
  Workload w = start("DLRM", "HYBRID_DLRM", opt);
  const double b = c.batch;
  const double dense = 13, sparse = 26, d = 128;

  {
    // Tables sharded over the model group: each NPU looks up, for the whole
    // group's batch, the rows of its own tables: b * 26 rows on average (one
    // index per feature in Criteo). The all-to-all sends every sample's 26
    // vectors to the NPU that owns the sample (nccl convention: the bytes a
    // rank sends in total, its own share included).
    Layer l;
    l.name = "embedding";
    const double rows = b * sparse * d;  // elements looked up per NPU
    l.forward.compute = kernel(0.0, 2.0 * rows, c.bpe);  // read rows, write the vectors to send
    // Both all-to-alls overlap the bottom MLP (see the interaction below).
    l.forward.comm = comm(CollectiveOp::kAllToAll, rows * c.bpe, model, /*blocking=*/false);
    no_input_grad(l);  // indices
    l.input_grad.comm = comm(CollectiveOp::kAllToAll, rows * c.bpe, model, /*blocking=*/false);
    // Sparse SGD update in place: read the gradient, read-modify-write the
    // row (one multiply-add per element). No all-reduce: the tables are not
    // replicated inside the model group.
    l.weight_grad.compute = kernel(2.0 * rows, 3.0 * rows, c.bpe);
    w.layers.push_back(l);
  }
  auto fc = [&](const std::string& name, double in, double out) {
    const double params = in * out + out;
    w.layers.push_back(weighted_layer(name, 2.0 * in * out * b, params, b * in, b * out, params, data, c.bpe));
  };
  fc("bot_mlp1", dense, 512);
  no_input_grad(w.layers.back());  // dense features
  fc("bot_mlp2", 512, 256);
  fc("bot_mlp3", 256, d);
  {
    // Dot interaction of the 27 vectors (26 embeddings + bottom MLP output):
    // the batched product Z = T T^T (27 x 27 x 128 multiply-adds per sample,
    // as the reference implementation computes it), of which the 351 pairs
    // below the diagonal are kept and concatenated with the bottom MLP
    // output: 351 + 128 = 479. No weights, so no weight-gradient pass.
    const double n = sparse + 1;
    const double out = n * (n - 1) / 2 + d;
    Layer l;
    l.name = "interaction";
    const Kernel k = kernel(2.0 * n * n * d * b, b * n * d + b * out, c.bpe);
    l.forward.compute = k;
    l.input_grad.compute = k;
    w.layers.push_back(l);
    // The embedding vectors are first needed here: the forward all-to-all
    // runs while the bottom MLP computes, and the interaction waits for it.
    // Backward, the embedding gradients are known once the interaction's
    // backward is done: their all-to-all starts then and overlaps the bottom
    // MLP's backward; the next iteration's embedding forward waits for it
    // (as acesim reads ASTRA-sim's HYBRID_DLRM workloads).
    const int interaction = static_cast<int>(w.layers.size()) - 1;
    CommSpec& fwd = w.layers[0].forward.comm;
    CommSpec& bwd = w.layers[0].input_grad.comm;
    if (fwd.op) fwd.wait_before_forward_layer = interaction;
    if (bwd.op) bwd.issue_after_backward_layer = interaction;
  }
  fc("top_mlp1", 479, 1024);
  fc("top_mlp2", 1024, 1024);
  fc("top_mlp3", 1024, 512);
  fc("top_mlp4", 512, 256);
  fc("top_mlp5", 256, 1);  // sigmoid and loss folded
  return w;
}

// ---------------------------------------------------------------------- GPT
// A GPT-2/GPT-3 decoder-only transformer with Megatron-LM tensor parallelism
// (Shoeybi et al. 2019, arXiv 1909.08053; FLOPs from Narayanan et al. 2021,
// arXiv 2104.04473: 24Bsh^2 + 4Bs^2h forward per layer).
Workload gpt(const ModelOptions& opt, const Topology& topo) {
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

std::vector<std::string> model_names() { return kModelNames; }

Workload build_model(const std::string& name, const ModelOptions& opt, const Topology& topo) {
  if (name == "resnet50") return resnet50(opt, topo);
  if (name == "gnmt") return gnmt(opt, topo);
  if (name == "dlrm") return dlrm(opt, topo);
  if (name == "gpt") return gpt(opt, topo);
  throw std::invalid_argument("unknown model '" + name + "'; valid: " + join(kModelNames));
}

}  // namespace acesim
