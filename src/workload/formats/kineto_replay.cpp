// A PyTorch profiler trace as one rank's work graph (kineto_replay.h).
#include "workload/formats/kineto_replay.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
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

// One point of the merged launch timeline, in time order.
struct Point {
  enum Kind : std::uint8_t { kStepStart, kLaunch, kSync, kWaitEvent, kRecord, kEnd } kind;
  Ns ts = 0;
  std::size_t index = 0;  // kLaunch / kSync / kWaitEvent / kRecord: the runtime call; kStepStart: the step
};

std::string short_name(const std::string& n) { return n.size() > 80 ? n.substr(0, 77) + "..." : n; }

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

KinetoReplay kineto_replay(const Trace& t, const KinetoReplayOptions& o) {
  KinetoReplay out;
  out.stream_waits_dropped = t.stream_waits_dropped;
  WorkGraph& g = out.graph;
  g.source = t.file;

  // The busiest stream (by the time of its non-NCCL work) is the compute stream.
  std::map<std::pair<int, long long>, Ns> busy;
  std::set<std::pair<int, long long>> streams;
  for (const GpuActivity& a : t.gpu) {
    streams.insert({a.device, a.stream});
    if (!a.nccl) busy[{a.device, a.stream}] += a.dur;
  }
  out.streams = static_cast<int>(streams.size());
  std::pair<int, long long> main{t.gpu.front().device, t.gpu.front().stream};
  Ns most = -1;
  for (const auto& [s, ns] : busy) {
    if (ns > most) {
      most = ns;
      main = s;
    }
  }
  out.main_stream = main.second;

  // Each activity's launching call, and launch latencies.
  std::unordered_map<long long, std::size_t> call_of;
  call_of.reserve(t.runtime.size());
  for (std::size_t i = 0; i < t.runtime.size(); ++i) call_of.emplace(t.runtime[i].correlation, i);
  std::vector<std::size_t> launcher(t.gpu.size());
  // Launch latencies. An activity launched while the work it waits for (its
  // stream's previous activity, or a dependency across streams below) was
  // still to end queued behind it: that end, and the GPU's gap after it,
  // set its start, and its own latency is unknown; the trace's median
  // stands for it, over the activities nothing ended before on their device
  // between their launch and their start (the GPU took them as launched).
  std::vector<Ns> latency(t.gpu.size(), 0);
  {
    // Per device, the ends of its activities so far (any stream).
    std::map<int, std::multiset<Ns>> ends;
    std::vector<Ns> free_latencies;
    for (std::size_t k = 0; k < t.gpu.size(); ++k) {
      const GpuActivity& a = t.gpu[k];
      launcher[k] = call_of.at(a.correlation);  // the reader checked every correlation
      const Ns launched_at = t.runtime[launcher[k]].ts;
      latency[k] = std::max<Ns>(0, a.ts - launched_at);
      std::multiset<Ns>& e = ends[a.device];
      const auto between = e.lower_bound(launched_at);
      if (between == e.end() || *between > a.ts) free_latencies.push_back(latency[k]);
      e.insert(a.ts + a.dur);
    }
    if (!free_latencies.empty()) {
      std::nth_element(free_latencies.begin(), free_latencies.begin() + static_cast<std::ptrdiff_t>(free_latencies.size() / 2),
                       free_latencies.end());
      out.median_launch_latency = free_latencies[free_latencies.size() / 2];
    }
  }

  // The merged timeline: launches, synchronisations, waits on events, steps.
  std::vector<std::vector<std::size_t>> launched(t.runtime.size());
  for (std::size_t k = 0; k < t.gpu.size(); ++k) launched[launcher[k]].push_back(k);
  // Traces with cuda_sync events name each wait's event record: the waits
  // are then exact, and the rules inferred from launch order are not used.
  const bool exact_waits = !t.stream_waits.empty();
  std::unordered_map<long long, std::vector<std::size_t>> waits_of_call, waits_of_record;
  for (std::size_t w = 0; w < t.stream_waits.size(); ++w) {
    waits_of_call[t.stream_waits[w].correlation].push_back(w);
    waits_of_record[t.stream_waits[w].record_correlation].push_back(w);
  }
  std::vector<Point> points;
  for (std::size_t i = 0; i < t.runtime.size(); ++i) {
    const std::string& name = t.name_of(t.runtime[i].name);
    if (!launched[i].empty()) {
      points.push_back({Point::kLaunch, t.runtime[i].ts, i});
    } else if (synchronises(name)) {
      points.push_back({Point::kSync, t.runtime[i].ts, i});
    } else if (name == "cudaStreamWaitEvent" || name == "cuStreamWaitEvent" || waits_of_call.contains(t.runtime[i].correlation)) {
      points.push_back({Point::kWaitEvent, t.runtime[i].ts, i});
    } else if (waits_of_record.contains(t.runtime[i].correlation)) {
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

  const auto add = [&](KinetoNodeRole role, WorkNodeKind kind, std::uint32_t payload, std::span<const std::uint32_t> deps) {
    out.roles.push_back(role);
    return g.add_node(kind, payload, deps);
  };
  const auto delay = [&](KinetoNodeRole role, Ns ns, std::span<const std::uint32_t> deps) {
    Kernel k;
    k.time_ps = std::max<Ns>(0, ns) * 1000;
    return add(role, WorkNodeKind::kDelay, g.add_kernel(k), deps);
  };
  std::uint32_t chain = WorkGraph::kNone;
  Ns release = points.front().ts;
  std::vector<std::uint32_t> awaited;  // GPU nodes the next chain point waits for (after a sync)
  std::map<std::pair<int, long long>, std::uint32_t> last_on_stream;
  std::map<std::pair<int, long long>, Ns> last_end_on_stream;  // measured
  // The compute stream's nodes so far, with their measured ends (increasing).
  std::vector<std::pair<std::uint32_t, Ns>> main_nodes;
  // A NCCL launch and its measured end: per thread, until another launch;
  // then what the thread's next compute launch waits for.
  struct Pending {
    std::uint32_t node;
    Ns end;
  };
  std::map<long long, Pending> nccl_last_launched_by;
  std::map<long long, Pending> compute_waits_for;
  // Exact waits: what each referenced event record captured, and what each
  // stream's next activity waits for.
  std::unordered_map<long long, Pending> recorded;
  std::map<std::pair<int, long long>, std::vector<Pending>> stream_waits_for;
  // Without them, the step rule: the compute stream's first activity of a
  // step waits for the NCCL kernels launched before the step began.
  std::vector<Pending> nccl_this_step, step_waits_for;
  std::vector<std::uint32_t> node_of(t.gpu.size(), WorkGraph::kNone);
  const std::set<int> whole_job = [&] {
    std::set<int> s;
    for (long long r = 0; r < o.job_ranks; ++r) s.insert(static_cast<int>(r));
    return s;
  }();

  const auto measured_collective = [&](const std::string& why) {
    ++out.collectives_measured;
    ++out.measured_why[why];
  };
  // The collective a NCCL kernel stands for, or nullopt (measured) with the reason counted.
  const auto collective_of = [&](const GpuActivity& a) -> std::optional<CollectiveSpec> {
    if (!o.simulate_comm) {
      measured_collective("communication kept at its measured duration");
      return std::nullopt;
    }
    if (!a.collective) {
      measured_collective("the kernel's arguments do not name its collective (a PyTorch before 2.1)");
      return std::nullopt;
    }
    const kineto::Collective& c = *a.collective;
    const std::optional<CollectiveOp> op = kineto_collective_op(c.name);
    if (!op) {
      measured_collective(fmt::format("collective '{}' is not simulated", c.name));
      return std::nullopt;
    }
    const int bytes = kineto_dtype_bytes(c.dtype);
    const long long elements = *op == CollectiveOp::kAllGather ? c.out_elements : c.in_elements;
    if (bytes == 0 || elements < 0) {
      measured_collective(bytes == 0 ? fmt::format("dtype '{}' has no known size", c.dtype) : "no message size");
      return std::nullopt;
    }
    std::vector<int> ranks = c.group_ranks;
    if (ranks.empty()) {
      for (const kineto::ProcessGroup& pg : t.groups) {
        if (pg.name == c.group_name) ranks = pg.ranks;
      }
    }
    if (ranks.empty() && c.group_size > 0 && c.group_size == o.job_ranks) ranks.assign(whole_job.begin(), whole_job.end());
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    if (ranks.empty()) {
      measured_collective("its group's ranks are not in the trace");
      return std::nullopt;
    }
    for (int r : ranks) {
      if (r >= o.job_ranks) {
        throw InputError(fmt::format("{}: event '{}' at ts {:.3f}: its group names rank {}, but the job has {} ranks", t.file,
                                     short_name(t.name_of(a.name)), static_cast<double>(a.ts) / 1e3, r, o.job_ranks));
      }
    }
    if (ranks.size() < 2) {
      measured_collective("a group of one rank");
      return std::nullopt;
    }
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
  };

  // A synchronising call: what it waited for is, on each stream, the last
  // activity launched before it (or by it: a cudaMemcpy) that had ended when
  // the call returned; the next point waits for those, and the CPU's own
  // time resumes from when the last of them ended.
  const auto synchronise = [&](const RuntimeCall& call) {
    ++out.syncs;
    Ns done = call.ts;
    for (const auto& [s, n] : last_on_stream) {
      const Ns e = last_end_on_stream[s];
      if (e <= call.ts + call.dur) {
        awaited.push_back(n);
        done = std::max(done, e);
      }
    }
    release = done;
  };
  for (const Point& p : points) {
    // The chain reaches the point: the CPU's own time since the last release.
    std::vector<std::uint32_t> deps = std::move(awaited);
    awaited.clear();
    if (chain != WorkGraph::kNone) deps.push_back(chain);
    chain = delay(KinetoNodeRole::kCpu, p.ts - release, deps);
    release = p.ts;
    switch (p.kind) {
      case Point::kStepStart:
        if (!exact_waits) {
          step_waits_for.insert(step_waits_for.end(), nccl_this_step.begin(), nccl_this_step.end());
          nccl_this_step.clear();
        }
        out.anchors.push_back(chain);
        out.anchor_measured_ns.push_back(p.ts);
        out.step_numbers.push_back(t.steps[p.index].number);
        break;
      case Point::kEnd:
        if (out.anchors.empty()) {  // no ProfilerStep: the whole trace is one iteration
          out.anchors.push_back(0);
          out.anchor_measured_ns.push_back(points.front().ts);
          out.step_numbers.push_back(0);
        }
        out.anchors.push_back(chain);
        out.anchor_measured_ns.push_back(p.ts);
        break;
      case Point::kSync:
        synchronise(t.runtime[p.index]);
        break;
      case Point::kRecord:
        for (std::size_t w : waits_of_record[t.runtime[p.index].correlation]) {
          const kineto::StreamWait& sw = t.stream_waits[w];
          const auto it = last_on_stream.find({sw.device, sw.on_stream});
          if (it != last_on_stream.end()) recorded[sw.record_correlation] = {it->second, last_end_on_stream[{sw.device, sw.on_stream}]};
        }
        break;
      case Point::kWaitEvent: {
        if (exact_waits) {
          if (const auto it = waits_of_call.find(t.runtime[p.index].correlation); it != waits_of_call.end()) {
            for (std::size_t w : it->second) {
              const kineto::StreamWait& sw = t.stream_waits[w];
              if (const auto r = recorded.find(sw.record_correlation); r != recorded.end()) {
                stream_waits_for[{sw.device, sw.stream}].push_back(r->second);
              }
            }
          }
          break;
        }
        const long long tid = t.runtime[p.index].tid;
        const auto it = nccl_last_launched_by.find(tid);
        if (it != nccl_last_launched_by.end()) compute_waits_for[tid] = it->second;
        break;
      }
      case Point::kLaunch: {
        ++out.launches;
        const long long tid = t.runtime[p.index].tid;
        for (std::size_t k : launched[p.index]) {
          const GpuActivity& a = t.gpu[k];
          const std::pair<int, long long> s{a.device, a.stream};
          std::vector<std::uint32_t> gdeps;
          // The dependency that ended last (as measured): what a queued activity waited for.
          std::size_t gating = 0;
          Ns gating_end = -1;
          const auto after = [&](Ns end) {
            if (end > gating_end) {
              gating = gdeps.size() - 1;
              gating_end = end;
            }
          };
          if (const auto it = last_on_stream.find(s); it != last_on_stream.end()) {
            gdeps.push_back(it->second);
            after(last_end_on_stream[s]);
          }
          std::uint32_t n = WorkGraph::kNone;
          Kernel measured;
          measured.time_ps = a.dur * 1000;
          const bool on_main = s == main;
          if (exact_waits) {
            if (const auto it = stream_waits_for.find(s); it != stream_waits_for.end()) {
              for (const Pending& w : it->second) {
                if (w.end <= a.ts + kQueuedNs) {  // a dependency the measurement contradicts cannot have been there
                  gdeps.push_back(w.node);
                  after(w.end);
                  ++out.stream_waits;
                }
              }
              stream_waits_for.erase(it);
            }
          } else if (a.nccl) {
            // The compute-stream work launched before it that had ended
            // when it started (a dependency the measurement contradicts
            // cannot have been there).
            for (auto it = main_nodes.rbegin(); it != main_nodes.rend(); ++it) {
              if (it->second <= a.ts + kQueuedNs) {
                gdeps.push_back(it->first);
                after(it->second);
                break;
              }
            }
          } else if (on_main) {
            for (const Pending& w : step_waits_for) {
              if (w.end <= a.ts + kQueuedNs) {
                gdeps.push_back(w.node);
                after(w.end);
                ++out.step_waits;
              }
            }
            step_waits_for.clear();
            if (const auto w = compute_waits_for.find(tid); w != compute_waits_for.end()) {
              if (a.ts + kQueuedNs >= w->second.end) {  // it did start after the collective ended
                gdeps.push_back(w->second.node);
                after(w->second.end);
                ++out.compute_waits;
              }
              compute_waits_for.erase(w);
            }
          }
          const std::uint32_t launch[1] = {chain};
          const bool queued = gating_end >= 0 && t.runtime[launcher[k]].ts + out.median_launch_latency <= gating_end;
          if (queued && a.ts > gating_end) {
            // The GPU's gap between the work it waited for and its start.
            const std::uint32_t from[1] = {gdeps[gating]};
            gdeps[gating] = delay(KinetoNodeRole::kLaunch, a.ts - gating_end, from);
            ++out.gaps;
          }
          gdeps.push_back(delay(KinetoNodeRole::kLaunch, queued ? std::min(latency[k], out.median_launch_latency) : latency[k], launch));
          if (a.nccl) {
            const std::optional<CollectiveSpec> c = collective_of(a);
            if (c && c->members.size() < 2) {
              // The job's layout left the group one rank (--dp 1): nothing moves.
              ++out.collectives_simulated;
              n = add(KinetoNodeRole::kComm, WorkNodeKind::kDelay, g.add_kernel(Kernel{}), gdeps);
            } else if (c) {
              ++out.collectives_simulated;
              n = add(KinetoNodeRole::kComm, WorkNodeKind::kCollective, g.add_collective(*c), gdeps);
            } else {
              n = add(KinetoNodeRole::kComm, WorkNodeKind::kDelay, g.add_kernel(measured), gdeps);
            }
            nccl_last_launched_by[tid] = {n, a.ts + a.dur};
            if (!exact_waits) nccl_this_step.push_back({n, a.ts + a.dur});
          } else {
            nccl_last_launched_by.erase(tid);
            if (a.kind == kineto::GpuKind::kKernel) ++out.kernels;
            if (a.kind == kineto::GpuKind::kMemcpy) ++out.copies;
            if (a.kind == kineto::GpuKind::kMemset) ++out.sets;
            if (on_main) {
              n = add(KinetoNodeRole::kCompute, WorkNodeKind::kCompute, g.add_kernel(measured), gdeps);
              main_nodes.emplace_back(n, a.ts + a.dur);
            } else {
              ++out.side_stream_activities;
              n = add(KinetoNodeRole::kSideStream, WorkNodeKind::kDelay, g.add_kernel(measured), gdeps);
            }
          }
          node_of[k] = n;
          last_on_stream[s] = n;
          last_end_on_stream[s] = a.ts + a.dur;
        }
        if (synchronises(t.name_of(t.runtime[p.index].name))) synchronise(t.runtime[p.index]);
        break;
      }
    }
  }
  out.activity_nodes = std::move(node_of);
  out.origin_ns = points.front().ts;
  // The run ends once the GPU is done too.
  std::vector<std::uint32_t> tail = std::move(awaited);
  tail.push_back(chain);
  for (const auto& [s, n] : last_on_stream) tail.push_back(n);
  const std::uint32_t end = add(KinetoNodeRole::kEnd, WorkNodeKind::kNop, 0, tail);
  // Without ProfilerStep the iteration is the whole trace, to where both the
  // CPU and the GPU are done.
  if (t.steps.empty()) out.anchors.back() = end;
  g.finish();
  return out;
}

}  // namespace acesim
