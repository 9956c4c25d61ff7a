#include "report/collective_sweep.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "collective/collective_engine.h"
#include "platform/platform_instance.h"
#include "config/input_error.h"
#include "config/units.h"
#include "endpoint/endpoint.h"
#include "endpoint/executor_registry.h"
#include "engine/simulation.h"
#include "network/network.h"

namespace acesim {

void check_collective_limits(const PlatformConfig& platform, const CollectiveRequestSpec& req, std::uint64_t bytes,
                             bool symmetric) {
  // Simulated time: every byte crosses the slowest link a few times at most.
  double slowest = std::numeric_limits<double>::infinity();
  long long npus = 1;
  for (const DimensionSpec& d : platform.dims) {
    if (d.npus > 1) slowest = std::min(slowest, d.bandwidth_GBps * 1e9);
    npus *= d.npus;
  }
  if (std::isfinite(slowest) && 4.0 * static_cast<double>(bytes) / slowest > 1e6) {
    throw InputError(fmt::format("a collective of {} bytes over {:g} GB/s links would run for about {:.3g} s of "
                                 "simulated time, past what int64 picoseconds can count (106 days)",
                                 bytes, slowest / 1e9, 4.0 * static_cast<double>(bytes) / slowest));
  }
  // Memory: per chunk and group, per phase, when every rank is simulated.
  if (!symmetric) {
    const double chunks = std::max<double>(platform.collectives.chunks,
        platform.collectives.max_chunk_bytes > 0 ? std::ceil(static_cast<double>(bytes) / static_cast<double>(platform.collectives.max_chunk_bytes)) : 1.0);
    const double estimate = static_cast<double>(npus) * (64.0 + 4.0 * chunks * static_cast<double>(platform.dims.size()));
    if (estimate > 8.0 * (1ULL << 30)) {
      throw InputError(fmt::format("simulating all {} ranks of this collective ({:.0f} chunks) needs about {:.1f} GiB; "
                                   "leave out --full, or use fewer chunks", npus, chunks, estimate / (1ULL << 30)));
    }
  }
  (void)req;
}

CollectiveResult run_collective(const PlatformConfig& platform, const CollectiveRequestSpec& req, std::uint64_t bytes) {
  const std::string asymmetry = asymmetry_reason(platform);
  const bool symmetric = !req.full && asymmetry.empty();
  check_collective_limits(platform, req, bytes, symmetric);
  PlatformInstance pi(platform, symmetric);
  Simulation& sim = pi.sim;
  const Topology& topo = pi.topology;
  Endpoints& endpoint = pi.endpoint;
  CollectiveEngine& engine = pi.collectives;
  CollectiveRequest r;
  r.op = req.op;
  r.bytes = static_cast<double>(bytes);
  r.dims = req.dims;
  const CollectiveId id = engine.create(r);
  engine.arrive_all(id);
  run_or_report_stuck(sim, [&] { return engine.finished(id); }, [&] { return engine.stuck_report(); });
  CollectiveResult res;
  res.op = req.op;
  res.bytes = bytes;
  res.ranks = 1;
  if (req.dims.empty()) {
    res.ranks = topo.num_npus();
  } else {
    for (int d : req.dims) res.ranks *= topo.dim(d).npus;
  }
  res.time_ps = engine.finish_time(id) - engine.first_arrival(id);
  const double seconds = ps_to_seconds(res.time_ps);
  res.algbw_GBps = seconds > 0.0 ? static_cast<double>(bytes) / seconds / 1e9 : 0.0;
  res.busbw_GBps = res.algbw_GBps * busbw_factor(req.op, res.ranks);
  res.events = sim.stats().events + sim.stats().completions;
  res.link_bytes_per_dim = pi.network->link_bytes_per_dim();
  res.executor = platform.npu.executor;
  res.chunks = engine.chunks(id);
  res.simulated_ranks = engine.simulated_ranks();
  res.simulation = symmetric ? "symmetric" : req.full ? "full (--full)" : "full: " + asymmetry;
  endpoint.settle();
  endpoint.check_traffic_balance(engine.simulated_ranks());
  const NpuStatsMean mean = endpoint.mean_stats(engine.simulated_ranks());
  res.hbm_bytes = mean.hbm_bytes_comm;
  res.comm_unit_seconds = mean.comm_unit_seconds;
  res.network_bytes_per_dim = mean.sent_per_dim;
  res.network_bytes_received_per_dim = mean.received_per_dim;
  res.network_bytes = 0.0;
  for (double b : res.network_bytes_per_dim) res.network_bytes += b;
  return res;
}

double CollectiveResult::network_GBps() const {
  const double s = ps_to_seconds(time_ps);
  return s > 0.0 ? network_bytes / s / 1e9 : 0.0;
}

double CollectiveResult::hbm_per_network_byte() const {
  return network_bytes > 0.0 ? hbm_bytes / network_bytes : 0.0;
}

std::vector<std::uint64_t> size_sweep(std::uint64_t min_bytes, std::uint64_t max_bytes, std::uint64_t factor) {
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t s = min_bytes; s <= max_bytes; s *= factor) {
    sizes.push_back(s);
    if (s == 0 || s > max_bytes / factor) break;
  }
  return sizes;
}

std::string describe_platform(const PlatformConfig& p) {
  long long n = 1;
  std::string dims;
  for (std::size_t d = 0; d < p.dims.size(); ++d) {
    const DimensionSpec& s = p.dims[d];
    n *= s.npus;
    dims += fmt::format("{}{} {} x{} {:g} GB/s {:g} ns", d ? ", " : "", to_string(s.kind), s.npus,
                        s.links_per_neighbour, s.bandwidth_GBps, s.latency_ns);
  }
  const std::string executor = describe_executor(p.npu);
  std::string chunking = fmt::format("{} chunks", p.collectives.chunks);
  if (p.collectives.max_chunk_bytes > 0) chunking += fmt::format(" of at most {}", format_bytes(p.collectives.max_chunk_bytes));
  return fmt::format("{} NPUs [{}]; backend {}; executor {}; HBM {:g} GB/s; {}, {} active per dimension, {}", n, dims,
                     p.network.backend, executor, p.npu.hbm_GBps, chunking,
                     p.collectives.active_chunks_per_dim, to_string(p.collectives.policy));
}

std::string format_table(const PlatformConfig& platform, const CollectiveRequestSpec& req,
                         const std::vector<CollectiveResult>& results) {
  std::string out;
  const OpConfig& oc = platform.collectives.op(req.op);
  std::string algs;
  if (oc.plan == PlanKind::kFlat) {
    algs = std::string(to_string(oc.flat));
  } else {
    for (std::size_t d = 0; d < oc.per_dim.size(); ++d) algs += (d ? "," : "") + std::string(to_string(oc.per_dim[d]));
  }
  out += fmt::format("# acesim collective: {} ({} plan: {})\n", to_string(req.op), to_string(oc.plan), algs);
  out += fmt::format("# platform: {} ({})\n", describe_platform(platform), platform.source);
  if (!results.empty()) {
    out += fmt::format("# simulated {} of {} ranks: {}\n", results[0].simulated_ranks,
                       static_cast<long long>(Topology(platform.dims).num_npus()), results[0].simulation);
  }
  if (!req.dims.empty()) {
    std::string d;
    for (std::size_t i = 0; i < req.dims.size(); ++i) d += (i ? "," : "") + std::to_string(req.dims[i]);
    out += fmt::format("# over dimensions {}\n", d);
  }
  out += fmt::format("# {:>14} {:>6} {:>14} {:>12} {:>12} {:>12} {:>8}\n", "size(B)", "ranks", "time(us)",
                     "algbw(GB/s)", "busbw(GB/s)", "net(GB/s)", "hbm/net");
  for (const CollectiveResult& r : results) {
    out += fmt::format("  {:>14} {:>6} {:>14.3f} {:>12.2f} {:>12.2f} {:>12.2f} {:>8.2f}\n", r.bytes, r.ranks,
                       ps_to_us(r.time_ps), r.algbw_GBps, r.busbw_GBps, r.network_GBps(), r.hbm_per_network_byte());
  }
  return out;
}

nlohmann::json to_json(const PlatformConfig& platform, const std::vector<CollectiveResult>& results) {
  nlohmann::json arr = nlohmann::json::array();
  for (const CollectiveResult& r : results) {
    arr.push_back({{"op", std::string(to_string(r.op))},
                   {"bytes", r.bytes},
                   {"ranks", r.ranks},
                   {"time_ns", ps_to_ns(r.time_ps)},
                   {"algbw_GBps", r.algbw_GBps},
                   {"busbw_GBps", r.busbw_GBps},
                   {"link_bytes_per_dim", r.link_bytes_per_dim},
                   {"executor", r.executor},
                   {"chunks", r.chunks},
                   {"hbm_bytes", r.hbm_bytes},
                   {"network_bytes", r.network_bytes},
                   {"network_bytes_per_dim", r.network_bytes_per_dim},
                   {"network_bytes_received_per_dim", r.network_bytes_received_per_dim},
                   {"network_GBps", r.network_GBps()},
                   {"hbm_bytes_per_network_byte", r.hbm_per_network_byte()},
                   {"comm_unit_seconds", r.comm_unit_seconds},
                   {"simulated_ranks", r.simulated_ranks},
                   {"events", r.events},
                   {"simulation", r.simulation}});
  }
  return {{"platform", platform.source},
          {"backend", platform.network.backend},
          {"executor", platform.npu.executor},
          {"results", arr}};
}

}  // namespace acesim
