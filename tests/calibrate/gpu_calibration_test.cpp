// Calibrating the NPU from GPU measurements: the model's single-NPU
// experiments in closed form, the fit recovering a known NPU from the
// measurements it would produce, and the reader's refusals of bad files.
#include "calibrate/gpu_calibration.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "cli_runner.h"
#include "config/input_error.h"
#include "config/embedded.h"
#include "config/platform.h"
#include "report/collective_sweep.h"
#include "report/characterization.h"

namespace acesim {
namespace {

// An H200-like NPU whose parameters the fit must find again.
NpuConfig truth_npu() {
  NpuConfig n = default_npu();
  n.compute_units = 132;
  n.unit_TFLOPS = 5.0;
  n.hbm_GBps = 4000.0;
  n.sm.copy_GBps_per_unit = 30.0;
  n.sm.reduce_GBps_per_unit = 25.0;
  n.ace.dma_GBps = 3000.0;
  n.hbm_sharing = HbmSharing::kFair;
  return n;
}

const GemmShape kGemm{8192, 8192, 8192};

// What tools/gpu-characterize would write on a GPU that behaves exactly like
// `t`: the same experiments, the same CSV schema.
std::string synthetic_csv(const NpuConfig& t, const GemmShape& g) {
  std::string csv =
      "experiment,kernel,ctas,bytes,repeats,time_us,payload_GBps,hbm_GBps,gemm_us,gemm_alone_us,gemm_slowdown,"
      "gemm_TFLOPS\n";
  const double bytes = 512.0 * 1024 * 1024;
  for (const char* kernel : {"copy", "reduce"}) {
    const double hbm_per_byte = std::string(kernel) == "copy" ? 2.0 : 3.0;
    for (int k : {1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 132}) {
      const double gbps = predict_transfer_GBps(t, kernel, k, bytes);
      csv += fmt::format("comm_alone,{},{},{:.0f},5,{:.9g},{:.9g},{:.9g},,,,\n", kernel, k, bytes, bytes / gbps / 1e3,
                         gbps, gbps * hbm_per_byte);
    }
  }
  const double memcpy_gbps = predict_transfer_GBps(t, "memcpy", 0, bytes);
  csv += fmt::format("memcpy_alone,memcpy,0,{:.0f},5,{:.9g},{:.9g},{:.9g},,,,\n", bytes, bytes / memcpy_gbps / 1e3,
                     memcpy_gbps, 2 * memcpy_gbps);
  const double alone = predict_gemm_overlap(t, g, "", 0).gemm_us;
  csv += fmt::format("gemm_alone,gemm,0,,5,{:.9g},,,{:.9g},{:.9g},0,{:.9g}\n", alone, alone, alone,
                     g.flops() / alone / 1e6);
  for (int k : {8, 32}) {
    const double us = predict_gemm_overlap(t, g, "", k).gemm_us;
    csv += fmt::format("gemm_sm_target,gemm,{},,5,{:.9g},,,{:.9g},{:.9g},{:.9g},{:.9g}\n", k, us, us, alone,
                       us / alone - 1, g.flops() / us / 1e6);
  }
  for (const char* kernel : {"copy", "reduce", "memcpy"}) {
    for (int k : {1, 4, 16, 64}) {
      const bool dma = std::string(kernel) == "memcpy";
      if (dma && k != 1) continue;
      const OverlapPrediction o = predict_gemm_overlap(t, g, kernel, dma ? 0 : k);
      const double moved = o.comm_GBps * o.gemm_us * 1e3;
      csv += fmt::format("gemm_with_comm,{},{},{:.0f},5,{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g}\n", kernel,
                         dma ? 0 : k, moved, o.gemm_us, o.comm_GBps, o.comm_GBps * 2, o.gemm_us, alone,
                         o.gemm_us / alone - 1, g.flops() / o.gemm_us / 1e6);
    }
  }
  return csv;
}

std::string gpu_json(const GemmShape& g, int sms = 132) {
  return fmt::format(R"({{"name": "Synthetic GPU", "compute_capability": "9.0", "sm_count": {},
  "date_utc": "2026-11-30T10:00:00Z", "gemm": {{"m": {}, "n": {}, "k": {}, "dtype": "bf16", "batch": 20}}}})",
                     sms, g.m, g.n, g.k);
}

class GpuCalibration : public test::ScratchDirTest {
 protected:
  std::string measurements(const std::string& csv, const std::string& json) {
    write("measurements.csv", csv);
    write("gpu.json", json);
    return dir_.string();
  }
  void expect_refused(const std::string& csv, const std::string& json, std::initializer_list<std::string> parts) {
    const std::string dir = measurements(csv, json);
    try {
      read_gpu_measurements(dir);
      ADD_FAILURE() << "accepted; expected an error containing " << *parts.begin();
    } catch (const InputError& e) {
      const std::string what = e.what();
      for (const std::string& p : parts) EXPECT_NE(what.find(p), std::string::npos) << what << "\nmissing: " << p;
    }
  }
};

// ---- the model's side, in closed form ----

TEST(GpuModel, TransferAloneIsTheSlowerOfUnitsAndHbm) {
  const NpuConfig t = truth_npu();
  const double b = 1e9;
  // copy: min(K x 30, 4000 / 2); reduce: min(K x 25, 4000 / 3).
  EXPECT_NEAR(predict_transfer_GBps(t, "copy", 1, b), 30.0, 1e-6);
  EXPECT_NEAR(predict_transfer_GBps(t, "copy", 16, b), 480.0, 1e-6);
  EXPECT_NEAR(predict_transfer_GBps(t, "copy", 132, b), 2000.0, 1e-6);
  EXPECT_NEAR(predict_transfer_GBps(t, "reduce", 8, b), 200.0, 1e-6);
  EXPECT_NEAR(predict_transfer_GBps(t, "reduce", 96, b), 4000.0 / 3.0, 1e-6);
  // DMA: every byte read and written once through DMA and HBM: min(3000, 4000) / 2.
  EXPECT_NEAR(predict_transfer_GBps(t, "memcpy", 0, b), 1500.0, 1e-6);
}

TEST(GpuModel, GemmOnFewerUnitsSlowsByTheUnitsTaken) {
  const NpuConfig t = truth_npu();
  const double flops = kGemm.flops();
  const double alone_us = flops / (132 * 5e12) * 1e6;
  EXPECT_NEAR(predict_gemm_overlap(t, kGemm, "", 0).gemm_us, alone_us, 1e-3);
  // 32 SMs taken: the GEMM runs on 100.
  EXPECT_NEAR(predict_gemm_overlap(t, kGemm, "", 32).gemm_us, flops / (100 * 5e12) * 1e6, 1e-3);
}

TEST(GpuModel, GemmBesideACopyKernel) {
  const NpuConfig t = truth_npu();
  // 16 CTAs of copy: the GEMM keeps 116 units; its HBM need (402 MB per
  // 2.2 TFLOP) and the copy's (2 x 480 GB/s) fit in 4000 GB/s together.
  const OverlapPrediction o = predict_gemm_overlap(t, kGemm, "copy", 16);
  EXPECT_NEAR(o.gemm_us, kGemm.flops() / (116 * 5e12) * 1e6, 1e-3);
  EXPECT_NEAR(o.comm_GBps, 480.0, 1e-6);
  // A DMA copy takes no unit: the GEMM keeps its time.
  const OverlapPrediction d = predict_gemm_overlap(t, kGemm, "memcpy", 0);
  EXPECT_NEAR(d.gemm_us, kGemm.flops() / (132 * 5e12) * 1e6, 1e-3);
  EXPECT_NEAR(d.comm_GBps, 1500.0, 1e-6);
}

TEST(GpuModel, HbmBoundGemmSharesHbmWithTheDmaCopy) {
  // A GEMM that needs all of HBM: 16384 x 16384 x 64 moves 2 x (2 x 16384 x 64
  // + 16384^2) bytes; beside a DMA copy under fair sharing both get half of
  // their own full speed while both run.
  NpuConfig t = truth_npu();
  t.ace.dma_GBps = 1e6;  // HBM binds the copy too
  const GemmShape g{16384, 16384, 64};
  const double bytes = 2.0 * (2.0 * 16384 * 64 + 16384.0 * 16384);
  const double alone_us = bytes / 4000e9 * 1e6;
  ASSERT_GT(alone_us, g.flops() / (132 * 5e12) * 1e6);
  const OverlapPrediction o = predict_gemm_overlap(t, g, "memcpy", 0);
  EXPECT_NEAR(o.gemm_us, 2.0 * alone_us, 1e-3);
  EXPECT_NEAR(o.comm_GBps, 1000.0, 1e-6);  // half of 4000 GB/s of HBM, 2 bytes per byte copied
}

// ---- fitting ----

TEST_F(GpuCalibration, RecoversTheNpuThatProducedTheMeasurements) {
  const NpuConfig t = truth_npu();
  const GpuMeasurements m = read_gpu_measurements(measurements(synthetic_csv(t, kGemm), gpu_json(kGemm)));
  EXPECT_EQ(m.gpu_name, "Synthetic GPU");
  EXPECT_EQ(m.sm_count, 132);
  const Calibration c = fit_calibration(m, default_npu());
  EXPECT_EQ(c.npu.compute_units, 132);
  EXPECT_NEAR(c.npu.unit_TFLOPS, 5.0, 1e-6);
  EXPECT_NEAR(c.npu.hbm_GBps, 4000.0, 1e-3);
  EXPECT_NEAR(c.npu.sm.copy_GBps_per_unit, 30.0, 1e-6);
  EXPECT_NEAR(c.npu.sm.reduce_GBps_per_unit, 25.0, 1e-6);
  EXPECT_NEAR(c.npu.ace.dma_GBps, 3000.0, 1e-3);
  // What is not measured stays as in the base.
  EXPECT_EQ(c.npu.sm.units, default_npu().sm.units);
  EXPECT_EQ(c.npu.ace.sram_bytes, default_npu().ace.sram_bytes);
  // Every measurement is predicted back.
  ASSERT_EQ(c.predictions.size(), m.rows.size());
  for (const Prediction& p : c.predictions) EXPECT_NEAR(p.error(), 0.0, 1e-6) << p.row->experiment << " line " << p.row->line;
  EXPECT_EQ(c.overlap_rows, 9);
  EXPECT_EQ(c.overlap_within_10pct, 9);
  // 64 copy CTAs leave 68 units: the GEMM takes 132/68 - 1 = 94% longer.
  EXPECT_NEAR(c.measured_max_slowdown, 132.0 / 68.0 - 1.0, 1e-6);
}

TEST_F(GpuCalibration, PicksTheHbmSharingPolicyTheOverlapsShow) {
  // A GEMM with a large HBM share, so the policies predict differently.
  NpuConfig t = truth_npu();
  t.hbm_sharing = HbmSharing::kComputePriority;
  const GemmShape g{16384, 16384, 256};
  const GpuMeasurements m = read_gpu_measurements(measurements(synthetic_csv(t, g), gpu_json(g)));
  const Calibration c = fit_calibration(m, default_npu());
  EXPECT_EQ(c.npu.hbm_sharing, HbmSharing::kComputePriority);
  ASSERT_EQ(c.policies.size(), 3u);
  for (const PolicyScore& s : c.policies) {
    if (s.policy == HbmSharing::kComputePriority) {
      EXPECT_NEAR(s.rms_error, 0.0, 1e-6);  // the CSV's 9 digits
    } else {
      EXPECT_GT(s.rms_error, 0.01) << to_string(s.policy);
    }
  }
}

TEST_F(GpuCalibration, AWrongNpuIsCaughtByTheCheck) {
  const GpuMeasurements m = read_gpu_measurements(measurements(synthetic_csv(truth_npu(), kGemm), gpu_json(kGemm)));
  NpuConfig wrong = truth_npu();
  wrong.compute_units = 264;  // twice the units: communication takes half the share
  const Calibration c = check_calibration(m, wrong);
  EXPECT_LT(c.overlap_within_10pct, c.overlap_rows);
  EXPECT_GT(c.max_overlap_error, 0.10);
}

TEST_F(GpuCalibration, CalibratedPlatformReadsBack) {
  const GpuMeasurements m = read_gpu_measurements(measurements(synthetic_csv(truth_npu(), kGemm), gpu_json(kGemm)));
  const std::string base = default_platform_yaml().data();
  const Calibration c = fit_calibration(m, default_platform().npu);
  const std::string yaml = calibrated_platform_yaml(c, m, base, "presets/default.yaml");
  const PlatformConfig p = parse_platform_yaml(yaml, "calibrated.yaml");
  EXPECT_EQ(p.npu.compute_units, 132);
  EXPECT_NEAR(p.npu.unit_TFLOPS, 5.0, 1e-5);
  EXPECT_NEAR(p.npu.sm.copy_GBps_per_unit, 30.0, 1e-4);
  EXPECT_NEAR(p.npu.ace.dma_GBps, 3000.0, 1e-2);
  EXPECT_EQ(p.dims.size(), default_platform().dims.size());  // the base's topology is kept
  EXPECT_NE(yaml.find("Synthetic GPU (132 SMs), measured 2026-11-30T10:00:00Z"), std::string::npos);
  EXPECT_NE(yaml.find("least-squares slope"), std::string::npos);
}

TEST(GpuPresets, HgxH200IsTheCalibrationBase) {
  // The datasheet preset the fit starts from: one node of 8 GPUs (--nodes N for more).
  const PlatformConfig p = parse_platform_yaml(embedded_file("presets/hgx-h200.yaml"), "presets/hgx-h200.yaml");
  ASSERT_EQ(p.dims.size(), 2u);
  EXPECT_EQ(p.dims[0].npus, 8);
  EXPECT_EQ(p.dims[1].npus, 1);
  EXPECT_EQ(p.npu.compute_units, 132);
  EXPECT_NEAR(p.npu.peak_flops(), 990e12, 1e12);
  EXPECT_EQ(p.npu.executor, "sm");
  CollectiveRequestSpec req;
  EXPECT_GT(run_collective(p, req, 64 << 20).time_ps, 0);
}

// ---- bad input ----

const std::string kHeader =
    "experiment,kernel,ctas,bytes,repeats,time_us,payload_GBps,hbm_GBps,gemm_us,gemm_alone_us,gemm_slowdown,"
    "gemm_TFLOPS\n";
const std::string kMinimal = kHeader +
                             "comm_alone,copy,1,1000000,5,33.3,30,60,,,,\n"
                             "comm_alone,reduce,1,1000000,5,40,25,75,,,,\n"
                             "gemm_alone,gemm,0,,5,1666,,,1666,1666,0,660\n";

TEST_F(GpuCalibration, MinimalFileReads) {
  const GpuMeasurements m = read_gpu_measurements(measurements(kMinimal, gpu_json(kGemm)));
  ASSERT_EQ(m.rows.size(), 3u);
  EXPECT_EQ(m.rows[1].line, 3);
  EXPECT_TRUE(std::isnan(m.rows[0].gemm_us));
}

TEST_F(GpuCalibration, RefusesBadFiles) {
  const std::string j = gpu_json(kGemm);
  expect_refused(kMinimal + "comm_alone,copy,2,1000000,5,abc,30,60,,,,\n", j, {"measurements.csv:5", "time_us", "'abc' is not a number"});
  expect_refused(kMinimal + "comm_alon,copy,2,1000000,5,1,30,60,,,,\n", j, {"measurements.csv:5", "unknown experiment 'comm_alon'", "comm_alone"});
  expect_refused(kMinimal + "comm_alone,gemm,2,1000000,5,1,30,60,,,,\n", j, {":5", "does not go with experiment comm_alone"});
  expect_refused(kMinimal + "comm_alone,copy,200,1000000,5,1,30,60,,,,\n", j, {":5", "ctas", "200 SMs", "132 SMs"});
  expect_refused(kMinimal + "comm_alone,copy,2.5,1000000,5,1,30,60,,,,\n", j, {":5", "ctas", "whole number"});
  expect_refused(kMinimal + "comm_alone,copy,2,1000000,5,1,-30,60,,,,\n", j, {":5", "payload_GBps", "must be > 0"});
  expect_refused(kMinimal + "gemm_with_comm,copy,2,1000000,5,1,30,60,1700,,,\n", j, {":5", "gemm_alone_us", "missing"});
  expect_refused(kMinimal + "comm_alone,copy,2,1000000\n", j, {"measurements.csv", "column"});
  expect_refused(kHeader + "comm_alone,copy,1,1000000,5,33.3,30,60,,,,\n", j, {"no gemm_alone row"});
  expect_refused("experiment,kernel,ctas\ncomm_alone,copy,1\n", j, {"measurements.csv: Missing column \"bytes\" in header."});
  expect_refused(kMinimal, "{\"name\": \"x\"", {"gpu.json", "not valid JSON"});
  expect_refused(kMinimal, R"({"name": "x", "sm_count": 0, "gemm": {"m": 1, "n": 1, "k": 1}})", {"gpu.json", "sm_count", "> 0"});
  expect_refused(kMinimal, R"({"name": "x", "sm_count": 132})", {"gpu.json", "gemm", "missing"});
  expect_refused(kMinimal, R"({"name": "x", "sm_count": 132, "gemm": {"m": 1, "n": "a", "k": 1}})", {"gemm.n"});
}

TEST_F(GpuCalibration, RefusesAMissingDirectoryOrFile) {
  EXPECT_THROW(read_gpu_measurements((dir_ / "nowhere").string()), InputError);
  write("gpu.json", gpu_json(kGemm));
  try {
    read_gpu_measurements(dir_.string());
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("measurements.csv"), std::string::npos) << e.what();
  }
}

// ---- the command ----

class CalibrateCli : public test::CliTest {};

TEST_F(CalibrateCli, FitsWritesAPlatformThatRuns) {
  std::filesystem::create_directories(dir_ / "m");
  write("m/measurements.csv", synthetic_csv(truth_npu(), kGemm));
  write("m/gpu.json", gpu_json(kGemm));
  const std::string out = (dir_ / "h200.yaml").string();
  const std::string csv = (dir_ / "pred.csv").string();
  const test::CliRun r = run({"calibrate", (dir_ / "m").string(), "--out", out, "--csv", csv});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("npu.unit_TFLOPS"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("9 of 9 overlapped GEMM times predicted within 10%"), std::string::npos) << r.out;
  EXPECT_NE(test::slurp(csv).find("gemm_with_comm,copy,64"), std::string::npos);
  // The calibrated platform is an ordinary platform file.
  const test::CliRun c = run({"collective", "--platform", out, "--bytes", "64MiB"});
  EXPECT_EQ(c.status, 0) << c.err;
  // ... and checking it against the same measurements finds no error.
  const test::CliRun k = run({"calibrate", (dir_ / "m").string(), "--platform", out, "--json"});
  ASSERT_EQ(k.status, 0) << k.err;
  const nlohmann::json j = nlohmann::json::parse(k.out);
  EXPECT_EQ(j["overlap"]["within_10pct"], 9);
  EXPECT_LT(j["overlap"]["max_error"].get<double>(), 1e-5);
}

TEST_F(CalibrateCli, FullDisk) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  std::filesystem::create_directories(dir_ / "m");
  write("m/measurements.csv", synthetic_csv(truth_npu(), kGemm));
  write("m/gpu.json", gpu_json(kGemm));
  for (const std::string flag : {"--out", "--csv"}) {
    const test::CliRun r = run({"calibrate", (dir_ / "m").string(), flag, "/dev/full"});
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_EQ(r.err, "acesim: error: " + flag + ": /dev/full: cannot write: No space left on device\n");
  }
}

TEST_F(CalibrateCli, BadUsage) {
  expect_bad_input({"calibrate", (dir_ / "nowhere").string()}, {"nowhere", "not a directory"});
  expect_bad_input({"calibrate", dir_.string(), "--platform", "x.yaml", "--out", "y.yaml"}, {"--platform", "--out"});
  expect_bad_input({"calibrate"}, {"calibrate: give DIR (a GPU's measurements) or `runs FILE`"});
}

}  // namespace
}  // namespace acesim
