// The ideal executor: communication costs the endpoints nothing, so a
// collective runs at the network's pace (an upper bound; ASTRA-sim's
// endpoint). Every Executor hook's default already says so.
#include <memory>

#include "endpoint/executor_registry.h"

namespace acesim {
namespace {

class IdealExecutor final : public Executor {
 public:
  using Executor::Executor;
};

}  // namespace

void register_ideal_executor(ExecutorRegistry& registry) {
  ExecutorEntry e;
  e.name = "ideal";
  e.help = "communication costs the endpoint nothing (upper bound)";
  e.make = [](Endpoints& ep) -> std::unique_ptr<Executor> { return std::make_unique<IdealExecutor>(ep); };
  registry.add(std::move(e));
}

}  // namespace acesim
