// One collective on a fresh simulation of a platform: what `acesim
// collective` runs per size (report/collective_sweep.h formats it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collective/types.h"
#include "config/platform.h"
#include "engine/progress.h"
#include "engine/time.h"

namespace acesim {

struct CollectiveRequestSpec {
  CollectiveOp op = CollectiveOp::kAllReduce;
  std::vector<int> dims;  // empty: all
  bool full = false;      // simulate every rank even when one could stand for all
  // Stragglers: rank -> factor by which its endpoint's links are slower
  // (Topology::set_npu_link_slowdown). Any makes the run full.
  std::vector<std::pair<Rank, double>> stragglers;
  // Rooted operations: the root, a rank; every group's root is the member at
  // its position. Rooted operations always run in full.
  Rank root = 0;
  // When not empty: one group of exactly these ranks (ascending), routed
  // over the fabric, instead of `dims`. Runs in full.
  std::vector<Rank> members;
};

struct CollectiveResult {
  CollectiveOp op;
  std::uint64_t bytes;
  long long ranks;  // NPUs in one group of the collective
  TimePs time_ps;
  double algbw_GBps;
  double busbw_GBps;
  std::uint64_t events;
  std::vector<double> link_bytes_per_dim;
  std::string executor;  // its name in executor_registry()
  int chunks;  // as run (max_chunk_bytes may raise the configured count)
  long long simulated_ranks;  // 1 when symmetric
  // What NCCL's model ran ("" when the platform's own plan ran).
  std::string algorithm;
  std::string protocol;
  int channels = 0;
  std::string simulation;     // "symmetric", or "full" with the reason
  // Per NPU, averaged over all NPUs:
  double hbm_bytes;                    // HBM traffic caused by communication
  double network_bytes;                // bytes put on links, all dimensions
  std::vector<double> network_bytes_per_dim;           // sent
  std::vector<double> network_bytes_received_per_dim;
  double comm_unit_seconds;            // compute-unit time held by communication
  // Every NPU of the platform, joules, where the platform has an energy
  // model (collective_energy_J); none otherwise.
  std::optional<double> energy_J;
  // energy_J per NPU per second of the collective.
  std::optional<double> power_W_per_npu(long long npus) const;
  double network_GBps() const;         // network_bytes / time
  double hbm_per_network_byte() const;
};

// The energy of a collective that took `seconds` on each of `npus` NPUs
// with the per-NPU means of `r` (docs/model.md, "Energy"): idle power for
// the whole time, active power for the compute-unit time communication held,
// HBM and link bits at their pJ per bit. Copy engines and ACE draw nothing
// of their own here (no sourced figure).
double collective_energy_J(const EnergyModel& e, const CollectiveResult& r, int compute_units, long long npus);

// Simulates one collective of `bytes` on a fresh simulation of `platform`,
// telling `progress` how far it is.
CollectiveResult run_collective(const PlatformConfig& platform, const CollectiveRequestSpec& req, std::uint64_t bytes,
                                const Progress& progress = {});

// Sizes from min to max multiplying by factor (nccl-tests' -b/-e/-f).
std::vector<std::uint64_t> size_sweep(std::uint64_t min_bytes, std::uint64_t max_bytes, std::uint64_t factor);

}  // namespace acesim
