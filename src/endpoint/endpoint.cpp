#include "endpoint/endpoint.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

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
  if (sent_per_dim.size() < s.sent_per_dim.size()) sent_per_dim.resize(s.sent_per_dim.size(), 0.0);
  if (received_per_dim.size() < s.received_per_dim.size()) received_per_dim.resize(s.received_per_dim.size(), 0.0);
  for (std::size_t d = 0; d < s.sent_per_dim.size(); ++d) step(sent_per_dim[d], s.sent_per_dim[d]);
  for (std::size_t d = 0; d < s.received_per_dim.size(); ++d) step(received_per_dim[d], s.received_per_dim[d]);
}

void Endpoint::check_traffic_balance(Rank ranks) {
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

NpuStatsMean Endpoint::mean_stats(Rank ranks) {
  NpuStatsMean m;
  m.sent_per_dim.assign(topo_.num_dims(), 0.0);
  m.received_per_dim.assign(topo_.num_dims(), 0.0);
  for (Rank r = 0; r < ranks; ++r) m.add(stats(r));
  return m;
}

Endpoint::Endpoint(Simulation& sim, const Topology& topo, NpuConfig cfg)
    : sim_(sim), topo_(topo), cfg_(std::move(cfg)) {
  const std::string problem = validate(cfg_);
  if (!problem.empty()) throw std::invalid_argument(problem);
  index_.assign(static_cast<std::size_t>(topo_.num_npus()), -1);
}

int Endpoint::comm_class() const { return cfg_.hbm_sharing == HbmSharing::kComputePriority ? 1 : 0; }
int Endpoint::compute_class() const { return cfg_.hbm_sharing == HbmSharing::kCommPriority ? 1 : 0; }

Endpoint::Npu& Endpoint::npu(Rank r) {
  std::int32_t& idx = index_[static_cast<std::size_t>(r)];
  if (idx >= 0) return npus_[idx];
  idx = static_cast<std::int32_t>(npus_.size());
  Npu n;
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
  if (cfg_.executor == ExecutorKind::kSm) n.comm_units = f.add_resource(p + "sm.units", 0.0);
  if (cfg_.executor == ExecutorKind::kAce) {
    n.dma = f.add_resource(p + "ace.dma", cfg_.ace.dma_GBps * 1e9);
    n.alu = f.add_resource(p + "ace.alu", cfg_.ace.alu_GBps * 1e9);
  }
  n.stats.sent_per_dim.assign(topo_.num_dims(), 0.0);
  n.stats.received_per_dim.assign(topo_.num_dims(), 0.0);
  n.held_since = sim_.now();
  npus_.push_back(std::move(n));
  return npus_.back();
}

void Endpoint::phase_load(const PhaseCost& cost, std::span<const Rank> members, const TransferShape& shape,
                          double phase_bytes, EndpointLoad& out) {
  out.demands.clear();
  out.priority_class = comm_class();
  if (cfg_.executor == ExecutorKind::kIdeal) return;
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (!simulated(members[i])) continue;
    Npu& n = npu(members[i]);
    const double sent = shape.originated[i] * phase_bytes;
    const double received = shape.terminated[i] * phase_bytes;
    if (cfg_.executor == ExecutorKind::kSm) {
      // Data is staged in HBM at every step (docs/model.md, "sm executor").
      const double hbm = sent * sm_hbm_per_byte(cfg_.sm, cost.op);
      out.demands.push_back({n.hbm_comm, hbm});
      out.demands.push_back({n.comm_units, sent * sm_unit_cost_per_byte(cfg_.sm, cost.op)});
      n.stats.hbm_bytes_comm += hbm;
    } else {
      // ACE: HBM read once as the chunk enters, written once as it leaves;
      // everything in between stays in SRAM; reductions on ACE's ALUs.
      double hbm = 0.0;
      if (cost.first) hbm += cost.in_bytes;
      if (cost.last) hbm += cost.out_bytes;
      if (hbm > 0.0) {
        out.demands.push_back({n.hbm_comm, hbm});
        out.demands.push_back({n.dma, hbm});
      }
      const double reduced = received * reduce_share(cost.op);
      if (reduced > 0.0) out.demands.push_back({n.alu, reduced});
      n.stats.hbm_bytes_comm += hbm;
    }
  }
}

void Endpoint::record_traffic(const TransferShape& shape, double phase_bytes) {
  for (const NpuLinkTraffic& t : shape.link_traffic) {
    if (!simulated(t.rank)) continue;
    NpuStats& s = npu(t.rank).stats;
    s.sent_per_dim[t.dim] += t.sent * phase_bytes;
    s.received_per_dim[t.dim] += t.received * phase_bytes;
  }
}

void Endpoint::set_units(Rank, Npu& n, int requested) {
  n.units_requested = requested;
  const int held = std::min(requested, cfg_.compute_units);
  if (held == n.units_held) return;
  const TimePs now = sim_.now();
  n.stats.comm_unit_seconds += n.units_held * ps_to_seconds(now - n.held_since);
  n.held_since = now;
  n.units_held = held;
  FluidModel& f = sim_.fluid();
  f.set_capacity(now, n.cu, (cfg_.compute_units - held) * cfg_.unit_TFLOPS * 1e12);
  f.set_capacity(now, n.comm_units, held * cfg_.sm.copy_GBps_per_unit * 1e9);
}

void Endpoint::phase_begin(std::uint32_t collective, std::span<const Rank> members) {
  if (cfg_.executor != ExecutorKind::kSm) return;
  for (Rank r : members) {
    if (!simulated(r)) continue;
    const std::uint64_t key = (static_cast<std::uint64_t>(collective) << 32) | static_cast<std::uint32_t>(r);
    if (++running_[key] == 1) {
      Npu& n = npu(r);
      set_units(r, n, n.units_requested + cfg_.sm.units);
    }
  }
}

void Endpoint::phase_end(std::uint32_t collective, std::span<const Rank> members) {
  if (cfg_.executor != ExecutorKind::kSm) return;
  for (Rank r : members) {
    if (!simulated(r)) continue;
    const std::uint64_t key = (static_cast<std::uint64_t>(collective) << 32) | static_cast<std::uint32_t>(r);
    auto it = running_.find(key);
    if (it == running_.end()) throw std::logic_error("endpoint: phase_end without phase_begin");
    if (--it->second == 0) {
      running_.erase(it);
      Npu& n = npu(r);
      set_units(r, n, n.units_requested - cfg_.sm.units);
    }
  }
}

void Endpoint::hold_units(Rank r, int units) {
  if (cfg_.executor != ExecutorKind::kSm) throw std::invalid_argument("hold_units: only the sm executor holds units");
  Npu& n = npu(r);
  if (n.units_requested + units < 0) throw std::logic_error("hold_units: releasing units that are not held");
  set_units(r, n, n.units_requested + units);
}

ActivityId Endpoint::start_local_transfer(Rank r, LocalTransfer kind, double bytes, ActivityListener* listener,
                                          std::uint64_t tag) {
  Npu& n = npu(r);
  FluidModel& f = sim_.fluid();
  // Resource units per byte, then as every activity: work in isolated
  // seconds at full speed, demands per second of it.
  scratch_.clear();
  if (kind == LocalTransfer::kDma) {
    if (cfg_.executor != ExecutorKind::kAce) throw std::invalid_argument("a DMA transfer needs the ace executor");
    scratch_.push_back({n.dma, 2.0});
    scratch_.push_back({n.hbm_comm, 2.0});
  } else {
    if (cfg_.executor != ExecutorKind::kSm) throw std::invalid_argument("a copy or reduce kernel needs the sm executor");
    if (n.units_held <= 0) throw std::invalid_argument("a copy or reduce kernel needs units held (hold_units)");
    const bool reduce = kind == LocalTransfer::kReduce;
    scratch_.push_back({n.comm_units, reduce ? cfg_.sm.copy_GBps_per_unit / cfg_.sm.reduce_GBps_per_unit : 1.0});
    scratch_.push_back({n.hbm_comm, reduce ? 3.0 : 2.0});
  }
  n.stats.hbm_bytes_comm += bytes * scratch_.back().amount_per_unit;
  double seconds_per_byte = 0.0;
  for (const Usage& u : scratch_) seconds_per_byte = std::max(seconds_per_byte, u.amount_per_unit / f.capacity(u.resource));
  for (Usage& u : scratch_) u.amount_per_unit /= seconds_per_byte;
  ActivitySpec spec;
  spec.work = bytes * seconds_per_byte;
  spec.max_rate = 1.0;
  spec.priority_class = comm_class();
  return f.start(sim_.now(), spec, scratch_, listener, tag);
}

bool Endpoint::sram_try_reserve(std::span<const Rank> members, double bytes) {
  const double cap = static_cast<double>(cfg_.ace.sram_bytes);
  for (Rank r : members) {
    if (simulated(r) && npu(r).sram_used + bytes > cap) return false;
  }
  for (Rank r : members) {
    if (simulated(r)) npu(r).sram_used += bytes;
  }
  return true;
}

void Endpoint::sram_release(Rank r, double bytes) {
  Npu& n = npu(r);
  n.sram_used = std::max(0.0, n.sram_used - bytes);
}

double Endpoint::sram_free(Rank r) { return static_cast<double>(cfg_.ace.sram_bytes) - npu(r).sram_used; }

void Endpoint::set_compute_slowdown(Rank r, double factor) {
  if (!(factor > 0.0) || !std::isfinite(factor)) throw std::invalid_argument("compute slowdown must be > 0");
  slowdown_[r] = factor;
}

double Endpoint::isolated_seconds(const Kernel& k) const {
  if (k.time_ps >= 0) return ps_to_seconds(k.time_ps);
  return std::max(k.flops / cfg_.peak_flops(), k.hbm_bytes / (cfg_.hbm_GBps * 1e9));
}

ActivityId Endpoint::start_kernel(Rank r, const Kernel& k_in, ActivityListener* listener, std::uint64_t tag) {
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
  scratch_.clear();
  if (!fixed && spec.work > 0.0) {
    if (flops > 0.0) scratch_.push_back({n.cu, flops / spec.work});
    if (hbm > 0.0) scratch_.push_back({n.hbm, hbm / spec.work});
  }
  return sim_.fluid().start(sim_.now(), spec, scratch_, listener, tag);
}

void Endpoint::settle() {
  const TimePs now = sim_.now();
  for (Npu& n : npus_) {
    n.stats.comm_unit_seconds += n.units_held * ps_to_seconds(now - n.held_since);
    n.held_since = now;
  }
}

const NpuStats& Endpoint::stats(Rank r) { return npu(r).stats; }

int Endpoint::units_held(Rank r) { return npu(r).units_held; }

}  // namespace acesim
