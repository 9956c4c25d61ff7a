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
  // Closed form, Llama 3 8B: 32 x (4096 (4096 + 2 x 1024) + 4096^2 + 3 x 4096
  // x 14336) + 2 x 128256 x 4096.
  EXPECT_DOUBLE_EQ(shape_of("llama3-8b").parameters(),
                   32.0 * (4096.0 * 6144 + 4096.0 * 4096 + 3.0 * 4096 * 14336) + 2.0 * 128256 * 4096);
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

class LlmCli : public test::CliTest {};

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
    ModelOptions o;
    return build_transformer(read_transformer_file(ok), o, topo).model_flops_per_rank;
  }();
  EXPECT_NEAR(j["tflops_per_gpu"].get<double>(), flops / (j["iteration_time_ns"].get<double>() * 1e-9) / 1e12, 1e-6);
  EXPECT_NEAR(j["mfu"].get<double>(), j["tflops_per_gpu"].get<double>() / (132 * 7.5), 1e-9);
  expect_ok({"run", "--platform", "hgx-h100", "--nodes", "2", "--model", "llama3-8b", "--batch", "1"});

  const std::string moe = write("moe.yaml", "layers: 2\nhidden: 1024\nheads: 16\nseq: 1024\nvocab: 32000\nexperts: 8\n");
  expect_bad_input({"run", "--model", moe}, {"moe.yaml:6", "experts", "expert parallelism"});
  const std::string act = write("act.yaml", "layers: 2\nhidden: 1024\nheads: 16\nseq: 1024\nvocab: 32000\nactivation: relu\n");
  expect_bad_input({"run", "--model", act}, {"act.yaml:6", "activation", "gelu or swiglu", "relu"});
  const std::string missing = write("miss.yaml", "hidden: 1024\nheads: 16\nseq: 1024\nvocab: 32000\n");
  expect_bad_input({"run", "--model", missing}, {"miss.yaml", "layers"});
  const std::string typo = write("typo.yaml", "layers: 2\nhiden: 1024\nheads: 16\nseq: 1024\nvocab: 32000\n");
  expect_bad_input({"run", "--model", typo}, {"typo.yaml:2", "hiden"});
  expect_bad_input({"run", "--model", "llama3-8x"}, {"unknown model", "llama3-8b"});
  expect_bad_input({"run", "--model", "/nonexistent/m.yaml"}, {"/nonexistent/m.yaml", "cannot open"});
}

}  // namespace
}  // namespace acesim
