// The energy model (docs/model.md, "Energy"): a collective's joules in
// closed form, none (null) where a platform has no model, and every key of
// `energy:` checked.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "api/api.h"
#include "config/input_error.h"
#include "driver/collective_run.h"
#include "report/collective_sweep.h"
#include "support.h"

namespace acesim {
namespace {

using test::dim;
using test::platform;

constexpr double kS = 64.0 * 1024 * 1024;

// Four NPUs on a ring of 100 GB/s links; 50 W idle, 400 W more when all 80
// compute units are busy, 4 pJ per HBM bit, 10 per link bit.
PlatformConfig ring(const std::string& executor) {
  PlatformConfig p = platform({dim(DimKind::kRing, 4, 100, 0)});
  p.npu.executor = executor;
  p.energy = EnergyModel{50.0, 400.0, 4.0, {10.0}};
  return p;
}

TEST(Energy, IdealCollectiveCostsIdlePowerAndItsLinkBits) {
  CollectiveRequestSpec req;
  req.op = CollectiveOp::kAllGather;
  const CollectiveResult r = run_collective(ring("ideal"), req, static_cast<std::uint64_t>(kS));
  ASSERT_TRUE(r.energy_J.has_value());
  // Each NPU sends 3/4 S on its ring links; no HBM, no unit is held.
  const double t = ps_to_seconds(r.time_ps);
  EXPECT_NEAR(*r.energy_J, 4 * (50.0 * t + 8 * 0.75 * kS * 10e-12), 1e-9);
  EXPECT_NEAR(*r.power_W_per_npu(4), *r.energy_J / t / 4, 1e-9);
}

TEST(Energy, SmCollectiveAddsItsUnitsActivePowerAndHbmBits) {
  CollectiveRequestSpec req;
  req.op = CollectiveOp::kAllGather;
  const PlatformConfig p = ring("sm");
  const CollectiveResult r = run_collective(p, req, static_cast<std::uint64_t>(kS));
  ASSERT_TRUE(r.energy_J.has_value());
  // The collective holds its units for all of its time: units / 80 of the
  // active power; HBM: the sm executor's bytes for an all-gather.
  const double t = ps_to_seconds(r.time_ps);
  EXPECT_NEAR(r.comm_unit_seconds, p.npu.sm.units * t, 1e-12);
  const double per_npu = 50.0 * t + 400.0 * p.npu.sm.units / 80.0 * t + 8 * r.hbm_bytes * 4e-12 + 8 * 0.75 * kS * 10e-12;
  EXPECT_NEAR(*r.energy_J, 4 * per_npu, 1e-9);
  EXPECT_GT(r.hbm_bytes, 0.0);
}

TEST(Energy, APlatformWithoutAModelReportsNone) {
  CollectiveRequestSpec req;
  req.op = CollectiveOp::kAllReduce;
  PlatformConfig p = ring("ideal");
  p.energy.reset();
  const CollectiveResult r = run_collective(p, req, static_cast<std::uint64_t>(kS));
  EXPECT_FALSE(r.energy_J.has_value());
  EXPECT_FALSE(r.power_W_per_npu(4).has_value());
  const nlohmann::json j = to_json(p, {r});
  ASSERT_TRUE(j["results"][0].contains("energy_J"));
  EXPECT_TRUE(j["results"][0]["energy_J"].is_null());
  EXPECT_EQ(format_table(p, req, {r}).find("energy(J)"), std::string::npos);
  EXPECT_NE(format_table(ring("ideal"), req, {r}).find("energy(J)"), std::string::npos);
}

TEST(Energy, PlatformFilesDeclareTheirModel) {
  const auto load = [](const std::string& energy) {
    api::PlatformRequest r;
    api::PlatformText t;
    t.yaml = "topology:\n  - {kind: switch, npus: 8, bandwidth_GBps: 100, latency_ns: 500}\n"
             "  - {kind: ring, npus: 2, bandwidth_GBps: 50, latency_ns: 500}\n" + energy;
    t.source = "energy.yaml";
    r.text = t;
    return api::load_platform(r);
  };
  const PlatformConfig p = load("energy: {idle_W: 100, active_W: 600, hbm_pJ_per_bit: 3.97, link_pJ_per_bit: [1.3, 45]}\n");
  ASSERT_TRUE(p.energy.has_value());
  EXPECT_DOUBLE_EQ(p.energy->idle_W, 100);
  EXPECT_DOUBLE_EQ(p.energy->active_W, 600);
  EXPECT_DOUBLE_EQ(p.energy->hbm_pJ_per_bit, 3.97);
  ASSERT_EQ(p.energy->link_pJ_per_bit.size(), 2u);
  EXPECT_DOUBLE_EQ(p.energy->link_pJ_per_bit[1], 45);
  EXPECT_FALSE(load("").energy.has_value());
  const auto refused = [&](const std::string& energy, const std::string& what) {
    try {
      (void)load(energy);
      ADD_FAILURE() << "accepted: " << energy;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  refused("energy: {idle_W: 100, active_W: 600, hbm_pJ_per_bit: 3.97}\n", "energy.yaml:4: energy.link_pJ_per_bit: missing");
  refused("energy: {idle_W: -1, active_W: 600, hbm_pJ_per_bit: 3.97, link_pJ_per_bit: [1, 2]}\n",
          "energy.idle_W: must be >= 0");
  refused("energy: {idle_W: 1, active_W: .nan, hbm_pJ_per_bit: 3.97, link_pJ_per_bit: [1, 2]}\n", "energy.active_W");
  refused("energy: {idle_W: 1, active_W: 2, hbm_pJ_per_bit: 3.97, link_pJ_per_bit: [1]}\n",
          "energy.link_pJ_per_bit: expected a list of 2 numbers, one per topology dimension");
  refused("energy: {idle_W: 1, active_W: 2, hbm_pJ_per_bit: 3.97, link_pJ_per_bit: [1, 2], watts: 3}\n", "watts");
}

}  // namespace
}  // namespace acesim

namespace acesim {
namespace {

TEST(Energy, BusyUnitsDrawActivePowerAtMostAllTheTime) {
  const EnergyModel e{100.0, 500.0, 0.0, {0.0}};
  // Half the units busy for the whole second: idle plus half the active.
  EXPECT_DOUBLE_EQ(e.joules(1.0, 1, 80, 40.0, 0.0, {0.0}), 350.0);
  // Compute and communication counted past all units all the time: capped.
  EXPECT_DOUBLE_EQ(e.joules(1.0, 2, 80, 120.0, 0.0, {0.0}), 2 * 600.0);
  // 1 GB of HBM at 4 pJ per bit: 32 mJ.
  const EnergyModel hbm{0.0, 0.0, 4.0, {0.0}};
  EXPECT_NEAR(hbm.joules(1.0, 1, 80, 0.0, 1e9, {0.0}), 0.032, 1e-15);
}

}  // namespace
}  // namespace acesim
