#include "workload/models/models.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "support.h"

namespace acesim {
namespace {

using test::dim;

Topology torus(int a, int b) { return Topology({dim(DimKind::kRing, a, 100, 1), dim(DimKind::kRing, b, 100, 1)}); }

// The models the layer-table path builds: mixture-of-experts ones need the
// LLM plan (build_transformer refuses them, llm_models_test.cpp checks it).
std::vector<std::string> layer_table_models() {
  std::vector<std::string> out;
  for (const std::string& name : model_names()) {
    const auto& zoo = builtin_transformer_shapes();
    const bool moe =
        std::any_of(zoo.begin(), zoo.end(), [&](const TransformerShape& m) { return m.name == name && m.moe(); });
    if (!moe) out.push_back(name);
  }
  return out;
}

// Sum of the weight-gradient all-reduce bytes (the data-parallel traffic).
double weight_grad_bytes(const Workload& w) {
  double s = 0;
  for (const Layer& l : w.layers) {
    if (l.weight_grad.comm.op) {
      EXPECT_EQ(*l.weight_grad.comm.op, CollectiveOp::kAllReduce) << l.name;
      EXPECT_FALSE(l.weight_grad.comm.blocking) << l.name;
      s += l.weight_grad.comm.bytes;
    }
  }
  return s;
}

double forward_flops(const Workload& w) {
  double s = 0;
  for (const Layer& l : w.layers) s += l.forward.compute.flops;
  return s;
}

double hbm_bytes(const Workload& w) {
  double s = 0;
  for (const Layer& l : w.layers) {
    s += l.forward.compute.hbm_bytes + l.input_grad.compute.hbm_bytes + l.weight_grad.compute.hbm_bytes;
  }
  return s;
}

const Layer& layer(const Workload& w, const std::string& name) {
  for (const Layer& l : w.layers) {
    if (l.name == name) return l;
  }
  ADD_FAILURE() << "no layer " << name;
  return w.layers.front();
}

// ---- published parameter counts of our configurations (docs/models.md) ----
constexpr double kResNet50Params = 25'557'032;  // torchvision resnet50: convs + BN scale/shift + fc
double gnmt_params() {
  const double h = 1024, v = 32000;
  const double lstm_1024 = 4 * (1024 + h) * h + 4 * h;  // 8,392,704
  const double lstm_2048 = 4 * (2048 + h) * h + 4 * h;  // 12,587,008
  return 2 * v * 1024           // encoder and decoder embeddings
         + 2 * lstm_1024        // bidirectional first encoder layer
         + lstm_2048            // second encoder layer (2048 inputs)
         + 6 * lstm_1024        // encoder layers 3..8
         + 8 * lstm_2048        // decoder layers (input + attention context)
         + 2 * h * h + h        // attention W_q, W_k, v
         + h * v + v;           // softmax projection
}
constexpr double kDlrmMlpParams = (13 * 512 + 512) + (512 * 256 + 256) + (256 * 128 + 128) + (479 * 1024 + 1024) +
                                  (1024 * 1024 + 1024) + (1024 * 512 + 512) + (512 * 256 + 256) + (256 * 1 + 1);

TEST(Models, Names) {
  EXPECT_EQ(model_names(), (std::vector<std::string>{"resnet50", "gnmt", "dlrm", "gpt", "gpt3-175b", "llama3-8b",
                                                     "llama3-70b", "llama3-405b", "bloom-176b", "qwen3-32b",
                                                     "mixtral-8x7b", "deepseek-v2-lite"}));
}

TEST(Models, ResNet50ParametersAndFlops) {
  const Topology topo = torus(4, 4);
  ModelOptions opt;
  const Workload w = build_model("resnet50", opt, topo);
  EXPECT_EQ(w.name, "ResNet-50");
  EXPECT_EQ(w.parallelism, "DATA");
  EXPECT_EQ(w.iterations, 2);
  ASSERT_EQ(w.layers.size(), 54u);  // 53 convolutions + fc
  EXPECT_EQ(w.layers.front().name, "conv1");
  EXPECT_EQ(w.layers[1].name, "res2a_branch1");
  EXPECT_EQ(w.layers[2].name, "res2a_branch2a");
  EXPECT_EQ(w.layers[52].name, "res5c_branch2c");
  EXPECT_EQ(w.layers.back().name, "fc1000");

  const double params = weight_grad_bytes(w) / 2;
  EXPECT_NEAR(params, 25.557e6, 0.01 * 25.557e6);
  EXPECT_DOUBLE_EQ(params, kResNet50Params);
  const double per_image = forward_flops(w) / 32;  // default batch 32
  EXPECT_NEAR(per_image, 2 * 4.1e9, 0.03 * 2 * 4.1e9);

  // One layer by hand: res2a_branch2b, 3x3, 64 -> 64 channels on 56x56.
  const Layer& l = layer(w, "res2a_branch2b");
  EXPECT_DOUBLE_EQ(l.forward.compute.flops, 2.0 * 9 * 64 * 64 * 56 * 56 * 32);
  EXPECT_DOUBLE_EQ(l.weight_grad.comm.bytes, (9 * 64 * 64 + 2 * 64) * 2.0);
  // weights + input + output activations, 2 bytes each
  EXPECT_DOUBLE_EQ(l.forward.compute.hbm_bytes, (9 * 64 * 64 + 128 + 2.0 * 32 * 64 * 56 * 56) * 2);
  EXPECT_DOUBLE_EQ(l.input_grad.compute.flops, l.forward.compute.flops);
  EXPECT_DOUBLE_EQ(l.weight_grad.compute.flops, l.forward.compute.flops);
  // Stride of a downsampling block on its 3x3 convolution (v1.5): 56 -> 28.
  EXPECT_DOUBLE_EQ(layer(w, "res3a_branch2b").forward.compute.flops, 2.0 * 9 * 128 * 128 * 28 * 28 * 32);

  // conv1 computes no input gradient; no layer communicates in forward or input-grad.
  EXPECT_EQ(w.layers[0].input_grad.compute.flops, 0.0);
  EXPECT_EQ(w.layers[0].input_grad.compute.hbm_bytes, 0.0);
  for (const Layer& x : w.layers) {
    EXPECT_FALSE(x.forward.comm.op) << x.name;
    EXPECT_FALSE(x.input_grad.comm.op) << x.name;
    ASSERT_TRUE(x.weight_grad.comm.op) << x.name;
    EXPECT_EQ(x.weight_grad.comm.dims, (std::vector<int>{0, 1})) << x.name;  // data_dims empty = all
    EXPECT_EQ(x.forward.compute.time_ps, -1) << x.name;
  }
}

TEST(Models, GnmtLayersAndParameters) {
  const Topology topo = torus(4, 4);
  ModelOptions opt;
  opt.data_dims = {1};
  const Workload w = build_model("gnmt", opt, topo);
  EXPECT_EQ(w.parallelism, "DATA");
  ASSERT_EQ(w.layers.size(), 20u);  // 2 embeddings, 16 LSTM layers, attention, softmax
  EXPECT_DOUBLE_EQ(weight_grad_bytes(w) / 2, gnmt_params());
  EXPECT_DOUBLE_EQ(gnmt_params(), 280'858'880);
  for (const Layer& l : w.layers) EXPECT_EQ(l.weight_grad.comm.dims, (std::vector<int>{1})) << l.name;

  const double b = 64, tokens = b * 50;
  EXPECT_DOUBLE_EQ(layer(w, "encoder_lstm3").forward.compute.flops, 2.0 * 4 * (1024 + 1024) * 1024 * tokens);
  EXPECT_DOUBLE_EQ(layer(w, "encoder_lstm1").forward.compute.flops, 2 * 2.0 * 4 * (1024 + 1024) * 1024 * tokens);
  EXPECT_DOUBLE_EQ(layer(w, "decoder_lstm5").forward.compute.flops, 2.0 * 4 * (2048 + 1024) * 1024 * tokens);
  EXPECT_DOUBLE_EQ(layer(w, "softmax").forward.compute.flops, 2.0 * 1024 * 32000 * tokens);
  EXPECT_DOUBLE_EQ(layer(w, "softmax").weight_grad.comm.bytes, (1024.0 * 32000 + 32000) * 2);
  EXPECT_DOUBLE_EQ(layer(w, "attention").forward.compute.flops,
                   2.0 * 1024 * 1024 * tokens * 2 + 4.0 * 1024 * b * 50 * 50);
  // Embeddings: no input gradient, lookups move rows and do no FLOPs.
  for (const char* e : {"encoder_embedding", "decoder_embedding"}) {
    const Layer& l = layer(w, e);
    EXPECT_EQ(l.forward.compute.flops, 0.0);
    EXPECT_DOUBLE_EQ(l.forward.compute.hbm_bytes, 2.0 * tokens * 1024 * 2);
    EXPECT_EQ(l.input_grad.compute.flops, 0.0);
    EXPECT_EQ(l.input_grad.compute.hbm_bytes, 0.0);
    EXPECT_DOUBLE_EQ(l.weight_grad.comm.bytes, 32000.0 * 1024 * 2);
  }
  // Per sentence, forward: about 21.5 GFLOPs.
  EXPECT_NEAR(forward_flops(w) / b, 2.153e10, 0.001e10);
}

TEST(Models, DlrmAllToAllAndMlps) {
  const Topology topo = torus(4, 4);
  ModelOptions opt;
  const Workload w = build_model("dlrm", opt, topo);
  EXPECT_EQ(w.parallelism, "HYBRID_DLRM");
  ASSERT_EQ(w.layers.size(), 10u);
  const Layer& emb = w.layers[0];
  EXPECT_EQ(emb.name, "embedding");
  // b * 26 * 128 * bytes each rank sends (nccl convention), default b = 512.
  const double a2a = 512.0 * 26 * 128 * 2;
  EXPECT_DOUBLE_EQ(a2a, 3'407'872);
  for (const CommSpec* c : {&emb.forward.comm, &emb.input_grad.comm}) {
    ASSERT_TRUE(c->op);
    EXPECT_EQ(*c->op, CollectiveOp::kAllToAll);
    EXPECT_DOUBLE_EQ(c->bytes, a2a);
    EXPECT_EQ(c->dims, (std::vector<int>{0, 1}));
  }
  // The all-to-alls overlap the bottom MLP; the interaction (layer 4) waits.
  EXPECT_EQ(w.layers[4].name, "interaction");
  EXPECT_EQ(emb.forward.comm.wait_before_forward_layer, 4);
  EXPECT_EQ(emb.input_grad.comm.issue_after_backward_layer, 4);
  EXPECT_FALSE(emb.weight_grad.comm.op);
  EXPECT_DOUBLE_EQ(emb.forward.compute.hbm_bytes, 2 * a2a);  // rows read, vectors written
  EXPECT_EQ(emb.input_grad.compute.flops, 0.0);
  EXPECT_FALSE(w.layers[4].weight_grad.comm.op);
  EXPECT_EQ(w.layers[4].weight_grad.compute.flops, 0.0);
  EXPECT_DOUBLE_EQ(w.layers[4].forward.compute.flops, 2.0 * 27 * 27 * 128 * 512);

  EXPECT_DOUBLE_EQ(weight_grad_bytes(w) / 2, kDlrmMlpParams);
  EXPECT_DOUBLE_EQ(kDlrmMlpParams, 2'368'897);
  EXPECT_DOUBLE_EQ(layer(w, "top_mlp2").forward.compute.flops, 2.0 * 1024 * 1024 * 512);
  EXPECT_EQ(layer(w, "bot_mlp1").input_grad.compute.flops, 0.0);  // dense features

  // Layout: the all-to-all over model_dims, the MLP all-reduces over data_dims.
  ModelOptions split;
  split.model_dims = {0};
  split.data_dims = {1};
  split.batch_per_npu = 100;
  const Workload s = build_model("dlrm", split, topo);
  EXPECT_EQ(s.layers[0].forward.comm.dims, (std::vector<int>{0}));
  EXPECT_DOUBLE_EQ(s.layers[0].forward.comm.bytes, 100.0 * 26 * 128 * 2);
  EXPECT_EQ(layer(s, "top_mlp1").weight_grad.comm.dims, (std::vector<int>{1}));
}

TEST(Models, GptTensorParallelOnFourByFour) {
  const Topology topo = torus(4, 4);
  ModelOptions opt;  // t = 4 over dimension 0, data parallel over dimension 1
  const Workload w = build_model("gpt", opt, topo);
  EXPECT_EQ(w.parallelism, "HYBRID_TRANSFORMER");
  ASSERT_EQ(w.layers.size(), 2u * 24 + 2);
  EXPECT_EQ(w.layers[1].name, "block1_attention");
  EXPECT_EQ(w.layers[2].name, "block1_mlp");
  EXPECT_EQ(w.layers.back().name, "lm_head");

  const double t = 4, b = 8, s = 2048, h = 2048;
  const Layer& attn = w.layers[1];
  const Layer& mlp = w.layers[2];
  EXPECT_DOUBLE_EQ(attn.forward.compute.flops + mlp.forward.compute.flops,
                   (24 * b * s * h * h + 4 * b * s * s * h) / t);
  const double act = b * s * h * 2;  // 67,108,864 bytes
  EXPECT_DOUBLE_EQ(act, 67'108'864);
  for (const Layer* l : {&attn, &mlp}) {
    for (const CommSpec* c : {&l->forward.comm, &l->input_grad.comm}) {
      ASSERT_TRUE(c->op) << l->name;
      EXPECT_EQ(*c->op, CollectiveOp::kAllReduce);
      EXPECT_DOUBLE_EQ(c->bytes, act);
      EXPECT_EQ(c->dims, (std::vector<int>{0}));
      EXPECT_TRUE(c->blocking);
    }
    EXPECT_EQ(l->weight_grad.comm.dims, (std::vector<int>{1}));
    EXPECT_FALSE(l->weight_grad.comm.blocking);
  }
  EXPECT_DOUBLE_EQ(attn.weight_grad.comm.bytes, 4 * h * h / t * 2);  // 8,388,608
  EXPECT_DOUBLE_EQ(mlp.weight_grad.comm.bytes, 8 * h * h / t * 2);   // 16,777,216
  EXPECT_DOUBLE_EQ(attn.weight_grad.comm.bytes + mlp.weight_grad.comm.bytes, 12 * h * h / t * 2);

  // Vocabulary padded to a multiple of 128 * t = 512: 50257 -> 50688.
  const double vocab = 50688;
  const Layer& emb = w.layers.front();
  EXPECT_DOUBLE_EQ(emb.weight_grad.comm.bytes, vocab * h / t * 2);
  ASSERT_TRUE(emb.forward.comm.op);
  EXPECT_DOUBLE_EQ(emb.forward.comm.bytes, act);
  EXPECT_EQ(emb.input_grad.compute.flops, 0.0);
  const Layer& head = w.layers.back();
  EXPECT_DOUBLE_EQ(head.forward.compute.flops, 2 * b * s * h * vocab / t);
  EXPECT_FALSE(head.weight_grad.comm.op);  // tied with the embedding
  EXPECT_DOUBLE_EQ(head.input_grad.comm.bytes, act);

  // Per-rank parameters: 24 blocks of 12h^2/t plus the embedding slice.
  const double per_rank = 24 * 12 * h * h / t + vocab * h / t;
  EXPECT_DOUBLE_EQ(per_rank, 327'942'144);
  EXPECT_DOUBLE_EQ(weight_grad_bytes(w), per_rank * 2);
  // Per block half: forward, input-grad and weight-grad; the embedding's
  // forward and weight-grad; the LM head's input-grad.
  EXPECT_EQ(totals(w).collectives, 24 * 2 * 3 + 2 + 1);
}

TEST(Models, GptWithoutTensorParallelismMatchesGpt3Xl) {
  // Dimension 0 of one NPU: t = 1, data parallel over dimension 1.
  const Topology topo = torus(1, 8);
  const Workload w = build_model("gpt", ModelOptions{}, topo);
  const double params = weight_grad_bytes(w) / 2;
  EXPECT_DOUBLE_EQ(params, 24 * 12 * 2048.0 * 2048 + 50304.0 * 2048);  // 1,310,982,144
  EXPECT_NEAR(params, 1.3e9, 0.02e9);                                    // GPT-3 XL, Brown et al. 2020
  EXPECT_FALSE(w.layers[1].forward.comm.op);                             // no tensor-parallel partner
}

TEST(Models, WeightGradientBytesAreParametersTimesPrecision) {
  const Topology topo = torus(4, 4);
  const double h = 2048;
  const std::pair<std::string, double> expected[] = {
      {"resnet50", kResNet50Params},
      {"gnmt", gnmt_params()},
      {"dlrm", kDlrmMlpParams},
      {"gpt", 24 * 12 * h * h / 4 + 50688 * h / 4},
  };
  for (const auto& [name, params] : expected) {
    for (int bpe : {2, 4}) {
      ModelOptions opt;
      opt.bytes_per_element = bpe;
      EXPECT_DOUBLE_EQ(weight_grad_bytes(build_model(name, opt, topo)), params * bpe) << name << " " << bpe;
    }
  }
}

TEST(Models, PrecisionFourDoublesEveryByte) {
  const Topology topo = torus(4, 4);
  for (const auto& name : layer_table_models()) {
    ModelOptions half, full;
    full.bytes_per_element = 4;
    const Workload a = build_model(name, half, topo), b = build_model(name, full, topo);
    const WorkloadTotals ta = totals(a), tb = totals(b);
    EXPECT_DOUBLE_EQ(tb.flops, ta.flops) << name;
    EXPECT_DOUBLE_EQ(hbm_bytes(b), 2 * hbm_bytes(a)) << name;
    for (int op = 0; op < 4; ++op) EXPECT_DOUBLE_EQ(tb.comm_bytes[op], 2 * ta.comm_bytes[op]) << name << " " << op;
    EXPECT_EQ(tb.collectives, ta.collectives) << name;
  }
}

TEST(Models, BatchDoublesFlops) {
  const Topology topo = torus(4, 4);
  const int defaults[] = {32, 64, 512, 8, 1, 1, 1, 1, 1, 1};  // the LLMs: one sequence per NPU
  int i = 0;
  for (const auto& name : layer_table_models()) {
    ModelOptions one, two;
    one.batch_per_npu = defaults[i];
    two.batch_per_npu = 2 * defaults[i];
    ++i;
    const Workload d = build_model(name, ModelOptions{}, topo);
    const Workload a = build_model(name, one, topo), b = build_model(name, two, topo);
    EXPECT_DOUBLE_EQ(totals(d).flops, totals(a).flops) << name << ": 0 = the default batch";
    EXPECT_DOUBLE_EQ(totals(b).flops, 2 * totals(a).flops) << name;
    EXPECT_DOUBLE_EQ(forward_flops(b), 2 * forward_flops(a)) << name;
    // Weight gradients do not depend on the batch.
    EXPECT_DOUBLE_EQ(weight_grad_bytes(b), weight_grad_bytes(a)) << name;
  }
  // DLRM's all-to-all and GPT's activation all-reduces scale with it.
  ModelOptions two;
  two.batch_per_npu = 1024;
  EXPECT_DOUBLE_EQ(totals(build_model("dlrm", two, topo)).comm_bytes[int(CollectiveOp::kAllToAll)],
                   2 * (1024.0 * 26 * 128 * 2));  // forward and backward
  two.batch_per_npu = 16;
  EXPECT_DOUBLE_EQ(build_model("gpt", two, topo).layers[1].forward.comm.bytes, 16.0 * 2048 * 2048 * 2);
}

TEST(Models, OptionsPassThrough) {
  const Topology topo = torus(4, 4);
  ModelOptions opt;
  opt.iterations = 5;
  opt.gpt_layers = 2;
  opt.gpt_hidden = 512;
  opt.gpt_heads = 8;
  opt.gpt_seq = 128;
  opt.gpt_vocab = 1000;
  const Workload w = build_model("gpt", opt, topo);
  EXPECT_EQ(w.iterations, 5);
  ASSERT_EQ(w.layers.size(), 6u);
  const double b = 8, s = 128, h = 512;
  EXPECT_DOUBLE_EQ(w.layers[3].forward.compute.flops + w.layers[4].forward.compute.flops,
                   (24 * b * s * h * h + 4 * b * s * s * h) / 4);
  EXPECT_DOUBLE_EQ(w.layers[0].weight_grad.comm.bytes, 1024 * h / 4 * 2);  // 1000 -> 1024
}

TEST(Models, OneNpuCommunicatesNothing) {
  const Topology one({dim(DimKind::kRing, 1, 100, 1)});
  for (const auto& name : layer_table_models()) {
    EXPECT_EQ(totals(build_model(name, ModelOptions{}, one)).collectives, 0) << name;
  }
  // GPT over the only dimension: tensor parallel, no data parallelism left.
  const Topology ring({dim(DimKind::kRing, 4, 100, 1)});
  const Workload w = build_model("gpt", ModelOptions{}, ring);
  EXPECT_DOUBLE_EQ(weight_grad_bytes(w), 0.0);
  EXPECT_EQ(totals(w).collectives, 24 * 2 * 2 + 2);
}

TEST(Models, BadOptionsThrow) {
  const Topology topo = torus(4, 4);
  auto throws = [&](const std::string& name, auto&& tweak, const Topology& t) {
    ModelOptions opt;
    tweak(opt);
    EXPECT_THROW(build_model(name, opt, t), std::invalid_argument) << name;
  };
  throws("alexnet", [](ModelOptions&) {}, topo);
  throws("ResNet50", [](ModelOptions&) {}, topo);
  for (const auto& name : layer_table_models()) {
    throws(name, [](ModelOptions& o) { o.data_dims = {2}; }, topo);
    throws(name, [](ModelOptions& o) { o.data_dims = {-1}; }, topo);
    throws(name, [](ModelOptions& o) { o.data_dims = {1, 1}; }, topo);
    throws(name, [](ModelOptions& o) { o.bytes_per_element = 3; }, topo);
    throws(name, [](ModelOptions& o) { o.bytes_per_element = 0; }, topo);
    throws(name, [](ModelOptions& o) { o.iterations = 0; }, topo);
    throws(name, [](ModelOptions& o) { o.batch_per_npu = -1; }, topo);
    throws(name, [](ModelOptions& o) { o.model_dims = {5}; }, topo);
  }
  throws("resnet50", [](ModelOptions& o) { o.model_dims = {0}; }, topo);  // data parallel only
  throws("gnmt", [](ModelOptions& o) { o.model_dims = {1}; }, topo);
  // GPT: t = 3 divides neither 16 heads nor 2048.
  throws("gpt", [](ModelOptions&) {}, torus(3, 4));
  throws("gpt", [](ModelOptions& o) { o.gpt_heads = 6; }, topo);  // 6 heads do not divide 2048
  throws("gpt", [](ModelOptions& o) { o.gpt_heads = 2; o.gpt_hidden = 2048; }, topo);  // t = 4 > 2 heads
  throws("gpt", [](ModelOptions& o) { o.model_dims = {0, 1}; }, torus(4, 8));  // t = 32 > 16 heads
  throws("gpt", [](ModelOptions& o) { o.data_dims = {0}; }, topo);             // overlaps model_dims {0}
  throws("gpt", [](ModelOptions& o) { o.gpt_layers = 0; }, topo);
  throws("gpt", [](ModelOptions& o) { o.gpt_seq = 0; }, topo);
  // What is valid: GPT with t = 16 over both dimensions, no data parallelism.
  ModelOptions ok;
  ok.model_dims = {0, 1};
  EXPECT_NO_THROW(build_model("gpt", ok, topo));
}

TEST(Models, ErrorsNameTheProblem) {
  const Topology topo = torus(4, 4);
  ModelOptions opt;
  opt.data_dims = {7};
  try {
    build_model("dlrm", opt, topo);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("data_dims"), std::string::npos) << e.what();
  }
  try {
    build_model("vgg", ModelOptions{}, topo);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("resnet50"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace acesim
