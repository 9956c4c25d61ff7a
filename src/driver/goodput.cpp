// Failures, checkpoints and goodput over a long run (goodput.h).
#include "driver/goodput.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include <fmt/format.h>

#include "config/input_error.h"
#include "engine/random.h"

namespace acesim {
namespace {

constexpr double kNsPerS = 1e9;
constexpr double kSecondsPerDay = 86400.0;
constexpr double kMaxDays = 36500.0;
constexpr int kMaxTrials = 1'000'000;
// Failures a run may draw over all its trials (each is a few random numbers).
constexpr double kMaxFailures = 2e8;

// A trial's random stream: mt19937_64's bits made into numbers by hand, so
// that the numbers do not depend on the standard library's distributions.
class Stream {
 public:
  Stream(std::uint64_t seed, std::uint64_t trial) : gen_(splitmix64(seed ^ splitmix64(trial))) {}
  // Uniform in (0, 1].
  double unit() { return unit_interval(gen_()); }
  // Exponential with mean `mean_ns`, in whole nanoseconds (at least 1).
  std::int64_t exponential_ns(double mean_ns) {
    const double v = -std::log(unit()) * mean_ns;
    return v >= 9e18 ? std::numeric_limits<std::int64_t>::max() / 4 : std::max<std::int64_t>(1, std::llround(v));
  }

 private:
  std::mt19937_64 gen_;
};

struct TrialSetup {
  std::int64_t horizon = 0, iteration = 0, write = 0, restart = 0;
  long long every = 0;
  bool async = false;
  double mean_ns = 0.0;  // between interruptions (failures and planned ones); infinite: none
  double planned_share = 0.0;  // of the interruptions, the planned ones
  std::array<double, kFailureClasses> share{};  // cumulative share of the rate by class
};

int draw_class(Stream& s, const TrialSetup& t) {
  const double u = s.unit();
  for (int c = 0; c + 1 < kFailureClasses; ++c) {
    if (u <= t.share[static_cast<std::size_t>(c)]) return c;
  }
  return kFailureClasses - 1;
}

GoodputTrial run_trial(const TrialSetup& t, Stream& s) {
  GoodputTrial r;
  const bool failing = std::isfinite(t.mean_ns);
  const std::int64_t tau = t.every * t.iteration;
  const std::int64_t cycle = t.async ? tau : tau + t.write;
  const auto next_event = [&](std::int64_t now) {
    return failing ? now + s.exponential_ns(t.mean_ns) : std::numeric_limits<std::int64_t>::max();
  };
  // Whether an interruption is a planned one (drawn only when there are
  // any, so that a model without them keeps its random stream).
  const auto planned = [&] { return t.planned_share > 0.0 && s.unit() <= t.planned_share; };
  const auto fail = [&] {
    ++r.failures;
    ++r.by_class[static_cast<std::size_t>(draw_class(s, t))];
  };
  std::int64_t now = 0;
  std::int64_t next = next_event(now);
  while (true) {
    // Running from a checkpoint (or the start) until an interruption or the end.
    const std::int64_t stop = std::min(next, t.horizon);
    const std::int64_t k = (stop - now) / cycle;
    now += k * cycle;
    r.iterations += k * t.every;
    r.checkpoints += k;
    r.productive_ns += k * tau;
    if (!t.async) r.checkpoint_ns += k * t.write;
    const std::int64_t rem = stop - now;
    if (stop == t.horizon && t.horizon <= next) {
      // The end: the work since the last checkpoint stands (the run goes on).
      const std::int64_t computing = std::min(rem, tau);
      r.productive_ns += computing;
      r.iterations += computing / t.iteration;
      if (!t.async) r.checkpoint_ns += rem - computing;
      break;
    }
    if (planned()) {
      // A planned stop `rem` into a cycle: the job keeps its whole
      // iterations and writes a checkpoint of them before it stops (a
      // blocking write in progress finishes).
      ++r.planned;
      std::int64_t write = t.write;
      if (!t.async && rem >= tau) {
        r.productive_ns += tau;
        r.iterations += t.every;
        r.checkpoint_ns += rem - tau;
        write -= rem - tau;
      } else {
        const std::int64_t kept = rem / t.iteration * t.iteration;
        r.productive_ns += kept;
        r.iterations += kept / t.iteration;
        r.lost_ns += rem - kept;
      }
      now = stop;
      const std::int64_t w = std::min(write, t.horizon - now);
      r.checkpoint_ns += w;
      now += w;
      if (w < write) break;  // the end came during the write
      ++r.checkpoints;
    } else {
      // A failure `rem` into a cycle: that work and a write in progress are
      // lost; asynchronously, so is the cycle before when its checkpoint was
      // still being written.
      r.lost_ns += rem;
      if (t.async && k > 0 && rem < t.write) {
        r.productive_ns -= tau;
        r.lost_ns += tau;
        r.iterations -= t.every;
        r.checkpoints -= 1;
      }
      now = stop;
      fail();
    }
    // The restart, begun again by any failure during it; a planned
    // interruption during it is absorbed.
    bool ended = false;
    std::int64_t done = now + t.restart;
    while (true) {
      next = next_event(now);
      const std::int64_t until = std::min(done, next);
      if (until >= t.horizon) {
        r.restart_ns += t.horizon - now;
        ended = true;
        break;
      }
      r.restart_ns += until - now;
      now = until;
      if (done <= next) break;
      if (planned()) continue;
      fail();
      done = now + t.restart;
    }
    if (ended) break;
  }
  return r;
}

Percentiles percentiles(std::vector<double> v) {
  Percentiles p;
  if (v.empty()) return p;
  double sum = 0.0;
  for (double x : v) sum += x;
  p.mean = sum / static_cast<double>(v.size());
  std::sort(v.begin(), v.end());
  // Nearest rank.
  const auto at = [&](double q) {
    const auto i = static_cast<std::size_t>(std::max(1.0, std::ceil(q * static_cast<double>(v.size())))) - 1;
    return v[std::min(i, v.size() - 1)];
  };
  p.p5 = at(0.05);
  p.p50 = at(0.50);
  p.p95 = at(0.95);
  p.min = v.front();
  p.max = v.back();
  return p;
}

}  // namespace

double GoodputTrial::ettr() const {
  const double wall = static_cast<double>(productive_ns + checkpoint_ns + lost_ns + restart_ns);
  return wall > 0.0 ? static_cast<double>(productive_ns) / wall : 0.0;
}

JobComponents job_components(const PlatformConfig& platform) {
  JobComponents c;
  long long gpus = 1, per_node = 1;
  for (std::size_t d = 0; d < platform.dims.size(); ++d) {
    gpus *= platform.dims[d].npus;
    if (platform.nodes_dim >= 0 && static_cast<int>(d) < platform.nodes_dim) per_node *= platform.dims[d].npus;
  }
  const long long nodes = platform.nodes_dim >= 0 ? gpus / per_node : 1;
  c.count[static_cast<std::size_t>(FailureClass::kGpu)] = gpus;
  c.count[static_cast<std::size_t>(FailureClass::kNode)] = nodes;
  c.count[static_cast<std::size_t>(FailureClass::kNic)] = nodes > 1 ? gpus : 0;
  c.count[static_cast<std::size_t>(FailureClass::kLink)] = nodes > 1 ? gpus : 0;
  return c;
}

double young_interval_s(double write_s, double mtbf_s) { return std::sqrt(2.0 * write_s * mtbf_s); }

double daly_interval_s(double write_s, double mtbf_s) {
  if (write_s >= 2.0 * mtbf_s) return mtbf_s;
  const double x = write_s / (2.0 * mtbf_s);
  return std::sqrt(2.0 * write_s * mtbf_s) * (1.0 + std::sqrt(x) / 3.0 + x / 9.0) - write_s;
}

double daly_ettr(double interval_s, double write_s, double restart_s, double mtbf_s) {
  if (!std::isfinite(mtbf_s)) return interval_s / (interval_s + write_s);
  return interval_s / (mtbf_s * std::exp(restart_s / mtbf_s) * std::expm1((interval_s + write_s) / mtbf_s));
}

double first_order_ettr(double interval_s, double write_s, double restart_s, double mtbf_s) {
  const double lost = std::isfinite(mtbf_s) ? (restart_s + interval_s / 2.0) / mtbf_s : 0.0;
  return (1.0 - lost) / (1.0 + write_s / interval_s);
}

GoodputReport simulate_goodput(const FailureModel& model, const JobComponents& components, TimePs iteration_ps,
                               double model_state_bytes, const std::string& model_state_text, const GoodputOptions& o) {
  if (!(o.days > 0.0 && o.days <= kMaxDays)) throw InputError(fmt::format("--days: must be above 0 and at most {:g}, got {:g}", kMaxDays, o.days));
  if (o.trials < 1 || o.trials > kMaxTrials) throw InputError(fmt::format("--trials: must be in 1..{}, got {}", kMaxTrials, o.trials));
  if (iteration_ps <= 0) throw InputError("--days: the run reports no iteration time to take as the rate of progress");
  GoodputReport rep;
  rep.failure_model = model.name;
  rep.source = model.source;
  rep.components = components;
  rep.days = o.days;
  rep.trials = o.trials;
  rep.seed = o.seed;
  rep.iteration_s = ps_to_seconds(iteration_ps);
  double per_day = 0.0;
  for (int c = 0; c < kFailureClasses; ++c) {
    const auto k = static_cast<std::size_t>(c);
    rep.failures_per_day[k] = model.per_1000_days[k] / 1000.0 * static_cast<double>(components.count[k]);
    per_day += rep.failures_per_day[k];
  }
  rep.mtbf_s = per_day > 0.0 ? kSecondsPerDay / per_day : std::numeric_limits<double>::infinity();
  rep.planned_per_day = model.planned_per_day;
  const double events_per_day = per_day + rep.planned_per_day;
  // The checkpoint.
  if (o.checkpoint_GB) {
    rep.checkpoint_GB = *o.checkpoint_GB;
    rep.checkpoint_size_from = "--checkpoint-GB";
  } else if (model.checkpoint_GB) {
    rep.checkpoint_GB = *model.checkpoint_GB;
    rep.checkpoint_size_from = model.file + " (checkpoint.size_GB)";
  } else if (model_state_bytes > 0.0) {
    rep.checkpoint_GB = model_state_bytes / 1e9;
    rep.checkpoint_size_from = model_state_text;
  } else {
    throw InputError("--days: this workload does not say how large its model state is; give --checkpoint-GB");
  }
  rep.async = o.async || model.async;
  rep.write_s = rep.checkpoint_GB / model.write_GBps;
  rep.read_s = rep.checkpoint_GB / model.read_GBps;
  rep.restart_s = 60.0 * (model.requeue_minutes + model.init_minutes) + rep.read_s;
  for (const auto& [seconds, key] : {std::pair{rep.write_s, "storage.write_GBps"}, std::pair{rep.read_s, "storage.read_GBps"}}) {
    if (!(seconds <= 1e9)) {
      throw_input_error(model.file, 0, key, fmt::format("a {:.4g} GB checkpoint would take {:.3g} s (over 31 years)", rep.checkpoint_GB, seconds));
    }
  }
  if (rep.mtbf_s <= rep.write_s) {
    throw_input_error(model.file, model.rates_line, model.causes.empty() ? "failures_per_1000_days" : "observed",
                      fmt::format("the job's mean time between failures ({:.4g} s on {} GPUs) is no longer than a checkpoint write "
                                  "({:.4g} s): no checkpoint would ever be written",
                                  rep.mtbf_s, components.count[0], rep.write_s));
  }
  rep.young_s = young_interval_s(rep.write_s, rep.mtbf_s);
  rep.daly_s = daly_interval_s(rep.write_s, rep.mtbf_s);
  const std::int64_t iteration_ns = std::max<std::int64_t>(1, (iteration_ps + 500) / 1000);
  const double horizon_ns = o.days * kSecondsPerDay * kNsPerS;
  if (horizon_ns < static_cast<double>(iteration_ns)) {
    throw InputError(fmt::format("--days: {:g} days ({:.4g} s) is shorter than one iteration ({:.4g} s): give a run of at least one iteration",
                                 o.days, o.days * kSecondsPerDay, rep.iteration_s));
  }
  const double iterations_in_run = horizon_ns / static_cast<double>(iteration_ns);
  if (o.checkpoint_every) {
    if (*o.checkpoint_every < 1 || *o.checkpoint_every > 1'000'000'000'000LL) {
      throw InputError(fmt::format("--checkpoint-every: must be 'auto' or in 1..1000000000000 iterations, got {}", *o.checkpoint_every));
    }
    rep.every = *o.checkpoint_every;
  } else {
    rep.every_auto = true;
    // Daly's interval in whole iterations. Asynchronous writes cost nothing
    // here, so any interval from a write up would do better in this model;
    // auto keeps Daly's (a real asynchronous write still pauses training for
    // its snapshot and loads the store), and no less than a write.
    double n = std::round(rep.daly_s / rep.iteration_s);
    if (rep.async) n = std::max(n, std::ceil(rep.write_s / rep.iteration_s));
    rep.every = static_cast<long long>(std::clamp(n, 1.0, std::max(1.0, std::ceil(iterations_in_run))));
  }
  rep.interval_s = static_cast<double>(rep.every) * rep.iteration_s;
  if (rep.async && rep.interval_s < rep.write_s) {
    throw InputError(fmt::format("--checkpoint-every: {} iterations take {:.4g} s, less than an asynchronous checkpoint write ({:.4g} s); "
                                 "writes would pile up",
                                 rep.every, rep.interval_s, rep.write_s));
  }
  rep.daly_ettr = rep.async ? std::numeric_limits<double>::quiet_NaN() : daly_ettr(rep.interval_s, rep.write_s, rep.restart_s, rep.mtbf_s);
  rep.first_order_ettr = first_order_ettr(rep.interval_s, rep.async ? 0.0 : rep.write_s, rep.restart_s, rep.mtbf_s);
  // The closed forms average over many intervals of a run that goes on:
  // with an interval longer than the run, or failures more often than a
  // restart and half an interval take, they give numbers outside [0, 1].
  const double run_s = o.days * kSecondsPerDay;
  if (rep.interval_s + (rep.async ? 0.0 : rep.write_s) > run_s) {
    rep.closed_forms_note = fmt::format("a checkpoint interval ({:.4g} s) longer than the run ({:.4g} s)", rep.interval_s, run_s);
  } else if (!(rep.first_order_ettr >= 0.0 && rep.first_order_ettr <= 1.0) ||
             (std::isfinite(rep.daly_ettr) && !(rep.daly_ettr >= 0.0 && rep.daly_ettr <= 1.0))) {
    rep.closed_forms_note = fmt::format("failures (one every {:.4g} s) about as often as a restart and half an interval ({:.4g} s) take",
                                        rep.mtbf_s, rep.restart_s + rep.interval_s / 2.0);
  }
  if (!rep.closed_forms_note.empty()) {
    rep.daly_ettr = std::numeric_limits<double>::quiet_NaN();
    rep.first_order_ettr = std::numeric_limits<double>::quiet_NaN();
  }
  const double expected_failures = events_per_day * o.days * static_cast<double>(o.trials);
  if (expected_failures > kMaxFailures) {
    throw InputError(fmt::format("--days: about {:.3g} interruptions to draw ({:.3g} a day over {} trials); the limit is {:.0e}: fewer --trials or --days",
                                 expected_failures, events_per_day, o.trials, kMaxFailures));
  }
  TrialSetup t;
  t.horizon = static_cast<std::int64_t>(std::llround(horizon_ns));
  t.iteration = iteration_ns;
  t.write = std::llround(rep.write_s * kNsPerS);
  t.restart = std::max<std::int64_t>(0, std::llround(rep.restart_s * kNsPerS));
  t.every = rep.every;
  t.async = rep.async;
  t.mean_ns = events_per_day > 0.0 ? kSecondsPerDay * kNsPerS / events_per_day : std::numeric_limits<double>::infinity();
  t.planned_share = events_per_day > 0.0 ? rep.planned_per_day / events_per_day : 0.0;
  double cumulative = 0.0;
  for (int c = 0; c < kFailureClasses; ++c) {
    cumulative += rep.failures_per_day[static_cast<std::size_t>(c)];
    t.share[static_cast<std::size_t>(c)] = per_day > 0.0 ? cumulative / per_day : 1.0;
  }
  // A cycle longer than the clock can hold runs to the end without a checkpoint.
  if (static_cast<double>(rep.every) * static_cast<double>(iteration_ns) > 4e18) t.every = static_cast<long long>(4e18 / static_cast<double>(iteration_ns));
  rep.per_trial.reserve(static_cast<std::size_t>(o.trials));
  std::vector<double> failures, ettr;
  double productive = 0.0, checkpoint = 0.0, lost = 0.0, restart = 0.0, iterations = 0.0, planned = 0.0;
  for (int i = 0; i < o.trials; ++i) {
    Stream s(o.seed, static_cast<std::uint64_t>(i));
    const GoodputTrial r = run_trial(t, s);
    failures.push_back(static_cast<double>(r.failures));
    ettr.push_back(r.ettr());
    for (int c = 0; c < kFailureClasses; ++c) rep.failures_by_class[static_cast<std::size_t>(c)] += static_cast<double>(r.by_class[static_cast<std::size_t>(c)]);
    productive += static_cast<double>(r.productive_ns);
    checkpoint += static_cast<double>(r.checkpoint_ns);
    lost += static_cast<double>(r.lost_ns);
    restart += static_cast<double>(r.restart_ns);
    iterations += static_cast<double>(r.iterations);
    planned += static_cast<double>(r.planned);
    rep.per_trial.push_back(r);
  }
  const double n = static_cast<double>(o.trials);
  for (double& v : rep.failures_by_class) v /= n;
  const double to_h = 1.0 / (n * kNsPerS * 3600.0);
  rep.productive_h = productive * to_h;
  rep.checkpoint_h = checkpoint * to_h;
  rep.lost_h = lost * to_h;
  rep.restart_h = restart * to_h;
  rep.iterations = iterations / n;
  rep.planned = planned / n;
  rep.failures = percentiles(std::move(failures));
  rep.ettr = percentiles(std::move(ettr));
  return rep;
}

}  // namespace acesim
