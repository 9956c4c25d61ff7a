// In-situ parameters and calibration files (in_situ.h, docs/in-situ.md).
#include "compute/in_situ.h"

#include <cmath>
#include <map>
#include <utility>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "config/embedded.h"
#include "config/input_error.h"
#include "config/kernel_constants.h"
#include "config/platform.h"
#include "config/yaml_reader.h"
#include "registry/registry.h"

namespace acesim {
namespace {

// The ranges and their sources: docs/in-situ-sources.md, one section each.
constexpr std::array<InSituParamInfo, kInSituParams> kParams = {{
    {InSituParam::kTensor, "tensor", "x", 1.0, 1.0, 1.25,
     "in-situ over isolated time of GEMMs and fused attention"},
    {InSituParam::kMemory, "memory", "x", 1.0, 0.8, 1.5, "in-situ over isolated time of memory-bound kernels"},
    {InSituParam::kStragglerCv, "straggler_cv", "", 0.0, 0.0, 0.02,
     "spread of a GPU's compute time (coefficient of variation); the step waits for the slowest GPU"},
    {InSituParam::kStepFixedMs, "step_fixed_ms", "ms", 0.0, 0.0, 50.0,
     "host work per step that the GPUs wait for (data loading, logging, syncs)"},
}};

const char* const kPrecisions[] = {"bf16", "fp8"};

std::vector<std::string> param_names() {
  std::vector<std::string> out;
  for (const InSituParamInfo& p : kParams) out.emplace_back(p.name);
  return out;
}

}  // namespace

const std::array<InSituParamInfo, kInSituParams>& in_situ_params() { return kParams; }
const InSituParamInfo& info(InSituParam p) { return kParams[static_cast<std::size_t>(p)]; }

bool InSitu::neutral() const {
  for (const InSituParamInfo& p : kParams) {
    if ((*this)[p.param] != p.neutral) return false;
  }
  return true;
}

double expected_max_normal(long long n) {
  if (n <= 1) return 0.0;
  // E[max] = integral of x n phi(x) Phi(x)^(n-1) dx, by Simpson's rule on
  // [-12, 12]: the integrand is negligible beyond for any n up to 2^40.
  constexpr int kSteps = 24'000;  // even
  constexpr double kLo = -12.0, kHi = 12.0;
  const double h = (kHi - kLo) / kSteps;
  const double nn = static_cast<double>(n);
  const double inv_sqrt_2pi = 0.3989422804014327;
  double sum = 0.0;
  for (int i = 0; i <= kSteps; ++i) {
    const double x = kLo + h * i;
    const double cdf = 0.5 * std::erfc(-x / std::sqrt(2.0));
    const double pdf = inv_sqrt_2pi * std::exp(-0.5 * x * x);
    // Phi^(n-1) through logs: no underflow to NaN for large n.
    const double pow_cdf = cdf <= 0.0 ? 0.0 : std::exp((nn - 1.0) * std::log(cdf));
    const double f = x * nn * pdf * pow_cdf;
    sum += f * (i == 0 || i == kSteps ? 1.0 : (i % 2 == 1 ? 4.0 : 2.0));
  }
  return sum * h / 3.0;
}

InSitu InSituCalibration::resolve(std::string_view arch, std::string_view precision) const {
  InSitu out;
  for (const InSituParamInfo& p : kParams) {
    int best = -1;
    for (const InSituEntry& e : entries) {
      const auto& v = e.value[static_cast<std::size_t>(p.param)];
      if (!v) continue;
      if (!e.arch.empty() && e.arch != arch) continue;
      if (!e.precision.empty() && e.precision != precision) continue;
      const int rank = (e.arch.empty() ? 0 : 2) + (e.precision.empty() ? 0 : 1);
      if (rank > best) {
        best = rank;
        out[p.param] = *v;
      }
    }
  }
  return out;
}

bool InSituCalibration::covers(std::string_view arch) const {
  for (const InSituEntry& e : entries) {
    if (e.arch.empty() || e.arch == arch) return true;
  }
  return false;
}

InSituCalibration parse_calibration(std::string_view yaml_text, const std::string& file) {
  const YAML::Node root = yaml::parse(yaml_text, file);
  yaml::check_map(root, file, "", {"calibration", "source", "parameters"});
  yaml::require(root, "calibration", file, "");
  yaml::require(root, "parameters", file, "");
  if (yaml::integer(root["calibration"], file, "calibration") != 1) {
    throw_input_error(file, yaml::line_of(root["calibration"]), "calibration", "this acesim reads calibration files of version 1");
  }
  InSituCalibration c;
  c.file = file;
  if (root["source"]) {
    c.source = yaml::scalar(root["source"], file, "source");
    if (const std::string why = text_problem(c.source); !why.empty()) throw_input_error(file, yaml::line_of(root["source"]), "source", why);
  }
  const YAML::Node list = root["parameters"];
  if (!list.IsSequence() || list.size() == 0) {
    throw_input_error(file, yaml::line_of(list), "parameters", "expected a list of entries: {arch, precision, tensor, memory, ...}");
  }
  std::vector<std::string> keys = {"arch", "precision"};
  for (const std::string& n : param_names()) keys.push_back(n);
  const std::vector<std::string> archs = arch_names();
  const std::vector<std::string> precisions(std::begin(kPrecisions), std::end(kPrecisions));
  std::map<std::pair<std::string, std::string>, int> seen;  // (arch, precision) -> line
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node e = list[i];
    const std::string path = fmt::format("parameters[{}]", i);
    yaml::check_map(e, file, path, keys);
    InSituEntry entry;
    entry.line = yaml::line_of(e);
    if (e["arch"]) {
      entry.arch = yaml::scalar(e["arch"], file, path + ".arch");
      if (find_arch(entry.arch) == nullptr) {
        throw_input_error(file, yaml::line_of(e["arch"]), path + ".arch",
                          "unknown architecture " + quote(entry.arch) + suggestion(entry.arch, archs) + " (valid: " + join_names(archs, ", ") + ")");
      }
    }
    if (e["precision"]) {
      entry.precision = yaml::scalar(e["precision"], file, path + ".precision");
      if (entry.precision != "bf16" && entry.precision != "fp8") {
        throw_input_error(file, yaml::line_of(e["precision"]), path + ".precision",
                          "unknown precision " + quote(entry.precision) + " (valid: bf16, fp8)");
      }
    }
    bool any = false;
    for (const InSituParamInfo& p : kParams) {
      const YAML::Node v = e[p.name];
      if (!v) continue;
      const std::string where = path + "." + p.name;
      const double x = yaml::number(v, file, where);
      if (!(x >= p.low && x <= p.high)) {
        throw_input_error(file, yaml::line_of(v), where,
                          fmt::format("{} outside its plausible range [{:g}, {:g}] ({}; docs/in-situ.md)", yaml::scalar(v, file, where), p.low,
                                      p.high, p.meaning));
      }
      entry.value[static_cast<std::size_t>(p.param)] = x;
      any = true;
    }
    if (!any) throw_input_error(file, entry.line, path, "gives no parameter (" + join_names(param_names(), ", ") + ")");
    const auto [it, fresh] = seen.emplace(std::make_pair(entry.arch, entry.precision), entry.line);
    if (!fresh) {
      throw_input_error(file, entry.line, path,
                        fmt::format("a second entry for {} and {} (the first at line {}): give each parameter once",
                                    entry.arch.empty() ? "every architecture" : entry.arch,
                                    entry.precision.empty() ? "every precision" : entry.precision, it->second));
    }
    c.entries.push_back(std::move(entry));
  }
  return c;
}

InSituCalibration load_calibration(const std::string& file) {
  if (file == kPublishedRunsCalibration) return parse_calibration(embedded_file(kPublishedRunsCalibrationFile), kPublishedRunsCalibrationFile);
  std::string text;
  try {
    text = read_text_file(file);
  } catch (const InputError& e) {
    throw InputError(std::string("--calibration: ") + e.what());
  }
  return parse_calibration(text, file);
}

std::string calibration_yaml(const InSituCalibration& c) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "calibration" << YAML::Value << 1;
  if (!c.source.empty()) out << YAML::Key << "source" << YAML::Value << c.source;
  out << YAML::Key << "parameters" << YAML::Value << YAML::BeginSeq;
  for (const InSituEntry& e : c.entries) {
    out << YAML::BeginMap;
    if (!e.arch.empty()) out << YAML::Key << "arch" << YAML::Value << e.arch;
    if (!e.precision.empty()) out << YAML::Key << "precision" << YAML::Value << e.precision;
    for (const InSituParamInfo& p : kParams) {
      if (const auto& v = e.value[static_cast<std::size_t>(p.param)]) {
        out << YAML::Key << p.name << YAML::Value << fmt::format("{:.6g}", *v);
      }
    }
    out << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

std::string in_situ_text(const InSitu& s, long long gpus) {
  std::string out;
  const auto add = [&out](const std::string& part) { out += (out.empty() ? "" : ", ") + part; };
  if (s[InSituParam::kTensor] != 1.0) add(fmt::format("tensor {:.3f}x", s[InSituParam::kTensor]));
  if (s[InSituParam::kMemory] != 1.0) add(fmt::format("memory {:.3f}x", s[InSituParam::kMemory]));
  if (const double cv = s[InSituParam::kStragglerCv]; cv != 0.0) {
    add(fmt::format("straggler_cv {:.4f} (compute {:.4f}x at {} GPUs)", cv, 1.0 + cv * expected_max_normal(gpus), gpus));
  }
  if (s[InSituParam::kStepFixedMs] != 0.0) add(fmt::format("step_fixed_ms {:.3f}", s[InSituParam::kStepFixedMs]));
  return out.empty() ? "neutral" : out;
}

}  // namespace acesim
