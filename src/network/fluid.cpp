// Congestion-aware backend: transfers are activities on link resources.
//
// Phase granularity: one activity per transfer. Its work is the transfer's
// isolated time in seconds (sum over steps of the busiest link's bytes /
// bandwidth) at max rate 1, and it uses each link at that link's total bytes
// over that time. Alone it runs at rate 1 and takes exactly the congestion-
// unaware time; sharing a link slows it. The steps' latencies are added
// after the bytes have moved.
// Step granularity: the same per step, one after another, each followed by
// its own latency.
#include <deque>
#include <unordered_map>
#include <vector>

#include "engine/slot_pool.h"
#include "network/network.h"

namespace acesim {
namespace {

class FluidNetwork final : public NetworkBackend, private ActivityListener, private EventHandler {
 public:
  FluidNetwork(Simulation& sim, const Topology& topo, Granularity g) : sim_(sim), topo_(topo), granularity_(g) {
    bytes_per_dim_.assign(topo.num_dims(), 0.0);
  }
  std::string_view name() const override { return "fluid"; }

  void start(const TransferShape& shape, double bytes, TimePs overhead_ps, TransferListener* listener,
             std::uint64_t tag, const EndpointLoad* endpoint, double replicas) override {
    account(shape, bytes * replicas);
    const Cached& c = cached(shape);
    const std::uint32_t slot = running_.acquire();
    Running& r = running_[slot];
    // Field by field: the slot's usage vector keeps its capacity.
    r.shape = &shape;
    r.cached = &c;
    r.bytes = bytes;
    r.overhead_ps = overhead_ps;
    r.listener = listener;
    r.tag = tag;
    r.step = 0;
    r.rep = 0;
    r.endpoint_usage.clear();
    if (shape.steps.empty()) {
      sim_.schedule_in(0, this, slot, EventPriority::kCompletion);
      return;
    }
    const double work = bytes * c.seconds_per_byte;
    r.priority_class = endpoint != nullptr ? endpoint->priority_class : 0;
    append_endpoint_usage(endpoint, work, r.endpoint_usage);
    if (granularity_ == Granularity::kPhase) {
      ActivitySpec spec;
      spec.work = work;
      spec.max_rate = 1.0;
      spec.priority_class = r.priority_class;
      if (r.endpoint_usage.empty()) {
        sim_.fluid().start(sim_.now(), spec, c.usage, this, slot);
      } else {
        scratch_ = c.usage;
        scratch_.insert(scratch_.end(), r.endpoint_usage.begin(), r.endpoint_usage.end());
        sim_.fluid().start(sim_.now(), spec, scratch_, this, slot);
      }
    } else {
      start_step(slot);
    }
  }

 private:
  struct Cached {
    std::vector<Usage> usage;  // phase granularity
    double seconds_per_byte = 0.0;
    TimePs latency_ps = 0;
    std::vector<std::vector<Usage>> step_usage;  // step granularity
  };
  struct Running {
    const TransferShape* shape;
    const Cached* cached;
    double bytes;
    TimePs overhead_ps;
    TransferListener* listener;
    std::uint64_t tag;
    int step;
    int rep;
    // Endpoint resources per unit of progress, the same in every step (the
    // transfer's endpoint work is spread evenly over its bytes).
    std::vector<Usage> endpoint_usage;
    int priority_class;
  };

  ResourceId resource_for(LinkId l) {
    auto it = link_resource_.find(l);
    if (it != link_resource_.end()) return it->second;
    const Link link = topo_.link(l);
    const ResourceId r = sim_.fluid().add_resource(topo_.link_name(l), link.bandwidth_Bps);
    link_resource_.emplace(l, r);
    return r;
  }

  const Cached& cached(const TransferShape& shape) {
    if (shape.backend_slot >= 0) return cache_[shape.backend_slot];
    Cached c;
    std::unordered_map<LinkId, double> total;
    std::vector<LinkId> order;
    for (const ShapeStep& st : shape.steps) {
      c.seconds_per_byte += st.scale_sum * st.max_seconds_per_byte;
      c.latency_ps += st.repeat * st.max_latency_ps;
      std::vector<Usage> su;
      for (const LinkLoad& l : st.loads) {
        if (rep_ >= 0 && topo_.link_owner(l.link) != rep_) continue;
        auto [it, inserted] = total.emplace(l.link, 0.0);
        if (inserted) order.push_back(l.link);
        it->second += st.scale_sum * l.bytes_per_byte;
        if (st.max_seconds_per_byte > 0.0) {
          su.push_back({resource_for(l.link), l.bytes_per_byte / st.max_seconds_per_byte});
        }
      }
      c.step_usage.push_back(std::move(su));
    }
    if (c.seconds_per_byte > 0.0) {
      for (LinkId l : order) c.usage.push_back({resource_for(l), total[l] / c.seconds_per_byte});
    }
    shape.backend_slot = static_cast<int>(cache_.size());
    cache_.push_back(std::move(c));
    return cache_.back();
  }

  void start_step(std::uint32_t slot) {
    Running& r = running_[slot];
    const ShapeStep& st = r.shape->steps[r.step];
    ActivitySpec spec;
    spec.work = r.bytes * st.scale(r.rep) * st.max_seconds_per_byte;
    spec.max_rate = 1.0;
    spec.priority_class = r.priority_class;
    if (r.endpoint_usage.empty()) {
      sim_.fluid().start(sim_.now(), spec, r.cached->step_usage[r.step], this, slot);
    } else {
      scratch_ = r.cached->step_usage[r.step];
      scratch_.insert(scratch_.end(), r.endpoint_usage.begin(), r.endpoint_usage.end());
      sim_.fluid().start(sim_.now(), spec, scratch_, this, slot);
    }
  }

  // Bytes have moved: wait out the latency.
  void activity_done(std::uint64_t slot) override {
    const Running& r = running_[slot];
    TimePs delay;
    if (granularity_ == Granularity::kPhase) {
      delay = r.cached->latency_ps + r.shape->total_steps * r.overhead_ps;
    } else {
      delay = r.shape->steps[r.step].max_latency_ps + r.overhead_ps;
    }
    sim_.schedule_in(delay, this, slot, EventPriority::kCompletion);
  }

  void handle_event(std::uint64_t slot) override {
    Running& r = running_[slot];
    if (granularity_ == Granularity::kStep && !r.shape->steps.empty()) {
      if (++r.rep >= r.shape->steps[r.step].repeat) {
        r.rep = 0;
        ++r.step;
      }
      if (r.step < static_cast<int>(r.shape->steps.size())) {
        start_step(static_cast<std::uint32_t>(slot));
        return;
      }
    }
    TransferListener* listener = r.listener;
    const std::uint64_t tag = r.tag;
    running_.release(static_cast<std::uint32_t>(slot));
    listener->transfer_done(tag);
  }

  Simulation& sim_;
  const Topology& topo_;
  Granularity granularity_;
  std::unordered_map<LinkId, ResourceId> link_resource_;
  std::deque<Cached> cache_;  // stable addresses: running transfers point into it
  SlotPool<Running> running_;
  std::vector<Usage> scratch_;
};

}  // namespace

void register_fluid_backend(BackendRegistry& registry) {
  NetworkBackendType b;
  b.name = "fluid";
  b.help = "congestion-aware: concurrent transfers share each link max-min fairly";
  b.make = [](Simulation& sim, const Topology& topo, const NetworkConfig& cfg) -> std::unique_ptr<NetworkBackend> {
    return std::make_unique<FluidNetwork>(sim, topo, cfg.granularity);
  };
  registry.add(std::move(b));
}

}  // namespace acesim
