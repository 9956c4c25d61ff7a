// The compute model: a kernel's time on a GPU from its kind and shape
// (docs/compute.md). One seam: ComputeModel. The default, ShapeModel,
// prices
//   GEMMs    by tile and wave quantisation over the GPU's SMs (the cuBLAS
//            tile shapes of the architecture, split-K where the tiles do
//            not fill a wave), each tile's main loop at the architecture's
//            efficiency and a fixed cost per tile outside it;
//   attention by the fused kernel of the architecture (FlashAttention-2 on
//            Ampere, FlashAttention-3 on Hopper, cuDNN on Blackwell): an
//            efficiency that rises with the sequence and the head dimension;
//   the rest as memory-bound: HBM bytes at the architecture's achieved
//            share of the peak bandwidth;
// every kernel at least the launch floor, and the tensor rate scaled by the
// clock the GPU sustains under its power limit. The constants live, with
// their sources, in tests/data/compute/kernel-model.yaml (embedded in the
// binary).
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compute/kernel_desc.h"
#include "endpoint/npu_config.h"

namespace acesim {

// One architecture's constants (the data file's `architectures.NAME`).
struct ArchConstants {
  std::string name;
  std::vector<std::string> gpus;  // the GPUs of the architecture, by the names presets give (npu.gpu)
  // GEMM
  std::vector<std::array<int, 2>> tiles;  // output tile shapes (m x n) the library picks from
  std::vector<int> split_k;               // split-K factors tried when the tiles leave SMs idle
  double k_overhead = 0.0;                // a tile's cost outside its main loop, in elements of k
  double gemm_efficiency_bf16 = 1.0;      // main loop, of the peak (at the measured GPU's clock)
  double gemm_efficiency_fp8 = 0.0;       // 0: no FP8 tensor cores
  // Attention: efficiency(s, d) = peak x (s / (s + half_seq)) x head-dim
  // factor, s the keys per query row (half the keys with a causal mask).
  std::string attention_kernel;
  struct Curve {
    double efficiency = 1.0;  // of the peak, long sequences, head dimension 128
    double half_seq = 0.0;    // keys per row at which it reaches half of that
    double half_head_dim = 0.0;  // head dimension at which it would reach half (d / (d + h), normalised at 128)
  };
  Curve attention_forward;
  Curve attention_backward;
  double fp8_attention_speedup = 1.0;  // FP8 attention over BF16 (forward); 1: none
  // Memory-bound kernels.
  double memory_efficiency = 1.0;  // of the peak HBM bandwidth
  double launch_floor_us = 0.0;    // the least time a kernel takes
  // The measured GPU's clock under load over the clock its peak is quoted
  // at: efficiencies above hold at this ratio; a GPU sustaining another
  // (npu.clock_MHz) scales its tensor rate by the ratio of the two.
  double measured_clock_ratio = 1.0;
};

// The architectures the data file knows, and their names.
const ArchConstants* find_arch(std::string_view name);
std::vector<std::string> arch_names();

class ComputeModel {
 public:
  virtual ~ComputeModel() = default;
  // Seconds the kernel takes alone on one GPU.
  virtual double seconds(const KernelDesc& k) const = 0;
};

// The default model (above), for an NPU with `npu.arch` set.
class ShapeModel final : public ComputeModel {
 public:
  // Throws std::invalid_argument when npu.arch names no architecture.
  explicit ShapeModel(const NpuConfig& npu);
  double seconds(const KernelDesc& k) const override;

  // Parts, for tests and the docs' worked examples.
  double gemm_seconds(const KernelDesc& k) const;
  double attention_seconds(const KernelDesc& k) const;
  double memory_seconds(double hbm_bytes) const;
  // The tensor rate of one SM, FLOP/s, at `dtype`, main-loop efficiency
  // and sustained clock included.
  double sm_flops(Dtype dtype) const;
  const ArchConstants& arch() const { return arch_; }

 private:
  const ArchConstants& arch_;
  int sms_;
  double peak_flops_;   // dense BF16, the datasheet's
  double hbm_Bps_;
  double clock_scale_;  // sustained clock ratio over the measured GPU's
  bool fp8_;
};

}  // namespace acesim
