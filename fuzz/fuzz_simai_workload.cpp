// SimAI / AICB training workloads (workload/formats/simai_workload.cpp):
// the header, the rows and the search for ga micro-batch blocks; then, for
// files of at most 64 GPUs, the job on a 64-GPU fabric and the graphs of
// its first and last stage's first ranks.
#include "fuzz_common.h"
#include "topology/topology.h"
#include "workload/formats/simai_workload.h"
#include "workload/llm/simai_job.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const acesim::Topology topo({{acesim::DimKind::kSwitch, 8, 100, 500, 1}, {acesim::DimKind::kSwitch, 8, 50, 2000, 1}});
  acesim::fuzz::expect_clean([&] {
    acesim::SimaiWorkload w = acesim::parse_simai_workload(acesim::fuzz::text(data, size), "fuzz.txt");
    if (w.all_gpus != 0 && w.all_gpus != topo.num_npus()) return;
    if (w.rows.size() > 20000) return;  // keep each input quick
    const acesim::SimaiJob job(std::move(w), topo, acesim::SimaiJobOptions{1});
    (void)job.build(0, false);
    (void)job.build(job.layout().in_stage(0, job.plan().pp - 1), true);
  });
  return 0;
}
