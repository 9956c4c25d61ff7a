// SimAI / AICB training workloads (workload/formats/simai_workload.cpp):
// the header, the rows and the search for ga micro-batch blocks.
#include "fuzz_common.h"
#include "workload/formats/simai_workload.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  acesim::fuzz::expect_clean([&] { acesim::parse_simai_workload(acesim::fuzz::text(data, size), "fuzz.txt"); });
  return 0;
}
