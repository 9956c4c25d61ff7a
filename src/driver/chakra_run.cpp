#include "driver/chakra_run.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "config/input_error.h"
#include "platform/platform_instance.h"
#include "driver/training_run.h"
#include "workload/graph/graph_executor.h"

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

}  // namespace

ChakraReport run_chakra(const PlatformConfig& platform, const std::vector<chakra::Trace>& traces,
                        const std::string& prefix, const ChakraRunOptions& options) {
  long long npus = 1;
  for (const DimensionSpec& d : platform.dims) npus *= d.npus;
  check_chakra_traces(traces, npus);
  if (options.groups != nullptr) check_chakra_groups(traces, *options.groups);
  std::string asymmetry = asymmetry_reason(platform);
  if (asymmetry.empty()) asymmetry = chakra_asymmetry(traces, options.groups);
  if (asymmetry.empty() && !options.stragglers.empty()) asymmetry = "stragglers";
  const bool symmetric = !options.full && asymmetry.empty();

  options.progress.stage("building");
  PlatformInstance pi(platform, symmetric);
  for (const auto& [rank, factor] : options.stragglers) pi.endpoints.set_compute_slowdown(rank, factor);
  if (static_cast<Rank>(traces.size()) != pi.topology.num_npus()) {
    throw InputError(fmt::format("{} traces for a topology of {} NPUs", traces.size(), pi.topology.num_npus()));
  }
  // One graph per simulated rank (rank 0's only, when symmetric).
  ChakraBinding binding;
  binding.roofline = options.roofline;
  binding.groups = options.groups;
  std::vector<WorkGraph> graphs;
  std::vector<const WorkGraph*> per_rank;
  const Rank ranks = pi.collectives.simulated_ranks();
  graphs.reserve(static_cast<std::size_t>(ranks));
  for (Rank r = 0; r < ranks; ++r) {
    graphs.push_back(chakra_graph(traces[static_cast<std::size_t>(r)], pi.topology, binding));
    per_rank.push_back(&graphs.back());
  }
  GraphRunOptions ro;
  ro.keep_ranks = options.trace_ranks;
  GraphExecutor ex(pi.sim, pi.topology, *pi.network, pi.collectives, pi.endpoints, per_rank, ro);
  ex.start();
  options.progress.stage("simulating");
  options.progress.watch(pi.sim, [&] { return ex.fraction_done(); });
  run_or_report_stuck(pi.sim, [&] { return ex.finished(); }, [&] { return ex.stuck_report(); });
  options.progress.report(pi.sim.now(), pi.sim.stats().events + pi.sim.stats().completions, 1.0);
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
  rep.compute_ps = ex.compute_busy_ps(0);
  rep.cpu_ps = ex.cpu_busy_ps(0);
  rep.comm_ps = ex.comm_busy_ps(0);
  rep.compute_idle_ps = std::max<TimePs>(0, rep.total_ps - rep.compute_ps);
  rep.collectives = ex.collectives_created().size();
  rep.messages = ex.messages();
  rep.events = pi.sim.stats().events + pi.sim.stats().completions;
  const EndpointSummary es = summarize_endpoints(pi.endpoints, pi.topology, platform.npu, ex.simulated_ranks(), rep.total_ps);
  rep.network_utilization_per_dim = es.network_utilization_per_dim;
  rep.network_bytes_per_dim = es.network_bytes_per_dim;
  rep.hbm_utilization_compute = es.hbm_utilization_compute;
  rep.hbm_utilization_comm = es.hbm_utilization_comm;

  const chakra::Trace& t0 = traces[0];
  rep.nodes = static_cast<long long>(t0.nodes.size());
  std::map<std::string, long long> types;
  for (const chakra::Node& n : t0.nodes) {
    ++types[n.type == NodeType::kComp && n.is_cpu_op ? "COMP_NODE (cpu)" : chakra::to_string(n.type)];
  }
  rep.node_types.assign(types.begin(), types.end());
  for (Rank r = 0; r < ex.simulated_ranks(); ++r) {
    const std::vector<NodeTiming>& timing = ex.timings(r);
    const chakra::Trace& t = traces[static_cast<std::size_t>(r)];
    for (std::size_t i = 0; i < timing.size(); ++i) {
      const chakra::Node& n = t.nodes[i];
      rep.node_records.push_back({r, n.id, n.name, chakra::to_string(n.type), node_detail(n, platform.dims),
                                  timing[i].ready, timing[i].start, timing[i].end});
    }
  }
  return rep;
}

}  // namespace acesim
