#include "api/catalogue.h"

#include "algorithm/algorithm.h"
#include "config/presets.h"
#include "endpoint/executor_registry.h"
#include "network/network.h"
#include "topology/topology_kinds.h"
#include "workload/formats/format_registry.h"
#include "workload/models/model_registry.h"

namespace acesim::api {
namespace {

template <typename Registry>
std::vector<CatalogueEntry> entries_of(const Registry& registry) {
  std::vector<CatalogueEntry> out;
  for (const auto& e : registry.entries()) out.push_back({e.name, e.aliases, e.help});
  return out;
}

}  // namespace

std::vector<CatalogueFamily> catalogue() {
  std::vector<CatalogueFamily> families;
  families.push_back({"algorithms", "Collective algorithms", "`collectives.<op>.algorithm` of a platform YAML; ASTRA-sim system files' `*-implementation`",
                      entries_of(algorithm_registry())});
  families.push_back({"backends", "Network backends", "`network.backend` of a platform YAML; `--backend`", entries_of(backend_registry())});
  families.push_back({"topologies", "Topology dimension kinds", "`topology[].kind` of a platform YAML; ASTRA-sim network files' `topology`",
                      entries_of(topology_kind_registry())});
  families.push_back({"executors", "Communication executors", "`communication.executor` of a platform YAML; `--executor`, `--compare`",
                      entries_of(executor_registry())});
  families.push_back({"models", "Built-in models", "`workload.model` of a platform YAML; `--model`", entries_of(model_registry())});
  families.push_back({"formats", "Workload formats", "`acesim run --workload FILE` (astra-sim-1.0, or simai by its header; `--format NAME`), `--chakra PREFIX` (chakra), `--kineto PATH` (kineto)", entries_of(workload_format_registry())});
  families.push_back({"presets", "Platform presets", "`--platform NAME`", entries_of(preset_registry())});
  return families;
}

std::vector<std::string> catalogue_keys() {
  std::vector<std::string> keys;
  for (const CatalogueFamily& f : catalogue()) keys.push_back(f.key);
  return keys;
}

std::string catalogue_markdown() {
  std::string out;
  for (const CatalogueFamily& f : catalogue()) {
    out += "### " + f.title + " (`acesim list " + f.key + "`)\n\nNamed in: " + f.where + ".\n\n";
    out += "| name | also accepted | what it is |\n|---|---|---|\n";
    for (const CatalogueEntry& e : f.entries) {
      std::string aliases;
      for (const std::string& a : e.aliases) aliases += (aliases.empty() ? "`" : ", `") + a + "`";
      out += "| `" + e.name + "` | " + aliases + " | " + e.help + " |\n";
    }
    out += "\n";
  }
  return out;
}

}  // namespace acesim::api
