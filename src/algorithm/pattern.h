// Per-group communication patterns: what a collective algorithm generates.
//
// A pattern lists the steps an algorithm takes on a group of n members
// (member indices 0..n-1); every message of a step is sent at the same time
// and a step ends when its last message arrives. A message carries
// `fraction` x the phase's data size (see docs/model.md for the size
// conventions). Runs of identical steps are stored once with a repeat count,
// so a ring on a million NPUs stays one step long in memory; step k of a run
// (k = 0..repeat-1) is scaled by (scale_first + k * scale_step).
#pragma once

#include <vector>

namespace acesim {

struct PatternMessage {
  int src;
  int dst;
  double fraction;
};

struct PatternStep {
  std::vector<PatternMessage> messages;
  int repeat = 1;
  double scale_first = 1.0;
  double scale_step = 0.0;
  double scale(int k) const { return scale_first + scale_step * k; }
  double scale_sum() const { return repeat * scale_first + scale_step * (repeat * (repeat - 1) / 2.0); }
};

struct Pattern {
  std::vector<PatternStep> steps;
  long long total_steps() const {
    long long s = 0;
    for (const PatternStep& st : steps) s += st.repeat;
    return s;
  }
};

// Patterns that list every pair of a group hold n(n-1) messages; past this
// a group is refused.
inline constexpr long long kMaxPairMessages = 1LL << 26;

}  // namespace acesim
