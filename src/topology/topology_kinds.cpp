#include "topology/topology_kinds.h"

namespace acesim {

void register_builtin_topology_kinds(TopologyKindRegistry& registry) {
  register_ring_kind(registry);
  register_fully_connected_kind(registry);
  register_switch_kind(registry);
}

TopologyKindRegistry& topology_kind_registry() {
  // Built once, thread-safely, on first use (a function-local static).
  struct Filled {
    TopologyKindRegistry registry{"topology kind"};
    Filled() { register_builtin_topology_kinds(registry); }
  };
  static Filled filled;
  return filled.registry;
}

std::vector<std::string> astra_topology_names() {
  std::vector<std::string> out;
  for (const TopologyKindEntry& e : topology_kind_registry().entries()) {
    if (!e.astra_name.empty()) out.push_back(e.astra_name);
  }
  return out;
}

}  // namespace acesim
