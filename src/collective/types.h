// Names shared by the collective layer, the config readers and the reports:
// how a collective over several dimensions is planned and scheduled. The
// operations and algorithms themselves live below the network
// (algorithm/collective_op.h, algorithm/algorithm.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "algorithm/algorithm.h"
#include "algorithm/collective_op.h"

namespace acesim {

// How a collective over several dimensions is split into per-dimension phases.
enum class PlanKind {
  // reduce-scatter up the dimensions, all-reduce on the last, all-gather back down
  kHierarchical,
  // one phase over all the collective's NPUs as a single group
  kFlat,
  // all-reduce: a full all-reduce on each dimension in turn (ASTRA-sim's
  // "baseline" collective optimization); other ops as hierarchical
  kPerDimension,
};

enum class SchedulingPolicy { kLifo, kFifo };

std::string_view to_string(PlanKind plan);
std::string_view to_string(SchedulingPolicy policy);

std::optional<PlanKind> parse_plan(std::string_view s);
std::optional<SchedulingPolicy> parse_scheduling_policy(std::string_view s);

// Valid spellings, for error messages and suggestions.
std::vector<std::string> plan_names();

}  // namespace acesim
