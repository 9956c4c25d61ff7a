// The per-GPU memory footprint (src/workload/llm/memory.h): bytes per
// parameter against Megatron-LM's distributed-optimizer table and the ZeRO
// paper's example, activations against Korthikanti et al.'s closed forms and
// Megatron-LM's theoretical_memory_usage.py, and whole plans (GPT-3 175B,
// Llama 3 70B, a Mixtral-like MoE) stage by stage.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "workload/llm/memory.h"
#include "workload/llm/parallel_plan.h"
#include "workload/models/models.h"

namespace acesim {
namespace {

// The paper's forms count the unfused attention core.
constexpr AttentionKernel kUnfused = AttentionKernel::kUnfused;


const TransformerShape& shape_of(const std::string& name) {
  for (const TransformerShape& m : builtin_transformer_shapes()) {
    if (m.name == name) return m;
  }
  throw std::invalid_argument("no built-in " + name);
}

// GPT-3 175B as Korthikanti et al. train it (Table 3): t = 8, p = 8, s = 2048.
ParallelPlan gpt3_plan() {
  ParallelPlan p;
  p.tp = 8;
  p.pp = 8;
  p.dp = 8;
  p.micro_batch = 1;
  p.global_batch = 1536;  // 192 micro-batches per replica
  return p;
}

constexpr double kSbh = 2048.0 * 12288.0;  // s b h for GPT-3 at b = 1

// Megatron-LM's distributed-optimizer table (docs "Distributed Optimizer":
// bf16 params + fp32 grads 18 / 6 + 12/d; fp32 params + fp32 grads 16 / 8 + 8/d).
TEST(LlmMemory, BytesPerParameterAreMegatronsTable) {
  EXPECT_DOUBLE_EQ(bytes_per_parameter(0, 8, 2).total(), 18.0);
  EXPECT_DOUBLE_EQ(bytes_per_parameter(1, 8, 2).total(), 6.0 + 12.0 / 8);
  EXPECT_DOUBLE_EQ(bytes_per_parameter(0, 8, 4).total(), 16.0);
  EXPECT_DOUBLE_EQ(bytes_per_parameter(1, 8, 4).total(), 8.0 + 8.0 / 8);
  // ZeRO-2 and -3 shard the gradients, then the weights, too.
  EXPECT_DOUBLE_EQ(bytes_per_parameter(2, 8, 2).total(), 2.0 + 16.0 / 8);
  EXPECT_DOUBLE_EQ(bytes_per_parameter(3, 8, 2).total(), 18.0 / 8);
}

// The ZeRO paper's example (arXiv 1910.02054, Figure 1): Psi = 7.5 B, N_d =
// 64, K = 12, fp16 gradients: 120 GB, 31.4 GB, 16.6 GB, 1.9 GB.
TEST(LlmMemory, ZeroStagesAreThePapersExample) {
  const double psi = 7.5e9;
  EXPECT_DOUBLE_EQ(psi * bytes_per_parameter(0, 64, 2, 2).total(), 120e9);
  EXPECT_NEAR(psi * bytes_per_parameter(1, 64, 2, 2).total() / 1e9, 31.4, 0.05);
  EXPECT_NEAR(psi * bytes_per_parameter(2, 64, 2, 2).total() / 1e9, 16.6, 0.05);
  EXPECT_NEAR(psi * bytes_per_parameter(3, 64, 2, 2).total() / 1e9, 1.9, 0.05);
}

TEST(LlmMemory, VocabularyIsPaddedAsMegatronPadsIt) {
  EXPECT_EQ(padded_vocab(50257, 1), 50304);
  EXPECT_EQ(padded_vocab(50257, 8), 51200);
  EXPECT_EQ(padded_vocab(128256, 1), 128256);  // 1002 * 128
  EXPECT_EQ(padded_vocab(128256, 8), 129024);  // 126 * 1024
  EXPECT_EQ(padded_vocab(51200, 8), 51200);
}

// Korthikanti et al. (arXiv 2205.05198) eqs. 1-2 and §4.2: per layer
// sbh (34 + 5as/h) without parallelism; sbh (10 + 24/t + 5as/(ht)) with
// tensor parallelism; sbh/t (34 + 5as/h) with sequence parallelism too;
// 34 sbh/t with selective recomputation; 2sbh with full recomputation.
// GPT-3 175B: 5as/h = 5 * 96 * 2048 / 12288 = 80.
TEST(LlmMemory, LayerActivationsAreKorthikantisFormulas) {
  const TransformerShape& g = shape_of("gpt3-175b");
  ParallelPlan p;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(g, p, 0, 2, kUnfused), kSbh * (34 + 80));
  p.tp = 8;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(g, p, 0, 2, kUnfused), kSbh * (10 + 24.0 / 8 + 80.0 / 8));
  p.sequence_parallel = true;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(g, p, 0, 2, kUnfused), kSbh * (34 + 80) / 8);
  p.recompute = Recompute::kSelective;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(g, p, 0, 2, kUnfused), kSbh * 34 / 8);
  p.recompute = Recompute::kFull;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(g, p, 0, 2, kUnfused), kSbh * 2 / 8);
  p.sequence_parallel = false;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(g, p, 0, 2, kUnfused), kSbh * 2);
  // Context parallelism: s/cp tokens per rank, their queries against all s keys.
  p = ParallelPlan{};
  p.cp = 2;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(g, p, 0, 2, kUnfused), kSbh / 2 * 34 + 5.0 * 96 * 1024 * 2048);
}

// Grouped-query attention and SwiGLU: Q, K, V and the projection's input are
// 2sb(2h + 2k); the fused SwiGLU keeps 3 tensors of width f.
TEST(LlmMemory, LayerActivationsGeneraliseToGqaAndSwiglu) {
  const TransformerShape& l = shape_of("llama3-70b");  // h 8192, k 1024, f 28672
  ParallelPlan p;
  p.tp = 8;
  p.sequence_parallel = true;
  p.recompute = Recompute::kSelective;
  const double sb = 8192.0;
  const double expected = (10.0 * sb * 8192 + 2.0 * sb * (2 * 8192 + 2 * 1024) + 3 * 2.0 * sb * 28672) / 8;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(l, p, 0, 2, kUnfused), expected);
}

// Micro-batches in flight: 1F1B stage i min(pp - i, m); GPipe m; interleaved
// stage 0 pp (1 + (pp - 1) / (pp v)) (Korthikanti §4.2.3).
TEST(LlmMemory, MicroBatchesInFlightFollowTheSchedule) {
  ParallelPlan p = gpt3_plan();
  EXPECT_DOUBLE_EQ(micro_batches_in_flight(p, 0), 8);
  EXPECT_DOUBLE_EQ(micro_batches_in_flight(p, 7), 1);
  p.global_batch = 4 * 8;  // 4 micro-batches
  EXPECT_DOUBLE_EQ(micro_batches_in_flight(p, 0), 4);
  EXPECT_DOUBLE_EQ(micro_batches_in_flight(p, 5), 3);
  p.schedule = PipeSchedule::kGpipe;
  EXPECT_DOUBLE_EQ(micro_batches_in_flight(p, 7), 4);
  p = gpt3_plan();
  p.schedule = PipeSchedule::kInterleaved;
  p.virtual_stages = 2;
  EXPECT_DOUBLE_EQ(micro_batches_in_flight(p, 0), 8 * (1 + 7.0 / 16));
  EXPECT_DOUBLE_EQ(micro_batches_in_flight(p, 7), (8.0 + 1) / 2);
  p.pp = 1;
  EXPECT_DOUBLE_EQ(micro_batches_in_flight(p, 0), 1);
}

// GPT-3 175B, t = 8, p = 8, d = 8, sequence parallelism, selective
// recomputation, distributed optimizer: stage 0 holds 12 layers of 12h^2/t
// and the embedding V h / t; its activations are Korthikanti's first-stage
// sbhL/t * 34 plus the embedding's. Total 31.3 GB, within an A100's 80 GB.
TEST(LlmMemory, Gpt3OnMegatronsPlan) {
  const TransformerShape& g = shape_of("gpt3-175b");
  ParallelPlan p = gpt3_plan();
  p.sequence_parallel = true;
  p.recompute = Recompute::kSelective;
  p.zero = 1;
  const double layer = 12.0 * 12288 * 12288 / 8;
  const double embedding = 51200.0 * 12288 / 8;
  const MemoryBreakdown m0 = memory_per_gpu(g, p, 0, 2, kUnfused);
  EXPECT_DOUBLE_EQ(m0.parameters, 12 * layer + embedding);
  EXPECT_DOUBLE_EQ(m0.weights_bytes, 2 * m0.parameters);
  EXPECT_DOUBLE_EQ(m0.gradients_bytes, 4 * m0.parameters);
  EXPECT_DOUBLE_EQ(m0.optimizer_bytes, 12 * m0.parameters / 8);
  EXPECT_DOUBLE_EQ(m0.activations_bytes, 8 * (12 * kSbh * 34 / 8 + 8 * 2048 + kSbh / 8));
  EXPECT_NEAR(m0.total_bytes() / 1e9, 31.27, 0.01);
  // The last stage: a copy of the tied embedding as the LM head, one
  // micro-batch in flight, and its fp32 logits.
  const MemoryBreakdown m7 = memory_per_gpu(g, p, 7, 2, kUnfused);
  EXPECT_DOUBLE_EQ(m7.parameters, 12 * layer + embedding);
  EXPECT_DOUBLE_EQ(m7.activations_bytes, 12 * kSbh * 34 / 8 + 4 * kSbh / 8 + 4.0 * 2048 * 51200 / 8);
  const MemoryBreakdown worst = worst_stage_memory(g, p, 2, kUnfused);
  EXPECT_EQ(worst.stage, 0);
  EXPECT_DOUBLE_EQ(worst.total_bytes(), m0.total_bytes());
  // Fused attention keeps fp32 softmax statistics per head and query
  // instead: 4 a s b / t bytes a layer.
  EXPECT_DOUBLE_EQ(memory_per_gpu(g, p, 0).activations_bytes,
                   m0.activations_bytes + 8 * 12 * 4.0 * 96 * 2048 / 8);
  // Without sequence parallelism, recomputation and the distributed
  // optimizer, the first stage needs sbhL (10 + 24/t + 5as/(ht)) of
  // activations (55.6 GB) and 18 bytes per parameter (50.3 GB): 80 GB exceeded.
  p.sequence_parallel = false;
  p.recompute = Recompute::kNone;
  p.zero = 0;
  const MemoryBreakdown bare = memory_per_gpu(g, p, 0, 2, kUnfused);
  EXPECT_DOUBLE_EQ(bare.activations_bytes, 8 * (12 * kSbh * 23 + 8 * 2048 + kSbh));
  EXPECT_FALSE(fits_in_hbm(bare, 80));
  EXPECT_TRUE(fits_in_hbm(m0, 80));
}

// Megatron-LM's own estimate (megatron/training/theoretical_memory_usage.py,
// which assumes sequence parallelism and selective recomputation): per layer
// sbh (18 + 4 f/h) / t, times the layers of all in-flight micro-batches,
// plus the embedding's dropout mask (and token ids, counted there / t).
TEST(LlmMemory, FirstStageActivationsAgreeWithMegatronsEstimate) {
  const TransformerShape& g = shape_of("gpt3-175b");
  ParallelPlan p = gpt3_plan();
  p.sequence_parallel = true;
  p.recompute = Recompute::kSelective;
  const double s = 2048, h = 12288, f = 49152, t = 8, pp = 8, layers = 96;
  const double megatron = (s * h * (18 + 4 * f / h) * layers + 8 * s * pp + s * h * pp) / t;
  EXPECT_NEAR(memory_per_gpu(g, p, 0, 2, kUnfused).activations_bytes / megatron, 1.0, 2e-5);
  // Interleaved: times 1 + (pp - 1) / (pp v).
  p.schedule = PipeSchedule::kInterleaved;
  p.virtual_stages = 3;
  const double penalty = 1 + (pp - 1) / (pp * 3);
  EXPECT_NEAR(memory_per_gpu(g, p, 0, 2, kUnfused).activations_bytes / (megatron * penalty), 1.0, 2e-5);
}

// Llama 3 70B on 1,024 H100s, t = 8, p = 8, d = 16, sequence parallelism,
// selective recomputation (flash attention keeps no s x s scores), the
// distributed optimizer, 128 micro-batches per replica. Stage 0: 10 layers
// of (h(h + 2k) + h^2 + 3hf)/t and the untied embedding V h / t.
TEST(LlmMemory, Llama3_70bOnH100s) {
  const TransformerShape& l = shape_of("llama3-70b");
  ParallelPlan p;
  p.tp = 8;
  p.pp = 8;
  p.dp = 16;
  p.sequence_parallel = true;
  p.recompute = Recompute::kSelective;
  p.zero = 1;
  p.global_batch = 2048;
  const double h = 8192, k = 1024, f = 28672, s = 8192;
  const double layer = (h * (h + 2 * k) + h * h + 3 * h * f) / 8;
  const MemoryBreakdown m0 = memory_per_gpu(l, p, 0, 2, kUnfused);
  EXPECT_DOUBLE_EQ(m0.parameters, 10 * layer + 129024 * h / 8);
  EXPECT_DOUBLE_EQ(m0.optimizer_bytes, 12 * m0.parameters / 16);
  const double act_layer = (10 * s * h + 2 * s * (2 * h + 2 * k) + 6 * s * f) / 8;
  EXPECT_DOUBLE_EQ(m0.activations_bytes, 8 * (10 * act_layer + 8 * s + s * h / 8));
  EXPECT_NEAR(m0.total_bytes() / 1e9, 32.00, 0.01);
  // The last stage holds the untied LM head and fp32 logits of one micro-batch.
  const MemoryBreakdown m7 = memory_per_gpu(l, p, 7, 2, kUnfused);
  EXPECT_DOUBLE_EQ(m7.parameters, m0.parameters);
  EXPECT_DOUBLE_EQ(m7.activations_bytes, 10 * act_layer + 4 * s * h / 8 + 4 * s * 129024 / 8);
  EXPECT_EQ(worst_stage_memory(l, p).stage, 0);
  EXPECT_EQ(format_memory(m0, 80),
            "stage 0: weights 2.4 GB, gradients 4.8 GB, optimizer 0.9 GB, activations 23.9 GB, total 32.0 GB "
            "<= 80 GB HBM");
}

// A Mixtral-like MoE: routed experts split over ep and, by default, over
// the tp ranks as the dense MLP (Megatron's expert tensor parallelism tp),
// their states sharded over cp * dp / ep; each rank's sequence-parallel
// share of the tokens reaches top_k experts, all-gathered over the tp ranks.
// With --expert-tensor-parallel-size 1: whole experts, their states sharded
// over tp * cp * dp / ep, the tokens not gathered.
TEST(LlmMemory, MixtureOfExperts) {
  TransformerShape m;
  m.name = "moe";
  m.layers = 32;
  m.hidden = 4096;
  m.heads = 32;
  m.kv_heads = 8;
  m.ffn_hidden = 14336;
  m.seq = 4096;
  m.vocab = 32000;
  m.swiglu = true;
  m.tied_embeddings = false;
  m.experts = 8;
  m.top_k = 2;
  m.moe_ffn_hidden = 14336;
  ParallelPlan p;
  p.tp = 2;
  p.pp = 4;
  p.dp = 8;
  p.ep = 4;
  p.zero = 1;
  p.sequence_parallel = true;
  p.recompute = Recompute::kSelective;
  p.global_batch = 64;  // 8 micro-batches
  const double h = 4096, k = 1024, f = 14336, s = 4096;
  const double attention = (h * (h + 2 * k) + h * h) / 2;
  const double expert = 3 * h * f;
  const double act_common = (10 * s * h + 4 * s * 8) / 2 + 2 * s * (2 * h + 2 * k) / 2;
  {
    const StageParameters sp = stage_parameters(m, p, 1);
    EXPECT_DOUBLE_EQ(sp.dense, 8 * (attention + h * 8));
    EXPECT_DOUBLE_EQ(sp.expert, 8 * (8.0 / 4) * expert / 2);
    const MemoryBreakdown m1 = memory_per_gpu(m, p, 1, 2, kUnfused);
    EXPECT_DOUBLE_EQ(m1.optimizer_bytes, 12 * sp.dense / 8 + 12 * sp.expert / (8 / 4));
    // Routed: top_k x (the gathered input, 2 s h, and 1/2 of the inner tensors) over 2.
    const double act_layer = act_common + 2 * (2 * s * h * 2 + 6 * s * f) / 2;
    EXPECT_DOUBLE_EQ(layer_activation_bytes(m, p, 0, 2, kUnfused), act_layer);
    EXPECT_DOUBLE_EQ(m1.activations_bytes, 3 * 8 * act_layer);
  }
  p.expert_tp = 1;
  const StageParameters sp = stage_parameters(m, p, 1);
  EXPECT_DOUBLE_EQ(sp.dense, 8 * (attention + h * 8));
  EXPECT_DOUBLE_EQ(sp.expert, 8 * (8.0 / 4) * expert);
  const MemoryBreakdown m1 = memory_per_gpu(m, p, 1, 2, kUnfused);
  EXPECT_DOUBLE_EQ(m1.optimizer_bytes, 12 * sp.dense / 8 + 12 * sp.expert / (2 * 8 / 4));
  const double act_layer = act_common + 2 * (2 * s * h + 6 * s * f) / 2;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, p, 0, 2, kUnfused), act_layer);
  EXPECT_DOUBLE_EQ(m1.activations_bytes, 3 * 8 * act_layer);
  // Stage 0 carries the embedding (32000, a multiple of 128 t) as a dense parameter.
  EXPECT_DOUBLE_EQ(stage_parameters(m, p, 0).dense, sp.dense + 32000 * h / 2);
}

// DeepSeek-style: shared experts beside the routed ones, the first layers
// dense; layers are counted where their stage holds them, chunk by chunk.
TEST(LlmMemory, SharedExpertsAndFirstDenseLayers) {
  TransformerShape m;
  m.name = "deepseek-like";
  m.layers = 8;
  m.hidden = 1024;
  m.heads = 16;
  m.kv_heads = 16;
  m.ffn_hidden = 4096;
  m.seq = 1024;
  m.vocab = 1000;
  m.swiglu = true;
  m.tied_embeddings = true;
  m.experts = 16;
  m.top_k = 4;
  m.moe_ffn_hidden = 512;
  m.shared_experts = 2;
  m.first_dense_layers = 1;
  ParallelPlan p;
  p.pp = 2;
  p.dp = 4;
  p.ep = 4;
  p.global_batch = 16;  // 4 micro-batches
  p.schedule = PipeSchedule::kInterleaved;
  p.virtual_stages = 2;  // stage 0: layers 0, 1 and 4, 5; stage 1: 2, 3 and 6, 7
  const double h = 1024, attention = 2 * h * h + 2 * h * h, expert = 3 * h * 512;
  const double moe_dense = attention + h * 16 + 2 * expert;  // router and shared experts
  const StageParameters s0 = stage_parameters(m, p, 0);
  EXPECT_DOUBLE_EQ(s0.dense, (attention + 3 * h * 4096) + 3 * moe_dense + 1024 * h);  // vocab padded to 1024
  EXPECT_DOUBLE_EQ(s0.expert, 3 * (16.0 / 4) * expert);
  const StageParameters s1 = stage_parameters(m, p, 1);
  EXPECT_DOUBLE_EQ(s1.dense, 4 * moe_dense + 1024 * h);  // the tied LM head's copy
  EXPECT_DOUBLE_EQ(s1.expert, 4 * (16.0 / 4) * expert);
  // Selective recomputation off: the first layer is dense, the others MoE.
  const double sb = 1024, core = 5.0 * 16 * 1024 * 1024;
  const double dense_layer = 10 * sb * h + 2 * sb * 4 * h + core + 6 * sb * 4096;
  const double moe_layer = 10 * sb * h + 4 * sb * 16 + 2 * sb * 4 * h + core + (4 + 2) * 6 * sb * 512 + 4 * 2 * sb * h;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, p, 0, 2, kUnfused), dense_layer);
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, p, 1, 2, kUnfused), moe_layer);
  // Stage 0 of the interleaved schedule: (2 (p - 1) + (v - 1) p + 1) / v = 2.5
  // micro-batches of its four layers.
  const MemoryBreakdown m0 = memory_per_gpu(m, p, 0, 2, kUnfused);
  EXPECT_DOUBLE_EQ(m0.micro_batches_in_flight, 2.5);
  EXPECT_DOUBLE_EQ(m0.activations_bytes, 2.5 * (dense_layer + 3 * moe_layer + 8 * sb + sb * h));
}

// Llama 3 405B on Meta's 16 stages of 7, 14 x 8, 7 layers (tp 8): a middle
// stage holds 8 layers' parameters, the first 7 and the embedding, the last
// 7 and the untied LM head; activations follow the layers held.
TEST(LlmMemory, UnevenStagesHoldTheirLayers) {
  const TransformerShape& m = shape_of("llama3-405b");
  ParallelPlan p;
  p.tp = 8;
  p.pp = 16;
  p.dp = 1;
  p.global_batch = 16;
  p.first_stage_layers = 7;
  p.last_stage_layers = 7;
  const double h = 16384, layer = (h * (h + 2 * 1024) + h * h + 3 * h * 53248) / 8, embedding = 129024.0 * h / 8;  // padded to 1024 x 126
  EXPECT_DOUBLE_EQ(stage_parameters(m, p, 0).dense, 7 * layer + embedding);
  EXPECT_DOUBLE_EQ(stage_parameters(m, p, 1).dense, 8 * layer);
  EXPECT_DOUBLE_EQ(stage_parameters(m, p, 15).dense, 7 * layer + embedding);
  const double per_layer = layer_activation_bytes(m, p, 0, 2);
  // 1F1B: stage 1 holds 15 micro-batches of its 8 layers.
  EXPECT_NEAR(memory_per_gpu(m, p, 1).activations_bytes / (15 * 8 * per_layer), 1.0, 1e-12);
}

TEST(LlmMemory, FormatsOneLine) {
  MemoryBreakdown m;
  m.stage = 3;
  m.weights_bytes = 12.34e9;
  m.gradients_bytes = 24.68e9;
  m.optimizer_bytes = 9.2e9;
  m.activations_bytes = 40e9;
  EXPECT_EQ(format_memory(m, 80),
            "stage 3: weights 12.3 GB, gradients 24.7 GB, optimizer 9.2 GB, activations 40.0 GB, total 86.2 GB > 80 "
            "GB HBM");
  EXPECT_EQ(format_memory(m, 0),
            "stage 3: weights 12.3 GB, gradients 24.7 GB, optimizer 9.2 GB, activations 40.0 GB, total 86.2 GB (HBM "
            "capacity unknown)");
  EXPECT_TRUE(fits_in_hbm(m, 0));
  EXPECT_FALSE(fits_in_hbm(m, 86));
  EXPECT_TRUE(fits_in_hbm(m, 141));
  EXPECT_THROW(memory_per_gpu(shape_of("gpt3-175b"), gpt3_plan(), 8), std::invalid_argument);
}

}  // namespace
}  // namespace acesim
