// `acesim calibrate DIR`: fit the endpoint model to measurements taken on a
// real GPU by tools/gpu-characterize, and check the fit against them.
// `acesim calibrate runs FILE`: fit the in-situ parameters to measured
// training runs (calibrate/run_calibration.h, docs/in-situ.md).
#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "calibrate/gpu_calibration.h"
#include "calibrate/run_calibration.h"
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
  // calibrate runs
  std::string runs_file, runs_only, runs_params, runs_split, runs_out, runs_csv;
  int jobs = 0;
  bool runs_json = false;
  bool simulate_held_out = false;
  bool markdown = false;
};

std::vector<InSituParam> parse_params(const std::string& text, const std::string& option = "--params") {
  std::vector<InSituParam> out;
  if (text.empty()) return out;
  std::vector<std::string> names;
  for (const InSituParamInfo& p : in_situ_params()) names.emplace_back(p.name);
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string name = text.substr(start, comma - start);
    const auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end()) {
      throw InputError(option + ": unknown in-situ parameter " + quote(name) + suggestion(name, names) + " (valid: " + join_names(names, ", ") + ")");
    }
    const InSituParam p = in_situ_params()[static_cast<std::size_t>(it - names.begin())].param;
    if (std::find(out.begin(), out.end(), p) != out.end()) throw InputError(option + ": " + name + " is given twice");
    out.push_back(p);
    start = comma + 1;
  }
  return out;
}

int run_runs(const Options& o) {
  RunFitOptions fo;
  fo.params = parse_params(o.runs_params);
  fo.split = parse_params(o.runs_split, "--per-arch");
  fo.jobs = o.jobs;
  fo.simulate_held_out = o.simulate_held_out;
  const RunFit fit = fit_runs(read_llm_runs_file(o.runs_file, o.runs_only), fo);
  if (!o.runs_out.empty()) write_output_file(o.runs_out, calibration_yaml(fit.calibration()), "--out");
  if (!o.runs_csv.empty()) write_output_file(o.runs_csv, run_fit_csv(fit), "--csv");
  if (o.runs_json) {
    std::printf("%s\n", run_fit_json(fit).dump(2).c_str());
  } else if (o.markdown) {
    std::fputs(run_fit_markdown(fit).c_str(), stdout);
  } else {
    std::fputs(format_run_fit(fit).c_str(), stdout);
    if (!o.runs_out.empty()) std::printf("# wrote %s: acesim run ... --calibration %s\n", o.runs_out.c_str(), o.runs_out.c_str());
  }
  return kExitOk;
}

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
  c->add_option("dir", o->dir, "the directory the measurement suite wrote (measurements.csv, gpu.json)")->check(non_empty());
  c->add_option("--base", o->base, "the platform whose topology, network and collectives the calibrated one keeps "
                                   "(a file or a preset; default: the hgx-h200 preset)")
      ->check(non_empty());
  c->add_option("--platform", o->platform, "check this platform's NPU against the measurements instead of fitting")
      ->check(non_empty());
  c->add_option("--out", o->out, "write the calibrated platform YAML here")->check(output_file());
  c->add_option("--csv", o->csv, "write measured vs predicted, one row per measurement, here")->check(output_file());
  c->add_flag("--json", o->json, "print JSON instead of tables");
  CLI::App* runs = c->add_subcommand(
      "runs", "Fit the in-situ parameters to measured training runs, with leave-one-out errors, and write a calibration file (docs/in-situ.md)");
  runs->add_option("file", o->runs_file,
                   "the runs: a CSV with the columns of tests/data/llm-runs/runs.csv (platform, model, plan, measured step_s); "
                   "models/NAME.yaml beside it")
      ->required()
      ->check(non_empty());
  runs->add_option("--runs", o->runs_only, "ID,...: only these runs")->check(non_empty());
  runs->add_option("--params", o->runs_params, "PARAM,...: the parameters to fit (default: all; the rest stay neutral)")->check(non_empty());
  runs->add_option("--per-arch", o->runs_split,
                   "PARAM,...: fit these per GPU architecture, for each with more runs than these parameters (the others' runs "
                   "take the value every parameter shared gives)")
      ->check(non_empty());
  runs->add_option("--out", o->runs_out, "write the calibration file here (acesim run --calibration FILE)")->check(output_file());
  runs->add_option("--csv", o->runs_csv, "write each run's measured, isolated, fitted and left-out steps here")->check(output_file());
  runs->add_option("--jobs", o->jobs, "runs simulated at once (default: every core)")->check(CLI::Range(1, 1024));
  runs->add_flag("--simulate-held-out", o->simulate_held_out,
                 "simulate each run at the fits without it and without its stack (default: their linearised steps; "
                 "two more passes over the runs)");
  CLI::Option* json = runs->add_flag("--json", o->runs_json, "print JSON instead of tables");
  runs->add_flag("--markdown", o->markdown, "print Markdown tables (docs/validation.md's) instead")->excludes(json);
  return {[o, c, runs] {
            if (runs->parsed()) {
              for (const CLI::Option* opt : c->get_options()) {
                if (opt->count() > 0 && opt->get_name() != "--help") {
                  throw InputError("calibrate runs: " + opt->get_name() + " is calibrate DIR's option, not calibrate runs'");
                }
              }
              return run_runs(*o);
            }
            if (o->dir.empty()) throw InputError("calibrate: give DIR (a GPU's measurements) or `runs FILE` (measured training runs)");
            return run(*o);
          },
          nullptr, nullptr, nullptr};
}

}  // namespace acesim::cli
