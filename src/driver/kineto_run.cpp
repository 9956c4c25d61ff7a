#include "driver/kineto_run.h"

#include <algorithm>

#include <fmt/format.h>

#include "config/input_error.h"
#include "engine/simulation.h"
#include "platform/platform_instance.h"
#include "workload/graph/graph_executor.h"

namespace acesim {

KinetoReport run_kineto(const PlatformConfig& platform, const kineto::Trace& trace, const KinetoRunOptions& options) {
  long long npus = 1;
  for (const DimensionSpec& d : platform.dims) npus *= d.npus;
  const long long job = std::max(1, trace.world_size);
  if (npus < job) {
    throw InputError(fmt::format("{}: the trace's job has {} ranks (distributedInfo.world_size), but the platform has {} GPUs",
                                 trace.file, job, npus));
  }
  options.progress.stage("building");
  KinetoReplayOptions ro;
  ro.simulate_comm = options.simulate_comm;
  ro.job_ranks = job;
  KinetoReplay replay = kineto_replay(trace, ro);
  WorkGraph idle;
  idle.finish();
  PlatformInstance pi(platform, false);
  std::vector<const WorkGraph*> graphs(static_cast<std::size_t>(pi.collectives.simulated_ranks()), &idle);
  for (long long r = 0; r < job; ++r) graphs[static_cast<std::size_t>(r)] = &replay.graph;
  GraphRunOptions gro;
  gro.keep_ranks = 1;
  GraphExecutor ex(pi.sim, pi.topology, *pi.network, pi.collectives, pi.endpoints, graphs, gro);
  run_graphs(pi.sim, ex, options.progress);
  pi.endpoints.settle();

  KinetoReport rep;
  rep.file = trace.file;
  rep.platform = platform.source;
  rep.executor = platform.npu.executor;
  rep.device = trace.device_name;
  rep.job_ranks = job;
  rep.npus = npus;
  rep.simulate_comm = options.simulate_comm;
  rep.total_ps = ex.finish_ps();
  rep.collectives = ex.collectives_created().size();
  rep.events = pi.sim.stats().events + pi.sim.stats().completions;
  const std::vector<NodeTiming>& timing = ex.timings(0);
  for (std::size_t k = 0; k + 1 < replay.anchors.size(); ++k) {
    KinetoStepRecord s;
    s.number = replay.step_numbers[k];
    s.measured_ps = (replay.anchor_measured_ns[k + 1] - replay.anchor_measured_ns[k]) * 1000;
    s.replayed_ps = timing[replay.anchors[k + 1]].end - timing[replay.anchors[k]].end;
    rep.steps.push_back(s);
  }
  for (std::size_t k = 0; k < trace.gpu.size(); ++k) {
    const TimePs measured = (trace.gpu[k].ts - replay.origin_ns) * 1000;
    const NodeTiming& nt = timing[replay.activity_nodes[k]];
    const TimePs gap = std::abs(nt.start - measured);
    if (trace.gpu[k].nccl) {
      rep.comm_measured_ps += trace.gpu[k].dur * 1000;
      rep.comm_replayed_ps += nt.end - nt.start;
    }
    ++rep.activities;
    if (gap <= 1'000'000) ++rep.activities_on_time;
    rep.largest_start_gap_ps = std::max(rep.largest_start_gap_ps, gap);
  }
  replay.graph = WorkGraph();
  rep.counts = std::move(replay);
  return rep;
}

}  // namespace acesim
