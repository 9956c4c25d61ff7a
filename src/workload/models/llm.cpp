// Built-in large language models (decoder-only transformers, dense or
// mixture of experts) and model files: the published configurations. Dense
// ones run on build_transformer (gpt.cpp) with Megatron-LM tensor
// parallelism over model_dims and data parallelism over the rest; MoE ones
// need the LLM plan. docs/models.md, "Large language models".
#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "config/input_error.h"
#include "config/platform.h"
#include "config/yaml_reader.h"
#include "workload/models/model_registry.h"

namespace acesim {
namespace {

TransformerShape shape(std::string name, std::string source, int layers, int hidden, int heads, int kv_heads,
                       int ffn_hidden, int seq, int vocab, bool swiglu, bool tied) {
  TransformerShape m;
  m.name = std::move(name);
  m.source = std::move(source);
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.ffn_hidden = ffn_hidden;
  m.seq = seq;
  m.vocab = vocab;
  m.swiglu = swiglu;
  m.tied_embeddings = tied;
  return m;
}

// Rotary position embedding (RoFormer, arXiv 2104.09864), as the config
// gives it (rope_theta).
TransformerShape with_rope(TransformerShape m) {
  m.rope = true;
  return m;
}

// GPT-2/3-style blocks: biases on the linear layers and LayerNorm.
TransformerShape gpt_style(TransformerShape m) {
  m.linear_bias = true;
  m.layernorm = true;
  return m;
}

TransformerShape with_head_dim(TransformerShape m, int head_dim) {
  m.head_dim = head_dim;
  return m;
}

TransformerShape moe(TransformerShape m, int experts, int top_k, int moe_ffn_hidden, int shared_experts,
                     int first_dense_layers) {
  m.experts = experts;
  m.top_k = top_k;
  m.moe_ffn_hidden = moe_ffn_hidden;
  m.shared_experts = shared_experts;
  m.first_dense_layers = first_dense_layers;
  return m;
}

}  // namespace

// Every number from the cited configuration (docs/models.md lists them).
const std::vector<TransformerShape>& builtin_transformer_shapes() {
  static const std::vector<TransformerShape> zoo = {
      // Brown et al. 2020 (arXiv 2005.14165) Table 2.1: 96 layers, d_model
      // 12288, 96 heads, d_ff = 4 d_model, context 2048; as Megatron-LM
      // trains it (arXiv 2104.04473 section 5): vocabulary padded to 51,200,
      // GeLU, embeddings tied.
      gpt_style(shape("gpt3-175b", "arXiv 2005.14165 Table 2.1; arXiv 2104.04473 section 5", 96, 12288, 96, 96, 49152,
                      2048, 51200, false, true)),
      // Llama 3 (arXiv 2407.21783 Table 3; Meta's config.json): SwiGLU,
      // 8 key/value heads, vocabulary 128,256, untied embeddings; sequence
      // 8,192, the pre-training length.
      with_rope(shape("llama3-8b", "arXiv 2407.21783 Table 3; meta-llama/Meta-Llama-3-8B config.json", 32, 4096, 32, 8, 14336,
            8192, 128256, true, false)),
      with_rope(shape("llama3-70b", "arXiv 2407.21783 Table 3; meta-llama/llama-models sku_list.py", 80, 8192, 64, 8, 28672, 8192,
            128256, true, false)),
      with_rope(shape("llama3-405b", "arXiv 2407.21783 Table 3; meta-llama/llama-models sku_list.py", 126, 16384, 128, 8, 53248,
            8192, 128256, true, false)),
      // BLOOM (arXiv 2211.05100 Table 3; bigscience/bloom config.json): 70
      // layers, hidden 14,336, 112 heads, sequence 2,048, GeLU MLP of 4h,
      // embeddings tied; vocabulary 250,680 tokens padded to 250,880 (the
      // config's vocab_size). ALiBi adds a bias to the scores (no
      // parameters, no GEMM), so it runs as GPT-3 does.
      gpt_style(shape("bloom-176b", "arXiv 2211.05100 Table 3; bigscience/bloom config.json", 70, 14336, 112, 112,
                      57344, 2048, 250880, false, true)),
      // Qwen3-32B (arXiv 2505.09388 Table 1; Qwen/Qwen3-32B config.json):
      // 64 layers, hidden 5,120, 64 query heads of head_dim 128 (attention
      // 8,192 wide, wider than hidden), 8 key/value heads, SwiGLU of 25,600,
      // vocabulary 151,936, untied; sequence 4,096, the general pre-training
      // stages' (section 3.2).
      with_head_dim(with_rope(shape("qwen3-32b", "arXiv 2505.09388 Table 1; Qwen/Qwen3-32B config.json", 64, 5120, 64, 8, 25600,
                          4096, 151936, true, false)),
                    128),
      // Mixtral 8x7B (arXiv 2401.04088 Table 1; mistralai config.json):
      // every layer's MLP is 8 SwiGLU experts of 14,336, 2 per token, no
      // shared expert; 8 key/value heads, vocabulary 32,000, untied. Sequence
      // 32,768: "pretrained ... using a context size of 32k tokens" (section
      // 2). ffn_hidden (no dense layer uses it) is the config's
      // intermediate_size.
      moe(with_rope(shape("mixtral-8x7b", "arXiv 2401.04088 Table 1; mistralai/Mixtral-8x7B config.json", 32, 4096, 32, 8, 14336,
                32768, 32000, true, false)),
          8, 2, 14336, 0, 0),
      // DeepSeek-V2-Lite (arXiv 2405.04434 appendix B.1; DeepSeek's
      // config_16B.json): DeepSeekMoE with 2 shared and 64 routed experts of
      // 1,408, 6 per token, after one dense layer of 10,944; sequence 4,096
      // ("during pre-training, the maximum sequence length is set to 4K");
      // untied (separate embed and head in DeepSeek's inference/model.py).
      // Its MLA attention is modelled as multi-head attention with 16
      // key/value heads (docs/models.md says what that changes).
      moe(with_rope(shape("deepseek-v2-lite", "arXiv 2405.04434 appendix B.1; deepseek-ai config_16B.json", 27, 2048, 16, 16,
                10944, 4096, 102400, true, false)),
          64, 6, 1408, 2, 1),
  };
  return zoo;
}

const TransformerShape* find_transformer_shape(std::string_view name) {
  for (const TransformerShape& s : builtin_transformer_shapes()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

namespace {

int positive(const YAML::Node& root, const char* key, const std::string& file) {
  const YAML::Node n = root[key];
  const long long v = yaml::integer(n, file, key);
  if (v < 1 || v > (1LL << 30)) {
    throw_input_error(file, yaml::line_of(n), key, "must be an integer in 1..2^30, got " + n.Scalar());
  }
  return static_cast<int>(v);
}

// An integer key in lo..hi; `bound` says where hi comes from ("experts (8)").
int bounded(const YAML::Node& root, const char* key, const std::string& file, long long lo, long long hi,
            const std::string& bound) {
  const YAML::Node n = root[key];
  const long long v = yaml::integer(n, file, key);
  if (v < lo || v > hi) {
    throw_input_error(file, yaml::line_of(n), key,
                      "must be in " + std::to_string(lo) + ".." + bound + ", got " + n.Scalar());
  }
  return static_cast<int>(v);
}

// The mixture-of-experts keys: all of them need `experts`; with it, top_k
// and moe_ffn_hidden are required, and at least one layer must be MoE.
void read_moe_keys(const YAML::Node& root, const std::string& path, TransformerShape& m) {
  const char* const dependent[] = {"top_k", "moe_ffn_hidden", "shared_experts", "moe_every", "first_dense_layers"};
  if (!root["experts"]) {
    for (const char* k : dependent) {
      if (root[k]) throw_input_error(path, yaml::line_of(root[k]), k, "needs experts (a mixture-of-experts model)");
    }
    return;
  }
  m.experts = positive(root, "experts", path);
  for (const char* k : {"top_k", "moe_ffn_hidden"}) {
    if (!root[k]) throw_input_error(path, yaml::line_of(root["experts"]), k, "missing: a model with experts needs it");
  }
  const std::string experts = "experts (" + std::to_string(m.experts) + ")";
  m.top_k = bounded(root, "top_k", path, 1, m.experts, experts);
  m.moe_ffn_hidden = positive(root, "moe_ffn_hidden", path);
  if (root["shared_experts"]) m.shared_experts = bounded(root, "shared_experts", path, 0, 1LL << 30, "2^30");
  if (root["moe_every"]) m.moe_every = positive(root, "moe_every", path);
  if (root["first_dense_layers"]) {
    m.first_dense_layers =
        bounded(root, "first_dense_layers", path, 0, m.layers - 1, "layers - 1 (" + std::to_string(m.layers - 1) + ")");
  }
  // With first_dense_layers below layers, only a moe_every can skip them all.
  if (m.moe_layers() == 0) {
    throw_input_error(path, root["moe_every"] ? yaml::line_of(root["moe_every"]) : 0, "moe_every",
                      "no layer is a mixture-of-experts layer (layers " + std::to_string(m.layers) +
                          ", first_dense_layers " + std::to_string(m.first_dense_layers) + ", moe_every " +
                          std::to_string(m.moe_every) + ")");
  }
}

bool boolean(const YAML::Node& n, const std::string& file, const char* key) {
  const std::string v = yaml::scalar(n, file, key);
  if (v != "true" && v != "false") throw_input_error(file, yaml::line_of(n), key, "must be true or false, got " + v);
  return v == "true";
}

}  // namespace

TransformerShape read_transformer_file(const std::string& path) { return parse_transformer_yaml(read_text_file(path), path); }

TransformerShape parse_transformer_yaml(std::string_view text, const std::string& path) {
  const YAML::Node root = yaml::parse(text, path);
  if (!root.IsMap()) throw_input_error(path, yaml::line_of(root), "(top level)", "expected a map of model keys");
  yaml::check_map(root, path, "",
                  {"name", "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "seq", "vocab", "activation",
                   "tied_embeddings", "head_dim", "experts", "top_k", "moe_ffn_hidden", "shared_experts", "moe_every",
                   "first_dense_layers", "rope", "linear_bias", "norm"});
  for (const char* k : {"layers", "hidden", "heads", "seq", "vocab"}) yaml::require(root, k, path, "");
  TransformerShape m;
  m.name = root["name"] ? yaml::scalar(root["name"], path, "name") : path;
  if (const std::string why = name_problem(m.name); root["name"] && !why.empty()) throw_input_error(path, yaml::line_of(root["name"]), "name", why);
  m.source = path;
  // Layers are walked one by one (parameters, memory): at most 100,000;
  // the default ffn_hidden of 4 x hidden stays within 2^30.
  m.layers = bounded(root, "layers", path, 1, 100000, "100000");
  m.hidden = bounded(root, "hidden", path, 1, 1LL << 28, "2^28");
  m.heads = positive(root, "heads", path);
  m.kv_heads = root["kv_heads"] ? positive(root, "kv_heads", path) : m.heads;
  // Attention splits hidden into heads of hidden / heads each unless
  // head_dim gives their width (heads x head_dim may differ from hidden,
  // as in Qwen3), and grouped-query attention shares each key/value head
  // among heads / kv_heads query heads.
  if (root["head_dim"]) {
    m.head_dim = bounded(root, "head_dim", path, 1, 1LL << 20, "2^20");
    if (static_cast<long long>(m.heads) * m.head_dim > (1LL << 30)) {
      throw_input_error(path, yaml::line_of(root["head_dim"]), "head_dim",
                        "heads x head_dim = " + std::to_string(m.heads) + " x " + std::to_string(m.head_dim) +
                            " is above 2^30");
    }
  } else if (m.hidden % m.heads != 0) {
    throw_input_error(path, yaml::line_of(root["heads"]), "heads",
                      "must divide hidden (" + std::to_string(m.hidden) + ") when head_dim is not given, got " +
                          std::to_string(m.heads));
  }
  if (m.heads % m.kv_heads != 0) {
    throw_input_error(path, yaml::line_of(root["kv_heads"]), "kv_heads",
                      "must divide heads (" + std::to_string(m.heads) + "), got " + std::to_string(m.kv_heads));
  }
  m.ffn_hidden = root["ffn_hidden"] ? positive(root, "ffn_hidden", path) : 4 * m.hidden;
  m.seq = positive(root, "seq", path);
  m.vocab = positive(root, "vocab", path);
  if (root["activation"]) {
    const std::string a = yaml::scalar(root["activation"], path, "activation");
    if (a != "gelu" && a != "swiglu") {
      throw_input_error(path, yaml::line_of(root["activation"]), "activation", "must be gelu or swiglu, got " + a);
    }
    m.swiglu = a == "swiglu";
  }
  if (root["tied_embeddings"]) m.tied_embeddings = boolean(root["tied_embeddings"], path, "tied_embeddings");
  if (root["rope"]) m.rope = boolean(root["rope"], path, "rope");
  if (root["linear_bias"]) m.linear_bias = boolean(root["linear_bias"], path, "linear_bias");
  if (root["norm"]) {
    const std::string v = yaml::scalar(root["norm"], path, "norm");
    if (v != "layernorm" && v != "rmsnorm") {
      throw_input_error(path, yaml::line_of(root["norm"]), "norm", "must be layernorm or rmsnorm, got " + v);
    }
    m.layernorm = v == "layernorm";
  }
  read_moe_keys(root, path, m);
  return m;
}

namespace models {

void register_llms(ModelRegistry& registry) {
  for (const TransformerShape& m : builtin_transformer_shapes()) {
    const std::string size = std::to_string(m.layers) + " layers, hidden " + std::to_string(m.hidden);
    const std::string what =
        m.moe() ? "mixture-of-experts transformer (" + size + ", " + std::to_string(m.experts) + " experts, top-" +
                      std::to_string(m.top_k) +
                      (m.shared_experts > 0 ? ", " + std::to_string(m.shared_experts) + " shared" : std::string()) +
                      "; " + m.source + "): needs the LLM plan (--tp/--ep)"
                : "dense transformer (" + size + "; " + m.source +
                      "): Megatron tensor parallel over model_dims, data parallel over the rest";
    registry.add({{m.name, {}, what}, [m](const ModelOptions& opt, const Topology& topo) {
                    return build_transformer(m, opt, topo);
                  }});
  }
}

}  // namespace models
}  // namespace acesim
