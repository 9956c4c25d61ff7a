#include "endpoint/executor_registry.h"

namespace acesim {

void register_builtin_executors(ExecutorRegistry& registry) {
  register_ideal_executor(registry);
  register_sm_executor(registry);
  register_ace_executor(registry);
}

ExecutorRegistry& executor_registry() {
  // Built on first use, thread-safely: runs on several threads look names up.
  static ExecutorRegistry registry("executor");
  static const bool filled = (register_builtin_executors(registry), true);
  (void)filled;
  return registry;
}

std::string describe_executor(const NpuConfig& npu) {
  const ExecutorEntry& e = executor_registry().get(npu.executor);
  return e.name + (e.describe ? e.describe(npu) : std::string());
}

}  // namespace acesim
