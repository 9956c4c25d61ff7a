#include "compute/kernel_pricer.h"

#include <algorithm>

namespace acesim {

KernelPricer::KernelPricer(const NpuConfig& npu, std::shared_ptr<const KernelTimes> measured)
    : measured_(std::move(measured)), gpu_(npu.gpu), peak_flops_(npu.peak_flops()), hbm_Bps_(npu.hbm_GBps * 1e9) {
  // Without a model, a measured kernel holds the other resource at its
  // peak.
  tensor_efficiency_ = 1.0;
  memory_efficiency_ = 1.0;
  if (!npu.arch.empty()) {
    model_ = std::make_unique<ShapeModel>(npu);
    tensor_efficiency_ = model_->arch().gemm_efficiency(npu.gpu, false);
    memory_efficiency_ = model_->arch().memory_efficiency;
  }
}

Kernel KernelPricer::kernel(const KernelDesc& d, double seconds) const {
  Kernel k;
  k.flops = d.flops;
  k.hbm_bytes = d.hbm_bytes;
  const double compute = d.flops / (peak_flops_ * tensor_efficiency_);
  const double memory = d.hbm_bytes / (hbm_Bps_ * memory_efficiency_);
  if (compute >= memory) {
    k.flops_efficiency = d.flops / (peak_flops_ * seconds);
    if (d.hbm_bytes > 0.0) k.hbm_efficiency = std::max(memory_efficiency_, d.hbm_bytes / (hbm_Bps_ * seconds));
  } else {
    k.hbm_efficiency = d.hbm_bytes / (hbm_Bps_ * seconds);
    if (d.flops > 0.0) k.flops_efficiency = std::max(tensor_efficiency_, d.flops / (peak_flops_ * seconds));
  }
  return k;
}

std::optional<KernelPricer::Priced> KernelPricer::price(const KernelDesc& d) const {
  if (measured_) {
    if (const std::optional<double> s = measured_->seconds(d, gpu_)) return Priced{kernel(d, *s), true};
  }
  if (!model_) return std::nullopt;
  return Priced{kernel(d, model_->seconds(d)), false};
}

std::shared_ptr<const KernelPricer> make_kernel_pricer(const NpuConfig& npu, std::shared_ptr<const KernelTimes> measured) {
  if (npu.arch.empty() && !measured) return nullptr;
  return std::make_shared<const KernelPricer>(npu, std::move(measured));
}

std::vector<std::string> known_gpus() {
  std::vector<std::string> out;
  for (const std::string& a : arch_names()) {
    const ArchConstants* c = find_arch(a);
    out.insert(out.end(), c->gpus.begin(), c->gpus.end());
  }
  return out;
}

}  // namespace acesim
