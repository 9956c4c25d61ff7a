#include "engine/simulation.h"

#include <stdexcept>
#include <string>

namespace acesim {

void Simulation::schedule_at(TimePs time, EventHandler* handler, std::uint64_t tag,
                             EventPriority priority) {
  if (time < now_) {
    throw std::logic_error("event scheduled in the past: t=" + std::to_string(time) +
                           " ps < now=" + std::to_string(now_) + " ps");
  }
  queue_.push(time, priority, handler, tag);
}

bool Simulation::run(TimePs until) {
  for (;;) {
    const TimePs t_fluid = fluid_.next_completion(now_);
    const TimePs t_event = queue_.next_time();
    const TimePs t = t_fluid < t_event ? t_fluid : t_event;
    if (t == kTimeNever || t > until) break;
    now_ = t;
    if (t_fluid <= t_event) {
      stats_.completions += fluid_.complete_due(now_);
    } else {
      const Event e = queue_.pop();
      ++stats_.events;
      e.handler->handle_event(e.tag);
    }
  }
  return queue_.empty() && fluid_.active_count() == 0;
}

}  // namespace acesim
