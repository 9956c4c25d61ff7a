#include "workload/formats/format_registry.h"

namespace acesim {

void register_astra_text_format(WorkloadFormatRegistry& registry);  // formats/astra_workload.cpp
void register_chakra_format(WorkloadFormatRegistry& registry);      // formats/chakra_workload.cpp
void register_kineto_format(WorkloadFormatRegistry& registry);      // formats/kineto_replay.cpp
void register_simai_format(WorkloadFormatRegistry& registry);       // formats/simai_workload.cpp

void register_builtin_workload_formats(WorkloadFormatRegistry& registry) {
  register_astra_text_format(registry);
  register_chakra_format(registry);
  register_kineto_format(registry);
  register_simai_format(registry);
}

WorkloadFormatRegistry& workload_format_registry() {
  static WorkloadFormatRegistry registry("workload format", register_builtin_workload_formats);
  return registry;
}

}  // namespace acesim
