// Congestion-unaware backend: a closed form per transfer, one event each.
// With endpoint demands the transfer becomes an activity whose network part
// never slows (its own max rate) but whose endpoint resources are shared.
#include <vector>

#include "engine/slot_pool.h"
#include "network/network.h"

namespace acesim {
namespace {

class AnalyticalNetwork final : public NetworkBackend, private EventHandler, private ActivityListener {
 public:
  AnalyticalNetwork(Simulation& sim, const Topology& topo) : sim_(sim) {
    bytes_per_dim_.assign(topo.num_dims(), 0.0);
  }
  std::string_view name() const override { return "analytical"; }

  void start(const TransferShape& shape, double bytes, TimePs overhead_ps, TransferListener* listener,
             std::uint64_t tag, const EndpointLoad* endpoint, double replicas) override {
    account(shape, bytes * replicas);
    const std::uint32_t slot = pending_.acquire();
    pending_[slot] = {listener, tag};
    const TimePs duration = analytical_duration(shape, bytes, overhead_ps);
    usage_.clear();
    append_endpoint_usage(endpoint, ps_to_seconds(duration), usage_);
    if (usage_.empty()) {
      sim_.schedule_in(duration, this, slot, EventPriority::kCompletion);
      return;
    }
    ActivitySpec spec;
    spec.work = ps_to_seconds(duration);
    spec.max_rate = 1.0;
    spec.priority_class = endpoint->priority_class;
    sim_.fluid().start(sim_.now(), spec, usage_, this, slot);
  }

 private:
  struct Pending {
    TransferListener* listener;
    std::uint64_t tag;
  };
  void activity_done(std::uint64_t slot) override { handle_event(slot); }
  void handle_event(std::uint64_t slot) override {
    const Pending p = pending_[slot];
    pending_.release(static_cast<std::uint32_t>(slot));
    p.listener->transfer_done(p.tag);
  }

  Simulation& sim_;
  SlotPool<Pending> pending_;
  std::vector<Usage> usage_;
};

}  // namespace

void register_analytical_backend(BackendRegistry& registry) {
  NetworkBackendType b;
  b.name = "analytical";
  b.help = "congestion-unaware: each step takes its slowest message's latency + bytes / bandwidth";
  b.make = [](Simulation& sim, const Topology& topo, const NetworkConfig&) -> std::unique_ptr<NetworkBackend> {
    return std::make_unique<AnalyticalNetwork>(sim, topo);
  };
  registry.add(std::move(b));
}

}  // namespace acesim
