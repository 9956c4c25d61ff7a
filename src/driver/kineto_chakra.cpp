#include "driver/kineto_chakra.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "chakra/group_names.h"
#include "chakra/trace_writer.h"
#include "config/input_error.h"
#include "config/output_file.h"
#include "driver/kineto_job.h"

namespace acesim {
namespace {

using chakra::CommType;
using chakra::NodeType;

CommType comm_type(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce: return CommType::kAllReduce;
    case CollectiveOp::kReduceScatter: return CommType::kReduceScatter;
    case CollectiveOp::kAllGather: return CommType::kAllGather;
    case CollectiveOp::kAllToAll: return CommType::kAllToAll;
    case CollectiveOp::kBroadcast: return CommType::kBroadcast;
    case CollectiveOp::kReduce: return CommType::kReduce;
    case CollectiveOp::kGather: return CommType::kGather;
    case CollectiveOp::kScatter: return CommType::kScatter;
  }
  return CommType::kAllReduce;
}

// Rank `me`'s counterpart of group `g` of rank `from` (kineto_chakra.h).
std::vector<Rank> counterpart(const std::vector<Rank>& g, Rank from, Rank me, long long world, const std::string& file) {
  if (from == me || static_cast<long long>(g.size()) == world) return g;
  const long long n = static_cast<long long>(g.size());
  const long long s = g[1] - g[0];
  bool tiles = s > 0 && world % (s * n) == 0 && g[0] % (s * n) < s;
  for (std::size_t i = 1; i < g.size() && tiles; ++i) tiles = g[i] - g[i - 1] == s;
  if (!tiles) {
    throw InputError(fmt::format("--chakra-out: {}'s group [{}] is not every {}-th rank of a block of the job, so the other ranks' "
                                 "groups are unknown: give one trace per rank",
                                 file, fmt::join(g, ", "), s));
  }
  const long long base = me / (s * n) * (s * n) + me % s;
  std::vector<Rank> out;
  for (long long i = 0; i < n; ++i) out.push_back(static_cast<Rank>(base + i * s));
  return out;
}

// Whole microseconds whose running sum stays within half a microsecond of
// the exact one.
struct Rounder {
  TimePs exact = 0;
  std::uint64_t given = 0;
  std::uint64_t next(TimePs ps) {
    exact += ps;
    const auto total = static_cast<std::uint64_t>(std::llround(static_cast<double>(exact) / static_cast<double>(kPsPerUs)));
    const std::uint64_t d = total > given ? total - given : 0;
    given += d;
    return d;
  }
};


chakra::Trace rank_trace(const kineto::Trace& trace, const KinetoReplay& replay, Rank from, Rank me, long long world, chakra::GroupNames& groups) {
  const WorkGraph& g = replay.graph;
  const std::uint32_t n = g.size();
  std::vector<std::vector<std::uint32_t>> parents(n);
  for (std::uint32_t p = 0; p < n; ++p) {
    for (std::uint32_t e = g.child_begin(p); e < g.child_end(p); ++e) parents[g.child(e)].push_back(p);
  }
  std::vector<std::int64_t> activity(n, -1);
  for (std::size_t a = 0; a < replay.activity_nodes.size(); ++a) activity[replay.activity_nodes[a]] = static_cast<std::int64_t>(a);
  // The step markers: after the chain node where each step begins.
  std::map<std::uint32_t, long long> marker_after;
  if (!trace.steps.empty()) {
    for (std::size_t k = 0; k + 1 < replay.anchors.size(); ++k) marker_after[replay.anchors[k]] = replay.step_numbers[k];
  }
  chakra::Trace t;
  // What a node's children depend on: its exported id (its marker's, for a
  // step's first chain node), or, for a dropped node, what it depended on.
  std::vector<std::vector<std::uint64_t>> stands_for(n);
  Rounder cpu, gpu;
  for (std::uint32_t i = 0; i < n; ++i) {
    std::vector<std::uint64_t> deps;
    for (std::uint32_t p : parents[i]) deps.insert(deps.end(), stands_for[p].begin(), stands_for[p].end());
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    const GraphNode& gn = g.node(i);
    const KinetoNodeRole role = replay.roles[i];
    if (role == KinetoNodeRole::kLaunch) {
      stands_for[i] = std::move(deps);
      continue;
    }
    chakra::Node c;
    c.id = t.nodes.size();
    c.data_deps = std::move(deps);
    const std::string kernel = activity[i] >= 0 ? trace.name_of(trace.gpu[static_cast<std::size_t>(activity[i])].name) : "";
    switch (role) {
      case KinetoNodeRole::kCpu:
        c.type = NodeType::kComp;
        c.is_cpu_op = true;
        c.name = "cpu";
        c.duration_micros = cpu.next(g.kernel(gn.payload).time_ps);
        break;
      case KinetoNodeRole::kCompute:
      case KinetoNodeRole::kSideStream:
        c.type = NodeType::kComp;
        c.name = role == KinetoNodeRole::kSideStream
                     ? fmt::format("stream {}: {}", trace.gpu[static_cast<std::size_t>(activity[i])].stream, kernel)
                     : kernel;
        c.duration_micros = gpu.next(g.kernel(gn.payload).time_ps);
        break;
      case KinetoNodeRole::kComm:
        if (gn.kind == WorkNodeKind::kCollective) {
          const CollectiveSpec& spec = g.collective(gn.payload);
          const std::vector<Rank> members = counterpart(spec.members, from, me, world, trace.file);
          c.type = NodeType::kCommColl;
          c.comm_type = comm_type(spec.op);
          c.pg_name = groups.name(members, "pg");
          const double share = spec.op == CollectiveOp::kAllGather ? spec.bytes / static_cast<double>(members.size()) : spec.bytes;
          c.comm_size = static_cast<std::uint64_t>(std::llround(std::max(0.0, share)));
          c.name = kernel;
        } else {
          c.type = NodeType::kComp;
          c.name = kernel;
          c.duration_micros = gpu.next(g.kernel(gn.payload).time_ps);
        }
        break;
      case KinetoNodeRole::kEnd:
      case KinetoNodeRole::kLaunch:
        c.type = NodeType::kMetadata;
        c.name = "end";
        break;
    }
    stands_for[i] = {c.id};
    t.nodes.push_back(std::move(c));
    if (const auto m = marker_after.find(i); m != marker_after.end()) {
      chakra::Node step;
      step.id = t.nodes.size();
      step.type = NodeType::kMetadata;
      step.name = fmt::format("ProfilerStep#{}", m->second);
      step.data_deps = {t.nodes.back().id};
      stands_for[i] = {step.id};
      t.nodes.push_back(std::move(step));
    }
  }
  return t;
}

}  // namespace

ChakraExportSummary export_kineto_chakra(const std::vector<kineto::Trace>& traces, const PlatformConfig& platform,
                                         const KinetoRunOptions& options, const std::string& prefix) {
  const KinetoJob job(traces, platform, options.job);
  check_chakra_export_ranks(job.world());
  if (traces.size() > 1 && static_cast<long long>(traces.size()) != job.world()) {
    throw InputError(fmt::format("--chakra-out: the job has {} ranks but {} are traced: export needs one trace, or one per rank",
                                 job.world(), traces.size()));
  }
  KinetoReplayOptions ro;
  ro.simulate_comm = options.simulate_comm;
  ro.job_ranks = job.traced_world();
  ro.group_gpus = [&job](const std::vector<int>& ranks, const std::string& name) { return job.group_ranks(ranks, name); };
  std::vector<std::size_t> trace_of(static_cast<std::size_t>(job.world()), 0);
  if (traces.size() > 1) {
    for (std::size_t i = 0; i < traces.size(); ++i) trace_of[static_cast<std::size_t>(job.job_rank(i))] = i;
  }
  ChakraExportSummary s;
  s.ranks = job.world();
  chakra::GroupNames groups;
  std::vector<std::unique_ptr<KinetoReplay>> replays(traces.size());
  const KinetoClocks clocks = align_kineto_clocks(traces);  // as run_kineto replays them
  for (long long r = 0; r < job.world(); ++r) {
    const std::size_t i = trace_of[static_cast<std::size_t>(r)];
    if (!clocks.start.empty()) ro.start_ns = clocks.start[i];
    if (!replays[i]) replays[i] = std::make_unique<KinetoReplay>(kineto_replay(traces[i], ro));
    const chakra::Trace t = rank_trace(traces[i], *replays[i], static_cast<Rank>(job.job_rank(i)), static_cast<Rank>(r), job.world(), groups);
    s.nodes += static_cast<long long>(t.nodes.size());
    chakra::write_trace_file(t, fmt::format("{}.{}.et", prefix, r));
    if (traces.size() > 1) replays[i].reset();
  }
  write_output_file(prefix + ".groups.json", groups.json().dump() + '\n', "--chakra-out");
  s.groups = groups.size();
  return s;
}

}  // namespace acesim
