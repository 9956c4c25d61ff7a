// Cluster files (docs/cluster.md): read, checked and their jobs placed,
// LLM jobs' plans checked and their graphs' builders made (nothing
// simulated).
#include "api/api.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  acesim::fuzz::expect_clean([&] { (void)acesim::api::read_cluster("fuzz/cluster.yaml", acesim::fuzz::text(data, size)); });
  return 0;
}
