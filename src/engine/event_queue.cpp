#include "engine/event_queue.h"

#include <algorithm>

namespace acesim {
namespace {
// std heap algorithms build a max-heap; "greater" puts the earliest on top.
struct Later {
  bool operator()(const Event& a, const Event& b) const {
    return a.time != b.time ? a.time > b.time : a.order > b.order;
  }
};
}  // namespace

void EventQueue::push(TimePs time, EventPriority priority, EventHandler* handler,
                      std::uint64_t tag) {
  heap_.push_back(Event{time, (static_cast<std::uint64_t>(priority) << 56) | next_sequence_++, handler, tag});
  std::push_heap(heap_.begin(), heap_.end(), Later{});
}

Event EventQueue::pop() {
  std::pop_heap(heap_.begin(), heap_.end(), Later{});
  Event e = heap_.back();
  heap_.pop_back();
  return e;
}

}  // namespace acesim
