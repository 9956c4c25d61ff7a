// Built-in large language models (dense decoder-only transformers) and
// model files: the published configurations, run by build_transformer
// (gpt.cpp) with Megatron-LM tensor parallelism over model_dims and data
// parallelism over the rest. docs/models.md, "Transformer models".
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

}  // namespace

// Every number from the cited configuration (docs/models.md lists them).
const std::vector<TransformerShape>& builtin_transformer_shapes() {
  static const std::vector<TransformerShape> zoo = {
      // Brown et al. 2020 (arXiv 2005.14165) Table 2.1: 96 layers, d_model
      // 12288, 96 heads, d_ff = 4 d_model, context 2048; as Megatron-LM
      // trains it (arXiv 2104.04473 section 5): vocabulary padded to 51,200,
      // GeLU, embeddings tied.
      shape("gpt3-175b", "arXiv 2005.14165 Table 2.1; arXiv 2104.04473 section 5", 96, 12288, 96, 96, 49152, 2048,
            51200, false, true),
      // Llama 3 (arXiv 2407.21783 Table 3; Meta's config.json): SwiGLU,
      // 8 key/value heads, vocabulary 128,256, untied embeddings; sequence
      // 8,192, the pre-training length.
      shape("llama3-8b", "arXiv 2407.21783 Table 3; meta-llama/Meta-Llama-3-8B config.json", 32, 4096, 32, 8, 14336,
            8192, 128256, true, false),
      shape("llama3-70b", "arXiv 2407.21783 Table 3; meta-llama/llama-models sku_list.py", 80, 8192, 64, 8, 28672, 8192,
            128256, true, false),
      shape("llama3-405b", "arXiv 2407.21783 Table 3; meta-llama/llama-models sku_list.py", 126, 16384, 128, 8, 53248,
            8192, 128256, true, false),
  };
  return zoo;
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

bool boolean(const YAML::Node& n, const std::string& file, const char* key) {
  const std::string v = yaml::scalar(n, file, key);
  if (v != "true" && v != "false") throw_input_error(file, yaml::line_of(n), key, "must be true or false, got " + v);
  return v == "true";
}

}  // namespace

TransformerShape read_transformer_file(const std::string& path) {
  const YAML::Node root = yaml::parse(read_text_file(path), path);
  if (!root.IsMap()) throw_input_error(path, yaml::line_of(root), "(top level)", "expected a map of model keys");
  const std::vector<std::string> moe = {"experts", "top_k", "moe_ffn_hidden", "shared_experts", "moe_every"};
  for (const std::string& k : moe) {
    if (root[k]) {
      throw_input_error(path, yaml::line_of(root[k]), k,
                        "mixture-of-experts models need expert parallelism, which acesim does not run yet; "
                        "give a dense model");
    }
  }
  yaml::check_map(root, path, "",
                  {"name", "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "seq", "vocab", "activation",
                   "tied_embeddings"});
  for (const char* k : {"layers", "hidden", "heads", "seq", "vocab"}) yaml::require(root, k, path, "");
  TransformerShape m;
  m.name = root["name"] ? yaml::scalar(root["name"], path, "name") : path;
  m.source = path;
  m.layers = positive(root, "layers", path);
  m.hidden = positive(root, "hidden", path);
  m.heads = positive(root, "heads", path);
  m.kv_heads = root["kv_heads"] ? positive(root, "kv_heads", path) : m.heads;
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
  return m;
}

namespace models {

void register_llms(ModelRegistry& registry) {
  for (const TransformerShape& m : builtin_transformer_shapes()) {
    const std::string what = "dense transformer (" + std::to_string(m.layers) + " layers, hidden " +
                             std::to_string(m.hidden) + "; " + m.source +
                             "): Megatron tensor parallel over model_dims, data parallel over the rest";
    registry.add({{m.name, {}, what}, [m](const ModelOptions& opt, const Topology& topo) {
                    return build_transformer(m, opt, topo);
                  }});
  }
}

}  // namespace models
}  // namespace acesim
