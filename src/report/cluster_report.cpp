// Cluster reports (cluster_report.h).
#include "report/cluster_report.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "config/csv.h"
#include "config/output_file.h"

namespace acesim {
namespace {

double ms(TimePs t) { return ps_to_us(t) / 1e3; }

}  // namespace

std::string format_cluster(const ClusterReport& r, int top_links) {
  std::string s = fmt::format("# acesim cluster: {} job{} on {} nodes ({} GPUs) of {} ({})\n", r.jobs.size(), r.jobs.size() == 1 ? "" : "s",
                              r.nodes, r.gpus, r.platform, r.source);
  std::size_t w = 4;
  for (const ClusterJobReport& j : r.jobs) w = std::max(w, j.name.size());
  s += fmt::format("{:<{}}  {:>6}  {:>10}  {:>14}  {:>14}  {:>8}  {}\n", "job", w, "GPUs", "start(ms)", "iteration(ms)", "alone(ms)",
                   "slowdown", "placement; workload");
  for (const ClusterJobReport& j : r.jobs) {
    const bool alone = j.alone_iteration_ps > 0;
    s += fmt::format("{:<{}}  {:>6}  {:>10.3f}  {:>14.3f}  {:>14}  {:>8}  {}; {}\n", j.name, w, j.gpus, ms(j.start_ps), ms(j.iteration_ps),
                     alone ? fmt::format("{:.3f}", ms(j.alone_iteration_ps)) : "-", alone ? fmt::format("{:.3f}", j.slowdown) : "-",
                     j.placement, j.what);
  }
  s += "# iteration: mean after the first (the first alone when there is one); alone: the same job on the same nodes with no other job\n";
  if (!r.degraded.empty()) {
    s += "\ndegraded hardware:";
    for (const std::string& d : r.degraded) s += (&d == &r.degraded.front() ? " " : "; ") + d;
    s += "\n";
    for (const ClusterJobReport& j : r.jobs) {
      s += fmt::format("  {:<{}}  iteration {:.3f} ms, on healthy hardware {:.3f} ms ({:+.1f}%)\n", j.name, w, ms(j.iteration_ps),
                       ms(j.healthy_iteration_ps), 100.0 * (static_cast<double>(j.iteration_ps) / static_cast<double>(j.healthy_iteration_ps) - 1.0));
    }
  }
  if (!r.links.empty()) {
    const int shown = std::min<int>(top_links, static_cast<int>(r.links.size()));
    s += fmt::format("\nbusiest links ({} of {} that carried bytes; utilisation: bytes over what the link could carry in {:.3f} ms)\n", shown,
                     r.links.size(), ms(r.total_ps));
    std::size_t lw = 4;
    for (int i = 0; i < shown; ++i) lw = std::max(lw, r.links[static_cast<std::size_t>(i)].name.size());
    s += fmt::format("{:<{}}  {:>8}  {:>6}", "link", lw, "GB/s", "util");
    for (const ClusterJobReport& j : r.jobs) s += fmt::format("  {:>10}", j.name + "(GB)");
    s += "\n";
    for (int i = 0; i < shown; ++i) {
      const ClusterLinkReport& l = r.links[static_cast<std::size_t>(i)];
      s += fmt::format("{:<{}}  {:>8.1f}  {:>5.1f}%", l.name, lw, l.bandwidth_GBps, 100.0 * l.utilization);
      for (double b : l.bytes_by_job) s += fmt::format("  {:>10.3f}", b / 1e9);
      s += "\n";
    }
  }
  s += fmt::format("# {} events; simulated {:.3f} ms; every rank of every job simulated (jobs share links, so no rank stands for others)\n",
                   r.events, ms(r.total_ps));
  return s;
}

nlohmann::json cluster_json(const ClusterReport& r, int top_links) {
  nlohmann::json jobs = nlohmann::json::array();
  for (const ClusterJobReport& j : r.jobs) {
    nlohmann::json ends = nlohmann::json::array();
    for (TimePs e : j.iteration_end_ps) ends.push_back(ps_to_ns(e));
    jobs.push_back({{"name", j.name},
                    {"workload", j.what},
                    {"placement", j.placement},
                    {"nodes", j.nodes},
                    {"gpus", j.gpus},
                    {"start_ns", ps_to_ns(j.start_ps)},
                    {"iteration_end_ns", ends},
                    {"iteration_time_ns", ps_to_ns(j.iteration_ps)},
                    {"alone_iteration_time_ns", j.alone_iteration_ps > 0 ? nlohmann::json(ps_to_ns(j.alone_iteration_ps)) : nlohmann::json(nullptr)},
                    {"slowdown", j.alone_iteration_ps > 0 ? nlohmann::json(j.slowdown) : nlohmann::json(nullptr)},
                    {"finish_ns", ps_to_ns(j.finish_ps)},
                    {"healthy_iteration_time_ns", j.healthy_iteration_ps > 0 ? nlohmann::json(ps_to_ns(j.healthy_iteration_ps)) : nlohmann::json(nullptr)},
                    {"network_bytes", j.network_bytes}});
  }
  nlohmann::json links = nlohmann::json::array();
  for (std::size_t i = 0; i < r.links.size() && static_cast<int>(i) < top_links; ++i) {
    const ClusterLinkReport& l = r.links[i];
    nlohmann::json by_job = nlohmann::json::object();
    for (std::size_t j = 0; j < r.jobs.size(); ++j) by_job[r.jobs[j].name] = l.bytes_by_job[j];
    links.push_back({{"link", l.name}, {"dim", l.dim}, {"bandwidth_GBps", l.bandwidth_GBps}, {"utilization", l.utilization}, {"bytes_by_job", by_job}});
  }
  return {{"source", r.source},
          {"platform", r.platform},
          {"nodes", r.nodes},
          {"gpus", r.gpus},
          {"total_time_ns", ps_to_ns(r.total_ps)},
          {"jobs", jobs},
          {"busiest_links", links},
          {"degraded", r.degraded},
          {"links_used", r.links.size()},
          {"simulation", "full: every rank of every job"},
          {"events", r.events}};
}

void write_cluster_csv(const ClusterReport& r, const std::string& dir) {
  create_output_directory(dir, "--csv");
  std::string jobs = "job,gpus,nodes,start_ns,iteration_time_ns,alone_iteration_time_ns,slowdown,finish_ns,network_bytes,workload,placement\n";
  std::string iterations = "job,iteration,end_ns\n";
  for (const ClusterJobReport& j : r.jobs) {
    CsvLine row;
    row << j.name << j.gpus << static_cast<long long>(j.nodes.size()) << ps_to_ns(j.start_ps) << ps_to_ns(j.iteration_ps);
    if (j.alone_iteration_ps > 0) {
      row << ps_to_ns(j.alone_iteration_ps) << j.slowdown;
    } else {
      row << "" << "";  // not run (--no-alone): empty, as JSON's null
    }
    jobs += (row << ps_to_ns(j.finish_ps) << j.network_bytes << j.what << j.placement).text();
    for (std::size_t k = 0; k < j.iteration_end_ps.size(); ++k) iterations += (CsvLine() << j.name << k << ps_to_ns(j.iteration_end_ps[k])).text();
  }
  std::string links = "link,dim,bandwidth_GBps,utilization";
  for (const ClusterJobReport& j : r.jobs) links += "," + csv_field("bytes_" + j.name);
  links += "\n";
  for (const ClusterLinkReport& l : r.links) {
    CsvLine row;
    row << l.name << l.dim << l.bandwidth_GBps << l.utilization;
    for (double b : l.bytes_by_job) row << b;
    links += row.text();
  }
  const std::filesystem::path d(dir);
  write_output_file((d / "jobs.csv").string(), jobs, "--csv");
  write_output_file((d / "iterations.csv").string(), iterations, "--csv");
  write_output_file((d / "links.csv").string(), links, "--csv");
}

nlohmann::json cluster_trace(const ClusterReport& r) {
  nlohmann::json events = nlohmann::json::array();
  for (std::size_t j = 0; j < r.jobs.size(); ++j) {
    const ClusterJobReport& job = r.jobs[j];
    const auto pid = static_cast<int>(j);
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"args", {{"name", fmt::format("job {} ({} GPUs; {})", job.name, job.gpus, job.placement)}}}});
    events.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", pid}, {"args", {{"sort_index", pid}}}});
    const char* tracks[] = {"compute", "communication", "iterations"};
    for (int t = 0; t < 3; ++t) events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid}, {"tid", t}, {"args", {{"name", tracks[t]}}}});
    TimePs from = job.start_ps;
    for (std::size_t k = 0; k < job.iteration_end_ps.size(); ++k) {
      events.push_back({{"ph", "X"}, {"cat", "iteration"}, {"name", fmt::format("iteration {}", k)}, {"pid", pid}, {"tid", 2},
                        {"ts", ps_to_us(from)}, {"dur", ps_to_us(job.iteration_end_ps[k] - from)}});
      from = job.iteration_end_ps[k];
    }
  }
  long long next_id = 1;
  for (const ClusterSpan& s : r.spans) {
    if (s.compute) {
      events.push_back({{"ph", "X"}, {"cat", "compute"}, {"name", s.what}, {"pid", s.job}, {"tid", 0}, {"ts", ps_to_us(s.begin)},
                        {"dur", ps_to_us(s.end - s.begin)}});
      continue;
    }
    const std::string id = fmt::format("0x{:x}", next_id++);
    events.push_back({{"ph", "b"}, {"cat", "communication"}, {"name", s.what}, {"pid", s.job}, {"tid", 1}, {"id", id}, {"ts", ps_to_us(s.begin)}});
    events.push_back({{"ph", "e"}, {"cat", "communication"}, {"name", s.what}, {"pid", s.job}, {"tid", 1}, {"id", id}, {"ts", ps_to_us(s.end)}});
  }
  return {{"displayTimeUnit", "ns"}, {"traceEvents", events}};
}

}  // namespace acesim
