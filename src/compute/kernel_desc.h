// A compute kernel as a training stack launches it: what it is (a GEMM, a
// fused attention, a fused memory-bound kernel) and its shape, beside what
// it does (FLOPs and HBM bytes). The compute model (compute_model.h) prices
// it by its shape on a GPU; a measured time (kernel_times.h) replaces the
// model where one is given. docs/compute.md describes both.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace acesim {

enum class KernelKind : std::uint8_t {
  kGemm,               // batch x (m x k) . (k x n)
  kAttentionForward,   // fused (flash) attention
  kAttentionBackward,
  kNorm,               // RMSNorm / LayerNorm (forward or backward)
  kActivation,         // bias + GeLU / SwiGLU
  kRope,               // rotary embedding of queries and keys
  kResidual,           // dropout + residual add
  kSoftmax,            // unfused attention: scale, mask, softmax; an MoE router's softmax and top-k
  kDropout,            // unfused attention: dropout on the scores
  kCrossEntropy,       // the loss over the vocabulary
  kEmbedding,          // lookup (forward) or scatter-add (backward)
  kOptimizer,          // the Adam step over a rank's shard
  kCast,               // FP8 casts and scaling (amax) around FP8 GEMMs
  kCopy,               // a device copy (gathered parameters out of the communication buffer)
  kPermute,            // MoE tokens into expert order and back (gather, scale, scatter-add)
};
inline constexpr int kKernelKinds = 15;
std::string_view to_string(KernelKind k);
std::optional<KernelKind> parse_kernel_kind(std::string_view s);
std::vector<std::string> kernel_kind_names();

enum class Dtype : std::uint8_t { kBf16, kFp8, kFp32 };
std::string_view to_string(Dtype d);
std::optional<Dtype> parse_dtype(std::string_view s);
std::vector<std::string> dtype_names();

// Which fused attention kernel: the architecture's own (FlashAttention-2
// on Ampere, -3 on Hopper, cuDNN's on Blackwell), FlashAttention-2 or
// cuDNN's fused attention (what Transformer Engine picks on Hopper).
enum class AttentionImpl : std::uint8_t { kNative, kFa2, kCudnn };

struct KernelDesc {
  KernelKind kind = KernelKind::kGemm;
  Dtype dtype = Dtype::kBf16;
  // The shape. GEMM: batch, m, n, k (m x n outputs, k deep).
  // Attention: batch, heads, kv_heads, m = query length, n = key length,
  // k = head dimension, causal. Memory-bound kinds: m rows (tokens, or
  // parameters for the optimizer) of n elements.
  double batch = 1.0;
  double m = 0.0;
  double n = 0.0;
  double k = 0.0;
  int heads = 0;
  int kv_heads = 0;
  bool causal = false;
  AttentionImpl attention = AttentionImpl::kNative;
  // What it does: FLOPs and HBM bytes (the roofline's terms; attention's
  // FLOPs skip what a causal mask skips).
  double flops = 0.0;
  double hbm_bytes = 0.0;

  // The shape as a kernel-times file writes it (docs/compute.md): GEMM
  // "MxNxK" ("BxMxNxK" when batched), attention "b=B h=H kv=G sq=S skv=S
  // d=D causal|full", memory-bound "MxN".
  std::string shape_text() const;
};

// The shape part of a KernelDesc read back from shape_text's form (spaces
// and case are not significant); an empty optional and `why` when the text
// is not one.
std::optional<KernelDesc> parse_shape(KernelKind kind, std::string_view text, std::string& why);

}  // namespace acesim
