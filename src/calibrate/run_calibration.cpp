// In-situ parameters fitted to measured runs (run_calibration.h).
#include "calibrate/run_calibration.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cmath>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <numeric>

#include <Eigen/Dense>
#include <unsupported/Eigen/LevenbergMarquardt>
#include <fmt/format.h>

#include "config/csv.h"
#include "config/input_error.h"
#include "config/parallel_for.h"

namespace acesim {
namespace {

// The kernels' factor of the linearising run: every kernel 10% slower.
constexpr double kProbe = 1.1;

// first(i) for every i in [0, n), in order, then second(i) for each: a
// thread free when no first(i) is left takes the second(i) whose first(i)
// took longest (`seconds`, which first() sets) among those done. The first
// failure by index is rethrown.
void pass_then_longest(std::size_t n, int jobs, const std::function<void(std::size_t)>& first, const std::function<void(std::size_t)>& second,
                       const std::vector<double>& seconds) {
  const unsigned threads = thread_count(n, jobs);
  std::vector<std::exception_ptr> errors(2 * n);
  std::mutex mu;
  std::condition_variable cv;
  std::size_t next = 0, seconds_taken = 0;
  std::vector<std::size_t> ready;  // first(i) done, second(i) not taken
  const auto work = [&] {
    std::unique_lock<std::mutex> lock(mu);
    while (true) {
      if (next < n) {
        const std::size_t i = next++;
        lock.unlock();
        try {
          first(i);
        } catch (...) {
          errors[i] = std::current_exception();
        }
        lock.lock();
        ready.push_back(i);
        cv.notify_all();
      } else if (!ready.empty()) {
        const auto it = std::max_element(ready.begin(), ready.end(), [&](std::size_t a, std::size_t b) {
          return seconds[a] < seconds[b] || (seconds[a] == seconds[b] && a > b);
        });
        const std::size_t i = *it;
        ready.erase(it);
        ++seconds_taken;
        lock.unlock();
        try {
          if (!errors[i]) second(i);
        } catch (...) {
          errors[n + i] = std::current_exception();
        }
        lock.lock();
      } else if (seconds_taken == n) {
        return;
      } else {
        cv.wait(lock);
      }
    }
  };
  run_on_threads(threads, work, errors);
}

InSituCalibration calibration_of(const InSitu& values, const std::vector<InSituParam>& params, const std::string& source) {
  InSituCalibration c;
  c.file = "(fitted)";
  c.source = source;
  InSituEntry e;
  for (InSituParam p : params) e.value[static_cast<std::size_t>(p)] = values[p];
  c.entries.push_back(e);
  return c;
}

// The linearised step of a run at in-situ values v (seconds).
double linear_step(const RunFitRow& r, const InSitu& v) {
  const double g = 1.0 + v[InSituParam::kStragglerCv] * r.max_normal;
  return r.isolated_s + r.d_tensor_s * (v[InSituParam::kTensor] * g - 1.0) + r.d_memory_s * (v[InSituParam::kMemory] * g - 1.0) +
         v[InSituParam::kStepFixedMs] * 1e-3;
}

// One fitted value: a parameter for every architecture (arch empty) or for
// one.
struct Slot {
  InSituParam param;
  std::string arch;
};

struct Fit {
  std::vector<Slot> slots;
  std::vector<double> value, std_error;
  std::vector<char> at_bound;
  // Split parameters' values for the architectures without a slot of their
  // own: the fit with every parameter shared.
  InSitu fallback;
  int iterations = 0;
  bool converged = true;
  // The fit as a calibration: an entry for every architecture (the shared
  // values, and the split ones' fallback), one for each split architecture.
  InSituCalibration calibration(const std::vector<InSituParam>& params, const std::string& source) const {
    InSituCalibration c;
    c.file = "(fitted)";
    c.source = source;
    InSituEntry all;
    for (InSituParam p : params) all.value[static_cast<std::size_t>(p)] = fallback[p];
    std::map<std::string, InSituEntry> by_arch;
    for (std::size_t j = 0; j < slots.size(); ++j) {
      InSituEntry& e = slots[j].arch.empty() ? all : by_arch[slots[j].arch];
      e.arch = slots[j].arch;
      e.value[static_cast<std::size_t>(slots[j].param)] = value[j];
    }
    c.entries.push_back(all);
    for (auto& [arch, e] : by_arch) c.entries.push_back(e);
    return c;
  }
};

// Log step errors of the rows as a function of the free slots, each scaled
// to its parameter's plausible range (0 at its low end, 1 at its high end)
// so that the steps weigh them alike. Each row's parameter takes its
// architecture's slot, else the shared one, else a fixed value.
struct Residuals : Eigen::DenseFunctor<double> {
  // slot_of[i][q]: the index in `free` of the slot row i's parameter q
  // takes; -1: its value in `fixed`.
  Residuals(const std::vector<const RunFitRow*>& rows, const std::vector<Slot>& free, const std::vector<InSitu>& fixed,
            std::vector<std::array<int, kInSituParams>> slot_of)
      : Eigen::DenseFunctor<double>(static_cast<int>(free.size()), static_cast<int>(rows.size())),
        rows_(rows),
        free_(free),
        fixed_(fixed),
        slot_of_(std::move(slot_of)) {}
  double value(const InputType& u, std::size_t j) const {
    const InSituParamInfo& p = info(free_[j].param);
    return p.low + u[static_cast<Eigen::Index>(j)] * (p.high - p.low);
  }
  // Row i's values at u.
  InSitu in_situ(const InputType& u, std::size_t i) const {
    InSitu v = fixed_[i];
    for (std::size_t q = 0; q < kInSituParams; ++q) {
      if (slot_of_[i][q] >= 0) v.value[q] = value(u, static_cast<std::size_t>(slot_of_[i][q]));
    }
    return v;
  }
  int operator()(const InputType& u, ValueType& f) const {
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      f[static_cast<Eigen::Index>(i)] = std::log(std::max(linear_step(*rows_[i], in_situ(u, i)), 1e-9) / rows_[i]->measured_s);
    }
    return 0;
  }
  int df(const InputType& u, JacobianType& jac) const {
    jac.setZero();
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      const RunFitRow& r = *rows_[i];
      const InSitu v = in_situ(u, i);
      const double z = r.max_normal;
      const double g = 1.0 + v[InSituParam::kStragglerCv] * z;
      const double step = std::max(linear_step(r, v), 1e-9);
      for (std::size_t q = 0; q < kInSituParams; ++q) {
        const int j = slot_of_[i][q];
        if (j < 0) continue;
        double d = 0.0;
        switch (static_cast<InSituParam>(q)) {
          case InSituParam::kTensor: d = r.d_tensor_s * g; break;
          case InSituParam::kMemory: d = r.d_memory_s * g; break;
          case InSituParam::kStragglerCv: d = (r.d_tensor_s * v[InSituParam::kTensor] + r.d_memory_s * v[InSituParam::kMemory]) * z; break;
          case InSituParam::kStepFixedMs: d = 1e-3; break;
        }
        const InSituParamInfo& p = info(static_cast<InSituParam>(q));
        jac(static_cast<Eigen::Index>(i), j) = d * (p.high - p.low) / step;
      }
    }
    return 0;
  }

 private:
  const std::vector<const RunFitRow*>& rows_;
  const std::vector<Slot>& free_;
  const std::vector<InSitu>& fixed_;
  std::vector<std::array<int, kInSituParams>> slot_of_;
};

// Bounded least squares over `slots` by an active set: fit the free slots;
// hold the one furthest outside its range at that bound; again, until all
// are in. `fixed` gives each row's values where no slot applies.
Fit fit_slots(const std::vector<const RunFitRow*>& rows, const std::vector<Slot>& slots, const std::vector<InSitu>& fixed) {
  Fit out;
  out.slots = slots;
  out.value.assign(slots.size(), 0.0);
  out.std_error.assign(slots.size(), 0.0);
  out.at_bound.assign(slots.size(), 0);
  for (std::size_t j = 0; j < slots.size(); ++j) out.value[j] = info(slots[j].param).neutral;
  // Which slot each row's parameter takes: its architecture's, else the shared one.
  std::vector<std::array<int, kInSituParams>> owner(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    owner[i].fill(-1);
    for (std::size_t j = 0; j < slots.size(); ++j) {
      int& at = owner[i][static_cast<std::size_t>(slots[j].param)];
      if (slots[j].arch == rows[i]->arch || (slots[j].arch.empty() && at < 0)) at = static_cast<int>(j);
    }
  }
  std::vector<std::size_t> free_index(slots.size());
  std::iota(free_index.begin(), free_index.end(), 0);
  std::vector<InSitu> held = fixed;  // with the slots held at a bound
  while (true) {
    std::vector<Slot> free;
    std::vector<int> position(slots.size(), -1);
    for (std::size_t j : free_index) {
      position[j] = static_cast<int>(free.size());
      free.push_back(slots[j]);
    }
    std::vector<std::array<int, kInSituParams>> slot_of(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      for (std::size_t q = 0; q < kInSituParams; ++q) slot_of[i][q] = owner[i][q] < 0 ? -1 : position[static_cast<std::size_t>(owner[i][q])];
    }
    Residuals f(rows, free, held, std::move(slot_of));
    Eigen::VectorXd u(static_cast<Eigen::Index>(free.size()));
    for (std::size_t j = 0; j < free.size(); ++j) {
      const InSituParamInfo& p = info(free[j].param);
      u[static_cast<Eigen::Index>(j)] = (p.neutral - p.low) / (p.high - p.low);
    }
    if (!free.empty()) {
      Eigen::LevenbergMarquardt<Residuals> lm(f);
      const Eigen::LevenbergMarquardtSpace::Status status = lm.minimize(u);
      out.iterations += static_cast<int>(lm.iterations());
      using S = Eigen::LevenbergMarquardtSpace::Status;
      out.converged = status == S::RelativeReductionTooSmall || status == S::RelativeErrorTooSmall ||
                      status == S::RelativeErrorAndReductionTooSmall || status == S::CosinusTooSmall;
    }
    // The slot furthest outside its range, if any.
    int worst = -1;
    double by = 0.0;
    for (std::size_t j = 0; j < free.size(); ++j) {
      const double x = u[static_cast<Eigen::Index>(j)];
      const double outside = std::max(-x, x - 1.0);
      if (outside > by) {
        by = outside;
        worst = static_cast<int>(j);
      }
    }
    for (std::size_t j = 0; j < free.size(); ++j) out.value[free_index[j]] = f.value(u, j);
    if (worst < 0) {
      // Standard errors: sigma^2 (J^T J)^-1 at the fit, in the parameters' units.
      const auto n = static_cast<Eigen::Index>(rows.size());
      const auto k = static_cast<Eigen::Index>(free.size());
      if (k > 0 && n > k) {
        Residuals::ValueType r(n);
        Residuals::JacobianType jac(n, k);
        f(u, r);
        f.df(u, jac);
        const double sigma2 = r.squaredNorm() / static_cast<double>(n - k);
        const Eigen::MatrixXd cov = (jac.transpose() * jac).ldlt().solve(Eigen::MatrixXd::Identity(k, k)) * sigma2;
        for (Eigen::Index j = 0; j < k; ++j) {
          const InSituParamInfo& p = info(free[static_cast<std::size_t>(j)].param);
          out.std_error[free_index[static_cast<std::size_t>(j)]] = std::sqrt(std::max(0.0, cov(j, j))) * (p.high - p.low);
        }
      }
      return out;
    }
    const std::size_t hold = free_index[static_cast<std::size_t>(worst)];
    const InSituParamInfo& p = info(slots[hold].param);
    out.value[hold] = u[worst] < 0.0 ? p.low : p.high;
    out.at_bound[hold] = 1;
    // Its rows take the bound; the others start again from neutral.
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (owner[i][static_cast<std::size_t>(slots[hold].param)] == static_cast<int>(hold)) held[i][slots[hold].param] = out.value[hold];
    }
    for (std::size_t j : free_index) {
      if (j != hold) out.value[j] = info(slots[j].param).neutral;
    }
    free_index.erase(free_index.begin() + worst);
  }
}

// The fit over `rows`: every parameter shared; the `split` ones per
// architecture for each architecture with more runs than split parameters,
// the others' runs holding them at the shared fit's values.
Fit fit(const std::vector<const RunFitRow*>& rows, const std::vector<InSituParam>& params, const std::vector<InSituParam>& split) {
  std::vector<Slot> shared;
  for (InSituParam p : params) shared.push_back({p, ""});
  const std::vector<InSitu> neutral(rows.size());
  Fit whole = fit_slots(rows, shared, neutral);
  for (std::size_t j = 0; j < whole.slots.size(); ++j) whole.fallback[whole.slots[j].param] = whole.value[j];
  if (split.empty()) return whole;
  std::map<std::string, std::size_t> runs_of;
  for (const RunFitRow* r : rows) ++runs_of[r->arch];
  std::vector<Slot> slots;
  for (InSituParam p : params) {
    if (std::find(split.begin(), split.end(), p) == split.end()) slots.push_back({p, ""});
  }
  std::vector<InSitu> fixed(rows.size());
  for (InSituParam p : split) {
    for (const auto& [arch, count] : runs_of) {
      if (count > split.size()) slots.push_back({p, arch});
    }
    for (std::size_t i = 0; i < rows.size(); ++i) fixed[i][p] = whole.fallback[p];
  }
  Fit out = fit_slots(rows, slots, fixed);
  out.fallback = whole.fallback;
  for (std::size_t j = 0; j < out.slots.size(); ++j) {
    if (out.slots[j].arch.empty()) out.fallback[out.slots[j].param] = out.value[j];
  }
  out.iterations += whole.iterations;
  out.converged = out.converged && whole.converged;
  return out;
}

}  // namespace

InSituCalibration RunFit::calibration() const {
  InSituCalibration c = fitted;
  c.file.clear();
  c.source = fmt::format("acesim calibrate runs {}: {} runs", file, rows.size());
  if (!split.empty()) {
    c.source += "; per architecture:";
    for (std::size_t j = 0; j < split.size(); ++j) c.source += (j ? ", " : " ") + std::string(info(split[j]).name);
  }
  return c;
}

RunFit fit_runs(LlmRunsFile file, const RunFitOptions& options) {
  RunFit out;
  out.file = file.path;
  out.params = options.params;
  if (out.params.empty()) {
    for (const InSituParamInfo& p : in_situ_params()) out.params.push_back(p.param);
  }
  out.split = options.split;
  for (InSituParam p : out.split) {
    if (std::find(out.params.begin(), out.params.end(), p) == out.params.end()) {
      throw InputError(fmt::format("--per-arch: {} is not fitted (--params does not name it)", info(p).name));
    }
  }
  const std::size_t n = file.rows.size();
  if (n <= out.params.size()) {
    throw InputError(fmt::format("{}: {} runs for {} parameters: a fit needs more runs than parameters (and its leave-one-out one more)",
                                 file.path, n, out.params.size()));
  }
  out.rows.resize(n);
  // 1. Isolated, and every kernel kProbe times as long: each run's linear
  // step. The step's growth splits between the tensor and the memory-bound
  // kernels as their time does on the simulated GPU (the linearisation
  // error that step 3 measures includes this split's).
  std::vector<LlmRunRow> probe = file.rows;
  InSitu slower;
  slower[InSituParam::kTensor] = kProbe;
  slower[InSituParam::kMemory] = kProbe;
  const InSituCalibration probe_cal = calibration_of(slower, {InSituParam::kTensor, InSituParam::kMemory}, "probe");
  // The isolated runs first, timed; a run's probe may start once its
  // isolated run is done, the longest first, and so does every later pass,
  // so that no thread is left with a long run at the end.
  std::vector<double> seconds(n);
  pass_then_longest(n, options.jobs, [&](std::size_t i) {
    const auto start = std::chrono::steady_clock::now();
    simulate_llm_run(file.rows[i], file.models_dir);
    seconds[i] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }, [&](std::size_t i) { simulate_llm_run(probe[i], file.models_dir, &probe_cal); }, seconds);
  std::vector<std::size_t> longest(n);
  std::iota(longest.begin(), longest.end(), 0);
  std::stable_sort(longest.begin(), longest.end(), [&](std::size_t a, std::size_t b) { return seconds[a] > seconds[b]; });
  for (std::size_t i = 0; i < n; ++i) {
    const LlmRunRow& r = file.rows[i];
    RunFitRow& f = out.rows[i];
    f.id = r.id;
    f.stack = r.stack;
    f.platform = r.platform;
    f.arch = llm_run_arch(r);
    f.precision = r.precision;
    f.gpus = r.gpus;
    f.max_normal = expected_max_normal(r.gpus);
    f.measured_s = r.step_s;
    f.isolated_s = static_cast<double>(r.iteration_ps) / 1e12;
    const double growth = (static_cast<double>(probe[i].iteration_ps) / 1e12 - f.isolated_s) / (kProbe - 1.0);
    const double tensor_share = r.compute_ps > 0 ? static_cast<double>(r.compute_tensor_ps) / static_cast<double>(r.compute_ps) : 0.0;
    f.d_tensor_s = growth * tensor_share;
    f.d_memory_s = growth - f.d_tensor_s;
  }
  // 2. The fit over every run, without each run, and without each stack.
  std::vector<const RunFitRow*> all;
  for (const RunFitRow& r : out.rows) all.push_back(&r);
  const Fit whole = fit(all, out.params, out.split);
  out.fitted = whole.calibration(out.params, "fit");
  out.values = whole.fallback;
  out.iterations = whole.iterations;
  out.converged = whole.converged;
  for (std::size_t j = 0; j < whole.slots.size(); ++j) {
    RunFitSlot slot{whole.slots[j].param, whole.slots[j].arch, whole.value[j], whole.std_error[j], whole.at_bound[j] != 0};
    if (slot.arch.empty()) {
      out.std_error[static_cast<std::size_t>(slot.param)] = slot.std_error;
      out.at_bound[static_cast<std::size_t>(slot.param)] = slot.at_bound;
    }
    if (slot.at_bound) {
      out.warnings.push_back(fmt::format("{} is at the bound of its plausible range ({:g}): the runs ask for more than its physical cause "
                                         "explains, or for a cause the model lacks; the fit holds it there",
                                         slot.name(), slot.value));
    }
    out.slots.push_back(std::move(slot));
  }
  if (!out.converged) out.warnings.push_back("the fit did not converge: the values are the last iterate's");
  std::vector<InSituCalibration> loo(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<const RunFitRow*> rest;
    for (std::size_t j = 0; j < n; ++j) {
      if (j != i) rest.push_back(&out.rows[j]);
    }
    loo[i] = fit(rest, out.params, out.split).calibration(out.params, "leave one out");
  }
  std::map<std::string, InSituCalibration> lso;
  for (const RunFitRow& r : out.rows) {
    if (lso.count(r.stack)) continue;
    std::vector<const RunFitRow*> rest;
    for (const RunFitRow& o : out.rows) {
      if (o.stack != r.stack) rest.push_back(&o);
    }
    if (rest.size() > out.params.size()) lso[r.stack] = fit(rest, out.params, out.split).calibration(out.params, "leave one stack out");
  }
  // 3. Simulated at the fit; the held-out fits' predictions linearised or simulated.
  const InSituCalibration& fitted = out.fitted;
  std::vector<LlmRunRow> in(file.rows), one(file.rows), stack(file.rows);
  out.held_out_simulated = options.simulate_held_out;
  parallel_for((options.simulate_held_out ? 3 : 1) * n, options.jobs, [&](std::size_t k) {
    const std::size_t i = longest[k % n];
    if (k < n) {
      simulate_llm_run(in[i], file.models_dir, &fitted);
    } else if (k < 2 * n) {
      simulate_llm_run(one[i], file.models_dir, &loo[i]);
    } else if (const auto it = lso.find(stack[i].stack); it != lso.end()) {
      simulate_llm_run(stack[i], file.models_dir, &it->second);
    }
  });
  for (std::size_t i = 0; i < n; ++i) {
    RunFitRow& r = out.rows[i];
    r.fitted_s = static_cast<double>(in[i].iteration_ps) / 1e12;
    const auto it = lso.find(r.stack);
    const auto resolved = [&r](const InSituCalibration& c) { return c.resolve(r.arch, r.precision); };
    out.linearisation_error = std::max(out.linearisation_error, std::abs(r.fitted_s / linear_step(r, resolved(out.fitted)) - 1.0));
    if (options.simulate_held_out) {
      r.loo_s = static_cast<double>(one[i].iteration_ps) / 1e12;
      r.lso_s = it != lso.end() ? static_cast<double>(stack[i].iteration_ps) / 1e12 : 0.0;
    } else {
      r.loo_s = linear_step(r, resolved(loo[i]));
      r.lso_s = it != lso.end() ? linear_step(r, resolved(it->second)) : 0.0;
    }
  }
  return out;
}

std::string format_run_fit(const RunFit& fit) {
  std::string out = fmt::format("# acesim calibrate runs: {}, {} runs; in-situ parameters fitted: ", fit.file, fit.rows.size());
  for (std::size_t j = 0; j < fit.params.size(); ++j) out += (j ? ", " : "") + std::string(info(fit.params[j]).name);
  out += fmt::format("\n# fit: least squares on the log step error over each run's linearised step, {} iterations{}\n", fit.iterations,
                     fit.converged ? "" : " (not converged)");
  for (const std::string& w : fit.warnings) out += "# warning: " + w + "\n";
  out += fmt::format("\n{:<16}{:>10}{:>12}  {:<16}{}\n", "parameter", "value", "+- 1 s.d.", "plausible range", "meaning");
  for (const RunFitSlot& slot : fit.slots) {
    const InSituParamInfo& i = info(slot.param);
    out += fmt::format("{:<16}{:>10.4g}{:>12.2g}  {:<16}{}{}\n", slot.name(), slot.value, slot.std_error,
                       fmt::format("[{:g}, {:g}]", i.low, i.high), i.meaning, slot.at_bound ? " (at its bound)" : "");
  }
  if (!fit.split.empty()) {
    out += "# @ARCH: that architecture's value; the other architectures take the value fitted with every parameter shared:";
    for (InSituParam p : fit.split) out += fmt::format(" {} {:.4g}", info(p).name, fit.values[p]);
    out += "\n";
  }
  out += fmt::format("\n{:<40}{:<16}{:>6}{:>10}{:>10}{:>8}{:>10}{:>8}{:>10}{:>8}{:>10}{:>8}\n", "run", "stack", "GPUs", "measured", "isolated",
                     "error", "fitted", "error", "leave-1", "error", "leave-st", "error");
  std::vector<double> e_iso, e_fit, e_loo, e_lso;
  int faster_iso = 0, faster_loo = 0;
  for (const RunFitRow& r : fit.rows) {
    const double a = run_error(r.measured_s, r.isolated_s), b = run_error(r.measured_s, r.fitted_s), c = run_error(r.measured_s, r.loo_s);
    e_iso.push_back(a);
    e_fit.push_back(b);
    e_loo.push_back(c);
    faster_iso += a > 0.0 ? 1 : 0;
    faster_loo += c > 0.0 ? 1 : 0;
    std::string lso = fmt::format("{:>10}{:>8}", "-", "-");
    if (r.lso_s > 0.0) {
      const double d = run_error(r.measured_s, r.lso_s);
      e_lso.push_back(d);
      lso = fmt::format("{:>10.3f}{:>+7.1f}%", r.lso_s, 100.0 * d);
    }
    out += fmt::format("{:<40}{:<16}{:>6}{:>10.3f}{:>10.3f}{:>+7.1f}%{:>10.3f}{:>+7.1f}%{:>10.3f}{:>+7.1f}%{}\n", r.id, r.stack, r.gpus,
                       r.measured_s, r.isolated_s, 100.0 * a, r.fitted_s, 100.0 * b, r.loo_s, 100.0 * c, lso);
  }
  out += fmt::format(
      "\n# geomean |error|: isolated {:.1f}%, in sample {:.1f}%, leave one run out {:.1f}%, leave one stack out {:.1f}% ({} runs); "
      "acesim faster on {} of {} runs isolated, {} left out\n",
      100.0 * geomean_error(e_iso), 100.0 * geomean_error(e_fit), 100.0 * geomean_error(e_loo), 100.0 * geomean_error(e_lso), e_lso.size(), faster_iso,
      fit.rows.size(), faster_loo);
  out += fmt::format(
      "# error: measured / predicted step - 1 (positive: acesim faster); steps in seconds; isolated and fitted simulated, held out {} "
      "(the linearised step is within {:.2f}% of the simulated one at the fit)\n",
      fit.held_out_simulated ? "simulated" : "by each run's linearised step (--simulate-held-out simulates them)",
      100.0 * fit.linearisation_error);
  return out;
}

std::string run_fit_markdown(const RunFit& fit) {
  std::string out = "| parameter | fitted | +- 1 s.d. | plausible range | at its bound |\n|---|---:|---:|---|---|\n";
  for (const RunFitSlot& slot : fit.slots) {
    const InSituParamInfo& i = info(slot.param);
    out += fmt::format("| {} | {:.4g} | {:.2g} | [{:g}, {:g}] | {} |\n", slot.name(), slot.value, slot.std_error, i.low, i.high,
                       slot.at_bound ? "yes" : "no");
  }
  out += "\n| run | stack | GPUs | measured (s) | isolated (s) | error | fitted (s) | error | leave one out (s) | error | "
         "leave stack out (s) | error |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  std::map<std::string, std::vector<const RunFitRow*>> by_stack;
  for (const RunFitRow& r : fit.rows) {
    by_stack[r.stack].push_back(&r);
    const std::string lso = r.lso_s > 0.0 ? fmt::format("{:.3f} | {:+.1f}%", r.lso_s, 100.0 * run_error(r.measured_s, r.lso_s)) : "- | -";
    out += fmt::format("| {} | {} | {} | {:.3f} | {:.3f} | {:+.1f}% | {:.3f} | {:+.1f}% | {:.3f} | {:+.1f}% | {} |\n", r.id, r.stack, r.gpus,
                       r.measured_s, r.isolated_s, 100.0 * run_error(r.measured_s, r.isolated_s), r.fitted_s,
                       100.0 * run_error(r.measured_s, r.fitted_s), r.loo_s, 100.0 * run_error(r.measured_s, r.loo_s), lso);
  }
  out += "\n| stack | runs | geomean error isolated | in sample | leave one out | leave stack out | acesim faster (isolated / left out) |\n"
         "|---|---:|---:|---:|---:|---:|---|\n";
  const auto summary = [&out](const std::string& name, const std::vector<const RunFitRow*>& rows) {
    std::vector<double> a, b, c, d;
    int fast_a = 0, fast_c = 0;
    for (const RunFitRow* r : rows) {
      a.push_back(run_error(r->measured_s, r->isolated_s));
      b.push_back(run_error(r->measured_s, r->fitted_s));
      c.push_back(run_error(r->measured_s, r->loo_s));
      if (r->lso_s > 0.0) d.push_back(run_error(r->measured_s, r->lso_s));
      fast_a += a.back() > 0.0 ? 1 : 0;
      fast_c += c.back() > 0.0 ? 1 : 0;
    }
    out += fmt::format("| {} | {} | {:.1f}% | {:.1f}% | {:.1f}% | {} | {} / {} of {} |\n", name, rows.size(), 100.0 * geomean_error(a), 100.0 * geomean_error(b),
                       100.0 * geomean_error(c), d.empty() ? std::string("-") : fmt::format("{:.1f}%", 100.0 * geomean_error(d)), fast_a, fast_c, rows.size());
  };
  std::vector<const RunFitRow*> all;
  for (const auto& [stack, rows] : by_stack) {
    summary(stack, rows);
    all.insert(all.end(), rows.begin(), rows.end());
  }
  summary("all", all);
  out += fmt::format("\nError: measured / predicted step - 1 (positive: acesim faster). Held-out steps {}; at the fit the linearised step is "
                     "within {:.2f}% of the simulated one.\n",
                     fit.held_out_simulated ? "simulated" : "from each run's linearised step", 100.0 * fit.linearisation_error);
  return out;
}

nlohmann::json run_fit_json(const RunFit& fit) {
  nlohmann::json params = nlohmann::json::object();
  for (const RunFitSlot& slot : fit.slots) {
    const InSituParamInfo& i = info(slot.param);
    params[slot.name()] = {{"value", slot.value}, {"std_error", slot.std_error}, {"low", i.low}, {"high", i.high}, {"at_bound", slot.at_bound}};
  }
  nlohmann::json rows = nlohmann::json::array();
  for (const RunFitRow& r : fit.rows) {
    rows.push_back({{"id", r.id},
                    {"stack", r.stack},
                    {"platform", r.platform},
                    {"arch", r.arch},
                    {"precision", r.precision},
                    {"gpus", r.gpus},
                    {"measured_s", r.measured_s},
                    {"isolated_s", r.isolated_s},
                    {"d_tensor_s", r.d_tensor_s},
                    {"d_memory_s", r.d_memory_s},
                    {"fitted_s", r.fitted_s},
                    {"leave_one_out_s", r.loo_s},
                    {"leave_stack_out_s", r.lso_s > 0.0 ? nlohmann::json(r.lso_s) : nlohmann::json(nullptr)}});
  }
  return {{"file", fit.file},
          {"parameters", params},
          {"iterations", fit.iterations},
          {"converged", fit.converged},
          {"warnings", fit.warnings},
          {"held_out_simulated", fit.held_out_simulated},
          {"linearisation_error", fit.linearisation_error},
          {"runs", rows}};
}

std::string run_fit_csv(const RunFit& fit) {
  std::string out = "id,stack,platform,arch,precision,gpus,measured_s,isolated_s,fitted_s,leave_one_out_s,leave_stack_out_s\n";
  for (const RunFitRow& r : fit.rows) {
    CsvLine line;
    line << r.id << r.stack << r.platform << r.arch << r.precision << r.gpus << r.measured_s << r.isolated_s << r.fitted_s << r.loo_s;
    if (r.lso_s > 0.0) {
      line << r.lso_s;
    } else {
      line << "";
    }
    out += line.text();
  }
  return out;
}

}  // namespace acesim
