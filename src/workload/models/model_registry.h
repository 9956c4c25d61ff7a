// The built-in models (docs/models.md): one file each in this folder, one
// registration line each in register_builtin_models().
#pragma once

#include <functional>
#include <string>

#include "registry/registry.h"
#include "topology/topology.h"
#include "workload/models/models.h"
#include "workload/workload.h"

namespace acesim {

struct ModelEntry : RegistryEntryBase {
  // Throws std::invalid_argument for options the model cannot take.
  std::function<Workload(const ModelOptions&, const Topology&)> build;
};
using ModelRegistry = Registry<ModelEntry>;

// The models `--model` accepts: the built-ins, registered on first use, and
// whatever else was added to it (tests add toys).
ModelRegistry& model_registry();
void register_builtin_models(ModelRegistry& registry);
// The entry named exactly `name` (model names are spelled as listed; no
// case or punctuation folding, unlike other families), or nullptr.
const ModelEntry* find_model(const std::string& name);


}  // namespace acesim
