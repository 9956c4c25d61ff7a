#include "driver/collective_run.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "collective/collective_engine.h"
#include "collective/nccl_model.h"
#include "config/input_error.h"
#include "endpoint/endpoint.h"
#include "engine/simulation.h"
#include "network/network.h"
#include "platform/platform_instance.h"

namespace acesim {

void check_collective_limits(const PlatformConfig& platform, std::uint64_t bytes, const std::string& full_reason) {
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
  if (!full_reason.empty()) {
    const double chunks = std::max<double>(platform.collectives.chunks,
        platform.collectives.max_chunk_bytes > 0 ? std::ceil(static_cast<double>(bytes) / static_cast<double>(platform.collectives.max_chunk_bytes)) : 1.0);
    const double estimate = static_cast<double>(npus) * (64.0 + 4.0 * chunks * static_cast<double>(platform.dims.size()));
    if (estimate > 8.0 * (1ULL << 30)) {
      throw InputError(fmt::format("simulating all {} ranks of this collective ({}) with {:.0f} chunks needs about {:.1f} GiB "
                                   "({} ranks x 4 B x {:.0f} chunks x {} dimensions); the limit is 8 GiB: {}",
                                   npus, full_reason, chunks, estimate / (1ULL << 30), npus, chunks, platform.dims.size(),
                                   full_reason == "--full" ? "leave out --full, or use fewer chunks"
                                                           : "a smaller size, fewer --chunks or a larger collectives.max_chunk_bytes"));
    }
  }
}

CollectiveResult run_collective(const PlatformConfig& platform, const CollectiveRequestSpec& req, std::uint64_t bytes,
                                const Progress& progress) {
  std::string asymmetry = asymmetry_reason(platform);
  if (asymmetry.empty() && !req.stragglers.empty()) asymmetry = "stragglers";
  if (asymmetry.empty() && !req.members.empty()) asymmetry = "a group of listed ranks";
  if (asymmetry.empty() && is_rooted(req.op)) asymmetry = "a rooted collective";
  const bool symmetric = !req.full && asymmetry.empty();
  check_collective_limits(platform, bytes, symmetric ? std::string() : req.full ? "--full" : "full: " + asymmetry);
  progress.stage("building");
  PlatformInstance pi(platform, symmetric);
  for (const auto& [rank, factor] : req.stragglers) pi.topology.set_npu_link_slowdown(rank, factor);
  Simulation& sim = pi.sim;
  const Topology& topo = pi.topology;
  Endpoints& endpoint = pi.endpoints;
  CollectiveEngine& engine = pi.collectives;
  CollectiveRequest r;
  r.op = req.op;
  r.bytes = static_cast<double>(bytes);
  r.dims = req.dims;
  r.members = req.members;
  if (is_rooted(req.op) && !req.members.empty()) {
    const auto it = std::find(req.members.begin(), req.members.end(), req.root);
    if (it == req.members.end()) throw InputError(fmt::format("root {} is not a member of the collective's group", req.root));
    r.root = it - req.members.begin();
  } else if (is_rooted(req.op)) {
    std::vector<int> dims = req.dims;
    for (int d = 0; dims.empty() && d < topo.num_dims(); ++d) dims.push_back(d);  // all of them
    std::vector<int> spanned;
    for (int d : dims) {
      if (topo.dim(d).npus > 1) spanned.push_back(d);
    }
    r.root = position_in_group(topo, spanned, req.root);
  }
  const CollectiveId id = engine.create(r);
  engine.arrive_all(id);
  progress.stage("simulating");
  progress.watch(sim, [&] { return engine.fraction_done(id); });
  run_or_report_stuck(sim, [&] { return engine.finished(id); }, [&] { return engine.stuck_report(); });
  progress.report(sim.now(), sim.stats().events + sim.stats().completions, 1.0);
  progress.stage("summing up");
  CollectiveResult res;
  res.op = req.op;
  res.bytes = bytes;
  res.ranks = 1;
  if (!req.members.empty()) {
    res.ranks = static_cast<long long>(req.members.size());
  } else if (req.dims.empty()) {
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
  if (const std::optional<NcclChoice>& ch = engine.nccl_choice(id)) {
    res.algorithm = ch->copy_engine ? "copy-engine" : std::string(to_string(ch->algo));
    res.protocol = to_string(ch->proto);
    res.channels = ch->channels;
  }
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
  if (platform.energy) res.energy_J = collective_energy_J(*platform.energy, res, platform.npu.compute_units, topo.num_npus());
  return res;
}

double collective_energy_J(const EnergyModel& e, const CollectiveResult& r, int compute_units, long long npus) {
  return e.joules(ps_to_seconds(r.time_ps), npus, compute_units, r.comm_unit_seconds, r.hbm_bytes, r.network_bytes_per_dim);
}

std::optional<double> CollectiveResult::power_W_per_npu(long long npus) const {
  const double s = ps_to_seconds(time_ps);
  if (!energy_J || !(s > 0.0) || npus <= 0) return std::nullopt;
  return *energy_J / s / static_cast<double>(npus);
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

}  // namespace acesim
