#include "compute/kernel_pricer.h"

#include <algorithm>
#include <cmath>

#include "config/input_error.h"

namespace acesim {

KernelPricer::KernelPricer(const NpuConfig& npu, std::shared_ptr<const KernelTimes> measured, InSituSetting in_situ)
    : measured_(std::move(measured)),
      gpu_(npu.gpu),
      peak_flops_(npu.peak_flops()),
      hbm_Bps_(npu.hbm_GBps * 1e9),
      in_situ_(std::move(in_situ)) {
  // The quadrature only where there is a spread: every uncalibrated run builds a pricer.
  if (const double cv = in_situ_.values[InSituParam::kStragglerCv]; cv != 0.0) straggler_factor_ = 1.0 + cv * expected_max_normal(in_situ_.gpus);
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

double KernelPricer::in_situ_factor(KernelKind kind) const {
  const bool tensor = kind == KernelKind::kGemm || kind == KernelKind::kAttentionForward || kind == KernelKind::kAttentionBackward;
  return in_situ_.values[tensor ? InSituParam::kTensor : InSituParam::kMemory] * straggler_factor_;
}

std::int64_t KernelPricer::step_fixed_ps() const { return std::llround(in_situ_.values[InSituParam::kStepFixedMs] * 1e9); }

std::optional<KernelPricer::Priced> KernelPricer::price(const KernelDesc& d) const {
  const Key key{d.kind, d.dtype, d.batch, d.m, d.n, d.k, d.heads, d.kv_heads, d.causal, d.attention, d.flops, d.hbm_bytes};
  {
    const std::lock_guard<std::mutex> lock(mu_);
    if (const auto it = priced_.find(key); it != priced_.end()) return it->second;
  }
  std::optional<Priced> p = price_uncached(d);
  const std::lock_guard<std::mutex> lock(mu_);
  return priced_.emplace(key, std::move(p)).first->second;
}

std::optional<KernelPricer::Priced> KernelPricer::price_uncached(const KernelDesc& d) const {
  // Neutral in-situ values leave every time as it was, to the bit.
  const auto in_situ = [&](double seconds) { return in_situ_.file.empty() ? seconds : seconds * in_situ_factor(d.kind); };
  if (measured_) {
    if (const std::optional<double> s = measured_->seconds(d, gpu_)) return Priced{kernel(d, in_situ(*s)), true};
  }
  if (!model_) return std::nullopt;
  return Priced{kernel(d, in_situ(model_->seconds(d))), false};
}

InSituSetting in_situ_setting(const std::string& calibration_file, const NpuConfig& npu, int bytes_per_element, long long gpus) {
  InSituSetting s;
  s.gpus = gpus;
  if (calibration_file.empty()) return s;
  const InSituCalibration c = load_calibration(calibration_file);
  if (!npu.arch.empty() && !c.covers(npu.arch)) {
    std::vector<std::string> archs;
    for (const InSituEntry& e : c.entries) {
      if (std::find(archs.begin(), archs.end(), e.arch) == archs.end()) archs.push_back(e.arch);
    }
    throw InputError("--calibration " + calibration_file + ": no entry for this platform's architecture " + quote(npu.arch) +
                     " (the file calibrates " + join_names(archs, ", ") + "): a calibration of another GPU does not carry over");
  }
  s.values = c.resolve(npu.arch, bytes_per_element == 1 ? "fp8" : "bf16");
  s.file = calibration_file;
  return s;
}

std::shared_ptr<const KernelPricer> make_kernel_pricer(const NpuConfig& npu, std::shared_ptr<const KernelTimes> measured,
                                                       InSituSetting in_situ) {
  if (npu.arch.empty() && !measured) {
    if (!in_situ.file.empty()) {
      throw InputError("--calibration " + in_situ.file +
                       ": in-situ parameters apply to kernels priced by shape or measured, and this platform's NPU has neither "
                       "(no npu.arch, no --kernel-times)");
    }
    return nullptr;
  }
  return std::make_shared<const KernelPricer>(npu, std::move(measured), std::move(in_situ));
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
