// Network backends behind one interface. A backend moves one phase of a
// collective (a TransferShape scaled by the phase's data size) and reports
// when the last byte of its last step has arrived.
//
//   analytical  congestion-unaware: each step takes the slowest message's
//               route latency + bytes / route bandwidth; transfers never
//               slow each other.
//   fluid       congestion-aware: every transfer is an activity on the link
//               resources it crosses, so concurrent transfers share each
//               link's capacity max-min fairly.
// With no sharing, both give the same time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/simulation.h"
#include "network/transfer_shape.h"
#include "topology/topology.h"

namespace acesim {

enum class BackendKind { kAnalytical, kFluid };
// Fluid backend only: one activity per phase (its steps' latencies added, its
// bytes moved at the shared rate), or one per step (for validation).
enum class Granularity { kPhase, kStep };

std::string_view to_string(BackendKind b);
std::string_view to_string(Granularity g);
std::optional<BackendKind> parse_backend(std::string_view s);
std::optional<Granularity> parse_granularity(std::string_view s);

struct NetworkConfig {
  BackendKind backend = BackendKind::kFluid;
  Granularity granularity = Granularity::kPhase;
};

// What a transfer costs at its endpoints beyond the links (HBM, compute
// units, an offload engine's DMA and ALUs): absolute amounts for the whole
// transfer, consumed evenly while its bytes move.
struct EndpointDemand {
  ResourceId resource;
  double amount;
};

struct EndpointLoad {
  std::vector<EndpointDemand> demands;
  int priority_class = 0;
};

class TransferListener {
 public:
  virtual void transfer_done(std::uint64_t tag) = 0;

 protected:
  ~TransferListener() = default;
};

class NetworkBackend {
 public:
  virtual ~NetworkBackend() = default;
  virtual std::string_view name() const = 0;
  // Moves `bytes` of phase data through `shape`; `per_step_overhead_ps` is
  // added to every step; `endpoint` (may be null) adds endpoint resources.
  // Calls listener->transfer_done(tag) later, never from inside start().
  // `replicas`: how many identical transfers this one stands for (symmetric
  // simulation runs one group per dimension for all of them); it scales the
  // byte counts only.
  virtual void start(const TransferShape& shape, double bytes, TimePs per_step_overhead_ps,
                     TransferListener* listener, std::uint64_t tag, const EndpointLoad* endpoint = nullptr,
                     double replicas = 1.0) = 0;
  // Symmetric simulation: transfers use only the links `rank` owns (its
  // out-links, and its switch down-links). In a symmetric pattern every
  // member's links carry the same loads, so the shared rates are the same.
  void set_representative(Rank rank) { rep_ = rank; }
  // Bytes carried by the links of each dimension so far (sum over links).
  const std::vector<double>& link_bytes_per_dim() const { return bytes_per_dim_; }

 protected:
  void account(const TransferShape& shape, double bytes);
  Rank rep_ = -1;
  // Appends endpoint demands as usage per unit of `work` (work > 0).
  static void append_endpoint_usage(const EndpointLoad* endpoint, double work, std::vector<Usage>& out);
  std::vector<double> bytes_per_dim_;
};

std::unique_ptr<NetworkBackend> make_network(const NetworkConfig& cfg, Simulation& sim, const Topology& topo);

// Congestion-unaware duration of one transfer (exposed for tests and tools).
TimePs analytical_duration(const TransferShape& shape, double bytes, TimePs per_step_overhead_ps);

}  // namespace acesim
