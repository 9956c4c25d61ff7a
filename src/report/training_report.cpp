#include "report/training_report.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "config/output_file.h"
#include "config/csv.h"
#include "report/collective_sweep.h"

namespace acesim {
namespace {

double us(TimePs t) { return ps_to_us(t); }
double ps_to_us_d(double ps) { return ps / 1e6; }

std::string pct(double part, double whole) { return whole > 0 ? fmt::format("{:.1f}%", 100.0 * part / whole) : "-"; }

std::string dims_text(const std::vector<int>& dims) {
  if (dims.empty()) return "all";
  std::string s;
  for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s;
}

}  // namespace

std::string format_training(const TrainReport& r, const PlatformConfig& platform) {
  std::string out;
  out += fmt::format("# acesim run: {} ({}) on {} NPUs, {} iteration(s), executor {}\n", r.workload, r.parallelism, r.npus,
                     r.iterations, r.executor);
  out += fmt::format("# platform: {} ({})\n", describe_platform(platform), platform.source);
  out += fmt::format("# simulated {} of {} ranks: {}\n", r.simulated_ranks, r.npus, r.simulation);
  const double it = static_cast<double>(r.iteration_ps);
  out += fmt::format("iteration time        {:>14.3f} us   (steady state; the first iteration ended at {:.3f} us)\n",
                     us(r.iteration_ps), us(r.first_iteration_ps));
  out += fmt::format("compute time          {:>14.3f} us   {:>6}\n", us(r.compute_ps), pct(static_cast<double>(r.compute_ps), it));
  out += fmt::format("exposed communication {:>14.3f} us   {:>6}\n", us(r.exposed_comm_ps),
                     pct(static_cast<double>(r.exposed_comm_ps), it));
  out += fmt::format("communication time    {:>14.3f} us   (a collective in flight)\n", us(r.comm_ps));
  out += fmt::format("overlapped            {:>14.3f} us   {:>6} of communication\n", us(r.overlap_ps),
                     pct(static_cast<double>(r.overlap_ps), static_cast<double>(r.comm_ps)));
  if (r.tflops_per_gpu > 0.0) {
    out += fmt::format("model TFLOP/s per GPU {:>14.1f}      MFU {:.1f}% (Megatron-LM's FLOP count, arXiv 2104.04473 eq. 3)\n",
                       r.tflops_per_gpu, 100.0 * r.mfu);
  }
  for (std::size_t d = 0; d < r.network_utilization_per_dim.size(); ++d) {
    out += fmt::format("network dim {:<2} util   {:>13.1f}%   ({:.3g} bytes sent per NPU)\n", d,
                       100.0 * r.network_utilization_per_dim[d], r.network_bytes_per_dim[d]);
    out += fmt::format("network dim {:<2} in flight{:>11.1f}%   (the same bytes over the {:.3f} us communication over it was in flight)\n",
                       d, 100.0 * r.network_utilization_in_flight_per_dim[d], ps_to_us_d(r.comm_in_flight_ps_per_dim[d]));
  }
  out += fmt::format("HBM util compute      {:>13.1f}%   ({:.3g} bytes per NPU)\n", 100.0 * r.hbm_utilization_compute,
                     r.hbm_bytes_compute);
  out += fmt::format("HBM util comm         {:>13.1f}%   ({:.3g} bytes per NPU)\n", 100.0 * r.hbm_utilization_comm,
                     r.hbm_bytes_comm);
  if (r.energy_J) {
    out += fmt::format("energy                {:>14.6g} J    (every NPU, whole run; the platform's energy model)\n", *r.energy_J);
  }
  out += "\n# per layer (last iteration, NPU 0; times in us)\n";
  out += fmt::format("# {:<24} {:>10} {:>10} {:>10} {:>15} {:>12} {:>10}\n", "layer", "fwd", "ig", "wg", "wg comm", "comm(us)",
                     "exposed");
  for (const LayerReport& l : r.layers) {
    std::string comm = "-";
    TimePs comm_ps = 0;
    for (int p = 0; p < 3; ++p) {
      if (l.comm_op[p].empty()) continue;
      comm_ps += l.comm_ps[p];
    }
    if (!l.comm_op[2].empty()) comm = fmt::format("{} {:.3g}B", l.comm_op[2], l.comm_bytes[2]);
    else if (!l.comm_op[0].empty()) comm = fmt::format("fwd {} {:.3g}B", l.comm_op[0], l.comm_bytes[0]);
    out += fmt::format("  {:<24} {:>10.3f} {:>10.3f} {:>10.3f} {:>15} {:>12.3f} {:>10.3f}\n", l.name, us(l.compute_ps[0]),
                       us(l.compute_ps[1]), us(l.compute_ps[2]), comm, us(comm_ps), us(l.exposed_ps));
  }
  return out;
}

std::string format_comparison(const std::vector<TrainReport>& runs, const PlatformConfig& platform) {
  std::string out;
  if (runs.empty()) return out;
  out += fmt::format("# acesim run: {} ({}) on {} NPUs, {} iteration(s)\n", runs[0].workload, runs[0].parallelism, runs[0].npus,
                     runs[0].iterations);
  out += fmt::format("# platform: {} ({})\n", describe_platform(platform), platform.source);
  out += fmt::format("# simulated {} of {} ranks: {}\n", runs[0].simulated_ranks, runs[0].npus, runs[0].simulation);
  out += fmt::format("# {:<28}", "");
  for (const TrainReport& r : runs) out += fmt::format(" {:>16}", r.executor);
  out += "\n";
  auto row = [&](const std::string& name, auto value) {
    out += fmt::format("  {:<28}", name);
    for (const TrainReport& r : runs) out += fmt::format(" {:>16}", value(r));
    out += "\n";
  };
  row("iteration time (us)", [](const TrainReport& r) { return fmt::format("{:.3f}", us(r.iteration_ps)); });
  row("compute time (us)", [](const TrainReport& r) { return fmt::format("{:.3f}", us(r.compute_ps)); });
  row("exposed communication (us)", [](const TrainReport& r) { return fmt::format("{:.3f}", us(r.exposed_comm_ps)); });
  row("communication time (us)", [](const TrainReport& r) { return fmt::format("{:.3f}", us(r.comm_ps)); });
  row("overlapped (us)", [](const TrainReport& r) { return fmt::format("{:.3f}", us(r.overlap_ps)); });
  for (std::size_t d = 0; d < runs[0].network_utilization_per_dim.size(); ++d) {
    row(fmt::format("network dim {} utilization", d),
        [d](const TrainReport& r) { return fmt::format("{:.1f}%", 100.0 * r.network_utilization_per_dim[d]); });
    row(fmt::format("network dim {} in flight", d),
        [d](const TrainReport& r) { return fmt::format("{:.1f}%", 100.0 * r.network_utilization_in_flight_per_dim[d]); });
  }
  row("HBM utilization, compute", [](const TrainReport& r) { return fmt::format("{:.1f}%", 100.0 * r.hbm_utilization_compute); });
  row("HBM utilization, comm", [](const TrainReport& r) { return fmt::format("{:.1f}%", 100.0 * r.hbm_utilization_comm); });
  row("HBM bytes per network byte", [](const TrainReport& r) {
    double net = 0;
    for (double b : r.network_bytes_per_dim) net += b;
    return fmt::format("{:.2f}", net > 0 ? r.hbm_bytes_comm / net : 0.0);
  });
  row("speedup vs first", [&runs](const TrainReport& r) {
    return fmt::format("{:.3f}x", r.iteration_ps > 0 ? static_cast<double>(runs[0].iteration_ps) / static_cast<double>(r.iteration_ps) : 0.0);
  });
  out += "\n# per layer: compute (fwd+ig+wg) and exposed communication, us\n";
  out += fmt::format("# {:<24}", "layer");
  for (const TrainReport& r : runs) out += fmt::format(" {:>14} {:>10}", fmt::format("{} compute", r.executor), "exposed");
  out += "\n";
  for (std::size_t i = 0; i < runs[0].layers.size(); ++i) {
    out += fmt::format("  {:<24}", runs[0].layers[i].name);
    for (const TrainReport& r : runs) {
      const LayerReport& l = r.layers[i];
      out += fmt::format(" {:>14.3f} {:>10.3f}", us(l.compute_ps[0] + l.compute_ps[1] + l.compute_ps[2]), us(l.exposed_ps));
    }
    out += "\n";
  }
  return out;
}

nlohmann::json training_json(const TrainReport& r) {
  nlohmann::json layers = nlohmann::json::array();
  const char* pass_names[3] = {"forward", "input_grad", "weight_grad"};
  for (const LayerReport& l : r.layers) {
    nlohmann::json j = {{"name", l.name}, {"exposed_comm_ns", ps_to_ns(l.exposed_ps)}};
    for (int p = 0; p < 3; ++p) {
      j[std::string(pass_names[p]) + "_compute_ns"] = ps_to_ns(l.compute_ps[p]);
      if (!l.comm_op[p].empty()) {
        j[std::string(pass_names[p]) + "_comm"] = {{"op", l.comm_op[p]}, {"bytes", l.comm_bytes[p]}, {"time_ns", ps_to_ns(l.comm_ps[p])}};
      }
    }
    layers.push_back(std::move(j));
  }
  return {{"workload", r.workload},
          {"parallelism", r.parallelism},
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
          {"tflops_per_gpu", r.tflops_per_gpu},
          {"mfu", r.mfu},
          {"network_utilization_per_dim", r.network_utilization_per_dim},
          {"network_utilization_in_flight_per_dim", r.network_utilization_in_flight_per_dim},
          {"comm_in_flight_ns_per_dim", ps_to_ns_each(r.comm_in_flight_ps_per_dim)},
          {"network_bytes_per_dim", r.network_bytes_per_dim},
          {"hbm_utilization", {{"compute", r.hbm_utilization_compute}, {"communication", r.hbm_utilization_comm}}},
          {"hbm_bytes", {{"compute", r.hbm_bytes_compute}, {"communication", r.hbm_bytes_comm}}},
          {"comm_unit_seconds", r.comm_unit_seconds},
          {"energy_J", r.energy_J ? nlohmann::json(*r.energy_J) : nlohmann::json(nullptr)},
          {"collectives", static_cast<long long>(r.collectives.size())},
          {"events", r.events},
          {"layers", layers}};
}

std::vector<double> iteration_times_ns(const std::vector<TimePs>& ends) {
  std::vector<double> times;
  for (std::size_t k = 0; k < ends.size(); ++k) times.push_back(ps_to_ns(ends[k] - (k > 0 ? ends[k - 1] : 0)));
  return times;
}

std::vector<double> ps_to_ns_each(const std::vector<double>& ps) {
  std::vector<double> ns;
  for (double t : ps) ns.push_back(t / 1e3);
  return ns;
}

void write_network_csv(const std::string& dir, const std::vector<double>& bytes, const std::vector<double>& utilization,
                       const std::vector<double>& in_flight_ps, const std::vector<double>& utilization_in_flight) {
  std::string out = "dim,bytes_sent_per_npu,utilization,comm_in_flight_ns,utilization_in_flight\n";
  for (std::size_t d = 0; d < bytes.size(); ++d) {
    out += (CsvLine() << d << bytes[d] << utilization[d] << in_flight_ps[d] / 1e3 << utilization_in_flight[d]).text();
  }
  write_output_file((std::filesystem::path(dir) / "network.csv").string(), out, "--csv");
}

void write_training_csv(const TrainReport& r, const std::string& dir) {
  create_output_directory(dir, "--csv");
  std::string layers =
      "layer,forward_compute_ns,input_grad_compute_ns,weight_grad_compute_ns,forward_comm_op,forward_comm_bytes,"
      "forward_comm_ns,input_grad_comm_op,input_grad_comm_bytes,input_grad_comm_ns,weight_grad_comm_op,"
      "weight_grad_comm_bytes,weight_grad_comm_ns,exposed_comm_ns\n";
  for (const LayerReport& l : r.layers) {
    CsvLine row;
    row << l.name << ps_to_ns(l.compute_ps[0]) << ps_to_ns(l.compute_ps[1]) << ps_to_ns(l.compute_ps[2]);
    for (int p = 0; p < 3; ++p) row << l.comm_op[p] << l.comm_bytes[p] << ps_to_ns(l.comm_ps[p]);
    layers += (row << ps_to_ns(l.exposed_ps)).text();
  }
  write_output_file((std::filesystem::path(dir) / "layers.csv").string(), layers, "--csv");
  std::string collectives = "iteration,layer,pass,op,bytes,dims,issue_ns,done_ns,duration_ns\n";
  for (const CollectiveRecord& c : r.collectives) {
    collectives += (CsvLine() << c.iteration << r.layers[static_cast<std::size_t>(c.layer)].name << to_string(c.pass)
                             << to_string(c.op) << c.bytes << dims_text(c.dims) << ps_to_ns(c.issue_ps) << ps_to_ns(c.done_ps)
                             << ps_to_ns(c.done_ps - c.issue_ps))
                       .text();
  }
  write_output_file((std::filesystem::path(dir) / "collectives.csv").string(), collectives, "--csv");
  write_network_csv(dir, r.network_bytes_per_dim, r.network_utilization_per_dim, r.comm_in_flight_ps_per_dim,
                    r.network_utilization_in_flight_per_dim);
}

nlohmann::json training_trace(const TrainReport& r) {
  nlohmann::json events = nlohmann::json::array();
  std::vector<Rank> ranks;
  for (const Span& s : r.spans) {
    if (std::find(ranks.begin(), ranks.end(), s.rank) == ranks.end()) ranks.push_back(s.rank);
  }
  std::sort(ranks.begin(), ranks.end());
  for (Rank q : ranks) {
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", q}, {"args", {{"name", fmt::format("NPU {}", q)}}}});
    events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", q}, {"tid", 1}, {"args", {{"name", "compute"}}}});
    events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", q}, {"tid", 2}, {"args", {{"name", "waiting for communication"}}}});
  }
  long long next_id = 1;
  for (const Span& s : r.spans) {
    const std::string layer = s.layer >= 0 ? r.layers[static_cast<std::size_t>(s.layer)].name : "?";
    const std::string name = layer + " " + std::string(to_string(s.pass));
    const double ts = ps_to_us(s.begin);
    const double dur = ps_to_us(s.end - s.begin);
    const nlohmann::json args = {{"iteration", s.iteration}, {"layer", layer}, {"pass", std::string(to_string(s.pass))}};
    switch (s.kind) {
      case Span::kCompute:
        events.push_back({{"ph", "X"}, {"cat", "compute"}, {"name", name}, {"pid", s.rank}, {"tid", 1}, {"ts", ts}, {"dur", dur}, {"args", args}});
        break;
      case Span::kWait:
        events.push_back({{"ph", "X"}, {"cat", "wait"}, {"name", "wait: " + name}, {"pid", s.rank}, {"tid", 2}, {"ts", ts}, {"dur", dur}, {"args", args}});
        break;
      case Span::kCollective: {
        const std::string id = fmt::format("0x{:x}", next_id++);
        events.push_back({{"ph", "b"}, {"cat", "collective"}, {"name", name}, {"pid", s.rank}, {"tid", 3}, {"id", id}, {"ts", ts}, {"args", args}});
        events.push_back({{"ph", "e"}, {"cat", "collective"}, {"name", name}, {"pid", s.rank}, {"tid", 3}, {"id", id}, {"ts", ps_to_us(s.end)}});
        break;
      }
    }
  }
  return {{"displayTimeUnit", "ns"}, {"traceEvents", events}};
}

}  // namespace acesim
