#include "compute/compute_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "config/input_error.h"

namespace acesim {
namespace {

// Keys per query row the kernel walks: a causal mask halves them.
double keys_per_row(const KernelDesc& k) { return k.causal ? k.n / 2.0 : k.n; }


const ArchConstants& arch_of(const NpuConfig& npu) {
  const ArchConstants* a = find_arch(npu.arch);
  if (a == nullptr) throw std::invalid_argument("npu.arch: no compute model for '" + npu.arch + "'");
  return *a;
}
}  // namespace

ShapeModel::ShapeModel(const NpuConfig& npu)
    : arch_(arch_of(npu)),
      sms_(npu.compute_units),
      peak_flops_(npu.peak_flops()),
      hbm_Bps_(npu.hbm_GBps * 1e9),
      clock_scale_(npu.sustained_clock_ratio() > 0.0 ? npu.sustained_clock_ratio() : 1.0),
      fp8_(npu.fp8),
      gpu_(npu.gpu) {}

double ShapeModel::sm_flops(Dtype dtype) const {
  const bool fp8 = dtype == Dtype::kFp8 && fp8_ && arch_.gemm_efficiency(gpu_, true) > 0.0;
  const double peak = peak_flops_ * (fp8 ? 2.0 : 1.0);
  const double efficiency = arch_.gemm_efficiency(gpu_, fp8);
  return peak / sms_ * efficiency * clock_scale_;
}

double ShapeModel::memory_seconds(double hbm_bytes) const { return hbm_bytes / (hbm_Bps_ * arch_.memory_efficiency); }

double ShapeModel::gemm_seconds(const KernelDesc& k) const {
  const double rate = sm_flops(k.dtype);
  double best = std::numeric_limits<double>::infinity();
  for (const auto& [tm, tn] : arch_.tiles) {
    const double tiles = k.batch * std::ceil(k.m / tm) * std::ceil(k.n / tn);
    for (int s : arch_.split_k) {
      // Split K only to fill SMs the tiles leave idle.
      if (s > 1 && tiles * s > 2.0 * sms_) continue;
      const double waves = std::ceil(tiles * s / sms_);
      const double depth = std::ceil(k.k / s) + arch_.k_overhead;
      best = std::min(best, waves * 2.0 * tm * tn * depth / rate);
    }
  }
  return std::max(best, memory_seconds(k.hbm_bytes));
}

double ShapeModel::attention_seconds(const KernelDesc& k) const {
  const bool backward = k.kind == KernelKind::kAttentionBackward;
  const ArchConstants::Curve* c = backward ? &arch_.attention_backward : &arch_.attention_forward;
  if (k.attention != AttentionImpl::kNative) {
    const bool fa2 = k.attention == AttentionImpl::kFa2;
    const ArchConstants::Curves& v = fa2 ? arch_.fa2 : arch_.cudnn;
    if (!v.known) {
      throw InputError(std::string("--attention ") + (fa2 ? "fa2: the compute model has no FlashAttention-2" : "cudnn: the compute model has no cuDNN attention") +
                       " figures for " + arch_.name + " (tests/data/compute/kernel-model.yaml); use --attention fused");
    }
    c = backward ? &v.backward : &v.forward;
  }
  const double s = keys_per_row(k);
  const double d = std::max(k.k, 1.0);
  const double head = (d / (d + c->half_head_dim)) / (128.0 / (128.0 + c->half_head_dim));
  double rate = peak_flops_ * clock_scale_ * c->efficiency * s / (s + c->half_seq) * head;
  return std::max(k.flops / rate, memory_seconds(k.hbm_bytes));
}

double ShapeModel::seconds(const KernelDesc& k) const {
  double t = 0.0;
  switch (k.kind) {
    case KernelKind::kGemm: t = gemm_seconds(k); break;
    case KernelKind::kAttentionForward:
    case KernelKind::kAttentionBackward: t = attention_seconds(k); break;
    default: t = std::max(memory_seconds(k.hbm_bytes), k.flops / peak_flops_); break;
  }
  return t + arch_.launch_floor_us * 1e-6;
}

}  // namespace acesim
