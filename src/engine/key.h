// The one way to pack two 32-bit values into a 64-bit key (hash-map keys,
// event and transfer tags) and to take them apart again.
#pragma once

#include <cstdint>

namespace acesim {

constexpr std::uint64_t pack_key(std::uint32_t hi, std::uint32_t lo) {
  return (static_cast<std::uint64_t>(hi) << 32) | lo;
}
constexpr std::uint32_t key_hi(std::uint64_t key) { return static_cast<std::uint32_t>(key >> 32); }
constexpr std::uint32_t key_lo(std::uint64_t key) { return static_cast<std::uint32_t>(key); }

}  // namespace acesim
