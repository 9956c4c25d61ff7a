// The dma executor (endpoint/executors/dma.cpp) against closed forms: copy
// engines bound what a phase sends, each ring step pays their latency, and
// reductions run on compute units at the sm executor's reduce rate.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "api/api.h"
#include "config/input_error.h"
#include "driver/collective_run.h"
#include "report/collective_sweep.h"
#include "endpoint/npu_config.h"
#include "support.h"

namespace acesim {
namespace {

using test::dim;
using test::platform;

constexpr double kS = 64.0 * 1024 * 1024;

// Four NPUs on a ring whose links and HBM are far faster than the engines:
// 2 engines of 50 GB/s each, 2 us a step.
PlatformConfig engines_bound() {
  PlatformConfig p = platform({dim(DimKind::kRing, 4, 10'000, 0)});
  p.npu.hbm_GBps = 100'000;
  p.npu.executor = "dma";
  p.npu.dma.engines = 2;
  p.npu.dma.GBps_per_engine = 50;
  p.npu.dma.latency_ps = 2'000'000;
  p.npu.sm.units = 8;
  p.npu.sm.reduce_GBps_per_unit = 5;  // reductions: 8 x 5 = 40 GB/s
  return p;
}

TEST(DmaExecutor, EnginesBoundAnAllGatherAndEachStepPaysTheirLatency) {
  const PlatformConfig p = engines_bound();
  CollectiveRequestSpec req;
  req.op = CollectiveOp::kAllGather;
  const CollectiveResult r = run_collective(p, req, static_cast<std::uint64_t>(kS));
  // A ring all-gather: 3 steps of S/4 sent per NPU, 3/4 S through the
  // engines at 100 GB/s, plus 3 steps of 2 us; every byte read once where
  // it leaves and written once where it arrives.
  EXPECT_NEAR(ps_to_ns(r.time_ps), 0.75 * kS / 100 + 3 * 2000, 1.0);
  EXPECT_DOUBLE_EQ(r.hbm_bytes, 1.5 * kS);
  EXPECT_EQ(r.executor, "dma");
}

TEST(DmaExecutor, ReductionsRunOnComputeUnits) {
  const PlatformConfig p = engines_bound();
  CollectiveRequestSpec req;
  req.op = CollectiveOp::kReduceScatter;
  const CollectiveResult r = run_collective(p, req, static_cast<std::uint64_t>(kS));
  // A ring reduce-scatter reduces all it receives (3/4 S) at 40 GB/s, slower
  // than the engines send it; HBM: sent, received, and the reduction's read
  // of what arrived and the local part and its write of the sum.
  EXPECT_NEAR(ps_to_ns(r.time_ps), 0.75 * kS / 40 + 3 * 2000, 1.0);
  EXPECT_DOUBLE_EQ(r.hbm_bytes, (0.75 + 0.75 + 3 * 0.75) * kS);
  // Fewer, faster units: the engines bind again.
  PlatformConfig fast = p;
  fast.npu.sm.reduce_GBps_per_unit = 50;
  EXPECT_NEAR(test::time_ns(fast, CollectiveOp::kReduceScatter, kS), 0.75 * kS / 100 + 3 * 2000, 1.0);
}

TEST(DmaExecutor, APlatformWithoutEnginesIsRefused) {
  PlatformConfig p = engines_bound();
  p.npu.dma.engines = 0;
  EXPECT_NE(validate(p.npu).find("executor dma: the platform declares no copy engines"), std::string::npos);
  EXPECT_THROW(test::time_ns(p, CollectiveOp::kAllGather, kS), std::invalid_argument);
  p.npu.dma.engines = 2;
  p.npu.dma.GBps_per_engine = 0;
  EXPECT_EQ(validate(p.npu), "communication.dma.GBps_per_engine must be > 0");
}

// A platform file's copy engines: each key checked, with its line.
TEST(DmaExecutor, PlatformFilesDeclareTheirEngines) {
  const auto load = [](const std::string& dma) {
    api::PlatformRequest r;
    api::PlatformText t;
    t.yaml = "topology:\n  - {kind: switch, npus: 8, bandwidth_GBps: 100, latency_ns: 500}\ncommunication:\n  executor: dma\n" + dma;
    t.source = "engines.yaml";
    r.text = t;
    return api::load_platform(r);
  };
  const PlatformConfig p = load("  dma: {engines: 4, GBps_per_engine: 50, latency_ns: 3000}\n");
  EXPECT_EQ(p.npu.dma.engines, 4);
  EXPECT_DOUBLE_EQ(p.npu.dma.GBps_per_engine, 50);
  EXPECT_EQ(p.npu.dma.latency_ps, 3'000'000);
  EXPECT_NE(describe_platform(p).find("executor dma (4 copy engines x 50 GB/s, 3 us a step; reductions on 8 of 80 units)"),
            std::string::npos)
      << describe_platform(p);
  const auto refused = [&](const std::string& dma, const std::string& what) {
    try {
      (void)load(dma);
      ADD_FAILURE() << "accepted: " << dma;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  refused("  dma: {engines: 0, GBps_per_engine: 50, latency_ns: 0}\n", "communication.dma.engines: must be in 1..1024, got 0");
  refused("  dma: {engines: 2, GBps_per_engine: .nan, latency_ns: 0}\n", "communication.dma.GBps_per_engine");
  refused("  dma: {engines: 2, GBps_per_engine: 50, latency_ns: -1}\n", "communication.dma.latency_ns: must be >= 0");
  refused("  dma: {engines: 2, GBps_per_engine: 50}\n", "communication.dma.latency_ns: missing");
  refused("  dma: {engines: 2, GBps_per_engine: 50, latency_ns: 0, host_issue_ns: -1}\n",
          "communication.dma.host_issue_ns: must be >= 0");
  refused("  dma: {engines: 2, GBps_per_engine: 50, latency_ns: 0, host_issue_ns: .nan}\n",
          "communication.dma.host_issue_ns");
  refused("  dma: {engines: 2, GBps_per_engine: 50, latency_ns: 0, host_issue_ns: 2e9}\n",
          "communication.dma.host_issue_ns: must be >= 0 and at most 1e9");
  refused("  dma: {engines: 2, GBps_per_engine: 50, latency_ns: 0, host_issue: 1}\n", "host_issue");
  EXPECT_EQ(load("  dma: {engines: 2, GBps_per_engine: 50, latency_ns: 0, host_issue_ns: 2500}\n").npu.dma.host_issue_ps,
            2'500'000);
  refused("", "engines.yaml:4: communication.executor: dma needs the platform's copy engines");
}

}  // namespace
}  // namespace acesim

namespace acesim {
namespace {

// NCCL's copy-engine path (NCCL 2.28, CTA policy zero) on one NVSwitch node:
// all-gather and all-to-all are one batch of copies to every peer between
// two barriers (3 engine latencies), moved by the engines with no kernel;
// all-reduce stays NCCL's kernels on the SMs: the same time as under the
// sm executor, no engine latency per ring step.
TEST(DmaExecutor, NcclRunsItsCopyEnginePathForAllGatherOnly) {
  const std::string yaml =
      "topology:\n  - {kind: switch, npus: 8, bandwidth_GBps: 400, latency_ns: 500}\n"
      "npu: {compute_units: 132, unit_TFLOPS: 7.5, hbm_GBps: 100000}\n"
      "communication:\n  executor: dma\n  dma: {engines: 1, GBps_per_engine: 200, latency_ns: 5000}\n"
      "  sm: {units: 16, copy_GBps_per_unit: 40, reduce_GBps_per_unit: 30}\n"
      "collectives:\n  library: nccl\n";
  const PlatformConfig p = parse_platform_yaml(yaml, "test.yaml");
  CollectiveRequestSpec req;
  req.op = CollectiveOp::kAllGather;
  const CollectiveResult ag = run_collective(p, req, static_cast<std::uint64_t>(kS));
  EXPECT_EQ(ag.algorithm, "copy-engine");
  // 7/8 S through the 200 GB/s engines (the 400 GB/s port is faster), one
  // route (2 links) of latency, 3 x 5 us.
  EXPECT_NEAR(ps_to_ns(ag.time_ps), 0.875 * kS / 200 + 1000 + 15000, 1.0);
  EXPECT_DOUBLE_EQ(ag.comm_unit_seconds, 0.0);
  req.op = CollectiveOp::kAllReduce;
  const CollectiveResult dma = run_collective(p, req, static_cast<std::uint64_t>(kS));
  PlatformConfig sm = p;
  sm.npu.executor = "sm";
  const CollectiveResult ref = run_collective(sm, req, static_cast<std::uint64_t>(kS));
  EXPECT_NE(dma.algorithm, "copy-engine");
  EXPECT_EQ(dma.time_ps, ref.time_ps);
  EXPECT_DOUBLE_EQ(dma.hbm_bytes, ref.hbm_bytes);
}

}  // namespace
}  // namespace acesim
