// Simulated time: int64 picoseconds everywhere inside acesim.
// Conversions to ns/us/s happen only at the edges (config readers, reports).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace acesim {

using TimePs = std::int64_t;

inline constexpr TimePs kPsPerNs = 1'000;
inline constexpr TimePs kPsPerUs = 1'000'000;
inline constexpr TimePs kPsPerMs = 1'000'000'000;
inline constexpr TimePs kPsPerSec = 1'000'000'000'000;
inline constexpr TimePs kTimeNever = std::numeric_limits<TimePs>::max();

// Rounds up so that a non-zero duration never becomes zero and work is never
// reported finished before it is; a value within floating-point noise of a
// whole picosecond (relative 1e-12) is taken as that picosecond.
inline TimePs seconds_to_ps_ceil(double seconds) {
  const double ps = seconds * static_cast<double>(kPsPerSec);
  if (!(ps < static_cast<double>(kTimeNever))) return kTimeNever;
  const double nearest = std::round(ps);
  const double tolerance = std::max(1e-3, std::abs(ps) * 1e-12);
  if (std::abs(ps - nearest) <= tolerance) return static_cast<TimePs>(nearest);
  return static_cast<TimePs>(std::ceil(ps));
}

inline TimePs ns_to_ps(double ns) {
  return static_cast<TimePs>(std::llround(ns * static_cast<double>(kPsPerNs)));
}

inline double ps_to_ns(TimePs t) { return static_cast<double>(t) / static_cast<double>(kPsPerNs); }
inline double ps_to_us(TimePs t) { return static_cast<double>(t) / static_cast<double>(kPsPerUs); }
inline double ps_to_seconds(TimePs t) { return static_cast<double>(t) / static_cast<double>(kPsPerSec); }

}  // namespace acesim
