#include "endpoint/executor_registry.h"

namespace acesim {

void register_ideal_executor(ExecutorRegistry& registry);
void register_sm_executor(ExecutorRegistry& registry);
void register_ace_executor(ExecutorRegistry& registry);
void register_dma_executor(ExecutorRegistry& registry);

void register_builtin_executors(ExecutorRegistry& registry) {
  register_ideal_executor(registry);
  register_sm_executor(registry);
  register_ace_executor(registry);
  register_dma_executor(registry);
}

ExecutorRegistry& executor_registry() {
  static ExecutorRegistry registry("executor", register_builtin_executors);
  return registry;
}

std::string describe_executor(const NpuConfig& npu) {
  const ExecutorEntry& e = executor_registry().get(npu.executor);
  return e.name + (e.describe ? e.describe(npu) : std::string());
}

}  // namespace acesim
