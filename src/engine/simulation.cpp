#include "engine/simulation.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace acesim {

void Simulation::schedule_at(TimePs time, EventHandler* handler, std::uint64_t tag,
                             EventPriority priority) {
  if (time < now_) {
    throw std::logic_error("event scheduled in the past: t=" + std::to_string(time) +
                           " ps < now=" + std::to_string(now_) + " ps");
  }
  queue_.push(time, priority, handler, tag);
}

void Simulation::add_event_source(EventSource* source) {
  if (source == nullptr) throw std::logic_error("add_event_source: no source");
  for (EventSource* s : sources_) {
    if (s == source) throw std::logic_error("add_event_source: added twice");
  }
  sources_.push_back(source);
}

void Simulation::remove_event_source(EventSource* source) {
  const auto it = std::find(sources_.begin(), sources_.end(), source);
  if (it == sources_.end()) throw std::logic_error("remove_event_source: not added");
  sources_.erase(it);
}

void Simulation::set_observer(RunObserver observer, std::uint64_t every) {
  if (every == 0) throw std::logic_error("set_observer: every must be at least 1");
  observer_ = std::move(observer);
  observe_every_ = every;
  until_observe_ = observer_ ? every : std::numeric_limits<std::uint64_t>::max();
}

void Simulation::observe() {
  observer_(now_, stats_.events + stats_.completions + stats_.source_events);
}

bool Simulation::run(TimePs until) {
  std::uint64_t at_this_instant = 0;
  // Kept in a register through the loop: with no observer it never runs out.
  std::uint64_t countdown = until_observe_;
  for (;;) {
    const TimePs t_fluid = fluid_.next_completion(now_);
    TimePs t_event = queue_.next_time();
    // The earliest added source (the first added at a tie) goes before
    // the queue when it is due no later.
    EventSource* source = nullptr;
    TimePs t_source = kTimeNever;
    for (EventSource* s : sources_) {
      const TimePs ts = s->next_event_time(now_);
      if (ts < t_source) {
        t_source = ts;
        source = s;
      }
    }
    if (source != nullptr && t_source <= t_event) {
      t_event = t_source;
    } else {
      source = nullptr;
    }
    const TimePs t = t_fluid < t_event ? t_fluid : t_event;
    if (t == kTimeNever || t > until) break;
    if (t < now_) throw std::logic_error("time went backwards: " + std::to_string(t) + " ps < " + std::to_string(now_) + " ps");
    at_this_instant = t == now_ ? at_this_instant + 1 : 0;
    if (at_this_instant > livelock_limit_) {
      throw Livelock("time stopped advancing at t=" + std::to_string(ps_to_ns(now_)) + " ns: more than " +
                     std::to_string(livelock_limit_) + " events at that instant");
    }
    now_ = t;
    std::uint64_t handled = 1;
    if (t_fluid <= t_event) {
      handled = fluid_.complete_due(now_);
      stats_.completions += handled;
    } else if (source != nullptr) {
      handled = source->handle_due(now_);
      stats_.source_events += handled;
    } else {
      const Event e = queue_.pop();
      ++stats_.events;
      e.handler->handle_event(e.tag);
    }
    if (handled >= countdown) {
      countdown = observe_every_;
      observe();
    } else {
      countdown -= handled;
    }
  }
  until_observe_ = countdown;
  for (const EventSource* s : sources_) {
    if (!s->idle()) return false;
  }
  return queue_.empty() && fluid_.active_count() == 0;
}

}  // namespace acesim
