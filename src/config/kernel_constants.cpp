#include "config/kernel_constants.h"

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
  yaml::check_map(a, kDataFile, p, {"gpus", "gemm", "attention", "memory", "launch_floor_us", "source"});
  ArchConstants c;
  c.name = name;
  c.gpus = yaml::scalar_list(a["gpus"], kDataFile, p + ".gpus", false);
  const YAML::Node g = a["gemm"];
  yaml::check_map(g, kDataFile, p + ".gemm", {"tiles", "split_k", "k_overhead", "efficiency", "by_gpu", "source"});
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
  for (const auto& kv : g["by_gpu"]) {
    const std::string gpu = kv.first.as<std::string>();
    const std::string q = p + ".gemm.by_gpu." + gpu;
    yaml::check_map(kv.second, kDataFile, q, {"bf16", "fp8", "source"});
    ArchConstants::GemmEfficiency ge{gpu, yaml::number(kv.second["bf16"], kDataFile, q + ".bf16"), c.gemm_efficiency_fp8};
    if (kv.second["fp8"]) ge.fp8 = yaml::number(kv.second["fp8"], kDataFile, q + ".fp8");
    c.gemm_by_gpu.push_back(ge);
  }
  const YAML::Node at = a["attention"];
  yaml::check_map(at, kDataFile, p + ".attention", {"kernel", "forward", "backward", "fa2", "cudnn", "source"});
  c.attention_kernel = yaml::scalar(at["kernel"], kDataFile, p + ".attention.kernel");
  c.attention_forward = read_curve(at["forward"], p + ".attention.forward");
  c.attention_backward = read_curve(at["backward"], p + ".attention.backward");
  const auto variant = [&](const char* kernel, ArchConstants::Curves& out) {
    const std::string q = p + ".attention." + kernel;
    if (const YAML::Node f = at[kernel]) {
      yaml::check_map(f, kDataFile, q, {"forward", "backward", "source"});
      out = {true, read_curve(f["forward"], q + ".forward"), read_curve(f["backward"], q + ".backward")};
    } else if (c.attention_kernel == kernel) {
      out = {true, c.attention_forward, c.attention_backward};
    }
  };
  variant("fa2", c.fa2);
  variant("cudnn", c.cudnn);
  const YAML::Node m = a["memory"];
  yaml::check_map(m, kDataFile, p + ".memory", {"efficiency", "source"});
  c.memory_efficiency = yaml::number(m["efficiency"], kDataFile, p + ".memory.efficiency");
  c.launch_floor_us = yaml::number(a["launch_floor_us"], kDataFile, p + ".launch_floor_us");
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

}  // namespace

double ArchConstants::gemm_efficiency(std::string_view gpu, bool fp8) const {
  for (const GemmEfficiency& g : gemm_by_gpu) {
    if (g.gpu == gpu) return fp8 ? g.fp8 : g.bf16;
  }
  return fp8 ? gemm_efficiency_fp8 : gemm_efficiency_bf16;
}

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

}  // namespace acesim
