// The one slot pool: objects in a vector, indexed by a stable 32-bit slot,
// reused after release (last released first) without shrinking, so the hot
// paths that start and finish transfers, phases and activities allocate
// nothing once warm. A reused slot keeps its previous object (and the
// capacity of its vectors): acquire() does not reset it.
#pragma once

#include <cstdint>
#include <vector>

namespace acesim {

template <typename T>
class SlotPool {
 public:
  std::uint32_t acquire() {
    if (!free_.empty()) {
      const std::uint32_t slot = free_.back();
      free_.pop_back();
      return slot;
    }
    slots_.emplace_back();
    return static_cast<std::uint32_t>(slots_.size() - 1);
  }
  // `slot` must be acquired and not yet released.
  void release(std::uint32_t slot) { free_.push_back(slot); }

  T& operator[](std::size_t slot) { return slots_[slot]; }
  const T& operator[](std::size_t slot) const { return slots_[slot]; }
  // Every slot ever acquired, released ones included.
  std::size_t size() const { return slots_.size(); }
  auto begin() const { return slots_.begin(); }
  auto end() const { return slots_.end(); }

 private:
  std::vector<T> slots_;
  std::vector<std::uint32_t> free_;
};

}  // namespace acesim
