// `acesim calibrate DIR`: fit the endpoint model to measurements taken on a
// real GPU by tools/gpu-characterize, and check the fit against them.
#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "calibrate/gpu_calibration.h"
#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/platform_options.h"
#include "config/input_error.h"
#include "config/output_file.h"
#include "config/platform.h"
#include "config/presets.h"

namespace acesim::cli {
namespace {

constexpr const char* kDefaultBase = "hgx-h200";  // a preset

struct Options {
  std::string dir;
  std::string base;
  std::string platform;
  std::string out;
  std::string csv;
  bool json = false;
};

int run(const Options& o) {
  if (!o.platform.empty() && (!o.out.empty() || !o.base.empty())) {
    throw InputError("--platform checks a calibrated platform as it is; it cannot be combined with --out or --base");
  }
  const GpuMeasurements m = read_gpu_measurements(o.dir);
  const bool fitting = o.platform.empty();
  Calibration c;
  std::string base_text, base_name;
  if (fitting) {
    base_text = platform_yaml(o.base.empty() ? kDefaultBase : o.base, base_name);
    const PlatformConfig base = parse_platform_yaml(base_text, base_name);
    c = fit_calibration(m, base.npu);
  } else {
    std::string name;
    c = check_calibration(m, parse_platform_yaml(platform_yaml(o.platform, name), name).npu);
  }
  if (!o.out.empty()) write_output_file(o.out, calibrated_platform_yaml(c, m, base_text, base_name), "--out");
  if (!o.csv.empty()) write_output_file(o.csv, predictions_csv(c), "--csv");
  if (o.json) {
    std::printf("%s\n", calibration_json(c, m).dump(2).c_str());
  } else {
    std::fputs(format_calibration(c, m, fitting).c_str(), stdout);
    if (!o.out.empty()) std::printf("# wrote %s\n", o.out.c_str());
  }
  return kExitOk;
}

}  // namespace

CommandRunner add_calibrate_command(CLI::App& app) {
  auto o = std::make_shared<Options>();
  CLI::App* c = app.add_subcommand(
      "calibrate", "Fit the NPU model to GPU measurements (tools/gpu-characterize) and check the fit against them");
  c->add_option("dir", o->dir, "the directory the measurement suite wrote (measurements.csv, gpu.json)")
      ->required()
      ->check(non_empty());
  c->add_option("--base", o->base, "the platform whose topology, network and collectives the calibrated one keeps "
                                   "(a file or a preset; default: the hgx-h200 preset)")
      ->check(non_empty());
  c->add_option("--platform", o->platform, "check this platform's NPU against the measurements instead of fitting")
      ->check(non_empty());
  c->add_option("--out", o->out, "write the calibrated platform YAML here")->check(output_file());
  c->add_option("--csv", o->csv, "write measured vs predicted, one row per measurement, here")->check(output_file());
  c->add_flag("--json", o->json, "print JSON instead of tables");
  return {[o] { return run(*o); }, nullptr, nullptr, nullptr};
}

}  // namespace acesim::cli
