#include "endpoint/endpoint.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "endpoint/executor_registry.h"

namespace acesim {

double NpuStats::sent() const {
  double s = 0.0;
  for (double v : sent_per_dim) s += v;
  return s;
}

double NpuStats::received() const {
  double s = 0.0;
  for (double v : received_per_dim) s += v;
  return s;
}

void NpuStatsMean::add(const NpuStats& s) {
  ++count;
  const double k = static_cast<double>(count);
  auto step = [k](double& mean, double x) { mean += (x - mean) / k; };
  step(hbm_bytes_compute, s.hbm_bytes_compute);
  step(hbm_bytes_comm, s.hbm_bytes_comm);
  step(comm_unit_seconds, s.comm_unit_seconds);
  step(compute_unit_seconds, s.compute_unit_seconds);
  if (sent_per_dim.size() < s.sent_per_dim.size()) sent_per_dim.resize(s.sent_per_dim.size(), 0.0);
  if (received_per_dim.size() < s.received_per_dim.size()) received_per_dim.resize(s.received_per_dim.size(), 0.0);
  for (std::size_t d = 0; d < s.sent_per_dim.size(); ++d) step(sent_per_dim[d], s.sent_per_dim[d]);
  for (std::size_t d = 0; d < s.received_per_dim.size(); ++d) step(received_per_dim[d], s.received_per_dim[d]);
}

void Endpoints::check_traffic_balance(Rank ranks) const {
  std::vector<double> sent(topo_.num_dims(), 0.0), received(topo_.num_dims(), 0.0);
  for (Rank r = 0; r < ranks; ++r) {
    const NpuStats& s = stats(r);
    for (int d = 0; d < topo_.num_dims(); ++d) {
      sent[d] += s.sent_per_dim[d];
      received[d] += s.received_per_dim[d];
    }
  }
  for (int d = 0; d < topo_.num_dims(); ++d) {
    if (std::abs(sent[d] - received[d]) > 1e-6 * std::max({1.0, sent[d], received[d]})) {
      throw std::logic_error("invariant broken: dimension " + std::to_string(d) + " links carried " +
                             std::to_string(sent[d]) + " bytes out of NPUs but " + std::to_string(received[d]) + " into them");
    }
  }
}

NpuStatsMean Endpoints::mean_stats(Rank ranks) const {
  NpuStatsMean m;
  m.sent_per_dim.assign(topo_.num_dims(), 0.0);
  m.received_per_dim.assign(topo_.num_dims(), 0.0);
  for (Rank r = 0; r < ranks; ++r) m.add(stats(r));
  return m;
}

Endpoints::Endpoints(Simulation& sim, const Topology& topo, NpuConfig cfg)
    : sim_(sim), topo_(topo), cfg_(std::move(cfg)) {
  const std::string problem = validate(cfg_);
  if (!problem.empty()) throw std::invalid_argument(problem);
  index_.assign(static_cast<std::size_t>(topo_.num_npus()), -1);
  untouched_.sent_per_dim.assign(topo_.num_dims(), 0.0);
  untouched_.received_per_dim.assign(topo_.num_dims(), 0.0);
  executor_ = executor_registry().get(cfg_.executor).make(*this);
}

Endpoints::~Endpoints() = default;

int Endpoints::comm_class() const { return cfg_.hbm_sharing == HbmSharing::kComputePriority ? 1 : 0; }
int Endpoints::compute_class() const { return cfg_.hbm_sharing == HbmSharing::kCommPriority ? 1 : 0; }

Endpoints::Npu& Endpoints::add_npu(Rank r) {
  const std::size_t idx = npus_.size();
  index_[static_cast<std::size_t>(r)] = static_cast<std::int32_t>(idx);
  Npu n;
  n.index = idx;
  FluidModel& f = sim_.fluid();
  const std::string p = "npu" + std::to_string(r) + ".";
  const double hbm = cfg_.hbm_GBps * 1e9;
  n.cu = f.add_resource(p + "compute", cfg_.peak_flops());
  if (cfg_.hbm_sharing == HbmSharing::kStatic) {
    n.hbm = f.add_resource(p + "hbm.compute", hbm * (1.0 - cfg_.hbm_comm_share));
    n.hbm_comm = f.add_resource(p + "hbm.comm", hbm * cfg_.hbm_comm_share);
  } else {
    n.hbm = f.add_resource(p + "hbm", hbm);
    n.hbm_comm = n.hbm;
  }
  n.stats.sent_per_dim.assign(topo_.num_dims(), 0.0);
  n.stats.received_per_dim.assign(topo_.num_dims(), 0.0);
  n.held_since = sim_.now();
  npus_.push_back(std::move(n));
  executor_->add_npu(idx, p);
  return npus_[idx];
}

void Endpoints::record_traffic(const TransferShape& shape, double phase_bytes) {
  for (const NpuLinkTraffic& t : shape.link_traffic) {
    if (!simulated(t.rank)) continue;
    NpuStats& s = npu(t.rank).stats;
    s.sent_per_dim[t.dim] += t.sent * phase_bytes;
    s.received_per_dim[t.dim] += t.received * phase_bytes;
  }
}

bool Endpoints::set_units_held(Npu& n, int held) {
  held = std::min(held, cfg_.compute_units);
  if (held == n.units_held) return false;
  const TimePs now = sim_.now();
  n.stats.comm_unit_seconds += n.units_held * ps_to_seconds(now - n.held_since);
  n.held_since = now;
  n.units_held = held;
  sim_.fluid().set_capacity(now, n.cu, (cfg_.compute_units - held) * cfg_.unit_TFLOPS * 1e12);
  return true;
}

ActivityId Endpoints::start_local_transfer(Rank r, LocalTransfer kind, double bytes, ActivityListener* listener,
                                           std::uint64_t tag) {
  Npu& n = npu(r);
  FluidModel& f = sim_.fluid();
  // Resource units per byte, then as every activity: work in isolated
  // seconds at full speed, demands per second of it.
  scratch_.clear();
  executor_->local_transfer_usage(r, kind, scratch_);
  for (const Usage& u : scratch_) {
    if (u.resource == n.hbm_comm) n.stats.hbm_bytes_comm += bytes * u.amount_per_unit;
  }
  double seconds_per_byte = 0.0;
  for (const Usage& u : scratch_) seconds_per_byte = std::max(seconds_per_byte, u.amount_per_unit / f.capacity(u.resource));
  for (Usage& u : scratch_) u.amount_per_unit /= seconds_per_byte;
  ActivitySpec spec;
  spec.work = bytes * seconds_per_byte;
  spec.max_rate = 1.0;
  spec.priority_class = comm_class();
  return f.start(sim_.now(), spec, scratch_, listener, tag);
}

void Endpoints::set_compute_slowdown(Rank r, double factor) {
  if (!(factor > 0.0) || !std::isfinite(factor)) throw std::invalid_argument("compute slowdown must be > 0");
  slowdown_[r] = factor;
}

double Endpoints::isolated_seconds(const Kernel& k) const {
  if (k.time_ps >= 0) return ps_to_seconds(k.time_ps);
  return std::max(k.flops / k.flops_efficiency / cfg_.peak_flops(),
                  k.hbm_bytes / k.hbm_efficiency / (cfg_.hbm_GBps * 1e9));
}

ActivityId Endpoints::start_kernel(Rank r, const Kernel& k_in, ActivityListener* listener, std::uint64_t tag) {
  Npu& n = npu(r);
  Kernel k = k_in;
  if (const auto it = slowdown_.find(r); it != slowdown_.end()) {
    // A straggler does the same work more slowly: as if there were more of it.
    k.flops *= it->second;
    k.hbm_bytes *= it->second;
    if (k.time_ps >= 0) k.time_ps = static_cast<TimePs>(std::llround(static_cast<double>(k.time_ps) * it->second));
  }
  double flops = k.flops;
  double hbm = k.hbm_bytes;
  if (k.time_ps >= 0) {
    // A kernel known only by its time ran on every unit, with an HBM demand
    // of a fraction of peak (docs/model.md, "Kernels given as times").
    const double t = ps_to_seconds(k.time_ps);
    flops = t * cfg_.peak_flops();
    hbm = t * cfg_.timed_kernel_hbm_fraction * cfg_.hbm_GBps * 1e9;
  }
  const bool fixed = k.time_ps >= 0 && cfg_.fixed_kernel_times;
  if (!fixed) {
    // A kernel kept at its given time uses no modelled resource.
    n.stats.hbm_bytes_compute += hbm;
    n.stats.compute_flops += flops;
  }
  ActivitySpec spec;
  spec.work = isolated_seconds(k);
  spec.max_rate = 1.0;
  spec.priority_class = compute_class();
  // A kernel alone keeps every unit busy for its time; shared, it does the
  // same work on fewer units for longer.
  n.stats.compute_unit_seconds += spec.work * cfg_.compute_units;
  scratch_.clear();
  if (!fixed && spec.work > 0.0) {
    if (flops > 0.0) scratch_.push_back({n.cu, flops / k.flops_efficiency / spec.work});
    if (hbm > 0.0) scratch_.push_back({n.hbm, hbm / k.hbm_efficiency / spec.work});
  }
  return sim_.fluid().start(sim_.now(), spec, scratch_, listener, tag);
}

void Endpoints::settle() {
  const TimePs now = sim_.now();
  for (Npu& n : npus_) {
    n.stats.comm_unit_seconds += n.units_held * ps_to_seconds(now - n.held_since);
    n.held_since = now;
  }
}

const NpuStats& Endpoints::stats(Rank r) const {
  const std::int32_t idx = index_[static_cast<std::size_t>(r)];
  return idx >= 0 ? npus_[static_cast<std::size_t>(idx)].stats : untouched_;
}

int Endpoints::units_held(Rank r) const {
  const std::int32_t idx = index_[static_cast<std::size_t>(r)];
  return idx >= 0 ? npus_[static_cast<std::size_t>(idx)].units_held : 0;
}

}  // namespace acesim
