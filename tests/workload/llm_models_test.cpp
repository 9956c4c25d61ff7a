// The built-in large language models and model files: their parameter
// counts against the published sizes, the per-layer FLOPs and collective
// sizes in closed form (grouped-query attention, SwiGLU, untied heads), and
// the model file's one-line errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "config/input_error.h"
#include "support.h"
#include "workload/llm/llm_graph.h"
#include "workload/models/models.h"

namespace acesim {
namespace {

using test::dim;

const TransformerShape& shape_of(const std::string& name) {
  for (const TransformerShape& m : builtin_transformer_shapes()) {
    if (m.name == name) return m;
  }
  throw std::invalid_argument("no built-in " + name);
}

// The built-ins carry the published configurations (docs/models.md).
TEST(LlmModels, BuiltinsAreThePublishedConfigurations) {
  auto same = [](const TransformerShape& m, int l, int h, int heads, int kv, int f, int s, int v, bool swiglu, bool tied) {
    EXPECT_EQ(m.layers, l) << m.name;
    EXPECT_EQ(m.hidden, h) << m.name;
    EXPECT_EQ(m.heads, heads) << m.name;
    EXPECT_EQ(m.kv_heads, kv) << m.name;
    EXPECT_EQ(m.ffn_hidden, f) << m.name;
    EXPECT_EQ(m.seq, s) << m.name;
    EXPECT_EQ(m.vocab, v) << m.name;
    EXPECT_EQ(m.swiglu, swiglu) << m.name;
    EXPECT_EQ(m.tied_embeddings, tied) << m.name;
    EXPECT_FALSE(m.source.empty()) << m.name;
  };
  same(shape_of("llama3-8b"), 32, 4096, 32, 8, 14336, 8192, 128256, true, false);
  same(shape_of("llama3-70b"), 80, 8192, 64, 8, 28672, 8192, 128256, true, false);
  same(shape_of("llama3-405b"), 126, 16384, 128, 8, 53248, 8192, 128256, true, false);
  same(shape_of("gpt3-175b"), 96, 12288, 96, 96, 49152, 2048, 51200, false, true);
  same(shape_of("mixtral-8x7b"), 32, 4096, 32, 8, 14336, 32768, 32000, true, false);
  same(shape_of("deepseek-v2-lite"), 27, 2048, 16, 16, 10944, 4096, 102400, true, false);
  same(shape_of("bloom-176b"), 70, 14336, 112, 112, 57344, 2048, 250880, false, true);
  same(shape_of("qwen3-32b"), 64, 5120, 64, 8, 25600, 4096, 151936, true, false);
  EXPECT_EQ(shape_of("qwen3-32b").head_dim, 128);
  EXPECT_EQ(shape_of("bloom-176b").head_dim, 0);  // 14336 / 112 = 128
  auto experts = [](const TransformerShape& m, int e, int k, int f, int shared, int every, int first_dense) {
    EXPECT_EQ(m.experts, e) << m.name;
    EXPECT_EQ(m.top_k, k) << m.name;
    EXPECT_EQ(m.moe_ffn_hidden, f) << m.name;
    EXPECT_EQ(m.shared_experts, shared) << m.name;
    EXPECT_EQ(m.moe_every, every) << m.name;
    EXPECT_EQ(m.first_dense_layers, first_dense) << m.name;
  };
  experts(shape_of("mixtral-8x7b"), 8, 2, 14336, 0, 1, 0);
  experts(shape_of("deepseek-v2-lite"), 64, 6, 1408, 2, 1, 1);
  EXPECT_EQ(shape_of("mixtral-8x7b").moe_layers(), 32);
  EXPECT_EQ(shape_of("deepseek-v2-lite").moe_layers(), 26);  // all but the first
  EXPECT_FALSE(shape_of("deepseek-v2-lite").is_moe_layer(0));
  EXPECT_TRUE(shape_of("deepseek-v2-lite").is_moe_layer(1));
  EXPECT_FALSE(shape_of("llama3-8b").moe());
  const std::vector<std::string> names = model_names();
  for (const TransformerShape& m : builtin_transformer_shapes()) {
    EXPECT_NE(std::find(names.begin(), names.end(), m.name), names.end()) << m.name;
  }
}

// Parameter counts (biases and norms left out) against the sizes the models
// are published with: 8.03 B, 70.6 B, 405 B, 175 B.
TEST(LlmModels, ParametersAreThePublishedSizes) {
  EXPECT_NEAR(shape_of("llama3-8b").parameters() / 1e9, 8.03, 0.005);
  EXPECT_NEAR(shape_of("llama3-70b").parameters() / 1e9, 70.55, 0.01);
  EXPECT_NEAR(shape_of("llama3-405b").parameters() / 1e9, 405.85, 0.01);
  EXPECT_NEAR(shape_of("gpt3-175b").parameters() / 1e9, 174.6, 0.05);
  // BLOOM: 70 x 12 h^2 + 250,880 h = 176.23 B; the published 176,247,271,424
  // (bigscience/bloom model card) adds the biases and norms left out here.
  EXPECT_DOUBLE_EQ(shape_of("bloom-176b").parameters(), 70 * 12.0 * 14336 * 14336 + 250880.0 * 14336);
  EXPECT_NEAR(shape_of("bloom-176b").parameters() / 176247271424.0, 1.0, 1e-4);
  // Qwen3-32B, queries 64 x 128 = 8192 wide on hidden 5120, keys and values
  // 8 x 128: 64 x (5120 (8192 + 2048) + 8192 x 5120 + 3 x 5120 x 25600) +
  // 2 x 151,936 x 5120 = 32.76 B; its model card: 32.8 B, 31.2 B without
  // the embeddings.
  const double qwen_layers = 64 * (5120.0 * (8192 + 2048) + 8192.0 * 5120 + 3.0 * 5120 * 25600);
  EXPECT_DOUBLE_EQ(shape_of("qwen3-32b").parameters(), qwen_layers + 2.0 * 151936 * 5120);
  EXPECT_NEAR(shape_of("qwen3-32b").parameters() / 1e9, 32.8, 0.05);
  EXPECT_NEAR(qwen_layers / 1e9, 31.2, 0.05);
  // Closed form, Llama 3 8B: 32 x (4096 (4096 + 2 x 1024) + 4096^2 + 3 x 4096
  // x 14336) + 2 x 128256 x 4096.
  EXPECT_DOUBLE_EQ(shape_of("llama3-8b").parameters(),
                   32.0 * (4096.0 * 6144 + 4096.0 * 4096 + 3.0 * 4096 * 14336) + 2.0 * 128256 * 4096);
}

// Mixtral 8x7B, every expert counted: 32 x (attention with 8 key/value
// heads + 8 SwiGLU experts of 14,336 + a 4096 x 8 router) + untied
// embeddings of 32,000 = 46,702,526,464; per token 2 experts:
// 12,879,659,008. Mixtral's paper: "47B" total, "13B active".
TEST(LlmModels, MixtralParametersTotalAndActive) {
  const TransformerShape& m = shape_of("mixtral-8x7b");
  const double h = 4096, attention = h * (h + 2 * 1024) + h * h, expert = 3 * h * 14336, router = h * 8;
  EXPECT_DOUBLE_EQ(m.parameters(), 32 * (attention + 8 * expert + router) + 2 * 32000 * h);
  EXPECT_DOUBLE_EQ(m.active_parameters(), 32 * (attention + 2 * expert + router) + 2 * 32000 * h);
  EXPECT_DOUBLE_EQ(m.parameters(), 46702526464.0);
  EXPECT_DOUBLE_EQ(m.active_parameters(), 12879659008.0);
  EXPECT_EQ(std::round(m.parameters() / 1e9), 47);
  EXPECT_EQ(std::round(m.active_parameters() / 1e9), 13);
  EXPECT_EQ(std::round(m.parameters() / 1e8), 467);        // 46.7 B
  EXPECT_EQ(std::round(m.active_parameters() / 1e8), 129);  // 12.9 B
}

// DeepSeek-V2-Lite with its MLA attention modelled as multi-head attention
// (16 key/value heads, 4h^2 per layer): layer 0 dense (SwiGLU 10,944), 26
// MoE layers of 64 routed + 2 shared experts of 1,408 and a 2048 x 64
// router, untied vocabulary 102,400: 15,787,753,472 in all, 2,742,419,456
// per token (6 routed + 2 shared). MLA's own projections (queries 2048 x
// 3072, compressed keys/values 2048 x 576 and 512 x 4096, output 2048 x
// 2048: 13,762,560 per layer) are 81,395,712 smaller over 27 layers, which
// gives the paper's 15.7 B total; its 2.4 B activated leaves the input
// embedding out too (docs/models.md).
TEST(LlmModels, DeepSeekV2LiteParametersWithMultiHeadAttention) {
  const TransformerShape& m = shape_of("deepseek-v2-lite");
  const double h = 2048, attention = 4 * h * h, expert = 3 * h * 1408, router = h * 64, embeddings = 102400 * h;
  EXPECT_DOUBLE_EQ(m.parameters(), (attention + 3 * h * 10944) + 26 * (attention + 66 * expert + router) + 2 * embeddings);
  EXPECT_DOUBLE_EQ(m.active_parameters(), (attention + 3 * h * 10944) + 26 * (attention + 8 * expert + router) + 2 * embeddings);
  EXPECT_DOUBLE_EQ(m.parameters(), 15787753472.0);
  EXPECT_DOUBLE_EQ(m.active_parameters(), 2742419456.0);
  const double mla = h * 16 * 192 + h * 576 + 512 * 16 * 256 + 16 * 128 * h;
  const double mla_less = 27 * (attention - mla);
  EXPECT_DOUBLE_EQ(mla_less, 81395712.0);
  EXPECT_EQ(std::round((m.parameters() - mla_less) / 1e8), 157);  // the paper's 15.7 B
  EXPECT_NEAR((m.active_parameters() - mla_less - embeddings) / 1e9, 2.4, 0.06);  // 2.45 vs the paper's 2.4 B
}

// A dense model's active parameters are all of them, to the bit.
TEST(LlmModels, DenseActiveParametersAreAllOfThem) {
  for (const TransformerShape& m : builtin_transformer_shapes()) {
    if (!m.moe()) {
      EXPECT_EQ(m.active_parameters(), m.parameters()) << m.name;
    }
  }
}

// The layer-table path has no experts: it refuses a MoE shape with a
// one-line InputError instead of pricing a dense model.
TEST(LlmModels, LayerTablePathRefusesMixtureOfExperts) {
  const Topology topo({dim(DimKind::kSwitch, 8, 450, 0)});
  for (const std::string name : {"mixtral-8x7b", "deepseek-v2-lite"}) {
    try {
      (void)build_model(name, ModelOptions{}, topo);
      FAIL() << "expected an error for " << name;
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(name), std::string::npos) << what;
      EXPECT_NE(what.find("mixture-of-experts models need the LLM plan: --tp/--ep"), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
}

// Llama 3 8B, tensor parallel over 8, data parallel over 2: per layer and
// rank, forward FLOPs of attention (Q, K, V with 8 key/value heads, scores,
// context, output) and of the gated MLP, the weight-gradient all-reduces of
// their parameter shares, and the untied LM head's own all-reduce.
TEST(LlmModels, LlamaLayersInClosedForm) {
  const Topology topo({dim(DimKind::kSwitch, 8, 450, 0), dim(DimKind::kSwitch, 2, 50, 0)});
  ModelOptions opt;
  opt.batch_per_npu = 1;
  const Workload w = build_model("llama3-8b", opt, topo);
  ASSERT_EQ(w.layers.size(), 2u + 2u * 32u);
  const double b = 1, s = 8192, h = 4096, kv = 1024, f = 14336, t = 8;
  const Layer& attention = w.layers[1];
  const Layer& mlp = w.layers[2];
  EXPECT_DOUBLE_EQ(attention.forward.compute.flops,
                   (2 * b * s * h * (h + 2 * kv) + 4 * b * s * s * h + 2 * b * s * h * h) / t);
  EXPECT_DOUBLE_EQ(mlp.forward.compute.flops, 3 * 2 * b * s * h * f / t);
  EXPECT_DOUBLE_EQ(attention.weight_grad.comm.bytes, (h * (h + 2 * kv) + h * h) / t * 2);
  EXPECT_DOUBLE_EQ(mlp.weight_grad.comm.bytes, 3 * h * f / t * 2);
  // Tensor-parallel all-reduces carry the full activation, b s h x 2 bytes.
  EXPECT_DOUBLE_EQ(mlp.forward.comm.bytes, b * s * h * 2);
  // The vocabulary padded to a multiple of 128 x 8: 128256 -> 129024.
  const Layer& head = w.layers.back();
  EXPECT_DOUBLE_EQ(head.weight_grad.comm.bytes, 129024 * h / t * 2);
  EXPECT_DOUBLE_EQ(w.layers.front().weight_grad.comm.bytes, 129024 * h / t * 2);
  // The tied GPT keeps one all-reduce for both: its head reduces nothing.
  const Workload gpt = build_model("gpt", ModelOptions{}, topo);
  EXPECT_DOUBLE_EQ(gpt.layers.back().weight_grad.comm.bytes, 0.0);
}

// Model FLOPs as Megatron-LM counts them without recomputation (arXiv
// 2104.04473, eq. 3 with 3 passes instead of 4): 72 B s l h^2 (1 + s/(6h) +
// V/(12 l h)) for the whole model; per rank divided by t. GPT's defaults on
// t = 4: l = 24, h = 2048, s = 2048, V = 50688 (padded), B = 8.
TEST(LlmModels, ModelFlopsAreMegatronsCount) {
  const Topology topo({dim(DimKind::kRing, 4, 100, 0), dim(DimKind::kRing, 4, 100, 0)});
  const Workload w = build_model("gpt", ModelOptions{}, topo);
  const double B = 8, s = 2048, l = 24, h = 2048, V = 50688, t = 4;
  EXPECT_NEAR(w.model_flops_per_rank, 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h)) / t,
              1e-9 * w.model_flops_per_rank);
  // Models without Megatron's count report none.
  EXPECT_EQ(build_model("resnet50", ModelOptions{}, topo).model_flops_per_rank, 0.0);
}

// Megatron splits heads, key/value groups and the MLP over the
// tensor-parallel ranks: 8 key/value heads cannot go over 16.
TEST(LlmModels, TensorParallelMustDivideTheKeyValueHeads) {
  const Topology topo({dim(DimKind::kSwitch, 16, 450, 0)});
  try {
    (void)build_model("llama3-70b", ModelOptions{}, topo);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("kv_heads (8)"), std::string::npos) << e.what();
  }
}

class LlmCli : public test::CliTest {
 protected:
  // A model file `name` of `text` is refused in one line holding each of `parts`.
  void refused_file(const std::string& name, const std::string& text, std::initializer_list<std::string> parts) {
    const std::string path = write(name, text);
    try {
      (void)read_transformer_file(path);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
      EXPECT_NE(what.find(name), std::string::npos) << what;
      for (const std::string& p : parts) EXPECT_NE(what.find(p), std::string::npos) << what << " lacks " << p;
    }
  }
};

TEST_F(LlmCli, ModelFilesRunAndBadOnesAreRefused) {
  const std::string ok = write("m.yaml",
                               "name: small\nlayers: 2\nhidden: 1024\nheads: 16\nkv_heads: 8\nffn_hidden: 2816\n"
                               "seq: 1024\nvocab: 32000\nactivation: swiglu\ntied_embeddings: false\n");
  const TransformerShape m = read_transformer_file(ok);
  EXPECT_EQ(m.name, "small");
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_TRUE(m.swiglu);
  EXPECT_FALSE(m.tied_embeddings);
  const test::CliRun r = expect_ok({"run", "--platform", "hgx-h100", "--nodes", "1", "--model", ok, "--json"});
  const nlohmann::json j = parse_json(r.out);
  // TFLOP/s per GPU: the model FLOPs of a rank over the measured iteration;
  // MFU: that over the H100 preset's 132 x 7.5 TFLOP/s.
  ASSERT_GT(j["iteration_time_ns"].get<double>(), 0.0);
  const double flops = [&] {
    const Topology topo({dim(DimKind::kSwitch, 8, 370.8, 500), dim(DimKind::kSwitch, 1, 50, 2000)});
    ParallelPlan p;
    p.tp = 8;
    return LlmJob(read_transformer_file(ok), p, topo).model_flops_per_gpu();
  }();
  EXPECT_NEAR(j["tflops_per_gpu"].get<double>(), flops / (j["iteration_time_ns"].get<double>() * 1e-9) / 1e12, 1e-6);
  EXPECT_NEAR(j["mfu"].get<double>(), j["tflops_per_gpu"].get<double>() / (132 * 7.5), 1e-9);
  expect_ok({"run", "--platform", "hgx-h100", "--nodes", "2", "--model", "llama3-8b", "--micro-batch", "1"});
  expect_bad_input({"run", "--platform", "hgx-h100", "--nodes", "2", "--model", "llama3-8b", "--batch", "1"},
                   {"--batch", "--micro-batch"});

  const std::string moe = write("moe.yaml", "layers: 2\nhidden: 1024\nheads: 16\nseq: 1024\nvocab: 32000\nexperts: 8\n");
  expect_bad_input({"run", "--model", moe}, {"moe.yaml:6", "top_k", "missing"});
  expect_bad_input({"run", "--platform", "hgx-h100", "--model", "mixtral-8x7b", "--ep", "3"},
                   {"--ep 3", "experts (8)"});
  const std::string act = write("act.yaml", "layers: 2\nhidden: 1024\nheads: 16\nseq: 1024\nvocab: 32000\nactivation: relu\n");
  expect_bad_input({"run", "--model", act}, {"act.yaml:6", "activation", "gelu or swiglu", "relu"});
  const std::string missing = write("miss.yaml", "hidden: 1024\nheads: 16\nseq: 1024\nvocab: 32000\n");
  expect_bad_input({"run", "--model", missing}, {"miss.yaml", "layers"});
  const std::string typo = write("typo.yaml", "layers: 2\nhiden: 1024\nheads: 16\nseq: 1024\nvocab: 32000\n");
  expect_bad_input({"run", "--model", typo}, {"typo.yaml:2", "hiden"});
  expect_bad_input({"run", "--model", "llama3-8x"}, {"unknown model", "llama3-8b"});
  expect_bad_input({"run", "--model", "/nonexistent/m.yaml"}, {"/nonexistent/m.yaml", "cannot open"});
}

// The mixture-of-experts keys: a DeepSeek-like file with a dense first
// layer and MoE on every second layer after it; the counts in closed form.
TEST_F(LlmCli, MoeModelFileKeys) {
  const std::string ok = write("moe.yaml",
                               "name: tiny-moe\nlayers: 6\nhidden: 1024\nheads: 16\nkv_heads: 4\nffn_hidden: 4096\n"
                               "seq: 2048\nvocab: 32000\nactivation: swiglu\ntied_embeddings: false\nexperts: 16\n"
                               "top_k: 4\nmoe_ffn_hidden: 512\nshared_experts: 1\nmoe_every: 2\nfirst_dense_layers: 1\n");
  const TransformerShape m = read_transformer_file(ok);
  EXPECT_EQ(m.experts, 16);
  EXPECT_EQ(m.top_k, 4);
  EXPECT_EQ(m.moe_ffn_hidden, 512);
  EXPECT_EQ(m.shared_experts, 1);
  EXPECT_EQ(m.moe_every, 2);
  EXPECT_EQ(m.first_dense_layers, 1);
  EXPECT_EQ(m.moe_layers(), 2);  // layers 2 and 4
  const double h = 1024, attention = h * (h + 2 * 256) + h * h, dense = 3 * h * 4096, expert = 3 * h * 512;
  EXPECT_DOUBLE_EQ(m.parameters(), 4 * (attention + dense) + 2 * (attention + 17 * expert + h * 16) + 2 * 32000 * h);
  EXPECT_DOUBLE_EQ(m.active_parameters(), 4 * (attention + dense) + 2 * (attention + 5 * expert + h * 16) + 2 * 32000 * h);
  // Defaults: moe_every 1, first_dense_layers 0, no shared expert.
  const TransformerShape d = read_transformer_file(
      write("d.yaml", "layers: 4\nhidden: 1024\nheads: 16\nseq: 1024\nvocab: 32000\nexperts: 8\ntop_k: 2\n"
                      "moe_ffn_hidden: 2048\n"));
  EXPECT_EQ(d.moe_every, 1);
  EXPECT_EQ(d.first_dense_layers, 0);
  EXPECT_EQ(d.shared_experts, 0);
  EXPECT_EQ(d.moe_layers(), 4);
  // Its plan must split the experts evenly.
  expect_bad_input({"run", "--model", ok, "--tp", "1", "--ep", "3"}, {"--ep 3", "experts (16)"});
}

// Heads split hidden evenly, and key/value heads are shared by whole groups
// of query heads: a model file that breaks either is refused at its line,
// before any plan is built from it.
TEST_F(LlmCli, ImpossibleAttentionShapesAreRefused) {
  auto refused = [&](const std::string& text, std::initializer_list<std::string> parts) { refused_file("heads.yaml", text, parts); };
  const std::string tail = "seq: 1024\nvocab: 32000\n";
  refused("layers: 2\nhidden: 1024\nheads: 16\nkv_heads: 32\n" + tail,
          {"heads.yaml:4", "kv_heads", "must divide heads (16), got 32"});
  refused("layers: 2\nhidden: 1024\nheads: 16\nkv_heads: 6\n" + tail,
          {"heads.yaml:4", "kv_heads", "must divide heads (16), got 6"});
  refused("layers: 2\nhidden: 1000\nheads: 16\n" + tail,
          {"heads.yaml:3", "heads", "must divide hidden (1000) when head_dim is not given, got 16"});
  refused("layers: 2\nhidden: 1024\nheads: 16\nhead_dim: 0\n" + tail, {"heads.yaml:4", "head_dim", "1..2^20", "0"});
  refused("layers: 2\nhidden: 1024\nheads: 2048\nhead_dim: 1048576\n" + tail,
          {"heads.yaml:4", "head_dim", "heads x head_dim = 2048 x 1048576", "2^30"});
  // The same through the CLI: one line, exit status 2.
  expect_bad_input({"run", "--model", write("h.yaml", "layers: 2\nhidden: 1024\nheads: 16\nkv_heads: 32\n" + tail)},
                   {"kv_heads", "must divide heads (16)"});
}

// head_dim: attention wider (or narrower) than hidden, as Qwen3 has it;
// hidden need not split into heads then. Megatron-LM's FLOPs with query
// width q = heads x head_dim and key width kv: per layer and sequence,
// forward 2 s h (q + 2 kv) + 4 s^2 q + 2 s q h + 2 x 2 s h f.
TEST_F(LlmCli, HeadDimInModelFiles) {
  const std::string ok = write("qwen.yaml",
                               "name: wide\nlayers: 2\nhidden: 1000\nheads: 16\nkv_heads: 4\nhead_dim: 128\n"
                               "ffn_hidden: 4096\nseq: 1024\nvocab: 32768\n");
  const TransformerShape m = read_transformer_file(ok);
  EXPECT_EQ(m.head_dim, 128);
  EXPECT_DOUBLE_EQ(m.q_width(), 2048);
  EXPECT_DOUBLE_EQ(m.kv_width(), 512);
  const double s = 1024, h = 1000, q = 2048, kv = 512, f = 4096, V = 32768;
  EXPECT_DOUBLE_EQ(m.parameters(), 2 * (h * (q + 2 * kv) + q * h + 2 * h * f) + V * h);
  const Topology topo({dim(DimKind::kSwitch, 4, 370.8, 500)});
  ParallelPlan p;
  p.tp = 4;
  p.global_batch = 1;
  const double forward = 2 * (2 * s * h * (q + 2 * kv) + 4 * s * s * q + 2 * s * q * h + 4 * s * h * f) + 2 * s * h * V;
  EXPECT_NEAR(LlmJob(m, p, topo).model_flops_per_gpu() / (3 * forward / 4), 1.0, 1e-12);
  expect_ok({"run", "--platform", "hgx-h100", "--nodes", "1", "--model", ok, "--tp", "4", "--dp", "2"});
}

// Uneven stages from the command line: Megatron-LM's flags, and a split
// that does not add up refused in one line with its arithmetic.
TEST_F(LlmCli, UnevenPipelineFlags) {
  const std::string m = write("m.yaml", "layers: 10\nhidden: 1024\nheads: 16\nseq: 1024\nvocab: 32768\n");
  const std::vector<std::string> base = {"run", "--platform", "hgx-h100", "--nodes", "1", "--model", m, "--tp", "2", "--pp", "4",
                                         "--global-batch", "8"};
  auto with = [&](std::initializer_list<std::string> extra) {
    std::vector<std::string> a = base;
    a.insert(a.end(), extra);
    return a;
  };
  const nlohmann::json j = parse_json(
      expect_ok(with({"--decoder-first-pipeline-num-layers", "2", "--decoder-last-pipeline-num-layers", "2", "--json"})).out);
  EXPECT_NE(j["plan"].get<std::string>().find("layers per stage 2, 3 x2, 2"), std::string::npos) << j["plan"];
  expect_ok(with({"--account-for-embedding-in-pipeline-split", "--account-for-loss-in-pipeline-split"}));  // 12 / 4: 2, 3, 3, 2
  expect_bad_input(with({"--decoder-first-pipeline-num-layers", "3", "--decoder-last-pipeline-num-layers", "2"}),
                   {"layers (10) - first 3 - last 2 = 5", "2 middle stage(s)"});
  expect_bad_input(with({"--decoder-first-pipeline-num-layers", "0"}), {"--decoder-first-pipeline-num-layers", "1..", "got 0"});
  expect_bad_input(with({"--account-for-loss-in-pipeline-split"}), {"layers (10) + loss 1 = 11", "--pp 4"});
  expect_bad_input(with({"--decoder-last-pipeline-num-layers", "2", "--account-for-loss-in-pipeline-split"}), {"cannot be combined"});
}

TEST_F(LlmCli, BadMoeModelFileKeysAreOneLineErrors) {
  const std::string base = "layers: 4\nhidden: 1024\nheads: 16\nseq: 1024\nvocab: 32000\n";  // lines 1-5
  auto refused = [&](const std::string& extra, std::initializer_list<std::string> parts) { refused_file("bad.yaml", base + extra, parts); };
  const std::string moe = "experts: 8\ntop_k: 2\nmoe_ffn_hidden: 2048\n";  // lines 6-8
  refused("experts: 8\ntop_k: 9\nmoe_ffn_hidden: 2048\n", {"bad.yaml:7", "top_k", "1..experts (8)", "9"});
  refused("experts: 8\ntop_k: 0\nmoe_ffn_hidden: 2048\n", {"bad.yaml:7", "top_k", "1..experts (8)", "got 0"});
  refused("experts: 8\ntop_k: two\nmoe_ffn_hidden: 2048\n", {"bad.yaml:7", "top_k", "integer", "two"});
  refused("experts: 8\ntop_k: 2\n", {"bad.yaml:6", "moe_ffn_hidden", "missing"});
  refused("experts: 8\nmoe_ffn_hidden: 2048\n", {"bad.yaml:6", "top_k", "missing"});
  refused("experts: 0\ntop_k: 1\nmoe_ffn_hidden: 2048\n", {"bad.yaml:6", "experts", "1..2^30", "0"});
  refused("experts: 8\ntop_k: 2\nmoe_ffn_hidden: -1\n", {"bad.yaml:8", "moe_ffn_hidden", "-1"});
  refused("top_k: 2\n", {"bad.yaml:6", "top_k", "needs experts"});
  refused("moe_ffn_hidden: 2048\n", {"bad.yaml:6", "moe_ffn_hidden", "needs experts"});
  refused("shared_experts: 2\n", {"bad.yaml:6", "shared_experts", "needs experts"});
  refused("moe_every: 2\n", {"bad.yaml:6", "moe_every", "needs experts"});
  refused("first_dense_layers: 1\n", {"bad.yaml:6", "first_dense_layers", "needs experts"});
  refused(moe + "shared_experts: -1\n", {"bad.yaml:9", "shared_experts", "-1"});
  refused(moe + "moe_every: 0\n", {"bad.yaml:9", "moe_every", "1..2^30", "0"});
  refused(moe + "first_dense_layers: 4\n", {"bad.yaml:9", "first_dense_layers", "0..layers - 1 (3)", "4"});
  // Layers 0-3, the first dense, MoE where i % 4 == 0: none left.
  refused(moe + "first_dense_layers: 1\nmoe_every: 4\n",
          {"bad.yaml:10", "moe_every", "no layer is a mixture-of-experts layer", "layers 4"});
  refused(moe + "expert: 8\n", {"bad.yaml:9", "expert", "experts"});  // typo, with a suggestion
}

}  // namespace
}  // namespace acesim
