// Network backends behind one interface, chosen by name from a registry. A
// backend moves one phase of a collective (a TransferShape scaled by the
// phase's data size) and reports when the last byte of its last step has
// arrived. The built-ins, one file each:
//
//   analytical  congestion-unaware: each step takes the slowest message's
//               route latency + bytes / route bandwidth; transfers never
//               slow each other.
//   fluid       congestion-aware: every transfer is an activity on the link
//               resources it crosses, so concurrent transfers share each
//               link's capacity max-min fairly.
// With no sharing, both give the same time.
//
// Two ways in: the fast path reads a phase's shape (per step, the load on
// every link); a backend that models messages individually (a packet-level
// engine) asks for them (`wants_messages`) and reads each step's messages,
// with their routes, from the same shape. A backend with its own clock adds
// itself to the simulation as an event source (engine/simulation.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/simulation.h"
#include "network/transfer_shape.h"
#include "registry/registry.h"
#include "topology/topology.h"

namespace acesim {

// Fluid backend only: one activity per phase (its steps' latencies added, its
// bytes moved at the shared rate), or one per step (for validation).
enum class Granularity { kPhase, kStep };

std::string_view to_string(Granularity g);
std::optional<Granularity> parse_granularity(std::string_view s);
std::vector<std::string> granularity_names();

struct NetworkConfig {
  std::string backend = "fluid";  // a name of backend_registry(), canonical spelling
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
  // True when the backend reads the individual messages of each step
  // (TransferShape::step_messages); shapes are then built with them.
  virtual bool wants_messages() const { return false; }
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
  // Several jobs on one platform (driver/cluster_run.h): `tenant_of_rank`
  // gives each NPU's job (-1: none) and from then on every link's bytes are
  // counted per job, a transfer's job being its first member's. Full
  // simulation only (every member's links carry the shape).
  void set_tenants(std::vector<int> tenant_of_rank, int tenants, LinkId links);
  // [tenant][link]: bytes carried so far; empty without set_tenants.
  const std::vector<std::vector<double>>& link_bytes_by_tenant() const { return tenant_link_bytes_; }

 protected:
  void account(const TransferShape& shape, double bytes);
  Rank rep_ = -1;
  std::vector<int> tenant_of_rank_;
  std::vector<std::vector<double>> tenant_link_bytes_;
  // Appends endpoint demands as usage per unit of `work` (work > 0).
  static void append_endpoint_usage(const EndpointLoad* endpoint, double work, std::vector<Usage>& out);
  std::vector<double> bytes_per_dim_;
};

// A network backend kind: one registry entry per backend, each in its own
// file (network/analytical.cpp, network/fluid.cpp).
struct NetworkBackendType : RegistryEntryBase {
  std::function<std::unique_ptr<NetworkBackend>(Simulation&, const Topology&, const NetworkConfig&)> make;
};
using BackendRegistry = Registry<NetworkBackendType>;
// The registry, with the built-in backends registered on first use.
BackendRegistry& backend_registry();
// The built-ins, one line each (network/network.cpp).
void register_builtin_backends(BackendRegistry& registry);

// The backend cfg.backend names. Throws std::invalid_argument for an unknown name.
std::unique_ptr<NetworkBackend> make_network(const NetworkConfig& cfg, Simulation& sim, const Topology& topo);

// Congestion-unaware duration of one transfer (exposed for tests and tools).
TimePs analytical_duration(const TransferShape& shape, double bytes, TimePs per_step_overhead_ps);

}  // namespace acesim
