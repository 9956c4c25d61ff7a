// Transformer model files (workload/models/llm.cpp), then what an LLM plan
// computes from a shape before anything runs: the plan check, parameter
// counts and the memory footprint of a small plan.
#include "fuzz_common.h"
#include "workload/llm/memory.h"
#include "workload/llm/parallel_plan.h"
#include "workload/models/models.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  acesim::fuzz::expect_clean([&] {
    const acesim::TransformerShape m = acesim::parse_transformer_yaml(acesim::fuzz::text(data, size), "fuzz.yaml");
    (void)m.parameters();
    (void)m.active_parameters();
    acesim::ParallelPlan p;
    p.dp = 2;
    acesim::check_plan(p, m, 2);
    (void)acesim::worst_stage_memory(m, p);
  });
  return 0;
}
