// One replay of PyTorch profiler traces on a platform: what `acesim run
// --kineto PATH` reports (docs/workloads.md, "Replaying a PyTorch profiler
// trace"). The job is laid out by KinetoJob (kineto_job.h): the traces'
// world size, or wider with --dp, on the platform's GPUs as placed. The
// traced ranks are simulated, each replaying its own trace (one trace:
// its rank stands for every rank); every collective they take part in runs
// whole on its members' links, and groups with no traced rank are taken to
// run alike on links of their own (docs/performance.md, "Symmetry"). Each
// ProfilerStep is reported measured and replayed.
#pragma once

#include <string>
#include <vector>

#include "config/platform.h"
#include "driver/kineto_job.h"
#include "engine/progress.h"
#include "workload/formats/kineto_replay.h"
#include "workload/formats/kineto_trace.h"

namespace acesim {

struct KinetoRunOptions {
  bool simulate_comm = true;  // NCCL kernels as collectives on the platform (else their measured durations)
  KinetoJobOptions job;       // --dp, --placement
  int timeline_ranks = 0;     // traced ranks whose GPU activities the report keeps (for --trace)
  Progress progress;
};

struct KinetoStepRecord {
  long long number = 0;
  TimePs measured_ps = 0;  // the ProfilerStep annotation's span in the trace
  TimePs replayed_ps = 0;  // the same span in the replay
  double error() const { return measured_ps > 0 ? static_cast<double>(replayed_ps) / static_cast<double>(measured_ps) - 1.0 : 0.0; }
};

// One GPU activity of a kept rank, measured (from the trace's first launch)
// and replayed.
struct KinetoSpan {
  std::uint32_t name = 0;  // index into KinetoTimeline::names
  int device = 0;
  long long stream = 0;
  bool nccl = false;
  TimePs measured_start = 0, measured_end = 0, replayed_start = 0, replayed_end = 0;
};
struct KinetoTimeline {
  long long rank = 0;  // the job rank
  Rank gpu = 0;
  std::vector<std::string> names;
  std::vector<KinetoSpan> spans;
  // Each step's start and end, measured and replayed.
  std::vector<long long> step_numbers;
  std::vector<TimePs> measured_anchors, replayed_anchors;
};

struct KinetoRankRecord {
  std::string file;
  long long rank = 0;  // in the job
  Rank gpu = 0;
  // Its clock against the first traced rank's (KinetoReport::ranks[0]):
  // where its aligned instant (KinetoClocks) lies on its clock, less where
  // the first rank's lies on its own. 0 with one trace.
  kineto::Ns clock_offset_ns = 0;
  std::vector<KinetoStepRecord> steps;
  KinetoReplay counts;  // the graph's counts (its graph emptied)
};

struct KinetoReport {
  std::string file, platform, executor, device;
  long long job_ranks = 1, npus = 1, traced_world = 1;
  bool one_for_all = true;  // one trace stands for every rank
  std::string placement;
  std::vector<std::string> assumptions;
  std::string clock_alignment;  // KinetoClocks::basis
  bool simulate_comm = true;
  // The job's steps: each step's slowest traced rank, measured and replayed.
  std::vector<KinetoStepRecord> steps;
  std::vector<KinetoRankRecord> ranks;  // the traced ranks, by job rank
  TimePs total_ps = 0;  // the replay's end
  KinetoReplay counts;  // over the traced ranks (their graphs emptied)
  std::size_t collectives = 0;
  // The traced ranks' GPU activities whose replayed start is within 1 us of
  // the measured one (counting from the first launch), and the largest gap.
  long long activities = 0, activities_on_time = 0;
  TimePs largest_start_gap_ps = 0;
  // The traced ranks' NCCL kernels over the whole trace: their traced time,
  // and the time they took in the replay (simulated collectives: issue to end).
  TimePs comm_measured_ps = 0, comm_replayed_ps = 0;
  std::uint64_t events = 0;
  std::vector<KinetoTimeline> timelines;  // options.timeline_ranks of them
};

// Several ranks' traces each have their own host's clock. Their replays are
// aligned at the ranks' first ProfilerStep (the same step on every rank:
// KinetoJob checks), each replay starting so that those steps start
// together, which is when the last rank's work before its step is done;
// without ProfilerSteps, at their first launches (kineto_replay_origin).
// One trace keeps its own origin.
struct KinetoClocks {
  std::string basis;               // "first ProfilerStep" or "first launch"; "" for one trace
  std::vector<kineto::Ns> aligned;  // per trace: the instant aligned, on its clock
  std::vector<kineto::Ns> start;    // per trace: KinetoReplayOptions::start_ns
};
KinetoClocks align_kineto_clocks(const std::vector<kineto::Trace>& traces);

// Throws InputError for what KinetoJob refuses and what cannot be replayed.
KinetoReport run_kineto(const PlatformConfig& platform, const std::vector<kineto::Trace>& traces, const KinetoRunOptions& options);

// The traces --kineto PATH names: one file, or every .json / .json.gz file
// of a directory (one per rank). Throws InputError for a directory without
// traces, an entry named as a trace that is no regular file (a FIFO, a
// directory; links followed), an entry that is a symbolic link looping or
// leading nowhere, and a file whose name says one rank (rank-N, rank_N,
// rankN) but whose distributedInfo says another.
std::vector<kineto::Trace> read_kineto_traces(const std::string& path);

}  // namespace acesim
