// ASTRA-sim 1.0 text workloads (workload/astra_workload.cpp), bound to a
// 4x8 torus so that transformer groups can fit or not.
#include "fuzz_common.h"
#include "topology/topology.h"
#include "workload/formats/astra_workload.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const acesim::Topology topo({{acesim::DimKind::kRing, 4, 100, 500, 1}, {acesim::DimKind::kRing, 8, 100, 500, 1}});
  acesim::fuzz::expect_clean([&] { acesim::parse_astra_workload(acesim::fuzz::text(data, size), "fuzz.txt", topo); });
  return 0;
}
