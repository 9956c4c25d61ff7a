// A network backend added from outside the library that moves every message
// of every step on its own (the seam a packet-level engine plugs into), with
// its own clock as an event source of the simulation. Not shipped: it shows
// the recipe of docs/architecture.md end to end.
#include <algorithm>
#include <functional>
#include <map>
#include <queue>
#include <unordered_map>

#include <gtest/gtest.h>

#include "chakra/chakra_trace.h"
#include "chakra/chakra_writer.h"
#include "driver/chakra_run.h"
#include "network/network.h"
#include "scratch_dir.h"
#include "support.h"

namespace acesim {
namespace {

// Each message is a fluid activity on the links of its route; a step ends
// when its last message has arrived plus the step's longest route latency.
// The latency timers run on the backend's own clock (an EventSource).
class MessageNetwork final : public NetworkBackend, private ActivityListener, private EventSource {
 public:
  MessageNetwork(Simulation& sim, const Topology& topo) : sim_(sim), topo_(topo) {
    bytes_per_dim_.assign(topo.num_dims(), 0.0);
    sim_.add_event_source(this);
  }
  ~MessageNetwork() override { sim_.remove_event_source(this); }
  std::string_view name() const override { return "test-messages"; }
  bool wants_messages() const override { return true; }

  void start(const TransferShape& shape, double bytes, TimePs overhead_ps, TransferListener* listener,
             std::uint64_t tag, const EndpointLoad*, double replicas) override {
    account(shape, bytes * replicas);
    EXPECT_EQ(shape.step_messages.size(), shape.steps.size());
    transfers_.push_back({&shape, bytes, overhead_ps, listener, tag, 0, 0, 0});
    if (shape.steps.empty()) {
      timers_.push({sim_.now(), transfers_.size() - 1});  // done, but never from inside start()
      return;
    }
    start_step(transfers_.size() - 1);
  }
  std::size_t messages_sent() const { return messages_; }

 private:
  struct Transfer {
    const TransferShape* shape;
    double bytes;
    TimePs overhead_ps;
    TransferListener* listener;
    std::uint64_t tag;
    std::size_t step, rep;
    int in_flight;
  };

  void start_step(std::size_t t) {
    Transfer& x = transfers_[t];
    if (x.step == x.shape->steps.size()) {
      x.listener->transfer_done(x.tag);
      return;
    }
    const ShapeStep& st = x.shape->steps[x.step];
    for (const ShapeMessage& m : x.shape->step_messages[x.step]) {
      std::vector<LinkId> route;
      topo_.route(m.src, m.dst, route);
      std::vector<Usage> usage;
      for (LinkId l : route) usage.push_back({link(l), 1.0});
      ActivitySpec spec;
      spec.work = x.bytes * m.fraction * st.scale(static_cast<int>(x.rep));
      sim_.fluid().start(sim_.now(), spec, usage, this, t);
      ++x.in_flight;
      ++messages_;
    }
  }
  ResourceId link(LinkId l) {
    auto it = links_.find(l);
    if (it == links_.end()) it = links_.emplace(l, sim_.fluid().add_resource(topo_.link_name(l), topo_.link(l).bandwidth_Bps)).first;
    return it->second;
  }
  void activity_done(std::uint64_t t) override {
    Transfer& x = transfers_[t];
    if (--x.in_flight > 0) return;
    timers_.push({sim_.now() + x.shape->steps[x.step].max_latency_ps + x.overhead_ps, t});
  }
  // EventSource: the step latencies.
  TimePs next_event_time(TimePs) override { return timers_.empty() ? kTimeNever : timers_.top().first; }
  std::size_t handle_due(TimePs now) override {
    std::size_t n = 0;
    while (!timers_.empty() && timers_.top().first == now) {
      const std::size_t t = timers_.top().second;
      timers_.pop();
      Transfer& x = transfers_[t];
      if (x.step < x.shape->steps.size() && ++x.rep == static_cast<std::size_t>(x.shape->steps[x.step].repeat)) {
        x.rep = 0;
        ++x.step;
      }
      start_step(t);
      ++n;
    }
    return n;
  }
  bool idle() const override { return timers_.empty(); }

  Simulation& sim_;
  const Topology& topo_;
  std::deque<Transfer> transfers_;
  std::unordered_map<LinkId, ResourceId> links_;
  using Timer = std::pair<TimePs, std::size_t>;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  std::size_t messages_ = 0;
};

void register_message_backend() {
  if (backend_registry().find("test-messages") != nullptr) return;
  NetworkBackendType b;
  b.name = "test-messages";
  b.help = "every message of every step on its own (test)";
  b.make = [](Simulation& sim, const Topology& topo, const NetworkConfig&) -> std::unique_ptr<NetworkBackend> {
    return std::make_unique<MessageNetwork>(sim, topo);
  };
  backend_registry().add(std::move(b));
}

TEST(NetworkBackendRegistry, ListsTheBuiltins) {
  const std::vector<std::string> names = backend_registry().names();
  ASSERT_GE(names.size(), 2u);
  EXPECT_EQ(names[0], "analytical");
  EXPECT_EQ(names[1], "fluid");
  EXPECT_EQ(backend_registry().find("FLUID")->name, "fluid");
  EXPECT_EQ(backend_registry().unknown("fluidd"), "unknown network backend 'fluidd' (did you mean 'fluid'?)");
}

TEST(NetworkBackendRegistry, AMessageLevelBackendRunsEndToEnd) {
  register_message_backend();
  // Ring all-reduce on a ring of n: 2(n-1) steps of (L + S/n / B), each
  // message alone on its link; the same as the fluid backend per step.
  const int n = 8;
  const double B = 50e9, L_ns = 500, S = 1 << 20;
  const double expected_ns = 2.0 * (n - 1) * (L_ns + S / n / B * 1e9);
  PlatformConfig p = test::platform({test::dim(DimKind::kRing, n, B / 1e9, L_ns)}, "test-messages");
  EXPECT_NEAR(test::time_ns(p, CollectiveOp::kAllReduce, S), expected_ns, 1e-3);
  p.network.backend = "fluid";
  p.network.granularity = Granularity::kStep;
  EXPECT_NEAR(test::time_ns(p, CollectiveOp::kAllReduce, S), expected_ns, 1e-3);
  // Two dimensions, four chunks, a full run: the messages of every group.
  PlatformConfig q = test::platform({test::dim(DimKind::kRing, 4, 100, 200), test::dim(DimKind::kSwitch, 4, 50, 700)},
                                    "test-messages", 4);
  PlatformConfig f = q;
  f.network.backend = "fluid";
  f.network.granularity = Granularity::kStep;
  CollectiveRequestSpec req;
  req.full = true;
  EXPECT_NEAR(ps_to_ns(run_collective(q, req, 64 << 20).time_ps), ps_to_ns(run_collective(f, req, 64 << 20).time_ps), 1e-3);
}

// Point-to-point messages of Chakra traces reach the backend with their
// message too: 1 MiB from rank 0 to rank 1 over one hop of a ring of 2.
class MessageBackendChakra : public test::ScratchDirTest {};

TEST_F(MessageBackendChakra, SendsAndReceivesAsMessages) {
  register_message_backend();
  PlatformConfig p = test::platform({test::dim(DimKind::kRing, 2, 50, 500)}, "test-messages");
  p.npu.executor = "ideal";
  test::chakra::TraceWriter a, b;
  a.send(1, "send", 1, 1 << 20);
  b.recv(1, "recv", 0, 1 << 20);
  const std::string prefix = test::chakra::write_ranks(dir_, "p2p", {a, b});
  const ChakraReport r = run_chakra(p, chakra::read_traces(prefix, 2), prefix);
  EXPECT_NEAR(ps_to_ns(r.total_ps), 500 + (1 << 20) / 50.0, 1e-3);
  EXPECT_EQ(r.messages, 1u);
}

// An event source alone: the simulation advances to its times, before the
// queue's events at the same instant, and run() waits until it is idle.
class Ticks final : public EventSource {
 public:
  explicit Ticks(std::vector<TimePs> times) : times_(std::move(times)) {}
  TimePs next_event_time(TimePs) override { return next_ < times_.size() ? times_[next_] : kTimeNever; }
  std::size_t handle_due(TimePs now) override {
    seen.push_back(now);
    ++next_;
    return 1;
  }
  bool idle() const override { return next_ == times_.size(); }
  std::vector<TimePs> seen;

 private:
  std::vector<TimePs> times_;
  std::size_t next_ = 0;
};

class Recorder final : public EventHandler {
 public:
  explicit Recorder(Ticks& ticks) : ticks_(ticks) {}
  void handle_event(std::uint64_t) override { ticks_at_event.push_back(ticks_.seen.size()); }
  std::vector<std::size_t> ticks_at_event;

 private:
  Ticks& ticks_;
};

TEST(Simulation, TakesEventsFromAnAddedSource) {
  Simulation sim;
  Ticks ticks({10, 20, 20, 35});
  sim.add_event_source(&ticks);
  EXPECT_THROW(sim.add_event_source(&ticks), std::logic_error);
  Recorder r(ticks);
  sim.schedule_at(20, &r, 0);
  EXPECT_TRUE(sim.run());
  EXPECT_EQ(ticks.seen, (std::vector<TimePs>{10, 20, 20, 35}));
  EXPECT_EQ(r.ticks_at_event, (std::vector<std::size_t>{3}));  // both ticks at 20 went first
  EXPECT_EQ(sim.now(), 35);
  EXPECT_EQ(sim.stats().source_events, 4u);
  EXPECT_EQ(sim.stats().events, 1u);
}

}  // namespace
}  // namespace acesim
