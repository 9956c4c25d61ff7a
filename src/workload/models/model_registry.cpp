#include "workload/models/model_registry.h"

#include <stdexcept>

namespace acesim {

namespace models {
void register_resnet50(ModelRegistry& registry);
void register_gnmt(ModelRegistry& registry);
void register_dlrm(ModelRegistry& registry);
void register_gpt(ModelRegistry& registry);
void register_llms(ModelRegistry& registry);
}  // namespace models

void register_builtin_models(ModelRegistry& registry) {
  models::register_resnet50(registry);
  models::register_gnmt(registry);
  models::register_dlrm(registry);
  models::register_gpt(registry);
  models::register_llms(registry);
}

ModelRegistry& model_registry() {
  static ModelRegistry registry("model", register_builtin_models);
  return registry;
}

// Model names are matched exactly, as they are spelled in the list: a model
// name is also a file-name-like identifier in configs and tests.
const ModelEntry* find_model(const std::string& name) {
  for (const ModelEntry& e : model_registry().entries()) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

std::vector<std::string> model_names() { return model_registry().names(); }

Workload build_model(const std::string& name, const ModelOptions& opt, const Topology& topo) {
  const ModelEntry* e = find_model(name);
  if (e == nullptr) {
    std::string valid;
    for (const std::string& n : model_names()) valid += (valid.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown model '" + name + "'; valid: " + valid);
  }
  return e->build(opt, topo);
}

}  // namespace acesim
