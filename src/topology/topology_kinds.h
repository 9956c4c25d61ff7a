// The topology-kind registry: every dimension kind a platform file may name.
//
// A kind is one file under src/topology/kinds/ that defines its fabric
// (fabric.h) and a `register_*_kind` function; register_builtin_topology_kinds()
// calls each with one line. A kind that is not a product of regular rings,
// groups or switches builds an explicit graph (link_graph.h) in its builder.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "registry/registry.h"
#include "topology/fabric.h"
#include "topology/topology.h"

namespace acesim {

// A parameter a kind takes besides npus, bandwidth and latency: a key of its
// dimension in the platform YAML (the reader checks the range).
struct KindParamSpec {
  std::string name;
  std::string help;
  double min = 0.0;
  double max = 0.0;
  bool integer = true;
};

struct TopologyKindEntry : RegistryEntryBase {
  // ASTRA-sim's spelling in its network files ("FullyConnected"); empty
  // when ASTRA-sim has no such kind (its inputs may not name it).
  std::string astra_name;
  // The collective algorithm a dimension of this kind runs unless the
  // platform says otherwise (a name of algorithm_registry(); docs/model.md).
  std::string default_algorithm = "direct";
  // Its own keys (none for ring, fully-connected and switch).
  std::vector<KindParamSpec> params;
  // The fabric of one dimension of this kind. The spec is checked already
  // (npus >= 1, bandwidth > 0, latency >= 0); throw std::invalid_argument
  // for what this kind cannot build.
  std::function<std::shared_ptr<const DimensionFabric>(const DimensionSpec&)> build;
};

using TopologyKindRegistry = Registry<TopologyKindEntry>;

// Filled with the built-in kinds on first use; tests may add toy kinds.
TopologyKindRegistry& topology_kind_registry();
void register_builtin_topology_kinds(TopologyKindRegistry& registry);

// One switch per group of the dimension, every NPU linked up to it and down
// from it (the `switch` kind). Its switches are named `numbered_name` plus
// their index when given (the `rail` kind's rail0, rail1, ...), else "switch".
std::shared_ptr<const DimensionFabric> make_switch_fabric(std::string numbered_name = "");

// ASTRA-sim's spellings of the kinds it knows, in registration order.
std::vector<std::string> astra_topology_names();

}  // namespace acesim
