#include "compute/compute_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <yaml-cpp/yaml.h>

#include "config/embedded.h"
#include "config/yaml_reader.h"

namespace acesim {
namespace {

constexpr const char* kDataFile = "tests/data/compute/kernel-model.yaml";

ArchConstants::Curve read_curve(const YAML::Node& n, const std::string& path) {
  yaml::check_map(n, kDataFile, path, {"efficiency", "half_seq", "half_head_dim", "source"});
  ArchConstants::Curve c;
  c.efficiency = yaml::number(n["efficiency"], kDataFile, path + ".efficiency");
  c.half_seq = yaml::number(n["half_seq"], kDataFile, path + ".half_seq");
  c.half_head_dim = yaml::number(n["half_head_dim"], kDataFile, path + ".half_head_dim");
  return c;
}

ArchConstants read_arch(const std::string& name, const YAML::Node& a) {
  const std::string p = "architectures." + name;
  yaml::check_map(a, kDataFile, p, {"gpus", "gemm", "attention", "memory", "launch_floor_us", "measured_clock_ratio", "source"});
  ArchConstants c;
  c.name = name;
  c.gpus = yaml::scalar_list(a["gpus"], kDataFile, p + ".gpus", false);
  const YAML::Node g = a["gemm"];
  yaml::check_map(g, kDataFile, p + ".gemm", {"tiles", "split_k", "k_overhead", "efficiency", "source"});
  for (const YAML::Node& t : g["tiles"]) {
    c.tiles.push_back({static_cast<int>(yaml::integer(t[0], kDataFile, p + ".gemm.tiles")),
                       static_cast<int>(yaml::integer(t[1], kDataFile, p + ".gemm.tiles"))});
  }
  for (const YAML::Node& s : g["split_k"]) c.split_k.push_back(static_cast<int>(yaml::integer(s, kDataFile, p + ".gemm.split_k")));
  c.k_overhead = yaml::number(g["k_overhead"], kDataFile, p + ".gemm.k_overhead");
  const YAML::Node e = g["efficiency"];
  yaml::check_map(e, kDataFile, p + ".gemm.efficiency", {"bf16", "fp8"});
  c.gemm_efficiency_bf16 = yaml::number(e["bf16"], kDataFile, p + ".gemm.efficiency.bf16");
  if (e["fp8"]) c.gemm_efficiency_fp8 = yaml::number(e["fp8"], kDataFile, p + ".gemm.efficiency.fp8");
  const YAML::Node at = a["attention"];
  yaml::check_map(at, kDataFile, p + ".attention", {"kernel", "forward", "backward", "fp8_speedup", "source"});
  c.attention_kernel = yaml::scalar(at["kernel"], kDataFile, p + ".attention.kernel");
  c.attention_forward = read_curve(at["forward"], p + ".attention.forward");
  c.attention_backward = read_curve(at["backward"], p + ".attention.backward");
  if (at["fp8_speedup"]) c.fp8_attention_speedup = yaml::number(at["fp8_speedup"], kDataFile, p + ".attention.fp8_speedup");
  const YAML::Node m = a["memory"];
  yaml::check_map(m, kDataFile, p + ".memory", {"efficiency", "source"});
  c.memory_efficiency = yaml::number(m["efficiency"], kDataFile, p + ".memory.efficiency");
  c.launch_floor_us = yaml::number(a["launch_floor_us"], kDataFile, p + ".launch_floor_us");
  c.measured_clock_ratio = yaml::number(a["measured_clock_ratio"], kDataFile, p + ".measured_clock_ratio");
  return c;
}

const std::vector<ArchConstants>& architectures() {
  static const std::vector<ArchConstants> all = [] {
    const YAML::Node root = yaml::parse(embedded_file(kDataFile), kDataFile);
    std::vector<ArchConstants> out;
    for (const auto& kv : root["architectures"]) out.push_back(read_arch(kv.first.as<std::string>(), kv.second));
    return out;
  }();
  return all;
}

// Keys per query row the kernel walks: a causal mask halves them.
double keys_per_row(const KernelDesc& k) { return k.causal ? k.n / 2.0 : k.n; }

}  // namespace

const ArchConstants* find_arch(std::string_view name) {
  for (const ArchConstants& a : architectures()) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

std::vector<std::string> arch_names() {
  std::vector<std::string> out;
  for (const ArchConstants& a : architectures()) out.push_back(a.name);
  return out;
}

namespace {
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
      clock_scale_(npu.sustained_clock_ratio() > 0.0 ? npu.sustained_clock_ratio() / arch_.measured_clock_ratio : 1.0),
      fp8_(npu.fp8) {}

double ShapeModel::sm_flops(Dtype dtype) const {
  const bool fp8 = dtype == Dtype::kFp8 && fp8_ && arch_.gemm_efficiency_fp8 > 0.0;
  const double peak = peak_flops_ * (fp8 ? 2.0 : 1.0);
  const double efficiency = fp8 ? arch_.gemm_efficiency_fp8 : arch_.gemm_efficiency_bf16;
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
  const ArchConstants::Curve& c = backward ? arch_.attention_backward : arch_.attention_forward;
  const double s = keys_per_row(k);
  const double d = std::max(k.k, 1.0);
  const double head = (d / (d + c.half_head_dim)) / (128.0 / (128.0 + c.half_head_dim));
  double rate = peak_flops_ * clock_scale_ * c.efficiency * s / (s + c.half_seq) * head;
  if (k.dtype == Dtype::kFp8 && fp8_ && !backward) rate *= arch_.fp8_attention_speedup;
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
