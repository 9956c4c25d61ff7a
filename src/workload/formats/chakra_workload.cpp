#include <utility>

#include "workload/formats/format_registry.h"

namespace acesim {

void register_chakra_format(WorkloadFormatRegistry& registry) {
  WorkloadFormatEntry e;
  e.name = "chakra";
  e.aliases = {"chakra-et", "astra-sim-2.0"};
  e.help = "Chakra execution traces PREFIX.<rank>.et, one dependency graph per rank (ASTRA-sim 2.0's format)";
  e.option = "--chakra PREFIX";
  registry.add(std::move(e));
}

}  // namespace acesim
