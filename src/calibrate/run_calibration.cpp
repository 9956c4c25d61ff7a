// In-situ parameters fitted to measured runs (run_calibration.h).
#include "calibrate/run_calibration.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <functional>
#include <map>
#include <numeric>
#include <thread>

#include <Eigen/Dense>
#include <unsupported/Eigen/LevenbergMarquardt>
#include <fmt/format.h>

#include "config/csv.h"
#include "config/input_error.h"

namespace acesim {
namespace {

// The kernels' factor of the linearising run: every kernel 10% slower.
constexpr double kProbe = 1.1;

// Runs fn(i) for every i in [0, n) on `jobs` threads; the first failure by
// index is rethrown, whatever the threads' order.
void parallel_for(std::size_t n, int jobs, const std::function<void(std::size_t)>& fn) {
  const unsigned threads = static_cast<unsigned>(
      std::max(1, std::min<int>(jobs > 0 ? jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency())), static_cast<int>(n))));
  std::vector<std::exception_ptr> errors(n);
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next++; i < n; i = next++) {
      try {
        fn(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
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

struct Fit {
  InSitu values;
  std::array<double, kInSituParams> std_error{};
  std::array<bool, kInSituParams> at_bound{};
  int iterations = 0;
  bool converged = true;
};

// Log step errors of the rows in `use` as a function of the free
// parameters, each scaled to its plausible range (0 at its low end, 1 at
// its high end) so that the steps weigh them alike.
struct Residuals : Eigen::DenseFunctor<double> {
  Residuals(const std::vector<const RunFitRow*>& rows, const std::vector<InSituParam>& free, const InSitu& base)
      : Eigen::DenseFunctor<double>(static_cast<int>(free.size()), static_cast<int>(rows.size())), rows_(rows), free_(free), base_(base) {}

  InSitu in_situ(const InputType& u) const {
    InSitu v = base_;
    for (std::size_t j = 0; j < free_.size(); ++j) {
      const InSituParamInfo& p = info(free_[j]);
      v[free_[j]] = p.low + u[static_cast<Eigen::Index>(j)] * (p.high - p.low);
    }
    return v;
  }
  int operator()(const InputType& u, ValueType& f) const {
    const InSitu v = in_situ(u);
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      f[static_cast<Eigen::Index>(i)] = std::log(std::max(linear_step(*rows_[i], v), 1e-9) / rows_[i]->measured_s);
    }
    return 0;
  }
  int df(const InputType& u, JacobianType& jac) const {
    const InSitu v = in_situ(u);
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      const RunFitRow& r = *rows_[i];
      const double z = r.max_normal;
      const double g = 1.0 + v[InSituParam::kStragglerCv] * z;
      const double step = std::max(linear_step(r, v), 1e-9);
      for (std::size_t j = 0; j < free_.size(); ++j) {
        double d = 0.0;
        switch (free_[j]) {
          case InSituParam::kTensor: d = r.d_tensor_s * g; break;
          case InSituParam::kMemory: d = r.d_memory_s * g; break;
          case InSituParam::kStragglerCv: d = (r.d_tensor_s * v[InSituParam::kTensor] + r.d_memory_s * v[InSituParam::kMemory]) * z; break;
          case InSituParam::kStepFixedMs: d = 1e-3; break;
        }
        const InSituParamInfo& p = info(free_[j]);
        jac(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = d * (p.high - p.low) / step;
      }
    }
    return 0;
  }

 private:
  const std::vector<const RunFitRow*>& rows_;
  const std::vector<InSituParam>& free_;
  InSitu base_;
};

// Bounded least squares by an active set: fit the free parameters; hold the
// one furthest outside its range at that bound; again, until all are in.
Fit fit(const std::vector<const RunFitRow*>& rows, const std::vector<InSituParam>& params) {
  Fit out;
  std::vector<InSituParam> free = params;
  while (true) {
    Residuals f(rows, free, out.values);
    Eigen::VectorXd u(static_cast<Eigen::Index>(free.size()));
    for (std::size_t j = 0; j < free.size(); ++j) {
      const InSituParamInfo& p = info(free[j]);
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
    // The parameter furthest outside its range, if any.
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
    const InSitu v = f.in_situ(u);
    if (worst < 0) {
      out.values = v;
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
          const InSituParamInfo& p = info(free[static_cast<std::size_t>(j)]);
          out.std_error[static_cast<std::size_t>(free[static_cast<std::size_t>(j)])] = std::sqrt(std::max(0.0, cov(j, j))) * (p.high - p.low);
        }
      }
      return out;
    }
    const InSituParam p = free[static_cast<std::size_t>(worst)];
    out.values = v;
    out.values[p] = u[worst] < 0.0 ? info(p).low : info(p).high;
    out.at_bound[static_cast<std::size_t>(p)] = true;
    // The others start again from neutral.
    for (InSituParam q : free) {
      if (q != p) out.values[q] = info(q).neutral;
    }
    free.erase(free.begin() + worst);
  }
}

}  // namespace

InSituCalibration RunFit::calibration() const {
  InSituCalibration c = calibration_of(values, params, fmt::format("acesim calibrate runs {}: {} runs", file, rows.size()));
  c.file.clear();
  return c;
}

RunFit fit_runs(LlmRunsFile file, const RunFitOptions& options) {
  RunFit out;
  out.file = file.path;
  out.params = options.params;
  if (out.params.empty()) {
    for (const InSituParamInfo& p : in_situ_params()) out.params.push_back(p.param);
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
  // The isolated runs first, timed; every later pass takes the longest runs
  // first, so that no thread is left with a long one at the end.
  std::vector<double> seconds(n);
  parallel_for(n, options.jobs, [&](std::size_t i) {
    const auto start = std::chrono::steady_clock::now();
    simulate_llm_run(file.rows[i], file.models_dir);
    seconds[i] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  });
  std::vector<std::size_t> longest(n);
  std::iota(longest.begin(), longest.end(), 0);
  std::stable_sort(longest.begin(), longest.end(), [&](std::size_t a, std::size_t b) { return seconds[a] > seconds[b]; });
  parallel_for(n, options.jobs, [&](std::size_t k) { simulate_llm_run(probe[longest[k]], file.models_dir, &probe_cal); });
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
  const Fit whole = fit(all, out.params);
  out.values = whole.values;
  out.std_error = whole.std_error;
  out.at_bound = whole.at_bound;
  out.iterations = whole.iterations;
  out.converged = whole.converged;
  for (InSituParam p : out.params) {
    if (out.at_bound[static_cast<std::size_t>(p)]) {
      const InSituParamInfo& i = info(p);
      out.warnings.push_back(fmt::format("{} is at the bound of its plausible range ({:g}): the runs ask for more than its physical cause "
                                         "explains, or for a cause the model lacks; the fit holds it there",
                                         i.name, out.values[p]));
    }
  }
  if (!out.converged) out.warnings.push_back("the fit did not converge: the values are the last iterate's");
  std::vector<InSituCalibration> loo(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<const RunFitRow*> rest;
    for (std::size_t j = 0; j < n; ++j) {
      if (j != i) rest.push_back(&out.rows[j]);
    }
    loo[i] = calibration_of(fit(rest, out.params).values, out.params, "leave one out");
  }
  std::map<std::string, InSituCalibration> lso;
  for (const RunFitRow& r : out.rows) {
    if (lso.count(r.stack)) continue;
    std::vector<const RunFitRow*> rest;
    for (const RunFitRow& o : out.rows) {
      if (o.stack != r.stack) rest.push_back(&o);
    }
    if (rest.size() > out.params.size()) lso[r.stack] = calibration_of(fit(rest, out.params).values, out.params, "leave one stack out");
  }
  // 3. Simulated at the fit; the held-out fits' predictions linearised or simulated.
  const InSituCalibration fitted = calibration_of(out.values, out.params, "fit");
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
    out.linearisation_error = std::max(out.linearisation_error, std::abs(r.fitted_s / linear_step(r, out.values) - 1.0));
    const auto it = lso.find(r.stack);
    const auto resolved = [&r](const InSituCalibration& c) { return c.resolve(r.arch, r.precision); };
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
  for (InSituParam p : fit.params) {
    const InSituParamInfo& i = info(p);
    out += fmt::format("{:<16}{:>10.4g}{:>12.2g}  {:<16}{}{}\n", i.name, fit.values[p], fit.std_error[static_cast<std::size_t>(p)],
                       fmt::format("[{:g}, {:g}]", i.low, i.high), i.meaning, fit.at_bound[static_cast<std::size_t>(p)] ? " (at its bound)" : "");
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
  for (InSituParam p : fit.params) {
    const InSituParamInfo& i = info(p);
    out += fmt::format("| {} | {:.4g} | {:.2g} | [{:g}, {:g}] | {} |\n", i.name, fit.values[p], fit.std_error[static_cast<std::size_t>(p)], i.low,
                       i.high, fit.at_bound[static_cast<std::size_t>(p)] ? "yes" : "no");
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
  for (InSituParam p : fit.params) {
    const InSituParamInfo& i = info(p);
    params[i.name] = {{"value", fit.values[p]},
                      {"std_error", fit.std_error[static_cast<std::size_t>(p)]},
                      {"low", i.low},
                      {"high", i.high},
                      {"at_bound", fit.at_bound[static_cast<std::size_t>(p)]}};
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
