// Random numbers the same on every machine: a seed mixer and uniform
// numbers made from a generator's bits by hand, so that results do not
// depend on the standard library's distributions (goodput's trials,
// random placements, per-GPU variability).
#pragma once

#include <cstdint>

namespace acesim {

// splitmix64's finaliser: spreads a seed (or seed ^ index) over all bits.
inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A uniform number in (0, 1] from 64 random bits (the top 53).
inline double unit_interval(std::uint64_t bits) { return (static_cast<double>(bits >> 11) + 1.0) * 0x1.0p-53; }

}  // namespace acesim
