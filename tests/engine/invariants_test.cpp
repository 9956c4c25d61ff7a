// Every invariant broken on purpose is caught; a loop that stops time and a
// run that cannot finish are reported (docs/model.md, "Invariants").
#include <gtest/gtest.h>

#include "collective/collective_engine.h"
#include "endpoint/endpoint.h"
#include "support.h"

namespace acesim {
namespace {

using test::dim;

TEST(Invariants, TimeNeverGoesBackwards) {
  struct Nop : EventHandler {
    void handle_event(std::uint64_t) override {}
  } nop;
  Simulation sim;
  sim.schedule_at(100, &nop, 0);
  sim.run();
  EXPECT_THROW(sim.schedule_at(99, &nop, 0), std::logic_error);
}

TEST(Invariants, LivelockIsDetected) {
  // A handler that keeps rescheduling itself at the same instant.
  struct Loop : EventHandler {
    Simulation* sim;
    void handle_event(std::uint64_t) override { sim->schedule_in(0, this, 0); }
  } loop;
  Simulation sim;
  loop.sim = &sim;
  sim.set_livelock_limit(1000);
  sim.schedule_at(5000, &loop, 0);
  try {
    sim.run();
    FAIL() << "no livelock reported";
  } catch (const Livelock& e) {
    EXPECT_NE(std::string(e.what()).find("time stopped advancing at t=5.000000 ns"), std::string::npos) << e.what();
  }
}

TEST(Invariants, NoResourceAboveItsCapacity) {
  FluidModel f;
  const ResourceId link = f.add_resource("link", 100.0);
  const std::vector<Usage> u = {{link, 1.0}};
  ActivitySpec spec;
  spec.work = 1e6;
  f.start(0, spec, u, nullptr, 0);
  f.start(0, spec, u, nullptr, 1);
  f.next_completion(0);
  EXPECT_NO_THROW(f.check_capacities());
  // Break it: the capacity drops while the rates still say 50 + 50.
  f.set_capacity(0, link, 60.0);
  try {
    f.check_capacities();
    FAIL() << "overload not caught";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("resource 'link' carries 100"), std::string::npos) << e.what();
  }
  f.next_completion(0);  // re-rated: 30 + 30
  EXPECT_NO_THROW(f.check_capacities());
  // With checking on, every solve verifies it.
  f.set_checking(true);
  f.start(0, spec, u, nullptr, 2);
  EXPECT_NO_THROW(f.next_completion(0));
}

// A network that reports every transfer done twice.
class Stutter final : public NetworkBackend, private EventHandler {
 public:
  explicit Stutter(Simulation& sim) : sim_(sim) {}
  std::string_view name() const override { return "stutter"; }
  void start(const TransferShape&, double, TimePs, TransferListener* l, std::uint64_t tag, const EndpointLoad*,
             double) override {
    listener_ = l;
    sim_.schedule_in(10, this, tag);
    sim_.schedule_in(20, this, tag);
  }

 private:
  void handle_event(std::uint64_t tag) override { listener_->transfer_done(tag); }
  Simulation& sim_;
  TransferListener* listener_ = nullptr;
};

TEST(Invariants, EveryPhaseCompletesExactlyOnce) {
  const PlatformConfig p = test::platform({dim(DimKind::kRing, 4, 100, 0)});
  Simulation sim;
  const Topology topo(p.dims);
  Stutter net(sim);
  CollectiveEngine engine(sim, topo, net, p.collectives);
  CollectiveRequest r;
  r.bytes = 1e6;
  const CollectiveId id = engine.create(r);
  engine.arrive_all(id);
  try {
    sim.run();
    FAIL() << "double completion not caught";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("reported done twice"), std::string::npos) << e.what();
  }
  EXPECT_THROW(engine.arrive(id, 0), std::logic_error);  // a rank arrives once
}

TEST(Invariants, BytesSentEqualBytesReceived) {
  const Topology topo({dim(DimKind::kRing, 4, 100, 0)});
  Simulation sim;
  Endpoints ep(sim, topo, NpuConfig{});
  // A ring step as the network lays it: each NPU sends one piece, receives one.
  TransferShape ok;
  for (Rank r = 0; r < 4; ++r) ok.link_traffic.push_back({r, 0, 0.25, 0.25});
  ep.record_traffic(ok, 1000.0);
  EXPECT_NO_THROW(ep.check_traffic_balance(4));
  // Break it: bytes leave NPU 0 that nobody receives.
  TransferShape lost;
  lost.link_traffic.push_back({0, 0, 0.5, 0.0});
  ep.record_traffic(lost, 1000.0);
  try {
    ep.check_traffic_balance(4);
    FAIL() << "imbalance not caught";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("dimension 0 links carried 1500"), std::string::npos) << e.what();
  }
}

TEST(Invariants, AStuckRunSaysWhoWaitsForWhat) {
  // 2x2 torus; only ranks 0 and 1 arrive. Their dimension-0 group runs its
  // reduce-scatter; the dimension-1 all-reduce of rank 0's group then waits
  // for rank 2, which never came.
  const PlatformConfig p = test::platform({dim(DimKind::kRing, 2, 100, 0), dim(DimKind::kRing, 2, 100, 0)});
  Simulation sim;
  const Topology topo(p.dims);
  auto net = make_network(p.network, sim, topo);
  CollectiveEngine engine(sim, topo, *net, p.collectives);
  CollectiveRequest r;
  r.bytes = 1e6;
  r.name = "grads";
  const CollectiveId id = engine.create(r);
  engine.arrive(id, 0);
  engine.arrive(id, 1);
  EXPECT_TRUE(sim.run());  // nothing left to do: the queue emptied
  ASSERT_FALSE(engine.finished(id));
  const auto report = engine.stuck_report();
  ASSERT_EQ(report.size(), 1u);
  const std::string& l = report[0];
  EXPECT_NE(l.find("'grads'"), std::string::npos) << l;
  EXPECT_NE(l.find("missing ranks 2 3"), std::string::npos) << l;
  EXPECT_NE(l.find("phase 1 (all-reduce on dimension 1): 2 chunk-groups waiting for members"), std::string::npos) << l;
  EXPECT_NE(l.find("chunk 0 on the group of rank 0: 1 of 2 members ready"), std::string::npos) << l;
}

}  // namespace
}  // namespace acesim
