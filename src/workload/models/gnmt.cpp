// Built-in model: GNMT.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "workload/models/model_common.h"
#include "workload/models/model_registry.h"

namespace acesim::models {
namespace {

// Wu et al. 2016 (arXiv 1609.08144), Section 3: 8 encoder LSTM layers (the
// first bidirectional), 8 decoder LSTM layers, additive attention from the
// bottom decoder layer fed to every decoder layer; 1024 units. The decoder
// wiring follows the TensorFlow NMT "gnmt" model: every decoder layer's
// input is concatenated with the attention context (2048 inputs).
Workload build_gnmt(const ModelOptions& opt, const Topology& topo) {
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

}  // namespace

void register_gnmt(ModelRegistry& registry) {
  registry.add({{"gnmt", {}, "GNMT, data parallel (Wu et al. 2016)"}, build_gnmt});
}

}  // namespace acesim::models
