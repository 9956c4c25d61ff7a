// Engine micro-benchmarks: the event queue (driven through Simulation, the
// way every component uses it) and the fluid sharing solver.
//
// items_per_second is events/s for the event benchmarks and activities/s
// (activities started and completed) for the solver benchmarks. Extra
// counters show how much solver work each activity caused, so a change that
// makes re-rating less local shows up as a number, not only as a time.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/fluid_model.h"
#include "engine/simulation.h"

namespace acesim {
namespace {

// Small, fast, deterministic pseudo-random numbers for event delays.
struct XorShift {
  std::uint64_t s = 0x9E3779B97F4A7C15ull;
  std::uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
};

// ---------------------------------------------------------------------------
// Event queue
// ---------------------------------------------------------------------------

// A handler that reschedules itself `delay` later (one event pending).
class SelfRescheduler final : public EventHandler {
 public:
  SelfRescheduler(Simulation& sim, TimePs delay) : sim_(sim), delay_(delay) {}
  void handle_event(std::uint64_t tag) override { sim_.schedule_in(delay_, this, tag + 1); }

 private:
  Simulation& sim_;
  TimePs delay_;
};

// One event pending at a time: schedule + pop + dispatch, the shortest path.
void BM_EventSelfReschedule(benchmark::State& state) {
  constexpr TimePs kDelay = 1000;
  constexpr std::uint64_t kEventsPerRun = 1 << 14;
  Simulation sim;
  SelfRescheduler h(sim, kDelay);
  sim.schedule_in(kDelay, &h, 0);
  const std::uint64_t before = sim.stats().events;
  for (auto _ : state) {
    sim.run(sim.now() + static_cast<TimePs>(kEventsPerRun) * kDelay);
  }
  const auto events = static_cast<std::int64_t>(sim.stats().events - before);
  state.SetItemsProcessed(events);
  state.counters["pending"] = static_cast<double>(sim.pending_events());
}
BENCHMARK(BM_EventSelfReschedule);

// The same with an observer (what a progress display sets): the loop's
// countdown runs out every Simulation::kObserveEvery events and calls it.
void BM_EventSelfRescheduleObserved(benchmark::State& state) {
  constexpr TimePs kDelay = 1000;
  constexpr std::uint64_t kEventsPerRun = 1 << 14;
  Simulation sim;
  SelfRescheduler h(sim, kDelay);
  sim.schedule_in(kDelay, &h, 0);
  std::uint64_t calls = 0;
  sim.set_observer([&](TimePs, std::uint64_t) { ++calls; });
  const std::uint64_t before = sim.stats().events;
  for (auto _ : state) {
    sim.run(sim.now() + static_cast<TimePs>(kEventsPerRun) * kDelay);
  }
  const auto events = static_cast<std::int64_t>(sim.stats().events - before);
  state.SetItemsProcessed(events);
  state.counters["observer_calls"] = static_cast<double>(calls);
}
BENCHMARK(BM_EventSelfRescheduleObserved);

// Hold model: `pending` events in the queue; each handled event schedules one
// new event a random delay (uniform in [1, 2 x mean]) later, so the queue size
// stays constant and every pop/push walks a heap of that size.
class HoldHandler final : public EventHandler {
 public:
  HoldHandler(Simulation& sim, TimePs mean) : sim_(sim), span_(2 * static_cast<std::uint64_t>(mean)) {}
  void handle_event(std::uint64_t tag) override {
    sim_.schedule_in(static_cast<TimePs>(1 + rng_.next() % span_), this, tag);
  }

 private:
  Simulation& sim_;
  std::uint64_t span_;
  XorShift rng_;
};

void BM_EventHold(benchmark::State& state) {
  const auto pending = static_cast<std::uint64_t>(state.range(0));
  constexpr TimePs kMeanDelay = 1'000'000;  // 1 us
  constexpr std::uint64_t kEventsPerRun = 1 << 14;
  Simulation sim;
  HoldHandler h(sim, kMeanDelay);
  XorShift rng;
  for (std::uint64_t i = 0; i < pending; ++i) {
    sim.schedule_in(static_cast<TimePs>(1 + rng.next() % (2 * kMeanDelay)), &h, i);
  }
  // `pending` events per mean delay: run long enough for ~kEventsPerRun.
  const TimePs window = static_cast<TimePs>(kEventsPerRun * kMeanDelay / pending) + 1;
  const std::uint64_t before = sim.stats().events;
  for (auto _ : state) {
    sim.run(sim.now() + window);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(sim.stats().events - before));
  state.counters["pending"] = static_cast<double>(sim.pending_events());
}
BENCHMARK(BM_EventHold)->Arg(1 << 10)->Arg(1 << 16);

// Burst: schedule `n` events at random times, then drain the queue.
class CountHandler final : public EventHandler {
 public:
  void handle_event(std::uint64_t tag) override { sum_ += tag; }
  std::uint64_t sum_ = 0;
};

void BM_EventBurst(benchmark::State& state) {
  const auto n = static_cast<std::uint64_t>(state.range(0));
  Simulation sim;
  CountHandler h;
  XorShift rng;
  for (auto _ : state) {
    const TimePs now = sim.now();
    for (std::uint64_t i = 0; i < n; ++i) {
      sim.schedule_at(now + 1 + static_cast<TimePs>(rng.next() % 1'000'000), &h, i);
    }
    sim.run();
  }
  benchmark::DoNotOptimize(h.sum_);
  state.SetItemsProcessed(static_cast<std::int64_t>(sim.stats().events));
}
BENCHMARK(BM_EventBurst)->Arg(1 << 10)->Arg(1 << 16);

// ---------------------------------------------------------------------------
// Fluid solver
// ---------------------------------------------------------------------------

class NullListener final : public ActivityListener {
 public:
  void activity_done(std::uint64_t) override { ++done; }
  std::uint64_t done = 0;
};

constexpr double kLinkBps = 100e9;  // 100 GB/s

void solver_counters(benchmark::State& state, const FluidStats& before, const FluidStats& after,
                     std::uint64_t activities) {
  const double n = static_cast<double>(activities);
  state.SetItemsProcessed(static_cast<std::int64_t>(activities));
  state.counters["rerated/act"] = static_cast<double>(after.activities_rerated - before.activities_rerated) / n;
  state.counters["solves/act"] = static_cast<double>(after.components_solved - before.components_solved) / n;
}

// n activities start together on one link and run to completion through
// Simulation::run(). range(1) == 0: equal work, all finish at one instant
// (one solve per start batch); range(1) == 1: work 1..n units, they finish
// one by one and every completion re-rates the ones left (n^2/2 re-rates).
void BM_FluidSharedLink(benchmark::State& state) {
  const auto n = static_cast<std::uint64_t>(state.range(0));
  const bool staggered = state.range(1) != 0;
  Simulation sim;
  NullListener listener;
  const ResourceId link = sim.fluid().add_resource("link", kLinkBps);
  const Usage usage[] = {{link, 1.0}};
  const FluidStats before = sim.fluid().stats();
  for (auto _ : state) {
    for (std::uint64_t i = 0; i < n; ++i) {
      ActivitySpec spec;
      spec.work = 1e4 * static_cast<double>(staggered ? i + 1 : 1);  // bytes
      sim.fluid().start(sim.now(), spec, usage, &listener, i);
    }
    sim.run();
  }
  if (listener.done != state.iterations() * n) state.SkipWithError("activities did not all complete");
  solver_counters(state, before, sim.fluid().stats(), listener.done);
}
BENCHMARK(BM_FluidSharedLink)
    ->ArgNames({"n", "staggered"})
    ->Args({1, 0})
    ->Args({16, 0})
    ->Args({256, 0})
    ->Args({16, 1})
    ->Args({256, 1});

// One step of what Simulation::run does with the fluid model alone: an
// activity joins at `now`, the solver re-rates, it completes (leaves), the
// solver re-rates again. Returns the completion time.
TimePs join_and_leave(FluidModel& fm, TimePs now, std::span<const Usage> usage, NullListener& l) {
  ActivitySpec spec;
  spec.work = 1e3;  // bytes: short next to the background
  fm.start(now, spec, usage, &l, 0);
  const TimePs t = fm.next_completion(now);  // solve: join
  fm.complete_due(t);
  fm.next_completion(t);  // solve: leave
  return t;
}

// Background work that outlasts every benchmark (10^5 s at 100 GB/s) yet
// finishes within what int64 picoseconds can count (the engine refuses more).
constexpr double kForever = 1e16;

// One component of k links: k links in a ring, background activity i on
// links i and i+1, so every link is connected to every other one. One
// activity on link 0 joins and leaves: each time the whole component (k
// links, k + 1 activities) is re-rated.
void BM_FluidJoinLeave(benchmark::State& state) {
  const auto k = static_cast<std::uint32_t>(state.range(0));
  FluidModel fm;
  NullListener listener;
  std::vector<ResourceId> links;
  for (std::uint32_t i = 0; i < k; ++i) links.push_back(fm.add_resource("l" + std::to_string(i), kLinkBps));
  for (std::uint32_t i = 0; i < k; ++i) {
    ActivitySpec spec;
    spec.work = kForever;
    const Usage u[] = {{links[i], 1.0}, {links[(i + 1) % k], 1.0}};
    fm.start(0, spec, k == 1 ? std::span<const Usage>(u, 1) : std::span<const Usage>(u), &listener, i);
  }
  fm.next_completion(0);
  TimePs now = 0;
  const Usage small[] = {{links[0], 1.0}};
  const FluidStats before = fm.stats();
  for (auto _ : state) now = join_and_leave(fm, now, small, listener);
  if (listener.done != static_cast<std::uint64_t>(state.iterations())) state.SkipWithError("background completed");
  solver_counters(state, before, fm.stats(), listener.done);
}
BENCHMARK(BM_FluidJoinLeave)->ArgName("k")->Arg(8)->Arg(64)->Arg(512);

// Many independent components: c rings of 8 links, one long activity on each
// ring (all 8 links, like a phase-granularity ring transfer). One activity
// joins and leaves ring 0: only ring 0's component may be re-rated, so the
// time per activity must not grow with c (rerated/act stays at 3: the ring's
// background activity and the newcomer on joining, the background on leaving).
void BM_FluidIndependentComponents(benchmark::State& state) {
  const auto c = static_cast<std::uint32_t>(state.range(0));
  constexpr std::uint32_t kRing = 8;
  FluidModel fm;
  NullListener listener;
  std::vector<std::vector<Usage>> rings(c);
  for (std::uint32_t r = 0; r < c; ++r) {
    for (std::uint32_t i = 0; i < kRing; ++i) {
      rings[r].push_back({fm.add_resource("r" + std::to_string(r) + "l" + std::to_string(i), kLinkBps), 1.0});
    }
    ActivitySpec spec;
    spec.work = kForever;
    fm.start(0, spec, rings[r], &listener, r);
  }
  fm.next_completion(0);
  TimePs now = 0;
  const FluidStats before = fm.stats();
  for (auto _ : state) now = join_and_leave(fm, now, rings[0], listener);
  if (listener.done != static_cast<std::uint64_t>(state.iterations())) state.SkipWithError("background completed");
  solver_counters(state, before, fm.stats(), listener.done);
}
BENCHMARK(BM_FluidIndependentComponents)->ArgName("rings")->Arg(1)->Arg(1024)->Arg(16384);

// The collective case: c rings of 8 links; one activity starts on every ring
// at the same instant (a phase starting on every group of a dimension) and
// all run to completion through Simulation::run(). c components per solve.
void BM_FluidComponentsAllStart(benchmark::State& state) {
  const auto c = static_cast<std::uint32_t>(state.range(0));
  constexpr std::uint32_t kRing = 8;
  Simulation sim;
  NullListener listener;
  std::vector<std::vector<Usage>> rings(c);
  for (std::uint32_t r = 0; r < c; ++r) {
    for (std::uint32_t i = 0; i < kRing; ++i) {
      rings[r].push_back({sim.fluid().add_resource("r" + std::to_string(r) + "l" + std::to_string(i), kLinkBps), 1.0});
    }
  }
  const FluidStats before = sim.fluid().stats();
  for (auto _ : state) {
    for (std::uint32_t r = 0; r < c; ++r) {
      ActivitySpec spec;
      spec.work = 1e6;
      sim.fluid().start(sim.now(), spec, rings[r], &listener, r);
    }
    sim.run();
  }
  solver_counters(state, before, sim.fluid().stats(), listener.done);
}
BENCHMARK(BM_FluidComponentsAllStart)->ArgName("rings")->Arg(1024);

}  // namespace
}  // namespace acesim

BENCHMARK_MAIN();
