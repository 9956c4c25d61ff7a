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
#include "config/kernel_constants.h"
#include "endpoint/npu_config.h"

namespace acesim {

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
  double clock_scale_;  // sustained over peak clock (1 when the NPU gives no clocks)
  bool fp8_;
  std::string gpu_;  // npu.gpu: its own GEMM efficiency where the data file gives one
};

}  // namespace acesim
