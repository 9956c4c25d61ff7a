#include "driver/characterization.h"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "collective/collective_engine.h"
#include "collective/nccl_model.h"
#include "config/input_error.h"
#include "config/units.h"
#include "platform/platform_instance.h"
#include "topology/topology.h"

namespace acesim {

Kernel gemm_kernel(double m, double n, double k, double bytes_per_element) {
  Kernel g;
  g.flops = 2.0 * m * n * k;
  g.hbm_bytes = bytes_per_element * (m * k + k * n + m * n);
  return g;
}

double OverlapResult::kernel_slowdown() const {
  return kernel_alone_ps > 0 ? static_cast<double>(kernel_overlapped_ps) / static_cast<double>(kernel_alone_ps) - 1.0
                             : 0.0;
}

double OverlapResult::collective_slowdown() const {
  return collective_alone_ps > 0
             ? static_cast<double>(collective_overlapped_ps) / static_cast<double>(collective_alone_ps) - 1.0
             : 0.0;
}

namespace {

struct KernelTimes : ActivityListener {
  Simulation* sim = nullptr;
  TimePs last = 0;
  std::size_t done = 0;
  void activity_done(std::uint64_t) override {
    last = sim->now();
    ++done;
  }
};

// Arrives every rank at the collective when its event fires.
struct DelayedArrival : EventHandler {
  CollectiveEngine* engine = nullptr;
  CollectiveId id = 0;
  void handle_event(std::uint64_t) override { engine->arrive_all(id); }
};

// Runs the kernel on every NPU and/or the collective, the kernel from time
// 0, the collective from `collective_start_ps`. Returns (kernel end,
// collective end), -1 for what was not run.
std::pair<TimePs, TimePs> run_together(const PlatformConfig& p, const Kernel* kernel, const CollectiveRequestSpec* req,
                                       std::uint64_t bytes, TimePs collective_start_ps = 0) {
  PlatformInstance pi(p, req != nullptr ? (!req->full && asymmetry_reason(p).empty()) : asymmetry_reason(p).empty());
  Simulation& sim = pi.sim;
  Endpoints& endpoint = pi.endpoints;
  CollectiveEngine& engine = pi.collectives;
  KernelTimes kt;
  kt.sim = &sim;
  if (kernel != nullptr) {
    for (Rank r = 0; r < engine.simulated_ranks(); ++r) endpoint.start_kernel(r, *kernel, &kt, static_cast<std::uint64_t>(r));
  }
  CollectiveId id = 0;
  if (req != nullptr) {
    CollectiveRequest cr;
    cr.op = req->op;
    cr.bytes = static_cast<double>(bytes);
    cr.dims = req->dims;
    id = engine.create(cr);
  }
  DelayedArrival arrival;
  arrival.engine = &engine;
  arrival.id = id;
  if (req != nullptr) {
    if (collective_start_ps > 0) {
      sim.schedule_at(collective_start_ps, &arrival, 0);
    } else {
      engine.arrive_all(id);
    }
  }
  run_or_report_stuck(sim, [&] { return req == nullptr || engine.finished(id); }, [&] { return engine.stuck_report(); });
  return {kernel != nullptr ? kt.last : -1, req != nullptr ? engine.finish_time(id) : -1};
}

}  // namespace

OverlapResult run_overlap(const PlatformConfig& platform, const Kernel& kernel, const CollectiveRequestSpec& req,
                          std::uint64_t bytes, TimePs collective_start_ps) {
  OverlapResult r;
  r.kernel_alone_ps = run_together(platform, &kernel, nullptr, bytes).first;
  r.collective_alone_ps = run_together(platform, nullptr, &req, bytes).second;
  const auto both = run_together(platform, &kernel, &req, bytes, collective_start_ps);
  r.kernel_overlapped_ps = both.first;
  r.collective_overlapped_ps = both.second;
  return r;
}

// NCCL runs the collective: its kernels hold one compute unit per channel,
// so the studies that give communication units give it channels (as
// NCCL_MIN_NCHANNELS/NCCL_MAX_NCHANNELS do). 0 when NCCL does not run it;
// otherwise the channels NCCL's model (or the platform) picks.
int nccl_channels(const PlatformConfig& p, const CollectiveRequestSpec& req, std::uint64_t bytes) {
  if (!p.collectives.nccl.enabled || !nccl_models(req.op)) return 0;
  const Topology topo(p.dims);
  std::vector<int> dims = req.dims;
  if (dims.empty()) {
    for (int d = 0; d < topo.num_dims(); ++d) dims.push_back(d);
  }
  const NcclView view = nccl_view(topo, dims);
  if (view.nranks < 2 || !nccl_runs(view, req.op)) return 0;
  return nccl_choose(view, req.op, static_cast<double>(bytes), p.collectives.nccl).channels;
}

std::vector<std::string> study_names() { return {"units", "hbm", "overlap", "traffic"}; }

namespace {

std::vector<int> unit_sweep(int total) {
  std::vector<int> k;
  for (int u = 1; u <= total; u *= 2) k.push_back(u);
  if (k.back() != total) k.push_back(total);
  return k;
}

StudyRow row(std::string config, double x, const PlatformConfig& p, const CollectiveRequestSpec& req,
             std::uint64_t bytes, const Progress& progress) {
  StudyRow r;
  r.config = std::move(config);
  r.x = x;
  r.result = run_collective(p, req, bytes, progress);
  return r;
}

// Powers of two up to NCCL's 64 channels (MAXCHANNELS), and NCCL's choice,
// leaving the kernel a unit.
std::vector<int> channel_sweep(int chosen, int total) {
  std::vector<int> k;
  for (int c = 1; c <= 64 && c < total; c *= 2) k.push_back(c);
  if (chosen < total && std::find(k.begin(), k.end(), chosen) == k.end()) k.push_back(chosen);
  std::sort(k.begin(), k.end());
  return k;
}

// The rows that give communication units: (label, units or channels, platform).
struct UnitsRow {
  std::string config;
  int x;
  PlatformConfig platform;
};
std::vector<UnitsRow> units_rows(const PlatformConfig& platform, int nccl, bool keep_all_units) {
  std::vector<UnitsRow> rows;
  PlatformConfig p = platform;
  p.npu.executor = "sm";
  if (nccl > 0) {
    for (int k : channel_sweep(nccl, platform.npu.compute_units)) {
      p.collectives.nccl.channels = k;
      rows.push_back({fmt::format("sm channels={}{}", k, k == nccl ? "*" : ""), k, p});
    }
    return rows;
  }
  for (int k : unit_sweep(platform.npu.compute_units)) {
    if (!keep_all_units && k == platform.npu.compute_units) continue;  // the kernel would get no unit at all
    p.npu.sm.units = k;
    rows.push_back({fmt::format("sm units={}", k), k, p});
  }
  return rows;
}

// The hbm study's HBM bandwidths, as factors of the platform's.
constexpr double kHbmFactors[] = {0.125, 0.25, 0.5, 1.0, 2.0, 4.0};

// Points (rows) a study runs, for its progress.
std::size_t study_points(const std::string& name, const PlatformConfig& p, int nccl) {
  if (name == "units") return units_rows(p, nccl, true).size() + 2;
  if (name == "hbm") return 2 * std::size(kHbmFactors);
  if (name == "overlap") return 2 + (p.npu.dma.engines > 0 ? 1 : 0) + units_rows(p, nccl, false).size();
  return 2 * std::size(kAllCollectiveOps);
}

PlatformConfig with_executor(PlatformConfig p, const std::string& e) {
  p.npu.executor = e;
  return p;
}

}  // namespace

Study run_study(const std::string& name, const PlatformConfig& platform, const CollectiveRequestSpec& req,
                std::uint64_t bytes, const Kernel& kernel, const Progress& progress) {
  Study s;
  s.name = name;
  const int nccl = name == "units" || name == "overlap" ? nccl_channels(platform, req, bytes) : 0;
  const std::size_t points = study_points(name, platform, nccl);
  // The next row's share of the study.
  auto next = [&](const std::string& config) {
    const std::size_t i = s.rows.size();
    return progress.part(i, points, fmt::format("{} {}/{} ({})", name, i + 1, points, config));
  };
  if (name == "units") {
    s.x_label = nccl > 0 ? "channels" : "units";
    for (const UnitsRow& u : units_rows(platform, nccl, true)) {
      s.rows.push_back(row(u.config, u.x, u.platform, req, bytes, next(u.config)));
    }
    s.rows.push_back(row("ace", 0, with_executor(platform, "ace"), req, bytes, next("ace")));
    s.rows.push_back(row("ideal", 0, with_executor(platform, "ideal"), req, bytes, next("ideal")));
  } else if (name == "hbm") {
    s.x_label = "HBM GB/s";
    for (double f : kHbmFactors) {
      for (const char* e : {"sm", "ace"}) {
        PlatformConfig p = with_executor(platform, e);
        p.npu.hbm_GBps = platform.npu.hbm_GBps * f;
        s.rows.push_back(row(e, p.npu.hbm_GBps, p, req, bytes, next(e)));
      }
    }
  } else if (name == "overlap") {
    s.x_label = nccl > 0 ? "channels" : "units";
    auto add = [&](std::string config, double x, const PlatformConfig& p) {
      StudyRow r;
      // The collective alone, then three runs of the overlap: about half each.
      const Progress point = next(config);
      r.config = std::move(config);
      r.x = x;
      r.result = run_collective(p, req, bytes, point.part(0, 2, ""));
      const Progress overlap = point.part(1, 2, "");
      overlap.stage("overlap");
      r.overlap = run_overlap(p, kernel, req, bytes);
      overlap.report(-1, 0, 1.0);
      s.rows.push_back(std::move(r));
    };
    add("ideal", 0, with_executor(platform, "ideal"));
    add("ace", 0, with_executor(platform, "ace"));
    if (platform.npu.dma.engines > 0) add("dma", 0, with_executor(platform, "dma"));  // the GPU's copy engines
    for (const UnitsRow& u : units_rows(platform, nccl, false)) add(u.config, u.x, u.platform);
  } else if (name == "traffic") {
    s.x_label = "";
    for (CollectiveOp op : kAllCollectiveOps) {
      CollectiveRequestSpec r = req;
      r.op = op;
      for (const char* e : {"sm", "ace"}) {
        const std::string config = fmt::format("{} {}", to_string(op), e);
        s.rows.push_back(row(config, 0, with_executor(platform, e), r, bytes, next(config)));
      }
    }
  } else {
    const auto names = study_names();
    throw InputError("unknown study '" + name + "'" + suggestion(name, names));
  }
  return s;
}

}  // namespace acesim
