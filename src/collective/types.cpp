#include "collective/types.h"

#include "registry/registry.h"

namespace acesim {

std::string_view to_string(PlanKind plan) {
  switch (plan) {
    case PlanKind::kHierarchical: return "hierarchical";
    case PlanKind::kFlat: return "flat";
    case PlanKind::kPerDimension: return "per-dimension";
  }
  return "?";
}

std::string_view to_string(SchedulingPolicy policy) {
  return policy == SchedulingPolicy::kLifo ? "lifo" : "fifo";
}

std::optional<PlanKind> parse_plan(std::string_view s) {
  const std::string n = normalize_name(s);
  for (PlanKind p : {PlanKind::kHierarchical, PlanKind::kFlat, PlanKind::kPerDimension}) {
    if (n == normalize_name(to_string(p))) return p;
  }
  return std::nullopt;
}

std::optional<SchedulingPolicy> parse_scheduling_policy(std::string_view s) {
  const std::string n = normalize_name(s);
  for (SchedulingPolicy p : {SchedulingPolicy::kLifo, SchedulingPolicy::kFifo}) {
    if (n == normalize_name(to_string(p))) return p;
  }
  return std::nullopt;
}

std::vector<std::string> plan_names() {
  std::vector<std::string> names;
  for (PlanKind p : {PlanKind::kHierarchical, PlanKind::kFlat, PlanKind::kPerDimension}) names.emplace_back(to_string(p));
  return names;
}

}  // namespace acesim
