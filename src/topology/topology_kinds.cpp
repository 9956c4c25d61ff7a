#include "topology/topology_kinds.h"

namespace acesim {

// The built-in kinds, one file each under kinds/.
void register_ring_kind(TopologyKindRegistry& registry);
void register_fully_connected_kind(TopologyKindRegistry& registry);
void register_switch_kind(TopologyKindRegistry& registry);
void register_rail_kind(TopologyKindRegistry& registry);
void register_fat_tree_kind(TopologyKindRegistry& registry);

void register_builtin_topology_kinds(TopologyKindRegistry& registry) {
  register_ring_kind(registry);
  register_fully_connected_kind(registry);
  register_switch_kind(registry);
  register_rail_kind(registry);
  register_fat_tree_kind(registry);
}

TopologyKindRegistry& topology_kind_registry() {
  static TopologyKindRegistry registry("topology kind", register_builtin_topology_kinds);
  return registry;
}

std::vector<std::string> astra_topology_names() {
  std::vector<std::string> out;
  for (const TopologyKindEntry& e : topology_kind_registry().entries()) {
    if (!e.astra_name.empty()) out.push_back(e.astra_name);
  }
  return out;
}

}  // namespace acesim
