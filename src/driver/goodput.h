// A long training run with failures, checkpoints and restarts (docs/goodput.md):
// `acesim run ... --days D --failures NAME|FILE`. The simulated iteration
// time is the rate of progress; failures are a Poisson process over the
// job's components (config/failure_model.h), events between iterations
// rather than a re-simulation of each. Monte Carlo over `trials` runs, each
// with its own random stream from the seed; the same input gives the same
// numbers.
//
// One trial. Training runs `every` iterations, then writes a checkpoint
// (blocking: training waits `write`; async: it goes on and the checkpoint
// counts once written). A failure throws away the work since the last
// checkpoint written (and a write in progress), then the job restarts:
// re-queued, initialised, the checkpoint read back. The job's components
// keep failing while it restarts; a failure then starts the restart again.
// A planned interruption (maintenance) stops the job too, but first it
// writes a checkpoint, so it loses no work; then it restarts the same way.
// One that falls in a restart is absorbed by it.
// Wall time splits into productive (iterations kept), checkpointing
// (blocking writes), lost (work thrown away) and restarting; the effective
// training time ratio (ETTR, "goodput") is productive over wall time.
//
// The long-run clock is int64 nanoseconds (picoseconds would overflow in
// 107 days).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/failure_model.h"
#include "config/platform.h"
#include "engine/time.h"

namespace acesim {

// The components a job's failures come from, by FailureClass: its GPUs,
// its nodes (the platform's node dimension; without one, the platform is
// one node), and one NIC and one scale-out link per GPU when it spans
// several nodes (none on one node).
struct JobComponents {
  std::array<long long, kFailureClasses> count{};
};
JobComponents job_components(const PlatformConfig& platform);

struct GoodputOptions {
  double days = 0.0;
  int trials = 1000;
  std::uint64_t seed = 1;
  std::optional<long long> checkpoint_every;  // iterations; none: Daly's interval (auto)
  std::optional<double> checkpoint_GB;        // none: the model's, else the job's model state
  bool async = false;                         // or as the failure model says
};

// The closed forms (docs/goodput.md): times in seconds.
// They count unexpected failures only, not planned interruptions.
// Young's optimum interval sqrt(2 delta M); Daly's higher-order one
// (M when delta >= 2M).
double young_interval_s(double write_s, double mtbf_s);
double daly_interval_s(double write_s, double mtbf_s);
// Daly's expected wall time per unit of work with blocking checkpoints,
// exponential failures also during restarts: ETTR = tau / (M e^(R/M)
// (e^((tau+delta)/M) - 1)).
double daly_ettr(double interval_s, double write_s, double restart_s, double mtbf_s);
// Kokolis et al.'s first-order estimate (arXiv 2410.21680): (1 - (R +
// tau/2)/M) / (1 + delta/tau), delta 0 for asynchronous writes.
double first_order_ettr(double interval_s, double write_s, double restart_s, double mtbf_s);

struct Percentiles {
  double mean = 0.0, p5 = 0.0, p50 = 0.0, p95 = 0.0, min = 0.0, max = 0.0;
};

struct GoodputTrial {
  long long failures = 0;  // unexpected
  long long planned = 0;   // planned interruptions
  std::array<long long, kFailureClasses> by_class{};
  long long iterations = 0;  // kept
  long long checkpoints = 0;
  std::int64_t productive_ns = 0, checkpoint_ns = 0, lost_ns = 0, restart_ns = 0;
  double ettr() const;
};

struct GoodputReport {
  std::string failure_model;
  std::string source;
  JobComponents components;
  double days = 0.0;
  int trials = 0;
  std::uint64_t seed = 0;
  double iteration_s = 0.0;
  // Failures per day of the whole job, by class, and the mean time between them.
  std::array<double, kFailureClasses> failures_per_day{};
  double mtbf_s = 0.0;           // unexpected failures only
  double planned_per_day = 0.0;  // planned interruptions of the job
  double checkpoint_GB = 0.0;
  std::string checkpoint_size_from;  // "the model state (...)", "--checkpoint-GB", "the failure model"
  bool async = false;
  double write_s = 0.0, read_s = 0.0, restart_s = 0.0;  // restart: requeue + init + read
  long long every = 0;      // iterations between checkpoints
  bool every_auto = false;
  double interval_s = 0.0;  // every x iteration
  double young_s = 0.0, daly_s = 0.0;
  double daly_ettr = 0.0;         // blocking only (NaN: async)
  double first_order_ettr = 0.0;  // Kokolis et al. (NaN: outside its range, closed_forms_note says why)
  // Why the closed forms give no number ("" when they do): they are
  // steady-state expectations over many checkpoint intervals.
  std::string closed_forms_note;
  // Over the trials.
  Percentiles failures, ettr;
  double planned = 0.0;  // mean planned interruptions
  std::array<double, kFailureClasses> failures_by_class{};  // means
  double productive_h = 0.0, checkpoint_h = 0.0, lost_h = 0.0, restart_h = 0.0;  // means
  double iterations = 0.0;  // mean kept
  std::vector<GoodputTrial> per_trial;
};

// Throws InputError for options out of range and for a failure model that
// leaves no time to write a checkpoint (a mean time between failures no
// longer than a write), naming the file and line of its rates.
GoodputReport simulate_goodput(const FailureModel& model, const JobComponents& components, TimePs iteration_ps,
                               double model_state_bytes, const std::string& model_state_text, const GoodputOptions& options);

}  // namespace acesim
