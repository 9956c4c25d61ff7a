// One simulation: a clock, the event queue and the fluid model. No global
// state: any number of simulations can live in one process.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/event_queue.h"
#include "engine/fluid_model.h"
#include "engine/time.h"

namespace acesim {

// Time stopped advancing: more than the limit of events at one instant.
class Livelock : public std::runtime_error {
 public:
  explicit Livelock(const std::string& what) : std::runtime_error(what) {}
};

// A run that cannot finish (deadlock or livelock): exit status 3, with what
// is stuck.
class SimulationStuck : public std::runtime_error {
 public:
  explicit SimulationStuck(const std::string& what) : std::runtime_error(what) {}
};

struct RunStats {
  std::uint64_t events = 0;         // discrete events handled
  std::uint64_t completions = 0;    // fluid activities completed
  std::uint64_t source_events = 0;  // events handled by added event sources
};

// A model with a clock of its own (a packet-level network engine, say)
// beside the event queue and the fluid model: it says when its next event is
// and handles what is due. The simulation loop advances time to the earliest
// of all of them. At one instant the fluid model goes first, then the added
// sources in the order they were added, then the event queue.
class EventSource {
 public:
  // The time of the next event, >= now, or kTimeNever when none is pending.
  virtual TimePs next_event_time(TimePs now) = 0;
  // Handles the events due at `now`; returns how many.
  virtual std::size_t handle_due(TimePs now) = 0;
  // Nothing pending (run() then reports everything finished).
  virtual bool idle() const = 0;

 protected:
  ~EventSource() = default;
};

class Simulation {
 public:
  Simulation() = default;
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  TimePs now() const { return now_; }
  // Throws std::logic_error when asked to schedule in the past.
  void schedule_at(TimePs time, EventHandler* handler, std::uint64_t tag,
                   EventPriority priority = EventPriority::kDefault);
  void schedule_in(TimePs delay, EventHandler* handler, std::uint64_t tag,
                   EventPriority priority = EventPriority::kDefault) {
    schedule_at(now_ + delay, handler, tag, priority);
  }

  // `source` must outlive the simulation's run(). Throws std::logic_error
  // when it is already added.
  void add_event_source(EventSource* source);
  // A source that goes away before the simulation must be removed first.
  void remove_event_source(EventSource* source);

  FluidModel& fluid() { return fluid_; }
  const FluidModel& fluid() const { return fluid_; }

  // Runs until no event is pending and no activity can progress, or until the
  // next happening would be later than `until`. At one instant, fluid
  // completions are handled before discrete events. Returns true when
  // everything finished (nothing pending, no activity left).
  bool run(TimePs until = kTimeNever);

  const RunStats& stats() const { return stats_; }
  // Events and completions allowed at one simulated instant before run()
  // throws Livelock (a loop that never lets time advance).
  void set_livelock_limit(std::uint64_t events) { livelock_limit_ = events; }
  std::size_t pending_events() const { return queue_.size(); }

  // Watching a long run (a progress display): run() calls `observer(now,
  // handled)` once `every` more happenings have been handled (events, fluid
  // completions and source events; `handled` counts them all since the
  // simulation began; a batch of completions at one instant counts whole,
  // so calls can be further apart). Between calls the loop only counts down,
  // and with no observer the count never runs out, so watching costs nothing
  // measurable. Set it between runs, not from inside the observer.
  using RunObserver = std::function<void(TimePs now, std::uint64_t handled)>;
  static constexpr std::uint64_t kObserveEvery = 4096;
  void set_observer(RunObserver observer, std::uint64_t every = kObserveEvery);

 private:
  void observe();

  TimePs now_ = 0;
  EventQueue queue_;
  FluidModel fluid_;
  std::vector<EventSource*> sources_;  // besides the fluid model and the queue
  RunStats stats_;
  std::uint64_t livelock_limit_ = 50'000'000;
  RunObserver observer_;
  std::uint64_t observe_every_ = 0;
  std::uint64_t until_observe_ = std::numeric_limits<std::uint64_t>::max();
};

// Runs `sim` to the end; when `finished()` is then false, or time stopped
// advancing, throws SimulationStuck with the lines of `stuck_report()`.
template <typename Finished, typename Report>
void run_or_report_stuck(Simulation& sim, Finished finished, Report stuck_report) {
  std::string problem;
  try {
    sim.run();
    if (finished()) return;
    problem = "simulation cannot finish at t=" + std::to_string(ps_to_ns(sim.now())) + " ns:";
  } catch (const Livelock& e) {
    problem = e.what();
    problem += ":";
  }
  for (const std::string& line : stuck_report()) problem += " " + line + ";";
  throw SimulationStuck(problem);
}

}  // namespace acesim
