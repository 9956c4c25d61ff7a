#include "reproduce/ace_isca21.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "config/embedded.h"
#include "config/input_error.h"
#include "config/output_file.h"
#include "registry/quote.h"
#include "reproduce/plot_script.h"
#include "workload/formats/astra_workload.h"
#include "workload/models/models.h"

namespace acesim {
namespace {

// The paper's headline figures (ACE.md): average and maximum.
struct PaperFigure {
  const char* claim;
  double avg;
  double max;  // <= 0: not given
};

std::string config_name(int units, HbmSharing hbm, double share) {
  const std::string h = hbm == HbmSharing::kStatic ? fmt::format("hbm{}", static_cast<int>(std::lround(share * 100)))
                                                   : std::string("fair");
  return fmt::format("baseline-u{}-{}", units, h);
}

}  // namespace

std::vector<ReproConfig> repro_configs(const NpuConfig& npu) {
  std::vector<ReproConfig> c;
  c.push_back({"ideal", "ideal"});
  c.push_back({"ace", "ace"});
  // No overlap: gradients are reduced while compute waits, so communication
  // gets the whole NPU: every unit, and HBM first.
  c.push_back({"no-overlap", "sm", npu.compute_units, HbmSharing::kCommPriority, 0.5, true});
  // Overlapping baselines: compute units x HBM sharing splits.
  for (int units : {4, 8, 16, 32}) {
    if (units >= npu.compute_units) continue;
    c.push_back({config_name(units, HbmSharing::kFair, 0), "sm", units, HbmSharing::kFair, 0.5, false});
    for (double share : {0.25, 0.5}) {
      c.push_back({config_name(units, HbmSharing::kStatic, share), "sm", units, HbmSharing::kStatic, share, false});
    }
  }
  return c;
}

PlatformConfig repro_platform(int npus) {
  PlatformConfig p = parse_platform_yaml(embedded_file("presets/ace-isca21.yaml"), "presets/ace-isca21.yaml");
  // Local ring of 4 in a package; vertical x horizontal rings between packages.
  static const std::map<int, std::pair<int, int>> shape = {{16, {2, 2}}, {32, {4, 2}}, {64, {4, 4}}, {128, {8, 4}}};
  const auto it = shape.find(npus);
  if (it == shape.end()) throw InputError("--sizes: " + std::to_string(npus) + " NPUs is not one of 16, 32, 64, 128");
  p.dims[1].npus = it->second.first;
  p.dims[2].npus = it->second.second;
  p.source = fmt::format("presets/ace-isca21.yaml ({} NPUs: 4x{}x{})", npus, it->second.first, it->second.second);
  return p;
}

const std::vector<std::string>& ace_isca21_workloads() {
  static const std::vector<std::string> names = {"resnet50", "gnmt", "dlrm"};
  return names;
}

const std::vector<int>& ace_isca21_sizes() {
  static const std::vector<int> sizes = {16, 32, 64, 128};
  return sizes;
}

Workload repro_workload(const std::string& name, const Topology& topo) {
  if (name == "resnet50") {
    Workload w = parse_astra_workload(embedded_file("presets/workloads/Resnet50_DataParallel.txt"),
                                      "presets/workloads/Resnet50_DataParallel.txt", topo);
    w.name = "ResNet-50";
    return w;
  }
  if (name == "dlrm") {
    Workload w = parse_astra_workload(embedded_file("presets/workloads/DLRM_HybridParallel.txt"),
                                      "presets/workloads/DLRM_HybridParallel.txt", topo);
    w.name = "DLRM";
    return w;
  }
  if (name == "gnmt") {
    // No public table: built from its architecture; compute times come from
    // FLOPs and HBM bytes through the NPU's roofline.
    ModelOptions o;
    return build_model("gnmt", o, topo);
  }
  throw InputError("--workloads: unknown workload " + quote(name) + suggestion(name, ace_isca21_workloads()));
}

namespace {

struct Job {
  std::string workload;
  int npus;
  ReproConfig config;
  std::string study;
  double value = 0.0;
  // Sensitivity overrides.
  double sram_MiB = 0.0;
  double alu_GBps = 0.0;
  double hbm_GBps = 0.0;
  double link_scale = 0.0;
  double max_chunk_KiB = 0.0;
};

ReproResult run_job(const Job& job) {
  PlatformConfig p = repro_platform(job.npus);
  p.npu.executor = job.config.executor;
  if (job.config.executor == "sm") {
    p.npu.sm.units = job.config.units;
    p.npu.hbm_sharing = job.config.hbm;
    p.npu.hbm_comm_share = job.config.hbm_comm_share;
  }
  if (job.sram_MiB > 0.0) {
    p.npu.ace.sram_bytes = static_cast<std::uint64_t>(job.sram_MiB * 1024 * 1024);
    p.collectives.max_chunk_bytes = std::min<std::uint64_t>(p.collectives.max_chunk_bytes, p.npu.ace.sram_bytes);
  }
  if (job.alu_GBps > 0.0) p.npu.ace.alu_GBps = job.alu_GBps;
  if (job.hbm_GBps > 0.0) p.npu.hbm_GBps = job.hbm_GBps;
  if (job.max_chunk_KiB > 0.0) p.collectives.max_chunk_bytes = static_cast<std::uint64_t>(job.max_chunk_KiB * 1024);
  if (job.link_scale > 0.0) {
    for (DimensionSpec& d : p.dims) d.bandwidth_GBps *= job.link_scale;
  }
  const Topology topo(p.dims);
  Workload w = repro_workload(job.workload, topo);
  if (job.config.blocking_gradients) {
    for (Layer& l : w.layers) l.weight_grad.comm.blocking = true;
  }
  ReproResult r;
  r.workload = job.workload;
  r.npus = job.npus;
  r.config = job.config;
  r.study = job.study;
  r.value = job.value;
  r.report = run_training(p, w);
  const double seconds = ps_to_seconds(r.report.total_ps);
  double sent = 0.0, cap = 0.0, cap_in_flight = 0.0;
  for (std::size_t d = 0; d < p.dims.size(); ++d) {
    sent += r.report.network_bytes_per_dim[d];
    cap += npu_link_capacity_Bps(p.dims[d]) * seconds;
    cap_in_flight += npu_link_capacity_Bps(p.dims[d]) * (r.report.comm_in_flight_ps_per_dim[d] / static_cast<double>(kPsPerSec));
  }
  r.network_utilization = cap > 0 ? sent / cap : 0.0;
  r.network_utilization_in_flight = cap_in_flight > 0 ? sent / cap_in_flight : 0.0;
  r.hbm_bytes_per_network_byte = sent > 0 ? r.report.hbm_bytes_comm / sent : 0.0;
  r.network_GBps_per_npu = seconds > 0 ? sent / seconds / 1e9 : 0.0;
  r.hbm_comm_GBps_per_npu = seconds > 0 ? r.report.hbm_bytes_comm / seconds / 1e9 : 0.0;
  return r;
}

std::vector<ReproResult> run_jobs(const std::vector<Job>& jobs, int threads, std::FILE* progress, const char* what,
                                  const Progress& live) {
  std::vector<ReproResult> results(jobs.size());
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> done{0};
  std::mutex mu;
  std::string error;
  auto worker = [&] {
    for (;;) {
      const std::size_t i = next.fetch_add(1);
      if (i >= jobs.size()) return;
      try {
        results[i] = run_job(jobs[i]);
      } catch (const std::exception& e) {
        const std::lock_guard<std::mutex> lock(mu);
        if (error.empty()) error = jobs[i].workload + " " + std::to_string(jobs[i].npus) + " " + jobs[i].config.name + ": " + e.what();
      }
      const std::size_t d = done.fetch_add(1) + 1;
      if (live.on()) {
        const std::lock_guard<std::mutex> lock(mu);
        live.stage(fmt::format("{} {}/{} runs done", what, d, jobs.size()));
        live.report(-1, 0, static_cast<double>(d) / static_cast<double>(jobs.size()));
        continue;
      }
      // Progress: about every tenth of the runs, one line each.
      const std::size_t step = std::max<std::size_t>(1, jobs.size() / 10);
      if (progress != nullptr && (d % step == 0 || d == jobs.size())) {
        const std::lock_guard<std::mutex> lock(mu);
        std::fprintf(progress, "reproduce: %s %zu/%zu runs done\n", what, d, jobs.size());
        std::fflush(progress);
      }
    }
  };
  std::vector<std::thread> pool;
  const int n = std::max(1, std::min<int>(threads, static_cast<int>(jobs.size())));
  for (int t = 0; t < n; ++t) pool.emplace_back(worker);
  for (std::thread& t : pool) t.join();
  if (!error.empty()) throw std::runtime_error("reproduce: " + error);
  return results;
}

const ReproResult* find(const std::vector<ReproResult>& rs, const std::string& w, int n, const std::string& config) {
  for (const ReproResult& r : rs) {
    if (r.workload == w && r.npus == n && r.config.name == config) return &r;
  }
  return nullptr;
}

const ReproResult* best_baseline(const std::vector<ReproResult>& rs, const std::string& w, int n) {
  const ReproResult* best = nullptr;
  for (const ReproResult& r : rs) {
    if (r.workload != w || r.npus != n) continue;
    if (r.config.name != "no-overlap" && r.config.name.rfind("baseline-", 0) != 0) continue;
    if (best == nullptr || r.report.iteration_ps < best->report.iteration_ps) best = &r;
  }
  return best;
}

double ratio(TimePs a, TimePs b) { return b > 0 ? static_cast<double>(a) / static_cast<double>(b) : 0.0; }

void write_csv(const std::vector<ReproResult>& rs, const std::string& path, bool sensitivity) {
  OutputFile f(path, "--out");
  if (sensitivity) f << "study,value,";
  f << "workload,npus,config,iteration_time_ns,compute_time_ns,exposed_comm_ns,network_utilization,"
       "hbm_bytes_per_network_byte,executor,units,hbm_sharing,network_GBps_per_npu,hbm_comm_GBps_per_npu,"
       "first_iteration_ns,comm_time_ns,overlap_ns,network_utilization_in_flight\n";
  for (const ReproResult& r : rs) {
    if (sensitivity) f << r.study << ',' << fmt::format("{:g}", r.value) << ',';
    f << r.workload << ',' << r.npus << ',' << r.config.name << ',' << fmt::format("{:.3f}", ps_to_ns(r.report.iteration_ps))
      << ',' << fmt::format("{:.3f}", ps_to_ns(r.report.compute_ps)) << ','
      << fmt::format("{:.3f}", ps_to_ns(r.report.exposed_comm_ps)) << ',' << fmt::format("{:.6f}", r.network_utilization)
      << ',' << fmt::format("{:.4f}", r.hbm_bytes_per_network_byte) << ',' << r.config.executor << ','
      << r.config.units << ','
      << (r.config.executor == "sm"
              ? (r.config.hbm == HbmSharing::kStatic ? fmt::format("static-{:g}", r.config.hbm_comm_share)
                                                     : std::string(to_string(r.config.hbm)))
              : std::string("-"))
      << ',' << fmt::format("{:.3f}", r.network_GBps_per_npu) << ',' << fmt::format("{:.3f}", r.hbm_comm_GBps_per_npu) << ','
      << fmt::format("{:.3f}", ps_to_ns(r.report.first_iteration_ps)) << ','
      << fmt::format("{:.3f}", ps_to_ns(r.report.comm_ps)) << ',' << fmt::format("{:.3f}", ps_to_ns(r.report.overlap_ps)) << ','
      << fmt::format("{:.6f}", r.network_utilization_in_flight) << '\n';
  }
  f.close();
}

struct Stat {
  double sum = 0.0;
  double max = 0.0;
  int n = 0;
  void add(double v) {
    sum += v;
    max = n == 0 ? v : std::max(max, v);
    ++n;
  }
  double avg() const { return n > 0 ? sum / n : 0.0; }
};

std::string names(const std::string& w) {
  if (w == "resnet50") return "ResNet-50";
  if (w == "gnmt") return "GNMT";
  if (w == "dlrm") return "DLRM";
  return w;
}

void write_report(const ReproOptions& o, const std::vector<ReproResult>& grid, const std::vector<ReproResult>& sens,
                  bool plots_made, const std::string& path) {
  OutputFile f(path, "--out");
  Stat hbm, net, net_flight;
  std::map<std::string, Stat> speed;
  for (const std::string& w : o.workloads) {
    for (int n : o.sizes) {
      const ReproResult* ace = find(grid, w, n, "ace");
      const ReproResult* base = best_baseline(grid, w, n);
      if (ace == nullptr || base == nullptr) continue;
      speed[w].add(ratio(base->report.iteration_ps, ace->report.iteration_ps));
      if (ace->network_utilization > 0) net.add(ace->network_utilization / base->network_utilization);
      if (ace->network_utilization_in_flight > 0) {
        net_flight.add(ace->network_utilization_in_flight / base->network_utilization_in_flight);
      }
      // HBM per network byte of the overlapping sm baselines vs ACE.
      const ReproResult* sm = find(grid, w, n, "baseline-u8-fair");
      if (sm == nullptr) sm = base;
      if (ace->hbm_bytes_per_network_byte > 0) hbm.add(sm->hbm_bytes_per_network_byte / ace->hbm_bytes_per_network_byte);
    }
  }
  f << "# Reproducing the ACE paper's evaluation\n\n";
  f << "Generated by `acesim reproduce ace-isca21` (docs/reproduction.md explains the setting, every parameter and "
       "every gap). Workloads: ";
  for (std::size_t i = 0; i < o.workloads.size(); ++i) f << (i ? ", " : "") << names(o.workloads[i]);
  f << "; sizes: ";
  for (std::size_t i = 0; i < o.sizes.size(); ++i) f << (i ? ", " : "") << o.sizes[i];
  f << " NPUs; configurations: ideal, ace, no-overlap and " << repro_configs(default_npu()).size() - 3
    << " baselines splitting compute units and HBM between compute and communication (the best per case is "
       "taken). Raw rows: `results.csv`, `sensitivity.csv`.\n\n";
  f << "## Headline results\n\n| claim | paper avg | paper max | acesim avg | acesim max |\n|---|---|---|---|---|\n";
  f << fmt::format("| HBM bytes per network byte, sm baseline / ACE | 3.5x | | {:.2f}x | {:.2f}x |\n", hbm.avg(), hbm.max);
  f << fmt::format("| effective network-bandwidth utilization (while communication is in flight), ACE / best baseline | 1.44x | 2.67x | {:.2f}x | {:.2f}x |\n",
                   net_flight.avg(), net_flight.max);
  f << fmt::format("| network-bandwidth utilization over the whole run, ACE / best baseline | | | {:.2f}x | {:.2f}x |\n", net.avg(), net.max);
  const std::map<std::string, PaperFigure> paper = {{"resnet50", {"ResNet-50", 1.41, 1.51}},
                                                     {"gnmt", {"GNMT", 1.12, 1.17}},
                                                     {"dlrm", {"DLRM", 1.13, 1.19}}};
  for (const std::string& w : o.workloads) {
    const PaperFigure& pf = paper.at(w);
    f << fmt::format("| iteration-time speedup vs best baseline, {} | {:.2f}x | {:.2f}x | {:.2f}x | {:.2f}x |\n", pf.claim,
                     pf.avg, pf.max, speed[w].avg(), speed[w].max);
  }
  f << "\n## Per workload and size\n\nTimes are the steady-state iteration in microseconds; speedup is the best "
       "baseline's time over ACE's.\n\n";
  f << "| workload | NPUs | best baseline | no-overlap | best baseline | ACE | ideal | speedup | net util base -> ACE | "
       "in flight base -> ACE | HBM/net base, ACE |\n";
  f << "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const std::string& w : o.workloads) {
    for (int n : o.sizes) {
      const ReproResult* ace = find(grid, w, n, "ace");
      const ReproResult* ideal = find(grid, w, n, "ideal");
      const ReproResult* no = find(grid, w, n, "no-overlap");
      const ReproResult* base = best_baseline(grid, w, n);
      if (ace == nullptr || ideal == nullptr || no == nullptr || base == nullptr) continue;
      f << fmt::format(
          "| {} | {} | {} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.3f}x | {:.1f}% -> {:.1f}% | {:.1f}% -> {:.1f}% | {:.2f}, {:.2f} |\n",
          names(w), n, base->config.name, ps_to_us(no->report.iteration_ps), ps_to_us(base->report.iteration_ps),
          ps_to_us(ace->report.iteration_ps), ps_to_us(ideal->report.iteration_ps),
          ratio(base->report.iteration_ps, ace->report.iteration_ps), 100 * base->network_utilization,
          100 * ace->network_utilization, 100 * base->network_utilization_in_flight,
          100 * ace->network_utilization_in_flight, base->hbm_bytes_per_network_byte, ace->hbm_bytes_per_network_byte);
    }
  }
  if (!sens.empty()) {
    f << "\n## Sensitivity (ResNet-50, 64 NPUs)\n\n| parameter | value | config | iteration (us) | exposed comm (us) | net util | "
         "in flight |\n|---|---|---|---|---|---|---|\n";
    for (const ReproResult& r : sens) {
      f << fmt::format("| {} | {:g} | {} | {:.1f} | {:.1f} | {:.1f}% | {:.1f}% |\n", r.study, r.value, r.config.name,
                       ps_to_us(r.report.iteration_ps), ps_to_us(r.report.exposed_comm_ps), 100 * r.network_utilization,
                       100 * r.network_utilization_in_flight);
    }
  }
  if (plots_made) {
    f << "\n## Plots\n\n![Iteration-time breakdown](breakdown.png)\n\n![Network utilization](network_utilization.png)\n\n"
         "![HBM bandwidth needed versus network bandwidth](hbm_vs_network.png)\n\n![Speedup versus network size](speedup.png)\n";
  } else {
    f << "\n(Plots were not made: python3 with matplotlib was not found; install Debian's python3-matplotlib.)\n";
  }
  f.close();
}

bool make_plots(const std::string& dir, std::FILE* progress) {
  return run_plot_script(dir, "scripts/plot_reproduction.py", progress);
}

// The sensitivity studies: ResNet-50 on 64 NPUs, one parameter varied at a
// time, ACE and the baseline.
std::vector<Job> sensitivity_jobs(const std::vector<ReproConfig>& configs) {
  std::vector<Job> jobs;
  const ReproConfig ace = configs[1];
  ReproConfig base;
  for (const ReproConfig& c : configs) {
    if (c.name == "baseline-u8-fair") base = c;
  }
  const int n = 64;
  for (double v : {0.5, 1.0, 2.0, 4.0, 8.0, 16.0}) jobs.push_back({"resnet50", n, ace, "ace_sram_MiB", v, v});
  for (double v : {50.0, 100.0, 200.0, 400.0, 800.0}) jobs.push_back({"resnet50", n, ace, "ace_alu_GBps", v, 0, v});
  for (double v : {225.0, 450.0, 900.0, 1800.0}) {
    for (const ReproConfig& c : {ace, base}) jobs.push_back({"resnet50", n, c, "hbm_GBps", v, 0, 0, v});
  }
  for (double v : {0.5, 1.0, 2.0, 4.0}) {
    for (const ReproConfig& c : {ace, base}) jobs.push_back({"resnet50", n, c, "link_bandwidth_scale", v, 0, 0, 0, v});
  }
  for (double v : {64.0, 256.0, 1024.0, 4096.0}) {
    for (const ReproConfig& c : {ace, base}) jobs.push_back({"resnet50", n, c, "max_chunk_KiB", v, 0, 0, 0, 0, v});
  }
  return jobs;
}

}  // namespace

void run_ace_isca21(const ReproOptions& o, std::FILE* progress) {
  create_output_directory(o.out_dir, "--out");
  for (int n : o.sizes) (void)repro_platform(n);  // validates the sizes
  const std::vector<ReproConfig> configs = repro_configs(default_npu());
  std::vector<Job> grid;
  for (const std::string& w : o.workloads) {
    (void)repro_workload(w, Topology(repro_platform(o.sizes.front()).dims));  // validates the name
    for (int n : o.sizes) {
      for (const ReproConfig& c : configs) grid.push_back({w, n, c, "", 0.0});
    }
  }
  const std::vector<Job> jobs = o.sensitivity ? sensitivity_jobs(configs) : std::vector<Job>{};
  std::FILE* lines = o.step_lines ? progress : nullptr;
  // Shares of the whole in proportion to the runs.
  const Progress live(o.live);
  const double grid_share = static_cast<double>(grid.size()) / static_cast<double>(grid.size() + jobs.size());
  const std::vector<ReproResult> results = run_jobs(grid, o.jobs, lines, "grid", live.share(0.0, grid_share, ""));
  std::vector<ReproResult> sens;
  if (o.sensitivity) sens = run_jobs(jobs, o.jobs, lines, "sensitivity", live.share(grid_share, 1.0, ""));
  const std::filesystem::path dir(o.out_dir);
  write_csv(results, (dir / "results.csv").string(), false);
  if (o.sensitivity) write_csv(sens, (dir / "sensitivity.csv").string(), true);
  const bool plots = o.plots && make_plots(o.out_dir, progress);
  write_report(o, results, sens, plots, (dir / "report.md").string());
}

}  // namespace acesim
