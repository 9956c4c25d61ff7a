// The NPUs at the endpoints of the fabric: compute units, HBM and the
// communication executor, as resources in the simulation's fluid model.
//
// Compute kernels and collective phases are activities on these resources,
// so a kernel slows when a collective takes compute units or HBM bandwidth,
// and a collective slows when its executor (compute units, HBM, or ACE's
// DMA/ALUs/SRAM) cannot keep up with the links. Every activity's work is its
// isolated time in seconds (rate 1 = full speed alone), so "fair" sharing
// gives equal relative progress. See docs/model.md, "Endpoint".
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "endpoint/executor.h"
#include "endpoint/npu_config.h"
#include "engine/simulation.h"
#include "network/network.h"
#include "network/transfer_shape.h"
#include "topology/topology.h"

namespace acesim {

// A compute kernel: FLOPs and HBM bytes (roofline), or only a time.
struct Kernel {
  double flops = 0.0;
  double hbm_bytes = 0.0;
  TimePs time_ps = -1;  // >= 0: given as a time (ASTRA-sim tables)
  // Fractions of the peak FLOP rate and HBM bandwidth the kernel reaches
  // alone (docs/models.md, "Kernel efficiencies"): it holds the resources as
  // if it did flops / flops_efficiency and hbm_bytes / hbm_efficiency.
  double flops_efficiency = 1.0;
  double hbm_efficiency = 1.0;
};

struct NpuStats {
  double hbm_bytes_compute = 0.0;
  double hbm_bytes_comm = 0.0;
  std::vector<double> sent_per_dim;      // bytes put on the links of each dimension
  std::vector<double> received_per_dim;  // bytes taken off them
  double comm_unit_seconds = 0.0;        // compute-unit time held by communication kernels
  double compute_unit_seconds = 0.0;     // compute kernels' time alone x the NPU's units (the energy model's busy units)
  double compute_flops = 0.0;
  double sent() const;
  double received() const;
};

// Statistics averaged over NPUs. A running mean, exact when every NPU has the
// same value, so a symmetric simulation's one NPU equals the full average.
struct NpuStatsMean {
  double hbm_bytes_compute = 0.0;
  double hbm_bytes_comm = 0.0;
  std::vector<double> sent_per_dim;
  std::vector<double> received_per_dim;
  double comm_unit_seconds = 0.0;
  double compute_unit_seconds = 0.0;
  long long count = 0;
  void add(const NpuStats& s);
};

// All NPUs of a simulation. An NPU's resources are created the first time
// anything touches it (the fluid model numbers resources in that order);
// getters create nothing.
class Endpoints {
 public:
  // Throws std::invalid_argument when the NPU configuration is invalid or
  // names no registered executor.
  Endpoints(Simulation& sim, const Topology& topo, NpuConfig cfg);
  ~Endpoints();
  Endpoints(const Endpoints&) = delete;
  Endpoints& operator=(const Endpoints&) = delete;

  const NpuConfig& config() const { return cfg_; }
  // Symmetric simulation: only `rank`'s resources and statistics exist;
  // every other member of a group is taken to behave the same.
  void set_representative(Rank rank) { rep_ = rank; }
  // Several representatives (CollectiveEngine::set_representatives).
  void set_representatives(const std::vector<Rank>& ranks) {
    if (rep_ >= 0) throw std::logic_error("set_representatives: one representative is set");
    reps_.assign(static_cast<std::size_t>(topo_.num_npus()), 0);
    for (Rank r : ranks) {
      if (r < 0 || r >= topo_.num_npus()) throw std::logic_error("representative rank out of range");
      reps_[static_cast<std::size_t>(r)] = 1;
    }
  }
  bool simulated(Rank r) const {
    return !reps_.empty() ? reps_[static_cast<std::size_t>(r)] != 0 : rep_ < 0 || r == rep_;
  }
  // A straggler: rank r's kernels do `factor` times the work (factor > 0).
  void set_compute_slowdown(Rank r, double factor);

  // ---- communication, called by the collective engine and messages ----
  // Fills `out` with what the phase costs its members' endpoints.
  void phase_load(const PhaseCost& cost, std::span<const Rank> members, const TransferShape& shape,
                  double phase_bytes, EndpointLoad& out) {
    out.demands.clear();
    out.priority_class = comm_class();
    executor_->phase_load(cost, members, shape, phase_bytes, out);
  }
  // Counts a phase's link traffic in the members' statistics.
  void record_traffic(const TransferShape& shape, double phase_bytes);
  // A phase of a collective (or a message) starts / ends on `members`;
  // `units` as Executor::phase_begin.
  void phase_begin(std::uint32_t collective, std::span<const Rank> members, int units = 0) {
    executor_->phase_begin(collective, members, units);
  }
  void phase_end(std::uint32_t collective, std::span<const Rank> members) { executor_->phase_end(collective, members); }
  // See Executor: admission of chunks entering a collective.
  std::string unfit_reason(const ChunkBytes& chunk) const { return executor_->unfit_reason(chunk); }
  TimePs step_latency_ps() const { return executor_->step_latency_ps(); }
  TimePs command_issue_ps() const { return executor_->command_issue_ps(); }
  bool copy_engine_collectives() const { return executor_->copy_engine_collectives(); }
  int pieces(const ChunkBytes& chunk) const { return executor_->pieces(chunk); }
  bool gates_entry() const { return executor_->gates_entry(); }
  bool try_enter(std::span<const Rank> members, const ChunkBytes& chunk) { return executor_->try_enter(members, chunk); }
  bool leave(Rank r, const ChunkBytes& chunk) { return executor_->leave(r, chunk); }
  // Whether rank r's NPU exists yet (npu(r) creates it, and its resources,
  // on first touch: callers that only ask need not create it).
  bool touched(Rank r) const { return index_[static_cast<std::size_t>(r)] >= 0; }
  std::string_view entry_resource() const { return executor_->entry_resource(); }

  // ---- transfers inside one NPU (the single-GPU characterization) ----
  // Progress is in bytes; the executor says which resources it uses.
  ActivityId start_local_transfer(Rank r, LocalTransfer kind, double bytes, ActivityListener* listener,
                                  std::uint64_t tag);
  // `units` more (or, negative, fewer) compute units held by communication
  // kernels on `r` outside any collective (executors that hold units).
  void hold_units(Rank r, int units) { executor_->hold_units(r, units); }

  // ---- compute ----
  ActivityId start_kernel(Rank r, const Kernel& k, ActivityListener* listener, std::uint64_t tag);
  // Time alone on an idle NPU.
  double isolated_seconds(const Kernel& k) const;

  // ---- statistics ----
  // Settles time-integrated statistics up to now.
  void settle();
  // All zero for an NPU nothing has touched.
  const NpuStats& stats(Rank r) const;
  // Compute units held by communication on `r` now.
  int units_held(Rank r) const;
  std::size_t npus_touched() const { return npus_.size(); }
  // Invariant: over the simulated ranks, the bytes put on each dimension's
  // links equal the bytes taken off them. Throws std::logic_error.
  void check_traffic_balance(Rank ranks) const;
  // The mean over ranks 0 .. ranks-1 (the simulated ones).
  NpuStatsMean mean_stats(Rank ranks) const;

  // ---- for executors ----
  static constexpr ResourceId kNone = std::numeric_limits<ResourceId>::max();
  // What every NPU has, whatever its executor.
  struct Npu {
    std::size_t index = 0;          // position among touched NPUs
    ResourceId cu = kNone;          // compute pool, FLOP/s
    ResourceId hbm = kNone;         // shared HBM, or compute's part under a static split
    ResourceId hbm_comm = kNone;    // communication's part under a static split
    int units_held = 0;             // compute units taken from the pool by communication
    TimePs held_since = 0;
    NpuStats stats;
  };
  // Rank r's NPU, its resources (and the executor's) created on first touch.
  Npu& npu(Rank r) {
    const std::int32_t idx = index_[static_cast<std::size_t>(r)];
    return idx >= 0 ? npus_[static_cast<std::size_t>(idx)] : add_npu(r);
  }
  // Communication now holds `held` compute units of `n` (at most all of
  // them): the compute pool shrinks accordingly. False when unchanged.
  bool set_units_held(Npu& n, int held);
  Simulation& sim() { return sim_; }
  int comm_class() const;

 private:
  Npu& add_npu(Rank r);
  int compute_class() const;

  Simulation& sim_;
  const Topology& topo_;
  NpuConfig cfg_;
  std::vector<std::int32_t> index_;  // rank -> position in npus_, -1 until touched
  std::vector<Npu> npus_;
  NpuStats untouched_;  // what stats() says of an NPU nothing touched
  std::unordered_map<Rank, double> slowdown_;
  Rank rep_ = -1;
  std::vector<char> reps_;  // several representatives: per rank, whether it is one
  std::vector<Usage> scratch_;
  std::unique_ptr<Executor> executor_;
};

}  // namespace acesim
