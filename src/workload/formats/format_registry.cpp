#include "workload/formats/format_registry.h"

namespace acesim {

void register_builtin_workload_formats(WorkloadFormatRegistry& registry) {
  register_astra_text_format(registry);
  register_chakra_format(registry);
}

WorkloadFormatRegistry& workload_format_registry() {
  static WorkloadFormatRegistry* registry = [] {
    auto* r = new WorkloadFormatRegistry("workload format");
    register_builtin_workload_formats(*r);
    return r;
  }();
  return *registry;
}

}  // namespace acesim
