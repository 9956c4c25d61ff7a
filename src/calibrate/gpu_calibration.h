// Calibrating the endpoint model from measurements on a real GPU
// (tools/gpu-characterize writes them; docs/gpu-calibration.md).
//
// The measurements: copy and reduce kernels on K SMs alone, copy-engine
// memcpy alone, a cuBLAS GEMM alone and on fewer SMs, and the GEMM while each
// communication load runs beside it. From them we fit the NPU's compute units,
// per-unit FLOP rate, HBM bandwidth, the sm executor's per-unit copy and
// reduce rates, ACE's DMA bandwidth and the HBM sharing policy; then the
// simulator predicts every measurement from the fitted NPU, so the fit is
// checked against what it was not fitted to (the overlapped GEMM times).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "endpoint/npu_config.h"

namespace acesim {

// One row of measurements.csv. Absent (empty) numbers are NaN.
struct GpuMeasurement {
  int line = 0;            // in the CSV file, for messages
  std::string experiment;  // comm_alone, memcpy_alone, gemm_alone, gemm_sm_target, gemm_with_comm
  std::string kernel;      // copy, reduce, memcpy, memcpy_ce, gemm
  int ctas = 0;            // SMs the communication kernel ran on (gemm_sm_target: SMs taken from the GEMM)
  double bytes = 0.0;      // payload bytes per launch, or moved in the overlap window
  double time_us = 0.0;
  double payload_GBps = 0.0;
  double hbm_GBps = 0.0;
  double gemm_us = 0.0;
  double gemm_alone_us = 0.0;
  double gemm_slowdown = 0.0;
  double gemm_TFLOPS = 0.0;
};

struct GemmShape {
  double m = 0, n = 0, k = 0;
  double flops() const { return 2.0 * m * n * k; }
};

struct GpuMeasurements {
  std::string dir;
  std::string csv_file;
  std::string gpu_name;
  int sm_count = 0;
  std::string date_utc;
  GemmShape gemm;
  nlohmann::json gpu_json;  // gpu.json as written by the tool
  std::vector<GpuMeasurement> rows;
};

// Reads DIR/measurements.csv and DIR/gpu.json. Throws InputError naming the
// file, line and column of the first problem.
GpuMeasurements read_gpu_measurements(const std::string& dir);

// A fitted parameter: its platform-file key, value and how it was fitted.
struct FittedParameter {
  std::string key;
  double value = 0.0;
  std::string text;  // the value as written (policy names)
  std::string how;
};

// What the simulator predicts for one measurement, and the measured value.
struct Prediction {
  const GpuMeasurement* row = nullptr;
  std::string quantity;  // "GB/s" (alone rates) or "GEMM us"
  double measured = 0.0;
  double predicted = 0.0;
  // GEMM rows: slowdowns against the GEMM alone, measured and predicted.
  double measured_slowdown = 0.0;
  double predicted_slowdown = 0.0;
  double comm_measured_GBps = 0.0;   // gemm_with_comm: the communication's
  double comm_predicted_GBps = 0.0;  // payload rate during the overlap
  double error() const { return measured > 0.0 ? predicted / measured - 1.0 : 0.0; }
};

struct PolicyScore {
  HbmSharing policy;
  double rms_error = 0.0;  // of the overlapped GEMM times
};

struct Calibration {
  NpuConfig npu;
  std::vector<FittedParameter> parameters;
  std::vector<PolicyScore> policies;  // empty when the policy was not fitted
  std::vector<Prediction> predictions;
  // Overlapped GEMMs (gemm_with_comm): how many predicted within 10% of the
  // measured time, and the measured slowdowns' mean and maximum.
  int overlap_rows = 0;
  int overlap_within_10pct = 0;
  double max_overlap_error = 0.0;
  double measured_mean_slowdown = 0.0;
  double measured_max_slowdown = 0.0;
  double predicted_mean_slowdown = 0.0;
  double predicted_max_slowdown = 0.0;
};

// Fits the NPU to the measurements, starting from `base` (whatever is not
// measured keeps its value from there), and predicts every measurement.
Calibration fit_calibration(const GpuMeasurements& m, const NpuConfig& base);
// Predicts every measurement from a given NPU, without fitting.
Calibration check_calibration(const GpuMeasurements& m, const NpuConfig& npu);

// --- the model's side of each experiment (one NPU, no network) ---
// A kernel of `kind` ("copy", "reduce", "memcpy"/"memcpy_ce", or "" for none)
// on `ctas` units, alone: its payload rate in GB/s.
double predict_transfer_GBps(const NpuConfig& npu, const std::string& kind, int ctas, double bytes);
// The GEMM while `kind` runs beside it for the whole GEMM on `ctas` units
// ("" with ctas > 0: the units are only taken, as cublasSetSmCountTarget
// does): the GEMM's time and the communication's payload rate meanwhile.
struct OverlapPrediction {
  double gemm_us = 0.0;
  double comm_GBps = 0.0;
};
OverlapPrediction predict_gemm_overlap(const NpuConfig& npu, const GemmShape& gemm, const std::string& kind, int ctas);

// Reports.
std::string format_calibration(const Calibration& c, const GpuMeasurements& m, bool fitted);
nlohmann::json calibration_json(const Calibration& c, const GpuMeasurements& m);
std::string predictions_csv(const Calibration& c);
// `base_yaml` (a native platform file) with its npu and communication
// sections replaced by the calibrated ones, a header saying where they come
// from. The result is parsed again before it is returned.
std::string calibrated_platform_yaml(const Calibration& c, const GpuMeasurements& m, const std::string& base_yaml,
                                     const std::string& base_name);

}  // namespace acesim
