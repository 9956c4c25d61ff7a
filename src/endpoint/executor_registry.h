// The endpoint executors by name: `communication.executor` in platform
// files, `--executor` and `--compare` on the command line, and reports
// (docs/model.md, "Endpoint"). See executor.h for adding one.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "endpoint/executor.h"
#include "endpoint/npu_config.h"
#include "registry/registry.h"

namespace acesim {

struct ExecutorEntry : RegistryEntryBase {
  // One executor for the NPUs of one simulation.
  std::function<std::unique_ptr<Executor>(Endpoints&)> make;
  // What a platform description adds after the name, e.g. " (8 of 80
  // units)"; empty when null.
  std::function<std::string(const NpuConfig&)> describe;
};

using ExecutorRegistry = Registry<ExecutorEntry>;

// The registry, with the built-in executors registered on first use.
ExecutorRegistry& executor_registry();

// "sm (8 of 80 units)": the executor `npu` names and its main parameters.
std::string describe_executor(const NpuConfig& npu);

// One line per executor, in the order names are listed.
void register_builtin_executors(ExecutorRegistry& registry);

}  // namespace acesim
