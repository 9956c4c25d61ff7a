#include "driver/chakra_run.h"

#include <algorithm>
#include <charconv>
#include <string_view>
#include <unordered_map>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "config/input_error.h"
#include "config/limits.h"
#include "platform/platform_instance.h"
#include "driver/training_run.h"
#include "workload/graph/graph_executor.h"
#include "workload/llm/staged_job.h"

namespace acesim {

using chakra::NodeType;

void check_chakra_traces(const std::vector<chakra::Trace>& traces, long long npus) {
  if (static_cast<long long>(traces.size()) != npus) {
    throw InputError(fmt::format("{} traces ({} .. {}) for a platform of {} NPUs: give one trace per NPU",
                                 traces.size(), traces.empty() ? "" : traces.front().file,
                                 traces.empty() ? "" : traces.back().file, npus));
  }
  // Sends and receives pair up in order per (source, destination, tag):
  // each pair must agree on the size.
  struct Side {
    std::vector<std::pair<std::size_t, std::size_t>> nodes;  // (rank, node index)
  };
  std::map<std::tuple<long long, long long, long long>, std::pair<Side, Side>> messages;
  for (std::size_t r = 0; r < traces.size(); ++r) {
    const chakra::Trace& t = traces[r];
    for (std::size_t i = 0; i < t.nodes.size(); ++i) {
      const chakra::Node& n = t.nodes[i];
      if (n.type == NodeType::kCommSend) {
        messages[{static_cast<long long>(r), *n.comm_dst, n.comm_tag.value_or(0)}].first.nodes.emplace_back(r, i);
      } else if (n.type == NodeType::kCommRecv) {
        messages[{*n.comm_src, static_cast<long long>(r), n.comm_tag.value_or(0)}].second.nodes.emplace_back(r, i);
      }
    }
  }
  auto node_at = [&](std::pair<std::size_t, std::size_t> p) -> const chakra::Node& { return traces[p.first].nodes[p.second]; };
  auto where = [&](std::pair<std::size_t, std::size_t> p) {
    const chakra::Node& n = node_at(p);
    return fmt::format("{}: node {} ({})", traces[p.first].file, n.id, n.name);
  };
  for (const auto& [key, sides] : messages) {
    const auto& [src, dst, tag] = key;
    const auto& sends = sides.first.nodes;
    const auto& recvs = sides.second.nodes;
    for (std::size_t k = 0; k < std::min(sends.size(), recvs.size()); ++k) {
      const auto s = node_at(sends[k]).comm_size.value_or(0);
      const auto v = node_at(recvs[k]).comm_size.value_or(0);
      if (s != v) {
        throw InputError(fmt::format("{}: sends {} bytes to rank {} tag {}, but the matching receive {} expects {}",
                                     where(sends[k]), s, dst, tag, where(recvs[k]), v));
      }
    }
    // (read_traces has checked that the counts agree.)
  }
}

namespace {

std::string node_detail(const chakra::Node& n, const std::vector<DimensionSpec>& dims) {
  switch (n.type) {
    case NodeType::kCommColl: {
      std::string d;
      for (std::size_t i = 0; i < dims.size(); ++i) {
        if (n.involved_dim.empty() || n.involved_dim[i]) d += (d.empty() ? "" : ",") + std::to_string(i);
      }
      return fmt::format("{} {} B dims {}", chakra::to_string(*n.comm_type), n.comm_size.value_or(0), d.empty() ? "none" : d);
    }
    case NodeType::kCommSend:
      return fmt::format("send {} B to {} tag {}", n.comm_size.value_or(0), *n.comm_dst, n.comm_tag.value_or(0));
    case NodeType::kCommRecv:
      return fmt::format("recv {} B from {} tag {}", n.comm_size.value_or(0), *n.comm_src, n.comm_tag.value_or(0));
    case NodeType::kComp: return n.is_cpu_op ? "cpu" : "compute";
    case NodeType::kMemLoad:
    case NodeType::kMemStore: return fmt::format("memory {} B", n.tensor_size.value_or(0));
    case NodeType::kMetadata: return "metadata";
  }
  return "";
}

// Follows the run: the end of each iteration (every simulated rank) and rank
// 0's kernel and CPU time per iteration.
class ChakraRecorder final : public GraphObserver {
 public:
  ChakraRecorder(const WorkGraph& rank0, std::vector<std::vector<int>> labels, int iterations)
      : rank0_(rank0),
        labels_(std::move(labels)),
        end_(static_cast<std::size_t>(iterations), 0),
        compute_(end_.size(), 0),
        cpu_(end_.size(), 0) {}

  void node_done(Rank r, std::uint32_t node, TimePs start, TimePs end) override {
    const auto k = static_cast<std::size_t>(labels_[static_cast<std::size_t>(r)][node]);
    end_[k] = std::max(end_[k], end);
    if (r != 0) return;
    const WorkNodeKind kind = rank0_.node(node).kind;
    if (kind == WorkNodeKind::kCompute) compute_[k] += end - start;
    if (kind == WorkNodeKind::kCpu) cpu_[k] += end - start;
  }

  // Iteration ends, each at least the one before (an iteration may hold no node).
  std::vector<TimePs> iteration_ends() const {
    std::vector<TimePs> ends = end_;
    for (std::size_t k = 1; k < ends.size(); ++k) ends[k] = std::max(ends[k], ends[k - 1]);
    return ends;
  }
  TimePs compute_ps(std::size_t k) const { return compute_[k]; }
  TimePs cpu_ps(std::size_t k) const { return cpu_[k]; }

 private:
  const WorkGraph& rank0_;
  std::vector<std::vector<int>> labels_;  // per simulated rank, per node: its iteration
  std::vector<TimePs> end_, compute_, cpu_;
};

// Time in [from, to) with communication in flight (`comm`: disjoint, in time
// order) but no interval of `busy` running.
TimePs exposed_between(const std::vector<BusyInterval>& comm, std::vector<BusyInterval> busy, TimePs from, TimePs to) {
  std::sort(busy.begin(), busy.end(), [](const BusyInterval& a, const BusyInterval& b) { return a.begin < b.begin; });
  std::vector<BusyInterval> merged;
  for (const BusyInterval& b : busy) {
    if (!merged.empty() && b.begin <= merged.back().end) {
      merged.back().end = std::max(merged.back().end, b.end);
    } else {
      merged.push_back(b);
    }
  }
  TimePs exposed = 0;
  std::size_t j = 0;
  for (const BusyInterval& c : comm) {
    const TimePs begin = std::max(c.begin, from), end = std::min(c.end, to);
    if (end <= begin) continue;
    while (j < merged.size() && merged[j].end <= begin) ++j;
    TimePs covered = 0;
    for (std::size_t m = j; m < merged.size() && merged[m].begin < end; ++m) {
      covered += std::min(merged[m].end, end) - std::max(merged[m].begin, begin);
    }
    exposed += end - begin - covered;
  }
  return exposed;
}

// Rank 0's kernels and CPU nodes, as run.
std::vector<BusyInterval> rank0_busy(const GraphExecutor& ex) {
  std::vector<BusyInterval> busy;
  const WorkGraph& g = ex.graph(0);
  const std::vector<NodeTiming>& timing = ex.timings(0);
  for (std::uint32_t i = 0; i < g.size(); ++i) {
    const WorkNodeKind k = g.node(i).kind;
    if ((k == WorkNodeKind::kCompute || k == WorkNodeKind::kCpu) && timing[i].end > timing[i].start) {
      busy.push_back({timing[i].start, timing[i].end});
    }
  }
  return busy;
}

// Per replicated node: (pass, index in the original trace); index n is the
// metadata node closing a pass.
std::pair<int, std::size_t> pass_and_index(std::size_t j, std::size_t n) {
  return {static_cast<int>(j / (n + 1)), j % (n + 1)};
}

// Iteration, time and resource figures of a finished run (NPU 0's where the
// report says so).
void fill_times(ChakraReport& rep, const GraphExecutor& ex, const ChakraRecorder& rec) {
  rep.iteration_end_ps = rec.iteration_ends();
  const std::size_t last = rep.iteration_end_ps.size() - 1;
  rep.first_iteration_ps = rep.iteration_end_ps.front();
  const TimePs from = last > 0 ? rep.iteration_end_ps[last - 1] : 0;
  const TimePs to = rep.iteration_end_ps[last];
  rep.iteration_ps = to - from;
  rep.compute_ps = rec.compute_ps(last);
  rep.cpu_ps = rec.cpu_ps(last);
  TimePs comm = 0;
  for (const BusyInterval& i : ex.comm_intervals(0)) comm += std::max<TimePs>(0, std::min(i.end, to) - std::max(i.begin, from));
  rep.comm_ps = comm;
  rep.compute_idle_ps = std::max<TimePs>(0, rep.iteration_ps - rep.compute_ps);
  rep.exposed_comm_ps = exposed_between(ex.comm_intervals(0), rank0_busy(ex), from, to);
  rep.overlap_ps = std::max<TimePs>(0, rep.comm_ps - rep.exposed_comm_ps);
}

void fill_node_records(ChakraReport& rep, const GraphExecutor& ex, const std::vector<chakra::Trace>& traces,
                       const std::vector<std::vector<int>>& labels, int passes, const std::vector<DimensionSpec>& dims) {
  for (Rank r = 0; r < ex.simulated_ranks(); ++r) {
    const std::vector<NodeTiming>& timing = ex.timings(r);
    const chakra::Trace& t = traces[static_cast<std::size_t>(r)];
    const std::size_t n = t.nodes.size();
    for (std::size_t j = 0; j < timing.size(); ++j) {
      const auto [pass, i] = passes > 1 ? pass_and_index(j, n) : std::pair<int, std::size_t>{0, j};
      if (i == n) continue;  // a pass boundary, not the trace's
      const chakra::Node& node = t.nodes[i];
      rep.node_records.push_back({r, node.id, node.name, chakra::to_string(node.type), node_detail(node, dims),
                                  labels[static_cast<std::size_t>(r)][j], timing[j].ready, timing[j].start, timing[j].end});
    }
  }
}

}  // namespace

std::vector<int> chakra_iteration_labels(const chakra::Trace& trace, int& markers) {
  const std::size_t n = trace.nodes.size();
  std::vector<std::pair<long long, std::size_t>> found;  // (N of ProfilerStep#N, node)
  static constexpr std::string_view kMarker = "ProfilerStep#";
  for (std::size_t i = 0; i < n; ++i) {
    const std::string& name = trace.nodes[i].name;
    if (name.rfind(kMarker, 0) != 0) continue;
    long long step = static_cast<long long>(i);
    std::from_chars(name.data() + kMarker.size(), name.data() + name.size(), step);
    found.emplace_back(step, i);
  }
  std::sort(found.begin(), found.end());
  markers = static_cast<int>(found.size());
  std::vector<int> label(n, 0);
  if (found.empty()) return label;
  std::vector<int> marker(n, -1);
  for (std::size_t k = 0; k < found.size(); ++k) marker[found[k].second] = static_cast<int>(k);
  // Children lists and a topological pass: a node takes the latest marker
  // among its parents'; a marker takes its own.
  std::unordered_map<std::uint64_t, std::size_t> index;
  for (std::size_t i = 0; i < n; ++i) index.emplace(trace.nodes[i].id, i);
  std::vector<std::vector<std::size_t>> children(n);
  std::vector<int> pending(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    for (const auto* list : {&trace.nodes[i].data_deps, &trace.nodes[i].ctrl_deps}) {
      for (std::uint64_t d : *list) {
        children[index.at(d)].push_back(i);
        ++pending[i];
      }
    }
  }
  std::vector<std::size_t> ready;
  for (std::size_t i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push_back(i);
  }
  while (!ready.empty()) {
    const std::size_t u = ready.back();
    ready.pop_back();
    if (marker[u] >= 0) label[u] = marker[u];
    for (std::size_t c : children[u]) {
      label[c] = std::max(label[c], label[u]);
      if (--pending[c] == 0) ready.push_back(c);
    }
  }
  return label;
}

std::vector<int> chakra_pass_labels(const chakra::Trace& t, int passes, std::size_t nodes, int& iterations) {
  int markers = 0;
  const std::vector<int> own = chakra_iteration_labels(t, markers);
  const int per_pass = std::max(1, markers);
  iterations = passes * per_pass;
  std::vector<int> l(nodes, 0);
  for (std::size_t j = 0; j < l.size(); ++j) {
    const auto [pass, i] = passes > 1 ? pass_and_index(j, t.nodes.size()) : std::pair<int, std::size_t>{0, j};
    l[j] = pass * per_pass + (i < own.size() ? own[i] : per_pass - 1);
  }
  return l;
}

chakra::Trace repeat_trace(const chakra::Trace& t, int passes) {
  const std::size_t n = t.nodes.size();
  const auto p_count = static_cast<std::size_t>(std::max(1, passes));
  if ((n + 1) * p_count > chakra::kMaxNodesPerTrace) {
    throw InputError(fmt::format("--iterations: {} passes over {} ({} nodes) make more than {} nodes", passes, t.file, n,
                                 chakra::kMaxNodesPerTrace));
  }
  std::unordered_map<std::uint64_t, std::size_t> index;
  for (std::size_t i = 0; i < n; ++i) index.emplace(t.nodes[i].id, i);
  std::vector<bool> has_child(n, false);
  for (const chakra::Node& node : t.nodes) {
    for (const auto* list : {&node.data_deps, &node.ctrl_deps}) {
      for (std::uint64_t d : *list) has_child[index.at(d)] = true;
    }
  }
  chakra::Trace out;
  out.file = t.file;
  out.version = t.version;
  out.nodes.reserve((n + 1) * p_count);
  // Pass p holds ids p (n + 1) + i; id p (n + 1) + n closes it.
  for (std::size_t p = 0; p < p_count; ++p) {
    const std::uint64_t base = p * (n + 1);
    for (const chakra::Node& node : t.nodes) {
      chakra::Node c = node;
      c.id = base + index.at(node.id);
      for (auto* list : {&c.data_deps, &c.ctrl_deps}) {
        for (std::uint64_t& d : *list) d = base + index.at(d);
      }
      if (p > 0 && c.data_deps.empty() && c.ctrl_deps.empty()) c.ctrl_deps.push_back(base - 1);
      out.nodes.push_back(std::move(c));
    }
    if (p + 1 == p_count) break;
    chakra::Node close;
    close.id = base + n;
    close.name = fmt::format("end of pass {}", p);
    close.type = NodeType::kMetadata;
    for (std::size_t i = 0; i < n; ++i) {
      if (!has_child[i]) close.ctrl_deps.push_back(base + i);
    }
    out.nodes.push_back(std::move(close));
  }
  return out;
}

ChakraReport run_chakra(const PlatformConfig& platform, const std::vector<chakra::Trace>& traces,
                        const std::string& prefix, const ChakraRunOptions& options) {
  long long npus = 1;
  for (const DimensionSpec& d : platform.dims) npus *= d.npus;
  check_chakra_traces(traces, npus);
  // The groups as bound: whole ones listed where instances differ.
  ChakraGroups bound;
  if (options.groups != nullptr) {
    check_chakra_groups(traces, *options.groups);
    bound = *options.groups;
    list_divergent_groups(traces, bound);
  }
  const ChakraGroups* groups = options.groups != nullptr ? &bound : nullptr;
  std::string asymmetry = asymmetry_reason(platform);
  if (asymmetry.empty()) asymmetry = chakra_asymmetry(traces, groups);
  if (asymmetry.empty() && !options.stragglers.empty()) asymmetry = "stragglers";
  const bool symmetric = !options.full && asymmetry.empty();

  options.progress.stage("building");
  PlatformInstance pi(platform, symmetric);
  for (const auto& [rank, factor] : options.stragglers) pi.endpoints.set_compute_slowdown(rank, factor);
  if (static_cast<Rank>(traces.size()) != pi.topology.num_npus()) {
    throw InputError(fmt::format("{} traces for a topology of {} NPUs", traces.size(), pi.topology.num_npus()));
  }
  // One graph per simulated rank (rank 0's only, when symmetric), over the
  // trace repeated for --iterations; each node labelled with its iteration.
  ChakraBinding binding;
  binding.roofline = options.roofline;
  binding.groups = groups;
  const int passes = std::max(1, options.iterations);
  const Rank ranks = pi.collectives.simulated_ranks();
  // The graphs' memory, before any is built: a node each (and a pass's
  // closing node), StagedJob::kBytesPerNode each, over the simulated ranks.
  double nodes = 0.0;
  for (Rank r = 0; r < ranks; ++r) nodes += static_cast<double>(traces[static_cast<std::size_t>(r)].nodes.size() + (passes > 1 ? 1 : 0)) * passes;
  if (StagedJob::kBytesPerNode * nodes > limits::kMaxGraphBytes) {
    throw InputError(fmt::format("{}: {} ranks' traces over {} pass{} hold {:.3g} nodes, about {:.1f} GiB as graphs ({:g} B a node); the "
                                 "limit is 8 GiB: fewer --iterations{}",
                                 prefix, ranks, passes, passes > 1 ? "es" : "", nodes, StagedJob::kBytesPerNode * nodes / (1ULL << 30),
                                 StagedJob::kBytesPerNode, symmetric ? "" : ", or a symmetric run (no --full, stragglers or asymmetric groups)"));
  }
  std::vector<chakra::Trace> repeated;
  std::vector<WorkGraph> graphs;
  std::vector<const WorkGraph*> per_rank;
  std::vector<std::vector<int>> labels;
  repeated.reserve(passes > 1 ? static_cast<std::size_t>(ranks) : 0);
  graphs.reserve(static_cast<std::size_t>(ranks));
  int iterations = 1;
  for (Rank r = 0; r < ranks; ++r) {
    const chakra::Trace& t = traces[static_cast<std::size_t>(r)];
    binding.rank = r;
    if (passes > 1) repeated.push_back(repeat_trace(t, passes));
    graphs.push_back(chakra_graph(passes > 1 ? repeated.back() : t, pi.topology, binding));
    per_rank.push_back(&graphs.back());
    int its = 1;
    labels.push_back(chakra_pass_labels(t, passes, graphs.back().size(), its));
    iterations = std::max(iterations, its);
  }
  ChakraRecorder recorder(graphs.front(), labels, iterations);
  GraphRunOptions ro;
  ro.keep_ranks = options.trace_ranks;
  ro.observer = &recorder;
  GraphExecutor ex(pi.sim, pi.topology, *pi.network, pi.collectives, pi.endpoints, per_rank, ro);
  run_graphs(pi.sim, ex, options.progress);
  options.progress.stage("summing up");
  pi.endpoints.settle();

  ChakraReport rep;
  rep.prefix = prefix;
  rep.platform = platform.source;
  rep.executor = platform.npu.executor;
  rep.npus = npus;
  rep.simulated_ranks = ex.simulated_ranks();
  rep.simulation = symmetric ? "symmetric" : options.full ? "full (--full)" : "full: " + asymmetry;
  rep.total_ps = ex.finish_ps();
  rep.iterations = iterations;
  fill_times(rep, ex, recorder);
  rep.collectives = ex.collectives_created().size();
  rep.messages = ex.messages();
  rep.events = pi.sim.stats().events + pi.sim.stats().completions;
  const EndpointSummary es = summarize_endpoints(pi.endpoints, pi.topology, platform.npu, ex, rep.total_ps);
  rep.network_utilization_per_dim = es.network_utilization_per_dim;
  rep.network_utilization_in_flight_per_dim = es.network_utilization_in_flight_per_dim;
  rep.comm_in_flight_ps_per_dim = es.comm_in_flight_ps_per_dim;
  rep.network_bytes_per_dim = es.network_bytes_per_dim;
  rep.hbm_utilization_compute = es.hbm_utilization_compute;
  rep.hbm_utilization_comm = es.hbm_utilization_comm;
  rep.hbm_bytes_compute = es.hbm_bytes_compute;
  rep.hbm_bytes_comm = es.hbm_bytes_comm;
  rep.comm_unit_seconds = es.comm_unit_seconds;
  rep.energy_J = run_energy_J(platform, es, rep.total_ps);

  const chakra::Trace& t0 = traces[0];
  rep.nodes = static_cast<long long>(t0.nodes.size());
  std::map<std::string, long long> types;
  for (const chakra::Node& n : t0.nodes) {
    ++types[n.type == NodeType::kComp && n.is_cpu_op ? "COMP_NODE (cpu)" : chakra::to_string(n.type)];
  }
  rep.node_types.assign(types.begin(), types.end());
  fill_node_records(rep, ex, traces, labels, passes, platform.dims);
  return rep;
}

}  // namespace acesim
