// Rails: the scale-out network of a node-based platform when every GPU has
// its own NIC and GPU i of every node plugs into rail switch i. Put after the
// node's own dimension (the NVLink domain), a group of this dimension is the
// GPUs with one local index across the nodes: one rail. So each group adds
// one switch, as `switch` does, and traffic between GPUs of different rails
// never enters the scale-out network: routes are dimension-ordered, so it
// crosses the NVLink domain first to the GPU on the destination's rail (what
// NCCL's PXN does). The links are the switch kind's (2 per NPU: NIC up to its
// rail switch, then down, in rank order).
#include "topology/topology_kinds.h"

namespace acesim {

void register_rail_kind(TopologyKindRegistry& registry) {
  TopologyKindEntry e;
  e.name = "rail";
  e.default_algorithm = "ring";
  e.help = "one NIC per NPU; NPU i of every node on rail switch i (put after the node's NVLink dimension)";
  // A rail is a switch per group, its switches named rail0, rail1, ...
  e.build = [](const DimensionSpec&) { return make_switch_fabric("rail"); };
  registry.add(std::move(e));
}

}  // namespace acesim
