// The one event queue: events ordered by (time, priority, sequence number), so
// simultaneous events always run in the same order and every run is
// bit-for-bit deterministic. Events carry a handler pointer and a 64-bit tag;
// components own their handlers, so scheduling allocates nothing per event
// (the heap's storage is reused).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/time.h"

namespace acesim {

class EventHandler {
 public:
  virtual void handle_event(std::uint64_t tag) = 0;

 protected:
  ~EventHandler() = default;
};

// Priorities of events that happen at the same picosecond; lower runs first.
enum class EventPriority : std::int32_t {
  // Completion of a fixed delay (a latency, an analytical transfer). Runs
  // before new work is started so freed resources are seen by the new work.
  kCompletion = 0,
  // Starting new work (issuing a collective, a kernel).
  kStart = 10,
  kDefault = 20,
};

struct Event {
  TimePs time;
  // (priority << 56) | sequence: one comparison orders simultaneous events
  // by priority, then by the order they were scheduled in.
  std::uint64_t order;
  EventHandler* handler;
  std::uint64_t tag;
};

class EventQueue {
 public:
  void push(TimePs time, EventPriority priority, EventHandler* handler, std::uint64_t tag);
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  TimePs next_time() const { return heap_.empty() ? kTimeNever : heap_.front().time; }
  // Removes and returns the earliest event. Precondition: !empty().
  Event pop();
  void reserve(std::size_t n) { heap_.reserve(n); }

 private:
  std::vector<Event> heap_;
  std::uint64_t next_sequence_ = 0;
};

}  // namespace acesim
