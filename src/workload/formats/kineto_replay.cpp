// A PyTorch profiler trace as one rank's work graph (kineto_replay.h).
//
// kineto_replay takes four steps, each a function below: it picks the
// compute stream (find_compute_stream), finds each activity's launch
// (find_launches) and measures its latency and the trace's median
// (measure_latencies), merges the launches,
// synchronisations, event waits and records, and steps into one timeline
// (merge_timeline), and walks that timeline in time order building the
// graph (GraphBuilder: the CPU's chain, and at each launch the activity's
// dependencies, its launch delays and its node).
#include "workload/formats/kineto_replay.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include <fmt/format.h>

#include "config/input_error.h"
#include "workload/formats/format_registry.h"

namespace acesim {
namespace {

using kineto::GpuActivity;
using kineto::Ns;
using kineto::RuntimeCall;
using kineto::Trace;

constexpr Ns kQueuedNs = 1000;  // an activity starting within 1 us of its stream's previous end queued behind it

bool synchronises(std::string_view name) {
  return name == "cudaDeviceSynchronize" || name == "cudaStreamSynchronize" || name == "cudaEventSynchronize" ||
         name == "cudaMemcpy" || name == "cuCtxSynchronize" || name == "cuStreamSynchronize" || name == "cuEventSynchronize";
}

std::string short_name(const std::string& n) { return n.size() > 80 ? n.substr(0, 77) + "..." : n; }

using Stream = std::pair<int, long long>;  // (device, stream)

// The busiest stream (by the time of its non-NCCL work) is the compute
// stream; also counts the streams.
Stream find_compute_stream(const Trace& t, KinetoReplay& out) {
  std::map<Stream, Ns> busy;
  std::set<Stream> streams;
  for (const GpuActivity& a : t.gpu) {
    streams.insert({a.device, a.stream});
    if (!a.nccl) busy[{a.device, a.stream}] += a.dur;
  }
  out.streams = static_cast<int>(streams.size());
  Stream main{t.gpu.front().device, t.gpu.front().stream};
  Ns most = -1;
  for (const auto& [s, ns] : busy) {
    if (ns > most) {
      most = ns;
      main = s;
    }
  }
  out.main_stream = main.second;
  return main;
}

// A launch that is not in the trace has no thread.
constexpr long long kNoThread = std::numeric_limits<long long>::min();

// Each activity's launching call and launch latency.
struct Launches {
  std::vector<std::size_t> launcher;               // per activity: its call (call() below)
  std::vector<Ns> latency;                         // per activity: from its call's start to its own, at least 0
  std::vector<std::vector<std::size_t>> launched;  // per call: the activities it launched
  // Calls i < Trace::runtime.size() are the trace's; after them, launches
  // that are not in it (kineto::Repairs::unlaunched): one per correlation no
  // call names, on no thread, at the traced start of its first activity or,
  // if earlier, at the launch of the first work after it on its stream (so
  // that the replay keeps stream order: an activity is added to its
  // stream's queue when its launch is reached).
  std::vector<RuntimeCall> outside;
  const RuntimeCall& call(const Trace& t, std::size_t i) const {
    return i < t.runtime.size() ? t.runtime[i] : outside[i - t.runtime.size()];
  }
};

// Each activity's launching call, and the launches not in the trace.
Launches find_launches(const Trace& t) {
  Launches l;
  std::unordered_map<long long, std::size_t> call_of;
  call_of.reserve(t.runtime.size());
  for (std::size_t i = 0; i < t.runtime.size(); ++i) call_of.emplace(t.runtime[i].correlation, i);
  l.launcher.resize(t.gpu.size());
  for (std::size_t k = 0; k < t.gpu.size(); ++k) {
    const GpuActivity& a = t.gpu[k];
    const auto traced = call_of.find(a.correlation);
    if (traced != call_of.end()) {
      l.launcher[k] = traced->second;
    } else {
      const auto [it, fresh] = call_of.try_emplace(a.correlation, t.runtime.size() + l.outside.size());
      if (fresh) {
        RuntimeCall c;
        c.ts = a.ts;
        c.correlation = a.correlation;
        c.tid = kNoThread;
        l.outside.push_back(c);
      }
      l.launcher[k] = it->second;
    }
  }
  if (!l.outside.empty()) {
    // Backwards: per stream, the earliest launch of the work after.
    std::map<Stream, Ns> next_launch;
    for (std::size_t k = t.gpu.size(); k-- > 0;) {
      const GpuActivity& a = t.gpu[k];
      const auto next = next_launch.find({a.device, a.stream});
      Ns at = 0;
      if (l.launcher[k] < t.runtime.size()) {
        at = t.runtime[l.launcher[k]].ts;
      } else {
        RuntimeCall& c = l.outside[l.launcher[k] - t.runtime.size()];
        c.ts = std::min(c.ts, next == next_launch.end() ? a.ts : std::min(a.ts, next->second));
        at = c.ts;
      }
      next_launch[{a.device, a.stream}] = next == next_launch.end() ? at : std::min(next->second, at);
    }
  }
  l.launched.resize(t.runtime.size() + l.outside.size());
  for (std::size_t k = 0; k < t.gpu.size(); ++k) l.launched[l.launcher[k]].push_back(k);
  return l;
}

// An activity launched while the work it waits for (its stream's previous
// activity, or a dependency across streams) was still to end queued behind
// it: that end, and the GPU's gap after it, set its start, and its own
// latency is unknown; the trace's median stands for it, over the
// activities nothing ended before on their device between their launch and
// their start (the GPU took them as launched). An activity whose launch is
// not in the trace (Launches::outside) takes as latency what lies between
// that launch and its traced start, so that it starts there, and none is
// counted in the median. Sets out.median_launch_latency.
void measure_latencies(const Trace& t, Launches& l, KinetoReplay& out) {
  l.latency.assign(t.gpu.size(), 0);
  // Per device, the ends of its activities so far (any stream).
  std::map<int, std::multiset<Ns>> ends;
  std::vector<Ns> free_latencies;
  for (std::size_t k = 0; k < t.gpu.size(); ++k) {
    const GpuActivity& a = t.gpu[k];
    const Ns launched_at = l.call(t, l.launcher[k]).ts;
    l.latency[k] = std::max<Ns>(0, a.ts - launched_at);
    std::multiset<Ns>& e = ends[a.device];
    const auto between = e.lower_bound(launched_at);
    if (l.launcher[k] < t.runtime.size() && (between == e.end() || *between > a.ts)) free_latencies.push_back(l.latency[k]);
    e.insert(a.ts + a.dur);
  }
  if (!free_latencies.empty()) {
    std::nth_element(free_latencies.begin(), free_latencies.begin() + static_cast<std::ptrdiff_t>(free_latencies.size() / 2),
                     free_latencies.end());
    out.median_launch_latency = free_latencies[free_latencies.size() / 2];
  }
}

// One point of the merged launch timeline, in time order.
struct Point {
  enum Kind : std::uint8_t { kStepStart, kLaunch, kSync, kWaitEvent, kRecord, kEnd } kind;
  Ns ts = 0;
  std::size_t index = 0;  // kLaunch / kSync / kWaitEvent / kRecord: the runtime call; kStepStart: the step
};

struct Timeline {
  std::vector<Point> points;  // in time order, the run's end last
  // The trace's Stream Wait Events by their cudaStreamWaitEvent call and by
  // their cudaEventRecord call (indices into Trace::stream_waits).
  std::unordered_map<long long, std::vector<std::size_t>> waits_of_call, waits_of_record;
};

// The merged timeline: launches (the trace's, and those not in it),
// synchronisations, waits on events, event records a wait names, steps, and
// the end (the last step's, or where both the CPU and the GPU are done).
Timeline merge_timeline(const Trace& t, const Launches& l) {
  Timeline tl;
  for (std::size_t w = 0; w < t.stream_waits.size(); ++w) {
    tl.waits_of_call[t.stream_waits[w].correlation].push_back(w);
    tl.waits_of_record[t.stream_waits[w].record_correlation].push_back(w);
  }
  std::vector<Point>& points = tl.points;
  // Launches not in the trace go first among points of one time.
  for (std::size_t j = 0; j < l.outside.size(); ++j) points.push_back({Point::kLaunch, l.outside[j].ts, t.runtime.size() + j});
  for (std::size_t i = 0; i < t.runtime.size(); ++i) {
    const std::string& name = t.name_of(t.runtime[i].name);
    if (!l.launched[i].empty()) {
      points.push_back({Point::kLaunch, t.runtime[i].ts, i});
    } else if (synchronises(name)) {
      points.push_back({Point::kSync, t.runtime[i].ts, i});
    } else if (name == "cudaStreamWaitEvent" || name == "cuStreamWaitEvent" || tl.waits_of_call.contains(t.runtime[i].correlation)) {
      points.push_back({Point::kWaitEvent, t.runtime[i].ts, i});
    } else if (tl.waits_of_record.contains(t.runtime[i].correlation)) {
      points.push_back({Point::kRecord, t.runtime[i].ts, i});
    }
  }
  for (std::size_t s = 0; s < t.steps.size(); ++s) points.push_back({Point::kStepStart, t.steps[s].ts, s});
  Ns last_gpu_end = 0;
  for (const GpuActivity& a : t.gpu) last_gpu_end = std::max(last_gpu_end, a.ts + a.dur);
  Ns last_call_end = 0;
  for (const RuntimeCall& r : t.runtime) last_call_end = std::max(last_call_end, r.ts + r.dur);
  const Ns end_ts = t.steps.empty() ? std::max(last_gpu_end, last_call_end) : t.steps.back().ts + t.steps.back().dur;
  points.push_back({Point::kEnd, end_ts, 0});
  std::stable_sort(points.begin(), points.end(), [](const Point& a, const Point& b) { return a.ts < b.ts; });
  return tl;
}

// The collective a NCCL kernel stands for, or nullopt (its measured
// duration) with the reason counted in `out`. Throws InputError for a group
// with ranks outside the job.
std::optional<CollectiveSpec> collective_of(const Trace& t, const KinetoReplayOptions& o, const GpuActivity& a, KinetoReplay& out) {
  const auto measured = [&](const std::string& why) {
    ++out.collectives_measured;
    ++out.measured_why[why];
    return std::nullopt;
  };
  if (!o.simulate_comm) return measured("communication kept at its measured duration");
  if (!a.collective) return measured("the kernel's arguments do not name its collective (a PyTorch before 2.1)");
  const kineto::Collective& c = *a.collective;
  const std::optional<CollectiveOp> op = kineto_collective_op(c.name);
  if (!op) return measured(fmt::format("collective '{}' is not simulated", c.name));
  const int bytes = kineto_dtype_bytes(c.dtype);
  const long long elements = *op == CollectiveOp::kAllGather ? c.out_elements : c.in_elements;
  if (bytes == 0 || elements < 0) return measured(bytes == 0 ? fmt::format("dtype '{}' has no known size", c.dtype) : "no message size");
  std::vector<int> ranks = c.group_ranks;
  if (ranks.empty()) {
    for (const kineto::ProcessGroup& pg : t.groups) {
      if (pg.name == c.group_name) ranks = pg.ranks;
    }
  }
  if (ranks.empty() && c.group_size > 0 && c.group_size == o.job_ranks) {
    for (long long r = 0; r < o.job_ranks; ++r) ranks.push_back(static_cast<int>(r));  // the whole job
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  if (ranks.empty()) return measured("its group's ranks are not in the trace");
  for (int r : ranks) {
    if (r >= o.job_ranks) {
      throw InputError(fmt::format("{}: event '{}' at ts {:.3f}: its group names rank {}, but the job has {} ranks", t.file,
                                   short_name(t.name_of(a.name)), static_cast<double>(a.ts) / 1e3, r, o.job_ranks));
    }
  }
  if (ranks.size() < 2) return measured("a group of one rank");
  CollectiveSpec spec;
  spec.op = *op;
  spec.bytes = static_cast<double>(elements) * bytes;
  spec.name = c.name;
  if (o.group_gpus) {
    spec.members = o.group_gpus(ranks, c.group_name);
  } else {
    spec.members.assign(ranks.begin(), ranks.end());
  }
  return spec;
}

// A node of the graph and the measured end of the activity it stands for.
struct Pending {
  std::uint32_t node;
  Ns end;
};

// What a GPU activity waits for: nodes, and which of them ended last as
// measured (what a queued activity waited for).
struct Deps {
  std::vector<std::uint32_t> nodes;
  std::size_t gating = 0;
  Ns gating_end = -1;
  void add(std::uint32_t node, Ns end) {
    nodes.push_back(node);
    if (end > gating_end) {
      gating = nodes.size() - 1;
      gating_end = end;
    }
  }
};

// Walks the timeline in time order: the CPU's chain of delays reaches each
// point, and each point does what its kind says (kineto_replay.h).
class GraphBuilder {
 public:
  // The replay's time 0 stands for `start` on the trace's clock, at or
  // before the first point.
  GraphBuilder(const Trace& t, const KinetoReplayOptions& o, KinetoReplay& out, const Launches& l, const Timeline& tl, Stream main,
               Ns start)
      : t_(t), o_(o), out_(out), g_(out.graph), l_(l), tl_(tl), main_(main), start_(start), release_(start),
        node_of_(t.gpu.size(), WorkGraph::kNone) {
    if (start > tl.points.front().ts) throw std::logic_error("kineto_replay: a start after the trace's first point");
  }

  void reach(const Point& p) {
    // The chain reaches the point: the CPU's own time since the last release.
    std::vector<std::uint32_t> deps = std::move(awaited_);
    awaited_.clear();
    if (chain_ != WorkGraph::kNone) deps.push_back(chain_);
    chain_ = delay(KinetoNodeRole::kCpu, p.ts - release_, deps);
    release_ = p.ts;
    switch (p.kind) {
      case Point::kStepStart: step_start(p); break;
      case Point::kEnd: end(p); break;
      case Point::kSync: synchronise(t_.runtime[p.index]); break;
      case Point::kRecord: record(t_.runtime[p.index]); break;
      case Point::kWaitEvent: wait_event(t_.runtime[p.index]); break;
      case Point::kLaunch: launch(p.index); break;
    }
  }

  // The run ends once the GPU is done too.
  void finish() {
    out_.activity_nodes = std::move(node_of_);
    out_.origin_ns = start_;
    std::vector<std::uint32_t> tail = std::move(awaited_);
    tail.push_back(chain_);
    for (const auto& [s, n] : last_on_stream_) tail.push_back(n);
    const std::uint32_t end = add(KinetoNodeRole::kEnd, WorkNodeKind::kNop, 0, tail);
    // Without ProfilerStep the iteration is the whole trace, to where both
    // the CPU and the GPU are done.
    if (t_.steps.empty()) out_.anchors.back() = end;
    g_.finish();
  }

 private:
  std::uint32_t add(KinetoNodeRole role, WorkNodeKind kind, std::uint32_t payload, std::span<const std::uint32_t> deps) {
    out_.roles.push_back(role);
    return g_.add_node(kind, payload, deps);
  }
  std::uint32_t delay(KinetoNodeRole role, Ns ns, std::span<const std::uint32_t> deps) {
    Kernel k;
    k.time_ps = std::max<Ns>(0, ns) * 1000;
    return add(role, WorkNodeKind::kDelay, g_.add_kernel(k), deps);
  }
  bool exact_waits() const { return !t_.stream_waits.empty(); }

  void step_start(const Point& p) {
    if (!exact_waits()) {
      step_waits_for_.insert(step_waits_for_.end(), nccl_this_step_.begin(), nccl_this_step_.end());
      nccl_this_step_.clear();
    }
    out_.anchors.push_back(chain_);
    out_.anchor_measured_ns.push_back(p.ts);
    out_.step_numbers.push_back(t_.steps[p.index].number);
  }

  void end(const Point& p) {
    if (out_.anchors.empty()) {  // no ProfilerStep: the whole trace is one iteration
      out_.anchors.push_back(0);
      out_.anchor_measured_ns.push_back(tl_.points.front().ts);
      out_.step_numbers.push_back(0);
    }
    out_.anchors.push_back(chain_);
    out_.anchor_measured_ns.push_back(p.ts);
  }

  // A synchronising call: what it waited for is, on each stream, the last
  // activity launched before it (or by it: a cudaMemcpy) that had ended when
  // the call returned; the next point waits for those, and the CPU's own
  // time resumes from when the last of them ended.
  void synchronise(const RuntimeCall& call) {
    ++out_.syncs;
    Ns done = call.ts;
    for (const auto& [s, n] : last_on_stream_) {
      const Ns e = last_end_on_stream_[s];
      if (e <= call.ts + call.dur) {
        awaited_.push_back(n);
        done = std::max(done, e);
      }
    }
    release_ = done;
  }

  // A cudaEventRecord a Stream Wait Event names: what it captured.
  void record(const RuntimeCall& call) {
    for (std::size_t w : tl_.waits_of_record.at(call.correlation)) {
      const kineto::StreamWait& sw = t_.stream_waits[w];
      const auto it = last_on_stream_.find({sw.device, sw.on_stream});
      if (it != last_on_stream_.end()) recorded_[sw.record_correlation] = {it->second, last_end_on_stream_[{sw.device, sw.on_stream}]};
    }
  }

  // A cudaStreamWaitEvent: with cuda_sync events, the waiting stream's next
  // activity waits for what the record captured; without them, the thread's
  // next compute launch waits for the NCCL kernel it launched last.
  void wait_event(const RuntimeCall& call) {
    if (exact_waits()) {
      if (const auto it = tl_.waits_of_call.find(call.correlation); it != tl_.waits_of_call.end()) {
        for (std::size_t w : it->second) {
          const kineto::StreamWait& sw = t_.stream_waits[w];
          if (const auto r = recorded_.find(sw.record_correlation); r != recorded_.end()) {
            stream_waits_for_[{sw.device, sw.stream}].push_back(r->second);
          }
        }
      }
      return;
    }
    const auto it = nccl_last_launched_by_.find(call.tid);
    if (it != nccl_last_launched_by_.end()) compute_waits_for_[call.tid] = it->second;
  }

  // A launch: its activities; a cudaMemcpy also synchronises. A launch that
  // is not in the trace is no CPU launch.
  void launch(std::size_t call) {
    const bool traced = call < t_.runtime.size();
    if (traced) ++out_.launches;
    const RuntimeCall& r = l_.call(t_, call);
    for (std::size_t k : l_.launched[call]) activity(k, r.tid);
    if (traced && synchronises(t_.name_of(r.name))) synchronise(r);
  }

  // What activity k waits for on the GPU: the activity before it on its
  // stream, and the waits across streams (exact, or inferred). Every wait
  // the measurement contradicts (the other work ended after it started) is
  // left out.
  Deps gpu_deps(const GpuActivity& a, const Stream& s, long long tid) {
    Deps d;
    if (const auto it = last_on_stream_.find(s); it != last_on_stream_.end()) d.add(it->second, last_end_on_stream_[s]);
    if (exact_waits()) {
      if (const auto it = stream_waits_for_.find(s); it != stream_waits_for_.end()) {
        for (const Pending& w : it->second) {
          if (w.end <= a.ts + kQueuedNs) {
            d.add(w.node, w.end);
            ++out_.stream_waits;
          }
        }
        stream_waits_for_.erase(it);
      }
    } else if (a.nccl) {
      // The compute-stream work launched before it that had ended when it started.
      for (auto it = main_nodes_.rbegin(); it != main_nodes_.rend(); ++it) {
        if (it->second <= a.ts + kQueuedNs) {
          d.add(it->first, it->second);
          break;
        }
      }
    } else if (s == main_) {
      for (const Pending& w : step_waits_for_) {
        if (w.end <= a.ts + kQueuedNs) {
          d.add(w.node, w.end);
          ++out_.step_waits;
        }
      }
      step_waits_for_.clear();
      if (const auto w = compute_waits_for_.find(tid); w != compute_waits_for_.end()) {
        if (a.ts + kQueuedNs >= w->second.end) {  // it did start after the collective ended
          d.add(w->second.node, w->second.end);
          ++out_.compute_waits;
        }
        compute_waits_for_.erase(w);
      }
    }
    return d;
  }

  // The launch's delays: a queued activity starts after what it waited for
  // by the gap the trace shows and takes at most the median latency; any
  // other its own measured latency, from the chain's launch point (one
  // whose launch is not in the trace: from there to its traced start).
  void add_launch_delays(Deps& d, std::size_t k) {
    const GpuActivity& a = t_.gpu[k];
    const std::uint32_t launch[1] = {chain_};
    const bool traced = l_.launcher[k] < t_.runtime.size();
    const bool queued = traced && d.gating_end >= 0 && t_.runtime[l_.launcher[k]].ts + out_.median_launch_latency <= d.gating_end;
    if (queued && a.ts > d.gating_end) {
      // The GPU's gap between the work it waited for and its start.
      const std::uint32_t from[1] = {d.nodes[d.gating]};
      d.nodes[d.gating] = delay(KinetoNodeRole::kLaunch, a.ts - d.gating_end, from);
      ++out_.gaps;
    }
    d.nodes.push_back(
        delay(KinetoNodeRole::kLaunch, queued ? std::min(l_.latency[k], out_.median_launch_latency) : l_.latency[k], launch));
  }

  // Activity k's node: a NCCL kernel as its collective (or its measured
  // duration), compute-stream work on the compute stream, other streams'
  // work as delays. An activity that started before the work ahead of it on
  // its stream ended (kineto::Repairs::overlapping) runs after it all the
  // same; the stream's measured end is then the later of the two.
  void activity(std::size_t k, long long tid) {
    const GpuActivity& a = t_.gpu[k];
    const Stream s{a.device, a.stream};
    Ns stream_end = a.ts + a.dur;
    if (const auto it = last_end_on_stream_.find(s); it != last_end_on_stream_.end()) stream_end = std::max(stream_end, it->second);
    Deps d = gpu_deps(a, s, tid);
    add_launch_delays(d, k);
    Kernel measured;
    measured.time_ps = a.dur * 1000;
    std::uint32_t n = WorkGraph::kNone;
    if (a.nccl) {
      const std::optional<CollectiveSpec> c = collective_of(t_, o_, a, out_);
      if (c && c->members.size() < 2) {
        // The job's layout left the group one rank (--dp 1): nothing moves.
        ++out_.collectives_simulated;
        n = add(KinetoNodeRole::kComm, WorkNodeKind::kDelay, g_.add_kernel(Kernel{}), d.nodes);
      } else if (c) {
        ++out_.collectives_simulated;
        n = add(KinetoNodeRole::kComm, WorkNodeKind::kCollective, g_.add_collective(*c), d.nodes);
      } else {
        n = add(KinetoNodeRole::kComm, WorkNodeKind::kDelay, g_.add_kernel(measured), d.nodes);
      }
      nccl_last_launched_by_[tid] = {n, a.ts + a.dur};
      if (!exact_waits()) nccl_this_step_.push_back({n, a.ts + a.dur});
    } else {
      nccl_last_launched_by_.erase(tid);
      if (a.kind == kineto::GpuKind::kKernel) ++out_.kernels;
      if (a.kind == kineto::GpuKind::kMemcpy) ++out_.copies;
      if (a.kind == kineto::GpuKind::kMemset) ++out_.sets;
      if (s == main_) {
        n = add(KinetoNodeRole::kCompute, WorkNodeKind::kCompute, g_.add_kernel(measured), d.nodes);
        main_nodes_.emplace_back(n, stream_end);
      } else {
        ++out_.side_stream_activities;
        n = add(KinetoNodeRole::kSideStream, WorkNodeKind::kDelay, g_.add_kernel(measured), d.nodes);
      }
    }
    node_of_[k] = n;
    last_on_stream_[s] = n;
    last_end_on_stream_[s] = stream_end;
  }

  const Trace& t_;
  const KinetoReplayOptions& o_;
  KinetoReplay& out_;
  WorkGraph& g_;
  const Launches& l_;
  const Timeline& tl_;
  const Stream main_;
  const Ns start_;

  std::uint32_t chain_ = WorkGraph::kNone;
  Ns release_;
  std::vector<std::uint32_t> awaited_;  // GPU nodes the next chain point waits for (after a sync)
  std::map<Stream, std::uint32_t> last_on_stream_;
  std::map<Stream, Ns> last_end_on_stream_;  // measured
  // The compute stream's nodes so far, with their measured ends (increasing).
  std::vector<std::pair<std::uint32_t, Ns>> main_nodes_;
  // A NCCL launch and its measured end: per thread, until another launch;
  // then what the thread's next compute launch waits for.
  std::map<long long, Pending> nccl_last_launched_by_;
  std::map<long long, Pending> compute_waits_for_;
  // Exact waits: what each referenced event record captured, and what each
  // stream's next activity waits for.
  std::unordered_map<long long, Pending> recorded_;
  std::map<Stream, std::vector<Pending>> stream_waits_for_;
  // Without them, the step rule: the compute stream's first activity of a
  // step waits for the NCCL kernels launched before the step began.
  std::vector<Pending> nccl_this_step_, step_waits_for_;
  std::vector<std::uint32_t> node_of_;
};

}  // namespace

std::optional<CollectiveOp> kineto_collective_op(std::string_view n) {
  if (n == "allreduce" || n == "all_reduce") return CollectiveOp::kAllReduce;
  if (n == "allgather" || n == "all_gather" || n == "_allgather_base" || n == "allgather_into_tensor_coalesced" ||
      n == "all_gather_into_tensor") {
    return CollectiveOp::kAllGather;
  }
  if (n == "reduce_scatter" || n == "_reduce_scatter_base" || n == "reduce_scatter_tensor" ||
      n == "reduce_scatter_tensor_coalesced") {
    return CollectiveOp::kReduceScatter;
  }
  if (n == "broadcast") return CollectiveOp::kBroadcast;
  if (n == "reduce") return CollectiveOp::kReduce;
  if (n == "all_to_all" || n == "alltoall" || n == "alltoall_base" || n == "all_to_all_single") return CollectiveOp::kAllToAll;
  return std::nullopt;
}

int kineto_dtype_bytes(std::string_view d) {
  if (d == "Float" || d == "Int" || d == "Int32" || d == "UInt32") return 4;
  if (d == "Half" || d == "BFloat16" || d == "Short" || d == "Int16") return 2;
  if (d == "Double" || d == "Long" || d == "Int64" || d == "UInt64") return 8;
  if (d == "Byte" || d == "Char" || d == "Bool" || d == "Int8" || d == "UInt8" || d.starts_with("Float8")) return 1;
  return 0;
}

void register_kineto_format(WorkloadFormatRegistry& registry) {
  WorkloadFormatEntry e;
  e.name = "kineto";
  e.aliases = {"pytorch-profiler", "torch-profiler"};
  e.help = "PyTorch profiler (Kineto) traces, .json or .json.gz: a rank's kernels, launches and NCCL collectives; one trace stands for every rank, or a directory holds one per rank";
  e.option = "--kineto PATH";
  registry.add(std::move(e));
}

Ns kineto_replay_origin(const Trace& t) { return merge_timeline(t, find_launches(t)).points.front().ts; }

KinetoReplay kineto_replay(const Trace& t, const KinetoReplayOptions& o) {
  KinetoReplay out;
  out.stream_waits_dropped = t.stream_waits_dropped;
  out.repairs = t.repairs;
  out.graph.source = t.file;
  const Stream main = find_compute_stream(t, out);
  Launches launches = find_launches(t);
  measure_latencies(t, launches, out);
  const Timeline timeline = merge_timeline(t, launches);
  GraphBuilder b(t, o, out, launches, timeline, main, o.start_ns.value_or(timeline.points.front().ts));
  for (const Point& p : timeline.points) b.reach(p);
  b.finish();
  return out;
}

}  // namespace acesim
