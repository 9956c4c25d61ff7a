#include "platform/platform_instance.h"

namespace acesim {

std::string asymmetry_reason(const PlatformConfig& config) {
  int spanning = 0;
  for (const DimensionSpec& d : config.dims) spanning += d.npus > 1 ? 1 : 0;
  for (CollectiveOp op : kAllCollectiveOps) {
    const OpConfig& oc = config.collectives.op(op);
    if (oc.plan == PlanKind::kFlat) {
      if (spanning > 1) return std::string(to_string(op)) + " uses a flat plan over several dimensions";
      if (oc.flat == Algorithm::kDoubleBinaryTree) return std::string(to_string(op)) + " uses double binary trees";
      continue;
    }
    for (Algorithm a : oc.per_dim) {
      if (a == Algorithm::kDoubleBinaryTree) return std::string(to_string(op)) + " uses double binary trees";
    }
  }
  return {};
}

}  // namespace acesim
