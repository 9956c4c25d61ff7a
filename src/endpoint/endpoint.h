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
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "collective/types.h"
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
};

// What one phase of one chunk costs each member's endpoint.
struct PhaseCost {
  CollectiveOp op;       // the phase's operation
  bool first = false;    // the chunk enters the collective in this phase
  bool last = false;     // ... and leaves it at the end of this one
  double in_bytes = 0.0;   // the chunk's input at one NPU
  double out_bytes = 0.0;  // the chunk's output at one NPU
};

struct NpuStats {
  double hbm_bytes_compute = 0.0;
  double hbm_bytes_comm = 0.0;
  std::vector<double> sent_per_dim;      // bytes put on the links of each dimension
  std::vector<double> received_per_dim;  // bytes taken off them
  double comm_unit_seconds = 0.0;        // compute-unit time held by communication kernels
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
  long long count = 0;
  void add(const NpuStats& s);
};

class Endpoint {
 public:
  // Throws std::invalid_argument when the NPU configuration is invalid.
  Endpoint(Simulation& sim, const Topology& topo, NpuConfig cfg);
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  const NpuConfig& config() const { return cfg_; }
  // Symmetric simulation: only `rank`'s resources and statistics exist;
  // every other member of a group is taken to behave the same.
  void set_representative(Rank rank) { rep_ = rank; }
  bool simulated(Rank r) const { return rep_ < 0 || r == rep_; }
  // A straggler: rank r's kernels do `factor` times the work (factor > 0).
  void set_compute_slowdown(Rank r, double factor);
  ExecutorKind executor() const { return cfg_.executor; }

  // ---- communication, called by the collective engine ----
  // Fills `out` with what the phase costs its members' endpoints.
  void phase_load(const PhaseCost& cost, std::span<const Rank> members, const TransferShape& shape,
                  double phase_bytes, EndpointLoad& out);
  // Counts a phase's link traffic in the members' statistics.
  void record_traffic(const TransferShape& shape, double phase_bytes);
  // sm: a collective's kernels hold `units` compute units on an NPU while
  // it has at least one phase running there.
  void phase_begin(std::uint32_t collective, std::span<const Rank> members);
  void phase_end(std::uint32_t collective, std::span<const Rank> members);
  // ace: SRAM held by a chunk from entry to exit. try_reserve reserves on
  // every member or on none.
  bool sram_try_reserve(std::span<const Rank> members, double bytes);
  void sram_release(Rank r, double bytes);
  double sram_free(Rank r);

  // ---- transfers inside one NPU (the single-GPU characterization) ----
  // A copy (read 1, write 1 HBM byte per byte) or a reduction (read 2,
  // write 1) by kernels on the compute units (sm executor; the caller holds
  // the units with hold_units), or a copy by ACE's DMA (read and write each
  // byte once through the DMA engine). Progress is in bytes.
  enum class LocalTransfer { kCopy, kReduce, kDma };
  ActivityId start_local_transfer(Rank r, LocalTransfer kind, double bytes, ActivityListener* listener,
                                  std::uint64_t tag);
  // sm: `units` more (or, negative, fewer) compute units held by
  // communication kernels on `r` outside any collective.
  void hold_units(Rank r, int units);

  // ---- compute ----
  ActivityId start_kernel(Rank r, const Kernel& k, ActivityListener* listener, std::uint64_t tag);
  // Time alone on an idle NPU.
  double isolated_seconds(const Kernel& k) const;

  // ---- statistics ----
  // Settles time-integrated statistics up to now.
  void settle();
  const NpuStats& stats(Rank r);
  // Compute units held by communication on `r` now.
  int units_held(Rank r);
  std::size_t npus_touched() const { return npus_.size(); }
  // Invariant: over the simulated ranks, the bytes put on each dimension's
  // links equal the bytes taken off them. Throws std::logic_error.
  void check_traffic_balance(Rank ranks);
  // The mean over ranks 0 .. ranks-1 (the simulated ones).
  NpuStatsMean mean_stats(Rank ranks);

 private:
  static constexpr ResourceId kNone = std::numeric_limits<ResourceId>::max();
  struct Npu {
    ResourceId cu = kNone;          // compute pool, FLOP/s
    ResourceId hbm = kNone;         // shared HBM, or compute's part under a static split
    ResourceId hbm_comm = kNone;    // communication's part under a static split
    ResourceId comm_units = kNone;  // sm: bytes/s the held units can move
    ResourceId dma = kNone;         // ace
    ResourceId alu = kNone;         // ace
    int units_requested = 0;
    int units_held = 0;
    TimePs held_since = 0;
    double sram_used = 0.0;
    NpuStats stats;
  };

  Npu& npu(Rank r);
  void set_units(Rank r, Npu& n, int requested);
  int comm_class() const;
  int compute_class() const;

  Simulation& sim_;
  const Topology& topo_;
  NpuConfig cfg_;
  std::vector<std::int32_t> index_;  // rank -> position in npus_, -1 until touched
  std::vector<Npu> npus_;
  std::unordered_map<std::uint64_t, std::int32_t> running_;  // (collective, rank) -> running phases
  std::unordered_map<Rank, double> slowdown_;
  Rank rep_ = -1;
  std::vector<Usage> scratch_;
};

}  // namespace acesim
