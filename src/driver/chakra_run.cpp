#include "driver/chakra_run.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "config/input_error.h"
#include "platform/platform_instance.h"
#include "report/collective_sweep.h"
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

  PlatformInstance pi(platform, symmetric);
  for (const auto& [rank, factor] : options.stragglers) pi.endpoint.set_compute_slowdown(rank, factor);
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
  GraphExecutor ex(pi.sim, pi.topology, *pi.network, pi.collectives, pi.endpoint, per_rank, ro);
  ex.start();
  run_or_report_stuck(pi.sim, [&] { return ex.finished(); }, [&] { return ex.stuck_report(); });
  pi.endpoint.settle();

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
  const EndpointSummary es = summarize_endpoints(pi.endpoint, pi.topology, platform.npu, ex.simulated_ranks(), rep.total_ps);
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

std::string format_chakra(const ChakraReport& r, const PlatformConfig& platform) {
  std::string types;
  for (const auto& [name, count] : r.node_types) types += fmt::format("{}{} {}", types.empty() ? "" : ", ", count, name);
  std::string out = fmt::format("# acesim run: Chakra traces {}.<rank>.et, {} ranks; rank 0: {} nodes ({})\n", r.prefix,
                                r.npus, r.nodes, types);
  out += fmt::format("# platform: {} ({})\n", describe_platform(platform), platform.source);
  out += fmt::format("# simulated {} of {} ranks: {}\n", r.simulated_ranks, r.npus, r.simulation);
  auto pct = [&](TimePs t) { return r.total_ps > 0 ? 100.0 * static_cast<double>(t) / static_cast<double>(r.total_ps) : 0.0; };
  out += fmt::format("total time (us)                   {:>14.3f}\n", ps_to_us(r.total_ps));
  out += fmt::format("NPU 0 compute (us)                {:>14.3f}  {:5.1f}%\n", ps_to_us(r.compute_ps), pct(r.compute_ps));
  out += fmt::format("NPU 0 compute stream idle (us)    {:>14.3f}  {:5.1f}%  waiting for communication, CPU or dependencies\n",
                     ps_to_us(r.compute_idle_ps), pct(r.compute_idle_ps));
  out += fmt::format("NPU 0 communication (us)          {:>14.3f}  {:5.1f}%  a collective or message in flight\n",
                     ps_to_us(r.comm_ps), pct(r.comm_ps));
  out += fmt::format("NPU 0 CPU (us)                    {:>14.3f}  {:5.1f}%\n", ps_to_us(r.cpu_ps), pct(r.cpu_ps));
  std::string util;
  for (std::size_t d = 0; d < r.network_utilization_per_dim.size(); ++d) {
    util += fmt::format("{}dim {} {:.1f}%", d ? ", " : "", d, 100.0 * r.network_utilization_per_dim[d]);
  }
  out += "network utilization               " + util + "\n";
  out += fmt::format("HBM utilization                   compute {:.1f}%, communication {:.1f}%\n",
                     100.0 * r.hbm_utilization_compute, 100.0 * r.hbm_utilization_comm);
  out += fmt::format("collectives {}, messages {}, events {}\n", r.collectives, r.messages, r.events);
  // The longest nodes of rank 0.
  std::vector<const ChakraNodeRecord*> rank0;
  for (const ChakraNodeRecord& n : r.node_records) {
    if (n.rank == 0 && n.end_ps >= 0) rank0.push_back(&n);
  }
  std::stable_sort(rank0.begin(), rank0.end(), [](const auto* a, const auto* b) {
    return a->end_ps - a->start_ps > b->end_ps - b->start_ps;
  });
  const std::size_t shown = std::min<std::size_t>(rank0.size(), 20);
  out += fmt::format("\n# longest nodes on NPU 0 ({} of {}; every node: --csv); times in us\n", shown, rank0.size());
  out += fmt::format("# {:>8} {:<32} {:<15} {:>12} {:>12} {:>12}  {}\n", "id", "name", "type", "start", "end",
                     "duration", "detail");
  for (std::size_t i = 0; i < shown; ++i) {
    const ChakraNodeRecord& n = *rank0[i];
    out += fmt::format("  {:>8} {:<32} {:<15} {:>12.3f} {:>12.3f} {:>12.3f}  {}\n", n.id, n.name.substr(0, 32), n.type,
                       ps_to_us(n.start_ps), ps_to_us(n.end_ps), ps_to_us(n.end_ps - n.start_ps), n.detail);
  }
  return out;
}

nlohmann::json chakra_json(const ChakraReport& r) {
  nlohmann::json types = nlohmann::json::object();
  for (const auto& [name, count] : r.node_types) types[name] = count;
  nlohmann::json nodes = nlohmann::json::array();
  for (const ChakraNodeRecord& n : r.node_records) {
    nodes.push_back({{"rank", n.rank},
                     {"id", n.id},
                     {"name", n.name},
                     {"type", n.type},
                     {"detail", n.detail},
                     {"ready_ns", ps_to_ns(n.ready_ps)},
                     {"start_ns", ps_to_ns(n.start_ps)},
                     {"end_ns", ps_to_ns(n.end_ps)}});
  }
  return {{"workload", "chakra"},
          {"prefix", r.prefix},
          {"platform", r.platform},
          {"executor", r.executor},
          {"npus", r.npus},
          {"simulated_ranks", r.simulated_ranks},
          {"simulation", r.simulation},
          {"node_types_rank0", types},
          {"total_ns", ps_to_ns(r.total_ps)},
          {"compute_ns", ps_to_ns(r.compute_ps)},
          {"compute_idle_ns", ps_to_ns(r.compute_idle_ps)},
          {"comm_ns", ps_to_ns(r.comm_ps)},
          {"cpu_ns", ps_to_ns(r.cpu_ps)},
          {"network_utilization_per_dim", r.network_utilization_per_dim},
          {"network_bytes_per_dim", r.network_bytes_per_dim},
          {"hbm_utilization_compute", r.hbm_utilization_compute},
          {"hbm_utilization_comm", r.hbm_utilization_comm},
          {"collectives", r.collectives},
          {"messages", r.messages},
          {"events", r.events},
          {"nodes", nodes}};
}

void write_chakra_csv(const ChakraReport& r, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::string path = (std::filesystem::path(dir) / "nodes.csv").string();
  std::ofstream f(path);
  if (!f) throw InputError("--csv: cannot write " + path);
  f << "rank,id,name,type,detail,ready_ns,start_ns,end_ns,duration_ns\n";
  for (const ChakraNodeRecord& n : r.node_records) {
    std::string name = n.name;
    std::replace(name.begin(), name.end(), ',', ';');
    f << n.rank << ',' << n.id << ',' << name << ',' << n.type << ',' << n.detail << ',' << ps_to_ns(n.ready_ps)
      << ',' << ps_to_ns(n.start_ps) << ',' << ps_to_ns(n.end_ps) << ',' << ps_to_ns(n.end_ps - n.start_ps) << '\n';
  }
}

nlohmann::json chakra_trace_events(const ChakraReport& r) {
  nlohmann::json events = nlohmann::json::array();
  std::vector<Rank> ranks;
  for (const ChakraNodeRecord& n : r.node_records) {
    if (ranks.empty() || ranks.back() != n.rank) ranks.push_back(n.rank);
  }
  for (Rank q : ranks) {
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", q}, {"args", {{"name", fmt::format("NPU {}", q)}}}});
    events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", q}, {"tid", 1}, {"args", {{"name", "compute"}}}});
    events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", q}, {"tid", 2}, {"args", {{"name", "cpu"}}}});
    events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", q}, {"tid", 3}, {"args", {{"name", "communication"}}}});
  }
  long long next_id = 1;
  for (const ChakraNodeRecord& n : r.node_records) {
    if (n.end_ps < 0 || n.type == "METADATA_NODE") continue;
    const nlohmann::json args = {{"id", n.id}, {"type", n.type}, {"detail", n.detail}};
    const double ts = ps_to_us(n.start_ps);
    if (n.type.rfind("COMM_", 0) == 0) {
      const std::string id = fmt::format("0x{:x}", next_id++);
      events.push_back({{"ph", "b"}, {"cat", "communication"}, {"name", n.name}, {"pid", n.rank}, {"tid", 3}, {"id", id}, {"ts", ts}, {"args", args}});
      events.push_back({{"ph", "e"}, {"cat", "communication"}, {"name", n.name}, {"pid", n.rank}, {"tid", 3}, {"id", id}, {"ts", ps_to_us(n.end_ps)}});
    } else {
      const int tid = n.detail == "cpu" ? 2 : 1;
      events.push_back({{"ph", "X"}, {"cat", tid == 2 ? "cpu" : "compute"}, {"name", n.name}, {"pid", n.rank}, {"tid", tid},
                        {"ts", ts}, {"dur", ps_to_us(n.end_ps - n.start_ps)}, {"args", args}});
    }
  }
  return {{"displayTimeUnit", "ns"}, {"traceEvents", events}};
}

}  // namespace acesim
