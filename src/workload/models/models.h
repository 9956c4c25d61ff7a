// The built-in model zoo: training workloads generated from a network's
// architecture (docs/models.md has every formula and its source).
//
// A generated workload describes what ONE rank does per iteration: FLOPs and
// HBM bytes of its share of each layer's three passes, and the collectives it
// takes part in (sizes in the nccl-tests convention of docs/model.md).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "topology/topology.h"
#include "workload/workload.h"

namespace acesim {

struct ModelOptions {
  int batch_per_npu = 0;        // samples (sequences for GNMT/GPT) per NPU per iteration; 0 = the model's default
  int bytes_per_element = 2;    // 2 = fp16/bf16, 4 = fp32 (activations, weights and gradients)
  int iterations = 2;
  // Parallel layout, as topology dimensions. Data-parallel dims: weight-gradient all-reduce groups.
  // Empty = all dimensions (for DLRM and GPT see below).
  std::vector<int> data_dims;
  std::vector<int> model_dims;  // GPT: tensor-parallel dims; DLRM: dims the embedding all-to-all spans (empty = all)
  // GPT shape (defaults: a GPT-2-XL/GPT-3-1.3B-like model)
  int gpt_layers = 24, gpt_hidden = 2048, gpt_heads = 16, gpt_seq = 2048, gpt_vocab = 50257;
};

// A dense decoder-only transformer's shape (docs/models.md, "Transformer
// models"): the built-in LLMs' published configurations, or a model file.
struct TransformerShape {
  std::string name;
  std::string source;  // where its numbers come from
  int layers = 0, hidden = 0, heads = 0;
  int kv_heads = 0;    // grouped-query attention: key/value heads (= heads without GQA)
  int head_dim = 0;    // each head's width; 0: hidden / heads (Qwen3-32B: 128 x 64 heads = 8192 > hidden 5120)
  int ffn_hidden = 0;  // the MLP's inner width
  int seq = 0, vocab = 0;
  bool swiglu = false;          // gated MLP: three h x ffn GEMMs instead of two
  bool rope = false;            // rotary position embedding: queries and keys rotated by a fused kernel in each layer
  bool tied_embeddings = true;  // the LM head reuses the embedding matrix
  // Parameter tensors besides the weight matrices (too small to count in
  // parameters() or FLOPs, but each is a tensor a per-tensor ZeRO-3 fetch
  // gathers on its own): biases on the four linear layers (GPT-2/3, BLOOM),
  // and LayerNorm's weight and bias (else RMSNorm's weight only).
  bool linear_bias = false;
  bool layernorm = false;
  int default_batch = 1;        // sequences per NPU when the options give none
  // Mixture of experts (experts = 0: dense). A MoE layer's MLP is `experts`
  // routed experts of width moe_ffn_hidden, of which each token takes top_k,
  // plus shared_experts that every token takes (DeepSeekMoE).
  int experts = 0;
  int top_k = 0;
  int moe_ffn_hidden = 0;
  int shared_experts = 0;
  int moe_every = 1;           // layer i (from 0) is MoE when i % moe_every == 0 ...
  int first_dense_layers = 0;  // ... and i >= first_dense_layers (DeepSeek's first_k_dense_replace)
  // Attention widths: a head's, the queries' (and the attention output's,
  // the output projection's input): heads x head_dim, and the keys' (and
  // values'): kv_heads x head_dim. Without head_dim, hidden / heads per
  // head, so the query width is hidden itself.
  double head_width() const { return head_dim > 0 ? head_dim : static_cast<double>(hidden) / heads; }
  double q_width() const { return head_dim > 0 ? static_cast<double>(heads) * head_dim : static_cast<double>(hidden); }
  double kv_width() const { return static_cast<double>(kv_heads) * head_width(); }
  bool moe() const { return experts > 0; }
  // A dense layer's parameter tensors as Megatron-LM holds them: the fused
  // QKV, the output projection, the (fused gate and) up and the down
  // matrices, their biases, and two norms.
  int dense_layer_tensors() const { return 4 + (linear_bias ? 4 : 0) + 2 * (layernorm ? 2 : 1); }
  bool is_moe_layer(int layer) const { return moe() && layer >= first_dense_layers && layer % moe_every == 0; }
  int moe_layers() const;  // how many layers is_moe_layer

  // Parameters (biases and norms left out): embedding, LM head when untied,
  // per layer Q, K, V, O and the MLP; a MoE layer's MLP is every routed and
  // shared expert plus the router (h x experts).
  double parameters() const;
  // The parameters one token uses: as parameters(), but a MoE layer counts
  // top_k routed experts instead of all of them (shared experts and router
  // included). Equal to parameters() for a dense model.
  double active_parameters() const;
};

// The built-in `gpt`'s shape from the options' gpt_* fields.
TransformerShape gpt_shape(const ModelOptions& opt);

// The built-in LLMs' shapes (models gpt3-175b, llama3-8b, ...).
const std::vector<TransformerShape>& builtin_transformer_shapes();
// The built-in LLM of that name; null if there is none.
const TransformerShape* find_transformer_shape(std::string_view name);

// Reads a model file (keys layers, hidden, heads, kv_heads, head_dim, ffn_hidden, seq,
// vocab, activation: gelu | swiglu, tied_embeddings; mixture of experts:
// experts, top_k, moe_ffn_hidden, shared_experts, moe_every,
// first_dense_layers). Throws InputError naming the file, line and key.
TransformerShape read_transformer_file(const std::string& path);
// The same from a file's text; `path` names it in messages.
TransformerShape parse_transformer_yaml(std::string_view text, const std::string& path);

// The transformer with Megatron-LM tensor parallelism over model_dims and
// data parallelism over the rest, as the built-in `gpt`. Throws InputError
// for a mixture-of-experts shape (it needs the LLM plan's expert parallelism).
Workload build_transformer(const TransformerShape& shape, const ModelOptions& opt, const Topology& topo);

// The registered models' names (model_registry()), in registration order.
std::vector<std::string> model_names();

// Throws std::invalid_argument (unknown name, dims not in the topology, a
// tensor-parallel group that does not divide the hidden size or heads, ...).
Workload build_model(const std::string& name, const ModelOptions& opt, const Topology& topo);

}  // namespace acesim
