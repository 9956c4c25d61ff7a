// Workload formats acesim reads (docs/formats.md): one reader per file in
// this folder, one registration line each in register_builtin_workload_formats().
//
// A format yields either a layer table (a Workload, lowered into a per-rank
// graph by lower_training) or one execution graph per rank (Chakra).
#pragma once

#include <functional>
#include <string>

#include "registry/registry.h"
#include "topology/topology.h"
#include "workload/workload.h"

namespace acesim {

struct WorkloadFormatEntry : RegistryEntryBase {
  std::string option;  // how `acesim run` takes it, e.g. "--workload FILE"
  // Layer-table formats: reads a file bound to a topology (which dimensions
  // each collective spans). Throws InputError. Empty for per-rank graph formats.
  std::function<Workload(const std::string& path, const Topology& topo)> read_table;
};
using WorkloadFormatRegistry = Registry<WorkloadFormatEntry>;

WorkloadFormatRegistry& workload_format_registry();
void register_builtin_workload_formats(WorkloadFormatRegistry& registry);


}  // namespace acesim
