// `acesim calibrate runs FILE`: the in-situ parameters (compute/in_situ.h)
// fitted to measured training runs (a runs file, driver/llm_runs_file.h),
// judged out of sample (docs/in-situ.md, "Fitting"):
//   1. every run simulated from isolated kernels (the uncalibrated step),
//      and again with every kernel 10% slower, which gives each run's step
//      as a linear function of the kernel factors: the growth splits
//      between tensor and memory-bound kernels as their time does on the
//      simulated GPU (the step is linear in them to within the
//      linearisation error the report gives); the later passes take the
//      longest runs first;
//   2. the parameters fitted by bounded least squares on the log step error
//      over those linearised steps (Levenberg-Marquardt; a parameter that
//      leaves its plausible range is held at the bound and the rest fitted
//      again), with standard errors from the Jacobian;
//   3. every run simulated at the fit (in sample), which measures how far
//      the linearised step is from the simulated one; each run predicted at
//      the fit without it (leave one out) and at the fit without its whole
//      stack (leave one stack out), by its linearised step, or simulated
//      with `simulate_held_out` (two more passes over the runs).
#pragma once

#include <array>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compute/in_situ.h"
#include "driver/llm_runs_file.h"

namespace acesim {

struct RunFitOptions {
  std::vector<InSituParam> params;  // fitted; empty: all; the others stay neutral
  // Fitted per GPU architecture, for each architecture with more runs than
  // these parameters (the others' runs take the value every parameter
  // shared gives); must be among `params`.
  std::vector<InSituParam> split;
  int jobs = 0;                     // runs simulated at once; 0: every core
  bool simulate_held_out = false;   // simulate the held-out predictions, not linearise them
};

struct RunFitRow {
  std::string id, stack, platform, arch, precision;
  long long gpus = 0;
  double measured_s = 0.0;
  double isolated_s = 0.0;     // uncalibrated
  double fitted_s = 0.0;       // simulated at the fit
  double loo_s = 0.0;          // at the fit without this run
  double lso_s = 0.0;          // at the fit without this run's stack (0: its stack is every run)
  // The linearised step: isolated_s + d_tensor (tensor g - 1) + d_memory
  // (memory g - 1) + step_fixed, g the stragglers' factor at `gpus`.
  double d_tensor_s = 0.0, d_memory_s = 0.0;
  double max_normal = 0.0;  // E[max of `gpus` standard normals], once per run
};
// measured / predicted - 1 (positive: acesim faster).
inline double run_error(double measured, double predicted) { return predicted > 0.0 ? measured / predicted - 1.0 : 0.0; }

// One fitted value: a parameter for every architecture (arch empty) or one.
struct RunFitSlot {
  InSituParam param;
  std::string arch;
  double value = 0.0, std_error = 0.0;  // one standard deviation
  bool at_bound = false;
  std::string name() const { return arch.empty() ? info(param).name : std::string(info(param).name) + "@" + arch; }
};

struct RunFit {
  std::string file;
  std::vector<RunFitRow> rows;
  std::vector<InSituParam> params;  // fitted
  std::vector<InSituParam> split;   // of them, per architecture
  std::vector<RunFitSlot> slots;    // the fitted values
  // For an architecture without a slot of its own (every architecture
  // without a split): the fit (neutral where not fitted), its standard
  // deviations (0 where not fitted) and bounds.
  InSitu values;
  std::array<double, kInSituParams> std_error{};
  std::array<bool, kInSituParams> at_bound{};
  InSituCalibration fitted;  // the fit as a calibration
  int iterations = 0;
  bool converged = true;
  bool held_out_simulated = false;
  // The largest |simulated / linearised - 1| at the fit, over the runs.
  double linearisation_error = 0.0;
  std::vector<std::string> warnings;  // a parameter at its bound, no convergence
  // The calibration file's text.
  InSituCalibration calibration() const;
};

// InputError for fewer runs than parameters, or a run that cannot be
// simulated (naming its line).
RunFit fit_runs(LlmRunsFile file, const RunFitOptions& options = {});

std::string format_run_fit(const RunFit& fit);
// The fit as docs/validation.md shows it: Markdown tables of the parameters
// and of the runs' errors, and the summary by stack and over all.
std::string run_fit_markdown(const RunFit& fit);
nlohmann::json run_fit_json(const RunFit& fit);
std::string run_fit_csv(const RunFit& fit);

}  // namespace acesim
