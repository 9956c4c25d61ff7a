#include "report/chakra_report.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "config/output_file.h"
#include "config/csv.h"
#include "report/collective_sweep.h"
#include "report/training_report.h"

namespace acesim {

std::string format_chakra(const ChakraReport& r, const PlatformConfig& platform) {
  std::string types;
  for (const auto& [name, count] : r.node_types) types += fmt::format("{}{} {}", types.empty() ? "" : ", ", count, name);
  std::string out = fmt::format("# acesim run: Chakra traces {}.<rank>.et on {} NPUs; rank 0: {} nodes ({})\n", r.prefix,
                                r.npus, r.nodes, types);
  out += fmt::format("# platform: {} ({})\n", describe_platform(platform), platform.source);
  out += fmt::format("# simulated {} of {} ranks: {}\n", r.simulated_ranks, r.npus, r.simulation);
  // Rank 0's figures are those of the measured (last) iteration: the whole
  // run when there is one.
  auto pct = [&](TimePs t) {
    return r.iteration_ps > 0 ? 100.0 * static_cast<double>(t) / static_cast<double>(r.iteration_ps) : 0.0;
  };
  out += fmt::format("total time (us)                   {:>14.3f}\n", ps_to_us(r.total_ps));
  if (r.iterations > 1) {
    out += fmt::format("iteration time (us)               {:>14.3f}  the last of {}; the first ended at {:.3f} us\n",
                       ps_to_us(r.iteration_ps), r.iterations, ps_to_us(r.first_iteration_ps));
    std::string times;
    for (std::size_t k = 0; k < r.iteration_end_ps.size() && k < 10; ++k) {
      times += fmt::format("{}{:.3f}", k ? ", " : "", ps_to_us(r.iteration_end_ps[k] - (k ? r.iteration_end_ps[k - 1] : 0)));
    }
    out += "iteration times (us)              " + times + (r.iteration_end_ps.size() > 10 ? ", ... (--json)" : "") + "\n";
  }
  out += fmt::format("NPU 0 compute (us)                {:>14.3f}  {:5.1f}%\n", ps_to_us(r.compute_ps), pct(r.compute_ps));
  out += fmt::format("NPU 0 compute stream idle (us)    {:>14.3f}  {:5.1f}%  waiting for communication, CPU or dependencies\n",
                     ps_to_us(r.compute_idle_ps), pct(r.compute_idle_ps));
  out += fmt::format("NPU 0 communication (us)          {:>14.3f}  {:5.1f}%  a collective or message in flight\n",
                     ps_to_us(r.comm_ps), pct(r.comm_ps));
  out += fmt::format("NPU 0 exposed communication (us)  {:>14.3f}  {:5.1f}%  in flight while no kernel and no CPU node runs\n",
                     ps_to_us(r.exposed_comm_ps), pct(r.exposed_comm_ps));
  out += fmt::format("NPU 0 CPU (us)                    {:>14.3f}  {:5.1f}%\n", ps_to_us(r.cpu_ps), pct(r.cpu_ps));
  std::string util;
  for (std::size_t d = 0; d < r.network_utilization_per_dim.size(); ++d) {
    util += fmt::format("{}dim {} {:.1f}%", d ? ", " : "", d, 100.0 * r.network_utilization_per_dim[d]);
  }
  out += "network utilization               " + util + "\n";
  std::string in_flight;
  for (std::size_t d = 0; d < r.network_utilization_in_flight_per_dim.size(); ++d) {
    in_flight += fmt::format("{}dim {} {:.1f}%", d ? ", " : "", d, 100.0 * r.network_utilization_in_flight_per_dim[d]);
  }
  out += "network utilization in flight     " + in_flight + "  (while communication over the dimension is in flight)\n";
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
                     {"iteration", n.iteration},
                     {"ready_ns", ps_to_ns(n.ready_ps)},
                     {"start_ns", ps_to_ns(n.start_ps)},
                     {"end_ns", ps_to_ns(n.end_ps)}});
  }
  // The core keys of training_json, with the same meanings (docs/workloads.md),
  // then what only a trace has.
  return {{"workload", "chakra"},
          {"prefix", r.prefix},
          {"platform", r.platform},
          {"executor", r.executor},
          {"npus", r.npus},
          {"simulated_ranks", r.simulated_ranks},
          {"simulation", r.simulation},
          {"iterations", r.iterations},
          {"iteration_time_ns", ps_to_ns(r.iteration_ps)},
          {"iteration_times_ns", iteration_times_ns(r.iteration_end_ps)},
          {"first_iteration_ns", ps_to_ns(r.first_iteration_ps)},
          {"total_time_ns", ps_to_ns(r.total_ps)},
          {"compute_time_ns", ps_to_ns(r.compute_ps)},
          {"exposed_comm_ns", ps_to_ns(r.exposed_comm_ps)},
          {"comm_time_ns", ps_to_ns(r.comm_ps)},
          {"overlap_ns", ps_to_ns(r.overlap_ps)},
          {"cpu_time_ns", ps_to_ns(r.cpu_ps)},
          {"compute_idle_ns", ps_to_ns(r.compute_idle_ps)},
          {"network_utilization_per_dim", r.network_utilization_per_dim},
          {"network_utilization_in_flight_per_dim", r.network_utilization_in_flight_per_dim},
          {"comm_in_flight_ns_per_dim", ps_to_ns_each(r.comm_in_flight_ps_per_dim)},
          {"network_bytes_per_dim", r.network_bytes_per_dim},
          {"hbm_utilization", {{"compute", r.hbm_utilization_compute}, {"communication", r.hbm_utilization_comm}}},
          {"hbm_bytes", {{"compute", r.hbm_bytes_compute}, {"communication", r.hbm_bytes_comm}}},
          {"comm_unit_seconds", r.comm_unit_seconds},
          {"energy_J", r.energy_J ? nlohmann::json(*r.energy_J) : nlohmann::json(nullptr)},
          {"collectives", r.collectives},
          {"messages", r.messages},
          {"events", r.events},
          {"node_types_rank0", types},
          {"nodes", nodes}};
}

void write_chakra_csv(const ChakraReport& r, const std::string& dir) {
  create_output_directory(dir, "--csv");
  std::string out = "rank,id,name,type,detail,ready_ns,start_ns,end_ns,duration_ns,iteration\n";
  for (const ChakraNodeRecord& n : r.node_records) {
    out += (CsvLine() << n.rank << n.id << n.name << n.type << n.detail << ps_to_ns(n.ready_ps) << ps_to_ns(n.start_ps)
                     << ps_to_ns(n.end_ps) << ps_to_ns(n.end_ps - n.start_ps) << n.iteration)
               .text();
  }
  write_output_file((std::filesystem::path(dir) / "nodes.csv").string(), out, "--csv");
  write_network_csv(dir, r.network_bytes_per_dim, r.network_utilization_per_dim, r.comm_in_flight_ps_per_dim,
                    r.network_utilization_in_flight_per_dim);
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
