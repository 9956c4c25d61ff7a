#include "driver/kineto_run.h"

#include <algorithm>
#include <filesystem>
#include <cctype>

#include <fmt/format.h>

#include "config/input_error.h"
#include "engine/simulation.h"
#include "platform/platform_instance.h"
#include "workload/graph/graph_executor.h"

namespace acesim {
namespace {

void add_counts(KinetoReplay& to, const KinetoReplay& c) {
  to.kernels += c.kernels;
  to.copies += c.copies;
  to.sets += c.sets;
  to.side_stream_activities += c.side_stream_activities;
  to.collectives_simulated += c.collectives_simulated;
  to.collectives_measured += c.collectives_measured;
  for (const auto& [why, n] : c.measured_why) to.measured_why[why] += n;
  to.launches += c.launches;
  to.syncs += c.syncs;
  to.compute_waits += c.compute_waits;
  to.stream_waits += c.stream_waits;
  to.stream_waits_dropped += c.stream_waits_dropped;
  to.gaps += c.gaps;
  to.step_waits += c.step_waits;
  to.repairs += c.repairs;
}

// The rank a file's name gives (rank-N, rank_N or rankN, "rank" not after
// a letter), or -1.
long long rank_in_name(const std::string& name) {
  for (std::size_t at = name.find("rank"); at != std::string::npos; at = name.find("rank", at + 1)) {
    if (at > 0 && std::isalpha(static_cast<unsigned char>(name[at - 1]))) continue;
    std::size_t i = at + 4;
    if (i < name.size() && (name[i] == '-' || name[i] == '_')) ++i;
    const std::size_t digits = i;
    long long r = 0;
    while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])) && i - digits < 9) r = r * 10 + (name[i++] - '0');
    if (i > digits) return r;
  }
  return -1;
}

}  // namespace

std::vector<kineto::Trace> read_kineto_traces(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(fs::status(path, ec))) return {kineto::read_trace_file(path)};
  // Every .json / .json.gz entry is a trace and must be a regular file
  // (links followed); an entry that cannot be looked at (a symbolic link
  // that loops or leads nowhere) may be one: both are refused, naming it.
  // Other entries (a README, a subdirectory) are left alone.
  std::vector<std::string> files;
  fs::directory_iterator it(path, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const fs::path& p = it->path();
    const std::string name = p.filename().string();
    const bool trace = name.ends_with(".json") || name.ends_with(".json.gz");
    std::error_code entry_ec;
    const fs::file_status st = fs::status(p, entry_ec);
    if (entry_ec || (trace && !fs::is_regular_file(st))) {
      const std::string why = kineto::why_not_a_trace_file(p.string());
      throw InputError(p.string() + ": " + (why.empty() ? "cannot be read" : why));
    }
    if (trace) files.push_back(p.string());
  }
  if (ec) throw InputError(fmt::format("{}: cannot list the directory: {}", path, ec.message()));
  if (files.empty()) {
    throw InputError(path + ": a directory with no trace in it (.json or .json.gz files, one per rank; subdirectories are not searched)");
  }
  std::sort(files.begin(), files.end());
  std::vector<kineto::Trace> traces;
  for (const std::string& f : files) {
    traces.push_back(kineto::read_trace_file(f));
    const long long named = rank_in_name(fs::path(f).filename().string());
    if (named >= 0 && traces.back().rank >= 0 && named != traces.back().rank) {
      throw InputError(fmt::format("{}: the name says rank {}, but distributedInfo.rank is {}", f, named, traces.back().rank));
    }
  }
  return traces;
}

KinetoClocks align_kineto_clocks(const std::vector<kineto::Trace>& traces) {
  KinetoClocks c;
  if (traces.size() < 2) return c;
  const bool steps = !traces.front().steps.empty();
  c.basis = steps ? "first ProfilerStep" : "first launch";
  kineto::Ns lead = 0;  // the most any rank's replay runs before its aligned instant
  std::vector<kineto::Ns> origin;
  for (const kineto::Trace& t : traces) {
    origin.push_back(kineto_replay_origin(t));
    c.aligned.push_back(steps && !t.steps.empty() ? t.steps.front().ts : origin.back());
    lead = std::max(lead, c.aligned.back() - origin.back());
  }
  for (std::size_t i = 0; i < traces.size(); ++i) c.start.push_back(c.aligned[i] - lead);
  return c;
}

KinetoReport run_kineto(const PlatformConfig& platform, const std::vector<kineto::Trace>& traces, const KinetoRunOptions& options) {
  const KinetoJob job(traces, platform, options.job);
  options.progress.stage("building");
  // Traced ranks in job order.
  std::vector<std::size_t> order(traces.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return job.job_rank(a) < job.job_rank(b); });
  KinetoReplayOptions ro;
  ro.simulate_comm = options.simulate_comm;
  ro.job_ranks = job.traced_world();
  ro.group_gpus = [&job](const std::vector<int>& ranks, const std::string& name) { return job.group_gpus(ranks, name); };
  const KinetoClocks clocks = align_kineto_clocks(traces);
  std::vector<KinetoReplay> replays;
  replays.reserve(traces.size());
  std::vector<Rank> reps;
  for (std::size_t i : order) {
    if (!clocks.start.empty()) ro.start_ns = clocks.start[i];
    replays.push_back(kineto_replay(traces[i], ro));
    reps.push_back(job.gpu(job.job_rank(i)));
  }
  std::vector<Rank> sorted_reps = reps;
  std::sort(sorted_reps.begin(), sorted_reps.end());
  WorkGraph idle;
  idle.finish();
  PlatformInstance pi(platform, sorted_reps);
  std::vector<const WorkGraph*> graphs(static_cast<std::size_t>(pi.topology.num_npus()), &idle);
  for (std::size_t k = 0; k < replays.size(); ++k) graphs[static_cast<std::size_t>(reps[k])] = &replays[k].graph;
  GraphRunOptions gro;
  gro.keep_ranks = sorted_reps.back() + 1;
  GraphExecutor ex(pi.sim, pi.topology, *pi.network, pi.collectives, pi.endpoints, graphs, gro);
  run_graphs(pi.sim, ex, options.progress);
  pi.endpoints.settle();

  KinetoReport rep;
  rep.file = traces[order.front()].file;
  rep.platform = platform.source;
  rep.executor = platform.npu.executor;
  rep.device = traces[order.front()].device_name;
  rep.job_ranks = job.world();
  rep.traced_world = job.traced_world();
  rep.npus = job.npus();
  rep.one_for_all = job.one_for_all();
  rep.placement = job.placement();
  rep.assumptions = job.assumptions();
  rep.clock_alignment = clocks.basis;
  rep.simulate_comm = options.simulate_comm;
  rep.total_ps = ex.finish_ps();
  rep.collectives = ex.collectives_created().size();
  rep.events = pi.sim.stats().events + pi.sim.stats().completions;
  for (std::size_t k = 0; k < replays.size(); ++k) {
    const kineto::Trace& trace = traces[order[k]];
    KinetoReplay& replay = replays[k];
    const std::vector<NodeTiming>& timing = ex.timings(reps[k]);
    KinetoRankRecord rr;
    rr.file = trace.file;
    rr.rank = job.job_rank(order[k]);
    rr.gpu = reps[k];
    if (!clocks.aligned.empty()) rr.clock_offset_ns = clocks.aligned[order[k]] - clocks.aligned[order.front()];
    for (std::size_t s = 0; s + 1 < replay.anchors.size(); ++s) {
      KinetoStepRecord step;
      step.number = replay.step_numbers[s];
      step.measured_ps = (replay.anchor_measured_ns[s + 1] - replay.anchor_measured_ns[s]) * 1000;
      step.replayed_ps = timing[replay.anchors[s + 1]].end - timing[replay.anchors[s]].end;
      rr.steps.push_back(step);
    }
    const bool keep = static_cast<int>(k) < options.timeline_ranks;
    KinetoTimeline tl;
    if (keep) {
      tl.rank = rr.rank;
      tl.gpu = rr.gpu;
      tl.names = trace.names;
      tl.step_numbers = replay.step_numbers;
      for (std::size_t a = 0; a < replay.anchors.size(); ++a) {
        tl.measured_anchors.push_back((replay.anchor_measured_ns[a] - replay.origin_ns) * 1000);
        tl.replayed_anchors.push_back(timing[replay.anchors[a]].end);
      }
    }
    for (std::size_t a = 0; a < trace.gpu.size(); ++a) {
      const kineto::GpuActivity& act = trace.gpu[a];
      const TimePs measured = (act.ts - replay.origin_ns) * 1000;
      const NodeTiming& nt = timing[replay.activity_nodes[a]];
      const TimePs gap = std::abs(nt.start - measured);
      if (act.nccl) {
        rep.comm_measured_ps += act.dur * 1000;
        rep.comm_replayed_ps += nt.end - nt.start;
      }
      ++rep.activities;
      if (gap <= 1'000'000) ++rep.activities_on_time;
      rep.largest_start_gap_ps = std::max(rep.largest_start_gap_ps, gap);
      if (keep) tl.spans.push_back({act.name, act.device, act.stream, act.nccl, measured, measured + act.dur * 1000, nt.start, nt.end});
    }
    if (keep) rep.timelines.push_back(std::move(tl));
    replay.graph = WorkGraph();
    if (k == 0) {
      rep.counts = replay;
    } else {
      add_counts(rep.counts, replay);
    }
    rr.counts = std::move(replay);
    rep.ranks.push_back(std::move(rr));
  }
  // The job's steps: each step's slowest traced rank.
  rep.steps = rep.ranks.front().steps;
  for (const KinetoRankRecord& rr : rep.ranks) {
    for (std::size_t s = 0; s < rep.steps.size() && s < rr.steps.size(); ++s) {
      rep.steps[s].measured_ps = std::max(rep.steps[s].measured_ps, rr.steps[s].measured_ps);
      rep.steps[s].replayed_ps = std::max(rep.steps[s].replayed_ps, rr.steps[s].replayed_ps);
    }
  }
  return rep;
}

}  // namespace acesim
