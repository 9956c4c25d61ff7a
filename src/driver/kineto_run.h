// One replay of a PyTorch profiler trace on a platform: what `acesim run
// --kineto PATH` reports (docs/workloads.md, "Replaying a PyTorch profiler
// trace"). The job is the trace's world size (1 without distributed
// information) on the platform's first GPUs; every rank replays the one
// trace given; each ProfilerStep is reported measured and replayed.
#pragma once

#include <string>
#include <vector>

#include "config/platform.h"
#include "engine/progress.h"
#include "workload/formats/kineto_replay.h"
#include "workload/formats/kineto_trace.h"

namespace acesim {

struct KinetoRunOptions {
  bool simulate_comm = true;  // NCCL kernels as collectives on the platform (else their measured durations)
  Progress progress;
};

struct KinetoStepRecord {
  long long number = 0;
  TimePs measured_ps = 0;  // the ProfilerStep annotation's span in the trace
  TimePs replayed_ps = 0;  // the same span in the replay (rank 0)
  double error() const { return measured_ps > 0 ? static_cast<double>(replayed_ps) / static_cast<double>(measured_ps) - 1.0 : 0.0; }
};

struct KinetoReport {
  std::string file, platform, executor, device;
  long long job_ranks = 1, npus = 1;
  bool simulate_comm = true;
  std::vector<KinetoStepRecord> steps;
  TimePs total_ps = 0;  // the replay's end (rank 0's last node)
  KinetoReplay counts;  // the graph's counts (its graph emptied)
  std::size_t collectives = 0;
  // Rank 0's GPU activities whose replayed start is within 1 us of the
  // measured one (counting from the first launch), and the largest gap.
  long long activities = 0, activities_on_time = 0;
  TimePs largest_start_gap_ps = 0;
  // Rank 0's NCCL kernels over the whole trace: their traced time, and the
  // time they took in the replay (simulated collectives: issue to end).
  TimePs comm_measured_ps = 0, comm_replayed_ps = 0;
  std::uint64_t events = 0;
};

// Throws InputError for a platform with fewer GPUs than the job.
KinetoReport run_kineto(const PlatformConfig& platform, const kineto::Trace& trace, const KinetoRunOptions& options);

}  // namespace acesim
