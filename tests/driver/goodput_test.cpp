// Failures, checkpoints and goodput over a long run (driver/goodput.h):
// the Monte Carlo against its closed forms, Daly's published intervals, and
// the built-in failure model against the Llama 3 counts it comes from.
#include "driver/goodput.h"

#include <cmath>

#include <gtest/gtest.h>

#include "config/failure_model.h"
#include "config/input_error.h"
#include "config/presets.h"

namespace acesim {
namespace {

// A model with only a GPU rate (per 1000 GPU-days) and the given storage and restart.
FailureModel gpu_model(double per_1000_days, double write_GBps, double requeue_minutes, double init_minutes, bool async = false) {
  FailureModel m;
  m.name = "test";
  m.file = "test.yaml";
  m.per_1000_days = {per_1000_days, 0.0, 0.0, 0.0};
  m.write_GBps = write_GBps;
  m.read_GBps = write_GBps;
  m.requeue_minutes = requeue_minutes;
  m.init_minutes = init_minutes;
  m.async = async;
  return m;
}

JobComponents gpus(long long n) {
  JobComponents c;
  c.count = {n, 0, 0, 0};
  return c;
}

constexpr TimePs kSecond = 1'000'000'000'000;

// Daly 2006 (doi:10.1016/j.future.2004.11.016), figures 3-5: with a 5-minute
// checkpoint, the optimum interval is 117, 57 and 9.1 minutes for a mean time
// to interrupt of 24 h, 6 h and 15 minutes.
TEST(Goodput, DalysIntervalIsHisPublishedOptimum) {
  EXPECT_NEAR(daly_interval_s(300.0, 24 * 3600.0) / 60.0, 117.0, 0.5);
  EXPECT_NEAR(daly_interval_s(300.0, 6 * 3600.0) / 60.0, 57.0, 0.5);
  EXPECT_NEAR(daly_interval_s(300.0, 15 * 60.0) / 60.0, 9.1, 0.05);
  // Young's first order: sqrt(2 delta M); Daly's is M once delta >= 2M.
  EXPECT_DOUBLE_EQ(young_interval_s(300.0, 24 * 3600.0), std::sqrt(2.0 * 300.0 * 86400.0));
  EXPECT_DOUBLE_EQ(daly_interval_s(1000.0, 400.0), 400.0);
}

// Blocking checkpoints: the Monte Carlo's mean goodput is Daly's expected
// one, tau / (M e^(R/M) (e^((tau+delta)/M) - 1)), as the trials grow (the
// same process: exponential failures, also during restarts).
TEST(Goodput, MonteCarloMeetsDalysClosedForm) {
  // 1000 GPUs at 12 per 1000 GPU-days: 12 failures a day, one every 2 h.
  // 100 GB at 1 GB/s: a 100 s write and read; restart 10 + 0.5 min + 100 s.
  const FailureModel m = gpu_model(12.0, 1.0, 10.0, 0.5);
  GoodputOptions o;
  o.days = 30.0;
  o.trials = 2000;
  o.checkpoint_GB = 100.0;
  o.checkpoint_every = 90;  // 90 x 10 s = 15 min
  const GoodputReport r = simulate_goodput(m, gpus(1000), 10 * kSecond, 0.0, "", o);
  EXPECT_DOUBLE_EQ(r.mtbf_s, 7200.0);
  EXPECT_DOUBLE_EQ(r.write_s, 100.0);
  EXPECT_DOUBLE_EQ(r.restart_s, 630.0 + 100.0);
  const double closed = daly_ettr(900.0, 100.0, 730.0, 7200.0);
  EXPECT_NEAR(closed, 0.7581, 0.0001);  // by hand: 900 / (7200 x 1.10671 x 0.148997) = 900 / 1187.3
  // 30-day trials end mid-cycle; 2000 of them: within 0.5 points.
  EXPECT_NEAR(r.ettr.mean, closed, 0.005);
  EXPECT_NEAR(r.failures.mean, 12.0 * 30.0, 12.0 * 30.0 * 0.01);
  // The four parts make the wall time.
  EXPECT_NEAR(r.productive_h + r.checkpoint_h + r.lost_h + r.restart_h, 30.0 * 24.0, 1e-6);
  for (const GoodputTrial& t : r.per_trial) {
    EXPECT_EQ(t.productive_ns + t.checkpoint_ns + t.lost_ns + t.restart_ns, 30LL * 86400 * 1'000'000'000);
    EXPECT_EQ(t.productive_ns, t.iterations * 10'000'000'000LL + t.productive_ns % 10'000'000'000LL);
  }
}

// Without failures: checkpoint every tau, write delta, so the goodput is
// tau / (tau + delta) to the nanosecond (the run ending on a cycle).
TEST(Goodput, WithoutFailuresOnlyCheckpointsCost) {
  const FailureModel m = gpu_model(0.0, 10.0, 5.0, 1.0);
  GoodputOptions o;
  o.days = 1.0;
  o.trials = 3;
  o.checkpoint_GB = 200.0;  // 20 s
  o.checkpoint_every = 118;  // 118 x 5 s = 590 s; + 20 = 610 s; 86400 / 610 = 141.6 cycles
  const GoodputReport r = simulate_goodput(m, gpus(8), 5 * kSecond, 0.0, "", o);
  EXPECT_TRUE(std::isinf(r.mtbf_s));
  ASSERT_EQ(r.per_trial.size(), 3u);
  const GoodputTrial& t = r.per_trial[0];
  EXPECT_EQ(t.failures, 0);
  EXPECT_EQ(t.checkpoints, 141);
  // 141 cycles (86010 s), then 390 s of computing: 78 more iterations.
  EXPECT_EQ(t.iterations, 141 * 118 + 78);
  EXPECT_EQ(t.checkpoint_ns, 141LL * 20'000'000'000);
  EXPECT_EQ(t.productive_ns, 86400LL * 1'000'000'000 - 141LL * 20'000'000'000);
  EXPECT_DOUBLE_EQ(r.ettr.mean, (86400.0 - 141 * 20.0) / 86400.0);
  EXPECT_DOUBLE_EQ(r.daly_ettr, 590.0 / 610.0);
}

// Asynchronous writes: training does not wait, and a failure within a write
// of the last checkpoint falls back to the one before. Kokolis et al. (arXiv
// 2410.21680; their first-order model, quoted in docs/goodput.md): a 16,000-GPU
// job on RSC-1 (6.5 failures per 1000 node-days, 2,000 nodes) with a
// 5-minute restart and non-blocking writes reaches an expected ETTR of
// about 0.7 at a 60-minute interval and 0.93 at 5 minutes.
TEST(Goodput, AsynchronousCheckpointsAndKokolisScenario) {
  FailureModel m = gpu_model(0.0, 1000.0, 0.0, 5.0, true);
  m.per_1000_days = {0.0, 6.5, 0.0, 0.0};
  JobComponents c;
  c.count = {16000, 2000, 0, 0};
  GoodputOptions o;
  o.days = 30.0;
  o.trials = 500;
  o.checkpoint_GB = 1.0;  // a 1 ms write: the checkpoint counts at once
  o.checkpoint_every = 360;  // 360 x 10 s = 60 min
  const GoodputReport hourly = simulate_goodput(m, c, 10 * kSecond, 0.0, "", o);
  EXPECT_NEAR(hourly.mtbf_s / 3600.0, 24.0 / 13.0, 1e-9);
  EXPECT_NEAR(hourly.first_order_ettr, 0.684, 0.001);
  EXPECT_NEAR(hourly.ettr.mean, 0.7, 0.03);
  EXPECT_TRUE(std::isnan(hourly.daly_ettr));
  EXPECT_EQ(hourly.checkpoint_h, 0.0);
  o.checkpoint_every = 30;  // 5 min
  const GoodputReport often = simulate_goodput(m, c, 10 * kSecond, 0.0, "", o);
  EXPECT_NEAR(often.first_order_ettr, 0.932, 0.001);
  EXPECT_NEAR(often.ettr.mean, 0.93, 0.01);
  // A failure within a write loses the cycle before: with 2 iterations per
  // checkpoint and a write of 15 s (1.5 iterations), the loss grows.
  o.checkpoint_GB = 15000.0;
  o.checkpoint_every = 2;
  const GoodputReport slow = simulate_goodput(m, c, 10 * kSecond, 0.0, "", o);
  EXPECT_LT(slow.ettr.mean, simulate_goodput(m, c, 10 * kSecond, 0.0, "", [&] {
                                GoodputOptions q = o;
                                q.checkpoint_GB = 1.0;
                                return q;
                              }()).ettr.mean);
  o.checkpoint_every = 1;  // 10 s between writes of 15 s: refused
  EXPECT_THROW(simulate_goodput(m, c, 10 * kSecond, 0.0, "", o), InputError);
}

TEST(Goodput, SameSeedSameNumbersOtherSeedOthers) {
  const FailureModel m = gpu_model(12.0, 1.0, 10.0, 0.5);
  GoodputOptions o;
  o.days = 10.0;
  o.trials = 50;
  o.checkpoint_GB = 100.0;
  const GoodputReport a = simulate_goodput(m, gpus(1000), 10 * kSecond, 0.0, "", o);
  const GoodputReport b = simulate_goodput(m, gpus(1000), 10 * kSecond, 0.0, "", o);
  EXPECT_EQ(a.ettr.mean, b.ettr.mean);
  EXPECT_EQ(a.failures.mean, b.failures.mean);
  o.seed = 2;
  const GoodputReport c = simulate_goodput(m, gpus(1000), 10 * kSecond, 0.0, "", o);
  EXPECT_NE(a.ettr.mean, c.ettr.mean);
  // auto: Daly's interval in whole iterations.
  EXPECT_TRUE(a.every_auto);
  EXPECT_EQ(a.every, std::llround(daly_interval_s(100.0, 7200.0) / 10.0));
}

TEST(Goodput, RefusesWhatCannotRun) {
  const FailureModel m = gpu_model(12.0, 1.0, 10.0, 0.5);
  GoodputOptions o;
  o.days = 1.0;
  o.checkpoint_GB = 100.0;
  const auto refuses = [&](GoodputOptions q, const std::string& part, double state_bytes = 0.0) {
    try {
      simulate_goodput(m, gpus(1000), 10 * kSecond, state_bytes, "", q);
      ADD_FAILURE() << "accepted; expected: " << part;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  GoodputOptions q = o;
  q.days = 0.0;
  refuses(q, "--days");
  q.days = std::nan("");
  refuses(q, "--days");
  q = o;
  q.trials = 0;
  refuses(q, "--trials");
  q = o;
  q.checkpoint_every = 0;
  refuses(q, "--checkpoint-every");
  q = o;
  q.checkpoint_GB.reset();
  refuses(q, "--checkpoint-GB");
  // A write as long as the time between failures: no checkpoint would be written.
  q = o;
  q.checkpoint_GB = 7200.0;
  refuses(q, "test.yaml: failures_per_1000_days: the job's mean time between failures (7200 s on 1000 GPUs)");
  // Too many failures to draw.
  FailureModel busy = gpu_model(1e6, 1e9, 0.0, 0.0);
  q = o;
  q.trials = 1000;
  try {
    simulate_goodput(busy, gpus(1'000'000), 10 * kSecond, 0.0, "", q);
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("interruptions to draw"), std::string::npos) << e.what();
  }
}

// The components of a job on a platform: GPUs, the node dimension's nodes,
// and a NIC and a scale-out link per GPU when there are several nodes.
TEST(Goodput, ComponentsComeFromThePlatform) {
  PlatformConfig p = load_preset(*preset_registry().find("hgx-h100"));
  set_nodes(p, 2048, "--nodes");
  EXPECT_EQ(job_components(p).count, (std::array<long long, 4>{16384, 2048, 16384, 16384}));
  set_nodes(p, 1, "--nodes");
  EXPECT_EQ(job_components(p).count, (std::array<long long, 4>{8, 1, 0, 0}));
}

// The built-in model is Llama 3's Table 5 (arXiv 2407.21783): on the same
// 16,384 GPUs over the same 54 days it expects the 419 unexpected
// interruptions it was derived from and the 47 planned ones (less those
// that fall in a restart, which they do not interrupt), and with Tectonic's
// 2 TB/s and MegaScale's restart times, Llama 3 405B's model state
// checkpointed at Daly's interval gives "higher than 90% effective
// training time". Daly's closed form counts failures only; each planned
// interruption costs a write and a restart more.
TEST(Goodput, Llama3FailureCountAndEffectiveTrainingTime) {
  const FailureModel m = load_failure_model("default");
  EXPECT_EQ(m.name, "meta-llama3");
  long long total = 0;
  for (const FailureCause& c : m.causes) total += c.count;
  EXPECT_EQ(total, 419);
  EXPECT_EQ(m.causes.size(), 18u);
  PlatformConfig p = load_preset(*preset_registry().find("hgx-h100"));
  set_nodes(p, 2048, "--nodes");
  GoodputOptions o;
  o.days = 54.0;
  o.trials = 1000;
  // 405.85e9 parameters x 14 B; the step Meta's 400 TFLOP/s per GPU gives (6.753 s).
  const GoodputReport r = simulate_goodput(m, job_components(p), 6'753'000'000'000, 405.85e9 * 14.0, "model state", o);
  EXPECT_NEAR(r.failures_per_day[0] + r.failures_per_day[1] + r.failures_per_day[2] + r.failures_per_day[3], 419.0 / 54.0, 1e-9);
  EXPECT_NEAR(r.failures.mean, 419.0, 419.0 * 0.01);
  EXPECT_NEAR(r.failures_by_class[0], 268.0, 268.0 * 0.02);
  EXPECT_DOUBLE_EQ(r.planned_per_day, 47.0 / 54.0);
  const double restarting = r.restart_h / (r.productive_h + r.checkpoint_h + r.lost_h + r.restart_h);
  EXPECT_NEAR(r.planned, 47.0 * (1.0 - restarting), 47.0 * 0.02);
  EXPECT_NEAR(r.planned + r.failures.mean, 466.0, 466.0 * 0.01);
  EXPECT_GT(r.ettr.p5, 0.90);
  EXPECT_NEAR(r.ettr.mean, 0.917, 0.005);
  const double planned_cost = r.planned_per_day * (r.restart_s + r.write_s) / 86400.0;
  EXPECT_NEAR(r.ettr.mean, r.daly_ettr - planned_cost, 0.003);
}

// Planned interruptions alone: each costs a checkpoint write and a restart
// and loses no work (whole iterations): a renewal process whose goodput is
// the mean running time over it plus the downtime.
TEST(Goodput, PlannedInterruptionsCostAWriteAndARestart) {
  FailureModel m = parse_failure_model(
      "failures_per_1000_days: {gpu: 0}\nplanned_per_day: 2\nstorage: {write_GBps: 1}\nrestart: {requeue_minutes: 30, init_minutes: 0}\n",
      "planned.yaml");
  EXPECT_DOUBLE_EQ(m.planned_per_day, 2.0);
  JobComponents c;
  c.count = {8, 1, 0, 0};
  GoodputOptions o;
  o.days = 100.0;
  o.trials = 400;
  o.checkpoint_every = 1'000'000'000;  // never, but for the planned ones
  o.checkpoint_GB = 60.0;              // 60 s to write, 60 s to read
  const GoodputReport r = simulate_goodput(m, c, 1'000'000'000, 0.0, "", o);  // 1 ms iterations
  EXPECT_EQ(r.failures.mean, 0.0);
  // A renewal process: running for 1/rate on average (12 h), then down for
  // a write and a restart (60 + 1860 s), in which further ones are absorbed.
  const double run_s = 86400.0 / 2.0;
  const double down_s = 60.0 + 1860.0;
  EXPECT_NEAR(r.planned, 100.0 * 86400.0 / (run_s + down_s), 2.0);
  EXPECT_NEAR(r.ettr.mean, run_s / (run_s + down_s), 0.001);
  EXPECT_NEAR(r.lost_h, 0.0, 0.01);
  EXPECT_THROW(parse_failure_model("observed: {days: 10, gpus: 8, planned: 3, causes: [{cause: x, class: gpu, count: 1}]}\nplanned_per_day: 1\n"
                                   "storage: {write_GBps: 1}\nrestart: {requeue_minutes: 1, init_minutes: 0}\n", "both.yaml"),
               InputError);
  const FailureModel counted = parse_failure_model(
      "observed: {days: 10, gpus: 8, planned: 3, causes: [{cause: x, class: gpu, count: 1}]}\n"
      "storage: {write_GBps: 1}\nrestart: {requeue_minutes: 1, init_minutes: 0}\n", "counted.yaml");
  EXPECT_DOUBLE_EQ(counted.planned_per_day, 0.3);
}

}  // namespace
}  // namespace acesim
