// Symmetric simulation (one representative rank) against the full one: the
// same results bit for bit (docs/performance.md, "Symmetry").
#include <gtest/gtest.h>

#include "platform/platform_instance.h"
#include "support.h"
#include "workload/formats/astra_workload.h"
#include "workload/models/models.h"
#include "driver/training_run.h"
#include "test_data.h"

namespace acesim {
namespace {

using test::dim;
using test::platform;

void expect_same(const CollectiveResult& sym, const CollectiveResult& full, const std::string& what) {
  EXPECT_EQ(sym.simulated_ranks, 1) << what;
  EXPECT_GT(full.simulated_ranks, 1) << what;
  EXPECT_EQ(sym.time_ps, full.time_ps) << what;
  EXPECT_EQ(sym.hbm_bytes, full.hbm_bytes) << what;
  EXPECT_EQ(sym.network_bytes_per_dim, full.network_bytes_per_dim) << what;
  EXPECT_EQ(sym.network_bytes_received_per_dim, full.network_bytes_received_per_dim) << what;
  EXPECT_EQ(sym.comm_unit_seconds, full.comm_unit_seconds) << what;
  ASSERT_EQ(sym.link_bytes_per_dim.size(), full.link_bytes_per_dim.size());
  for (std::size_t d = 0; d < sym.link_bytes_per_dim.size(); ++d) {
    EXPECT_DOUBLE_EQ(sym.link_bytes_per_dim[d], full.link_bytes_per_dim[d]) << what;
  }
}

TEST(Symmetry, CollectivesAgreeBitForBit) {
  std::vector<PlatformConfig> platforms;
  platforms.push_back(default_platform());  // 4x4x4 rings, ace
  platforms.push_back(platform({dim(DimKind::kSwitch, 8, 400, 900), dim(DimKind::kRing, 4, 50, 1000)}, "fluid", 8));
  platforms.push_back(platform({dim(DimKind::kFullyConnected, 4, 100, 100), dim(DimKind::kRing, 2, 50, 700),
                                dim(DimKind::kSwitch, 4, 25, 1500)}, "fluid", 4));
  platforms.push_back(platform({dim(DimKind::kRing, 8, 100, 500), dim(DimKind::kRing, 4, 100, 500)}, "analytical", 16));
  PlatformConfig step = platform({dim(DimKind::kRing, 4, 100, 500), dim(DimKind::kRing, 4, 50, 500)}, "fluid", 4);
  step.network.granularity = Granularity::kStep;
  platforms.push_back(step);
  PlatformConfig hd = platform({dim(DimKind::kFullyConnected, 8, 100, 500), dim(DimKind::kSwitch, 4, 50, 500)}, "fluid", 4);
  test::set_algorithm(hd, CollectiveOp::kAllReduce, algorithm("halving-doubling"));
  platforms.push_back(hd);
  int compared = 0;
  for (std::size_t i = 0; i < platforms.size(); ++i) {
    for (const char* e : {"ideal", "sm", "ace"}) {
      PlatformConfig p = platforms[i];
      p.npu.executor = e;
      p.collectives.max_chunk_bytes = 1 << 20;
      for (CollectiveOp op : kAllCollectiveOps) {
        for (std::vector<int> dims : {std::vector<int>{}, std::vector<int>{1}}) {
          CollectiveRequestSpec req;
          req.op = op;
          req.dims = dims;
          const CollectiveResult sym = run_collective(p, req, 24 << 20);
          req.full = true;
          const CollectiveResult full = run_collective(p, req, 24 << 20);
          expect_same(sym, full, "platform " + std::to_string(i) + " " + std::string(e) + " " +
                                     std::string(to_string(op)) + (dims.empty() ? "" : " over dim 1"));
          ++compared;
        }
      }
    }
  }
  EXPECT_EQ(compared, 6 * 3 * 4 * 2);
}

void expect_same(const TrainReport& sym, const TrainReport& full, const std::string& what) {
  EXPECT_EQ(sym.simulated_ranks, 1) << what;
  EXPECT_EQ(sym.iteration_ps, full.iteration_ps) << what;
  EXPECT_EQ(sym.first_iteration_ps, full.first_iteration_ps) << what;
  EXPECT_EQ(sym.total_ps, full.total_ps) << what;
  EXPECT_EQ(sym.compute_ps, full.compute_ps) << what;
  EXPECT_EQ(sym.exposed_comm_ps, full.exposed_comm_ps) << what;
  EXPECT_EQ(sym.comm_ps, full.comm_ps) << what;
  EXPECT_EQ(sym.hbm_bytes_comm, full.hbm_bytes_comm) << what;
  EXPECT_EQ(sym.hbm_bytes_compute, full.hbm_bytes_compute) << what;
  EXPECT_EQ(sym.network_bytes_per_dim, full.network_bytes_per_dim) << what;
  ASSERT_EQ(sym.layers.size(), full.layers.size());
  for (std::size_t i = 0; i < sym.layers.size(); ++i) {
    EXPECT_EQ(sym.layers[i].exposed_ps, full.layers[i].exposed_ps) << what << " layer " << i;
    EXPECT_EQ(sym.layers[i].compute_ps[2], full.layers[i].compute_ps[2]) << what << " layer " << i;
  }
}

TEST(Symmetry, TrainingAgreesBitForBit) {
  const PlatformConfig base = platform({dim(DimKind::kRing, 4, 200, 20), dim(DimKind::kRing, 4, 100, 500),
                                        dim(DimKind::kRing, 2, 100, 500)}, "fluid", 1);
  const Topology topo(base.dims);
  std::vector<std::pair<std::string, Workload>> workloads;
  ModelOptions mo;
  mo.iterations = 2;
  workloads.emplace_back("resnet50", build_model("resnet50", mo, topo));
  workloads.emplace_back("gpt", build_model("gpt", mo, topo));
  workloads.emplace_back("dlrm", build_model("dlrm", mo, topo));
  workloads.emplace_back("astra-dlrm", read_astra_workload(test::kData + "/astra-sim-1.0/workload/DLRM_HybridParallel.txt", topo));
  workloads.emplace_back("astra-transformer",
                         read_astra_workload(test::kData + "/astra-sim-1.0/workload/Transformer_HybridParallel.txt", topo));
  for (auto& [name, w] : workloads) {
    w.iterations = 2;
    for (const char* e : {"ideal", "sm", "ace"}) {
      PlatformConfig p = base;
      p.npu.executor = e;
      p.collectives.max_chunk_bytes = 1 << 20;
      TrainOptions o;
      const TrainReport sym = run_training(p, w, o);
      o.full = true;
      const TrainReport full = run_training(p, w, o);
      EXPECT_EQ(full.simulated_ranks, 32);
      expect_same(sym, full, name + " " + std::string(e));
    }
  }
}

TEST(Symmetry, AsymmetricPlatformsRunInFull) {
  PlatformConfig flat = platform({dim(DimKind::kRing, 4, 100, 500), dim(DimKind::kRing, 4, 100, 500)});
  EXPECT_TRUE(asymmetry_reason(flat).empty());
  flat.collectives.op(CollectiveOp::kAllReduce).plan = PlanKind::kFlat;
  EXPECT_EQ(asymmetry_reason(flat), "all-reduce uses a flat plan over several dimensions");
  CollectiveRequestSpec req;
  EXPECT_EQ(run_collective(flat, req, 1 << 20).simulated_ranks, 16);
  PlatformConfig dbt = platform({dim(DimKind::kRing, 4, 100, 500), dim(DimKind::kRing, 4, 100, 500)});
  test::set_algorithm(dbt, CollectiveOp::kAllReduce, algorithm("double-binary-tree"));
  EXPECT_EQ(asymmetry_reason(dbt), "all-reduce: double-binary-tree on dimension 0 (ring of 4) gives NPUs different roles");
  const CollectiveResult r = run_collective(dbt, req, 1 << 20);
  EXPECT_EQ(r.simulated_ranks, 16);
  // Halving-doubling: symmetric through a switch or a fully-connected group,
  // not on a ring, where XOR partners route through neighbours unevenly.
  PlatformConfig hd = platform({dim(DimKind::kRing, 8, 100, 500)});
  test::set_algorithm(hd, CollectiveOp::kAllReduce, algorithm("halving-doubling"));
  EXPECT_FALSE(asymmetry_reason(hd).empty());
  hd.dims[0].kind = DimKind::kSwitch;
  EXPECT_TRUE(asymmetry_reason(hd).empty());
  // Direct all-to-all on a ring is symmetric (rotations).
  EXPECT_TRUE(asymmetry_reason(default_platform()).empty());
}

TEST(Symmetry, AStragglerDelaysEveryoneByItsLateness) {
  // One layer, ring of 4 at 100 GB/s, no latency: fwd 10 us, wg 10 us, then a
  // 2 MB all-reduce (30 us). Rank 2 computes at half speed: it reaches the
  // all-reduce at 40 us instead of 20, everyone waits for it, and each
  // iteration takes 40 + 30 = 70 us instead of 50.
  Workload w;
  w.iterations = 2;
  Layer l;
  l.name = "L0";
  l.forward.compute.time_ps = 10 * kPsPerUs;
  l.weight_grad.compute.time_ps = 10 * kPsPerUs;
  l.weight_grad.comm.op = CollectiveOp::kAllReduce;
  l.weight_grad.comm.bytes = 2e6;
  l.weight_grad.comm.blocking = false;
  w.layers.push_back(l);
  PlatformConfig p = platform({dim(DimKind::kRing, 4, 100, 0)});
  p.npu.fixed_kernel_times = true;
  TrainOptions o;
  const TrainReport even = run_training(p, w, o);
  EXPECT_EQ(even.simulated_ranks, 1);
  EXPECT_EQ(even.iteration_ps, 50 * kPsPerUs);
  o.stragglers = {{2, 2.0}};
  const TrainReport slow = run_training(p, w, o);
  EXPECT_EQ(slow.simulated_ranks, 4);
  EXPECT_EQ(slow.simulation, "full: stragglers");
  EXPECT_EQ(slow.first_iteration_ps, 70 * kPsPerUs);
  EXPECT_EQ(slow.iteration_ps, 70 * kPsPerUs);
  // Rank 0 itself computes 20 us per iteration and waits the rest.
  EXPECT_EQ(slow.compute_ps, 20 * kPsPerUs);
  EXPECT_EQ(slow.exposed_comm_ps, 50 * kPsPerUs);
  o.stragglers = {{4, 2.0}};
  EXPECT_THROW(run_training(p, w, o), std::invalid_argument);
}

}  // namespace
}  // namespace acesim
