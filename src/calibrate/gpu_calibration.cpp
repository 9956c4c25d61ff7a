#include "calibrate/gpu_calibration.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "config/csv_reader.h"
#include "config/input_error.h"
#include "config/platform.h"
#include "config/csv.h"
#include "endpoint/endpoint.h"
#include "engine/simulation.h"
#include "driver/characterization.h"
#include "topology/topology.h"

namespace acesim {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

const std::vector<std::string> kColumns = {"experiment", "kernel",       "ctas",    "bytes",
                                           "repeats",    "time_us",      "payload_GBps", "hbm_GBps",
                                           "gemm_us",    "gemm_alone_us", "gemm_slowdown", "gemm_TFLOPS"};
const std::vector<std::string> kExperiments = {"comm_alone", "memcpy_alone", "gemm_alone", "gemm_sm_target",
                                               "gemm_with_comm"};
const std::vector<std::string> kKernels = {"copy", "reduce", "memcpy", "memcpy_ce", "gemm"};

bool is_sm_kernel(const std::string& k) { return k == "copy" || k == "reduce"; }
bool is_dma_kernel(const std::string& k) { return k == "memcpy" || k == "memcpy_ce"; }

// A number from a CSV field: NaN when empty; an error when not a number.
double field_number(const std::string& text, const std::string& file, int line, const std::string& column) {
  if (text.empty()) return kNaN;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v)) {
    throw_input_error(file, line, column, "'" + text + "' is not a number");
  }
  return v;
}

void require_positive(double v, const std::string& file, int line, const std::string& column,
                      const std::string& experiment) {
  if (std::isnan(v)) throw_input_error(file, line, column, "missing; " + experiment + " rows need it");
  if (!(v > 0.0)) throw_input_error(file, line, column, fmt::format("must be > 0, got {}", v));
}

// Checks what each experiment's rows must carry.
void check_row(const GpuMeasurement& r, const std::string& file, int sm_count) {
  const int line = r.line;
  if (std::find(kExperiments.begin(), kExperiments.end(), r.experiment) == kExperiments.end()) {
    throw_input_error(file, line, "experiment", "unknown experiment '" + r.experiment + "'" + suggestion(r.experiment, kExperiments));
  }
  if (std::find(kKernels.begin(), kKernels.end(), r.kernel) == kKernels.end()) {
    throw_input_error(file, line, "kernel", "unknown kernel '" + r.kernel + "'" + suggestion(r.kernel, kKernels));
  }
  const bool gemm_row = r.experiment == "gemm_alone" || r.experiment == "gemm_sm_target";
  const bool kernel_ok = gemm_row                            ? r.kernel == "gemm"
                         : r.experiment == "memcpy_alone"    ? is_dma_kernel(r.kernel)
                         : r.experiment == "comm_alone"      ? is_sm_kernel(r.kernel)
                                                             : r.kernel != "gemm";
  if (!kernel_ok) throw_input_error(file, line, "kernel", "'" + r.kernel + "' does not go with experiment " + r.experiment);
  const bool needs_ctas = is_sm_kernel(r.kernel) || r.experiment == "gemm_sm_target";
  if (needs_ctas && (r.ctas < 1 || r.ctas >= sm_count + (r.experiment == "comm_alone" ? 1 : 0))) {
    throw_input_error(file, line, "ctas",
                      fmt::format("{} SMs is not possible on a GPU of {} SMs (gpu.json sm_count)", r.ctas, sm_count));
  }
  require_positive(r.time_us, file, line, "time_us", r.experiment);
  if (!gemm_row) {
    require_positive(r.bytes, file, line, "bytes", r.experiment);
    require_positive(r.payload_GBps, file, line, "payload_GBps", r.experiment);
  }
  if (gemm_row || r.experiment == "gemm_with_comm") {
    require_positive(r.gemm_us, file, line, "gemm_us", r.experiment);
  }
  if (r.experiment == "gemm_alone") require_positive(r.gemm_TFLOPS, file, line, "gemm_TFLOPS", r.experiment);
  if (r.experiment == "gemm_with_comm") require_positive(r.gemm_alone_us, file, line, "gemm_alone_us", r.experiment);
}

double json_positive(const nlohmann::json& j, const char* key, const std::string& file, const std::string& path) {
  if (!j.contains(key)) throw_input_error(file, 0, path + key, "missing");
  const nlohmann::json& v = j[key];
  if (!v.is_number() || !(v.get<double>() > 0.0) || !std::isfinite(v.get<double>())) {
    throw_input_error(file, 0, path + key, "must be a number > 0, got " + v.dump());
  }
  return v.get<double>();
}

}  // namespace

GpuMeasurements read_gpu_measurements(const std::string& dir) {
  namespace fs = std::filesystem;
  GpuMeasurements m;
  m.dir = dir;
  if (!fs::is_directory(dir)) {
    throw InputError(dir + ": not a directory of GPU measurements (tools/gpu-characterize writes measurements.csv and gpu.json into one)");
  }
  const std::string json_file = (fs::path(dir) / "gpu.json").string();
  const std::string json_text = read_text_file(json_file);
  try {
    m.gpu_json = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(json_file + ": not valid JSON: " + e.what());
  }
  if (!m.gpu_json.is_object()) throw InputError(json_file + ": must be a JSON object");
  if (!m.gpu_json.contains("name") || !m.gpu_json["name"].is_string()) throw_input_error(json_file, 0, "name", "missing (the GPU's name)");
  m.gpu_name = m.gpu_json["name"].get<std::string>();
  const double sms = json_positive(m.gpu_json, "sm_count", json_file, "");
  if (sms != std::floor(sms) || sms > 1e6) throw_input_error(json_file, 0, "sm_count", "must be a whole number of SMs");
  m.sm_count = static_cast<int>(sms);
  if (m.gpu_json.contains("date_utc") && m.gpu_json["date_utc"].is_string()) m.date_utc = m.gpu_json["date_utc"].get<std::string>();
  if (!m.gpu_json.contains("gemm") || !m.gpu_json["gemm"].is_object()) throw_input_error(json_file, 0, "gemm", "missing (the GEMM's m, n, k)");
  const nlohmann::json& g = m.gpu_json["gemm"];
  m.gemm.m = json_positive(g, "m", json_file, "gemm.");
  m.gemm.n = json_positive(g, "n", json_file, "gemm.");
  m.gemm.k = json_positive(g, "k", json_file, "gemm.");

  m.csv_file = (fs::path(dir) / "measurements.csv").string();
  const std::string& file = m.csv_file;
  if (!fs::is_regular_file(file)) throw InputError(file + ": cannot read it (missing)");
  const std::string text = read_text_file(file);
  try {
    io::CSVReader<12, io::trim_chars<' ', '\t', '\r'>, io::no_quote_escape<','>, io::throw_on_overflow,
                  io::empty_line_comment>
        in(file, text.data(), text.data() + text.size());
    in.read_header(io::ignore_extra_column, "experiment", "kernel", "ctas", "bytes", "repeats", "time_us",
                   "payload_GBps", "hbm_GBps", "gemm_us", "gemm_alone_us", "gemm_slowdown", "gemm_TFLOPS");
    std::vector<std::string> f(kColumns.size());
    while (in.read_row(f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10], f[11])) {
      GpuMeasurement r;
      r.line = static_cast<int>(in.get_file_line());
      r.experiment = f[0];
      r.kernel = f[1];
      const double ctas = field_number(f[2], file, r.line, "ctas");
      if (std::isnan(ctas) || ctas != std::floor(ctas) || ctas < 0 || ctas > 1e6) {
        throw_input_error(file, r.line, "ctas", "must be a whole number >= 0, got '" + f[2] + "'");
      }
      r.ctas = static_cast<int>(ctas);
      r.bytes = field_number(f[3], file, r.line, "bytes");
      r.time_us = field_number(f[5], file, r.line, "time_us");
      r.payload_GBps = field_number(f[6], file, r.line, "payload_GBps");
      r.hbm_GBps = field_number(f[7], file, r.line, "hbm_GBps");
      r.gemm_us = field_number(f[8], file, r.line, "gemm_us");
      r.gemm_alone_us = field_number(f[9], file, r.line, "gemm_alone_us");
      r.gemm_slowdown = field_number(f[10], file, r.line, "gemm_slowdown");
      r.gemm_TFLOPS = field_number(f[11], file, r.line, "gemm_TFLOPS");
      check_row(r, file, m.sm_count);
      m.rows.push_back(std::move(r));
    }
  } catch (const io::error::base& e) {
    // The library's message names the file again (truncated to 255 bytes).
    static const std::regex kFileName(R"( (in|of) file "[^"]*")");
    throw InputError(file + ": " + std::regex_replace(e.what(), kFileName, ""));
  }
  auto has = [&](const std::string& experiment, const std::string& kernel) {
    return std::any_of(m.rows.begin(), m.rows.end(),
                       [&](const GpuMeasurement& r) { return r.experiment == experiment && r.kernel == kernel; });
  };
  if (!has("gemm_alone", "gemm")) throw InputError(file + ": no gemm_alone row: the GEMM alone is needed to fit unit_TFLOPS");
  for (const char* k : {"copy", "reduce"}) {
    if (!has("comm_alone", k)) throw InputError(file + ": no comm_alone row for the " + std::string(k) + " kernel");
  }
  return m;
}

// ---------------------------------------------------------------------------
// The model's side: one NPU, no network.

namespace {

struct DoneAt : ActivityListener {
  Simulation* sim = nullptr;
  TimePs at = -1;
  void activity_done(std::uint64_t) override { at = sim->now(); }
};

// One NPU of a two-NPU ring (a topology needs links; none are used).
struct LocalNpu {
  Simulation sim;
  Topology topo{std::vector<DimensionSpec>{DimensionSpec{DimKind::kRing, 2, 1.0, 0.0, 1}}};
  Endpoints endpoint;
  explicit LocalNpu(NpuConfig cfg) : endpoint(sim, topo, std::move(cfg)) {}
};

NpuConfig with_executor_for(const NpuConfig& npu, const std::string& kind) {
  NpuConfig c = npu;
  c.executor = is_dma_kernel(kind) ? "ace" : "sm";
  return c;
}

LocalTransfer transfer_kind(const std::string& kind) {
  if (kind == "copy") return LocalTransfer::kCopy;
  if (kind == "reduce") return LocalTransfer::kReduce;
  return LocalTransfer::kDma;
}

}  // namespace

double predict_transfer_GBps(const NpuConfig& npu, const std::string& kind, int ctas, double bytes) {
  LocalNpu n(with_executor_for(npu, kind));
  if (is_sm_kernel(kind)) n.endpoint.hold_units(0, ctas);
  DoneAt done;
  done.sim = &n.sim;
  n.endpoint.start_local_transfer(0, transfer_kind(kind), bytes, &done, 0);
  n.sim.run();
  if (done.at <= 0) return 0.0;
  return bytes / ps_to_seconds(done.at) / 1e9;
}

OverlapPrediction predict_gemm_overlap(const NpuConfig& npu, const GemmShape& gemm, const std::string& kind, int ctas) {
  LocalNpu n(with_executor_for(npu, kind));
  const Kernel k = gemm_kernel(gemm.m, gemm.n, gemm.k, 2.0);
  if (!is_dma_kernel(kind) && ctas > 0) n.endpoint.hold_units(0, ctas);
  // The communication runs for the whole GEMM (the tool stops it after the
  // GEMMs): give it more bytes than it could move meanwhile; the GEMM can
  // be at most compute_units times slower, with one unit left.
  struct GemmDone : ActivityListener {
    LocalNpu* n = nullptr;
    ActivityId comm;
    double comm_bytes = 0.0;
    double comm_work = 0.0;  // the transfer's work, in the fluid model's units
    TimePs at = -1;
    double moved = 0.0;
    void activity_done(std::uint64_t) override {
      at = n->sim.now();
      if (comm.valid() && n->sim.fluid().active(comm)) {
        moved = comm_bytes * (1.0 - n->sim.fluid().remaining(at, comm) / comm_work);
        n->sim.fluid().cancel(at, comm);
      }
    }
  } gd;
  gd.n = &n;
  if (!kind.empty()) {
    gd.comm_bytes = npu.hbm_GBps * 1e9 * n.endpoint.isolated_seconds(k) * (2.0 * npu.compute_units + 10.0);
    gd.comm = n.endpoint.start_local_transfer(0, transfer_kind(kind), gd.comm_bytes, nullptr, 0);
    gd.comm_work = n.sim.fluid().remaining(0, gd.comm);
  }
  n.endpoint.start_kernel(0, k, &gd, 0);
  n.sim.run();
  OverlapPrediction p;
  if (gd.at > 0) {
    p.gemm_us = ps_to_us(gd.at);
    p.comm_GBps = gd.moved / ps_to_seconds(gd.at) / 1e9;
  }
  return p;
}

// ---------------------------------------------------------------------------
// Fitting.

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return kNaN;
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 == 1 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

std::vector<const GpuMeasurement*> rows_of(const GpuMeasurements& m, const std::string& experiment,
                                           const std::string& kernel = "") {
  std::vector<const GpuMeasurement*> out;
  for (const GpuMeasurement& r : m.rows) {
    if (r.experiment == experiment && (kernel.empty() || r.kernel == kernel)) out.push_back(&r);
  }
  return out;
}

double gemm_alone_us(const GpuMeasurements& m) {
  std::vector<double> t;
  for (const GpuMeasurement* r : rows_of(m, "gemm_alone")) t.push_back(r->gemm_us);
  return median(t);
}

// The per-unit rate of an SM kernel: the least-squares slope through the
// origin of payload rate against CTAs, over the points well below the
// plateau (where the units, not HBM, bind).
FittedParameter fit_per_unit(const GpuMeasurements& m, const std::string& kernel, const std::string& key) {
  const auto rows = rows_of(m, "comm_alone", kernel);
  double plateau = 0.0;
  for (const GpuMeasurement* r : rows) plateau = std::max(plateau, r->payload_GBps);
  double kp = 0.0, kk = 0.0;
  int used = 0, max_k = 0;
  for (const GpuMeasurement* r : rows) {
    if (r->payload_GBps < 0.7 * plateau) {
      kp += r->ctas * r->payload_GBps;
      kk += static_cast<double>(r->ctas) * r->ctas;
      ++used;
      max_k = std::max(max_k, r->ctas);
    }
  }
  FittedParameter p;
  p.key = key;
  if (used == 0) {
    // Every point is on the plateau: the fewest CTAs give a lower bound.
    const GpuMeasurement* fewest = *std::min_element(
        rows.begin(), rows.end(), [](const GpuMeasurement* a, const GpuMeasurement* b) { return a->ctas < b->ctas; });
    p.value = fewest->payload_GBps / fewest->ctas;
    p.how = fmt::format("{} kernel: every point is HBM-bound; payload rate on {} CTAs / {} (a lower bound)", kernel,
                        fewest->ctas, fewest->ctas);
    return p;
  }
  p.value = kp / kk;
  p.how = fmt::format("{} kernel: least-squares slope of payload GB/s vs CTAs through 0, over the {} points below 70% "
                      "of its plateau ({:.0f} GB/s; CTAs <= {})",
                      kernel, used, plateau, max_k);
  return p;
}

std::string fmt_value(double v) { return fmt::format("{:.6g}", v); }

void summarize(Calibration& c) {
  std::vector<double> meas, pred;
  c.overlap_rows = 0;
  c.overlap_within_10pct = 0;
  c.max_overlap_error = 0.0;
  for (const Prediction& p : c.predictions) {
    if (p.row->experiment != "gemm_with_comm") continue;
    ++c.overlap_rows;
    if (std::abs(p.error()) <= 0.10) ++c.overlap_within_10pct;
    c.max_overlap_error = std::max(c.max_overlap_error, std::abs(p.error()));
    meas.push_back(p.measured_slowdown);
    pred.push_back(p.predicted_slowdown);
  }
  auto mean = [](const std::vector<double>& v) {
    double s = 0.0;
    for (double x : v) s += x;
    return v.empty() ? 0.0 : s / static_cast<double>(v.size());
  };
  auto max = [](const std::vector<double>& v) { return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end()); };
  c.measured_mean_slowdown = mean(meas);
  c.measured_max_slowdown = max(meas);
  c.predicted_mean_slowdown = mean(pred);
  c.predicted_max_slowdown = max(pred);
}

double overlap_rms_error(const GpuMeasurements& m, const NpuConfig& npu) {
  double sum = 0.0;
  int n = 0;
  for (const GpuMeasurement* r : rows_of(m, "gemm_with_comm")) {
    const double e = predict_gemm_overlap(npu, m.gemm, r->kernel, r->ctas).gemm_us / r->gemm_us - 1.0;
    sum += e * e;
    ++n;
  }
  return n > 0 ? std::sqrt(sum / n) : 0.0;
}

}  // namespace

Calibration check_calibration(const GpuMeasurements& m, const NpuConfig& npu) {
  Calibration c;
  c.npu = npu;
  const double alone_us = gemm_alone_us(m);
  // The GEMM on all units, alone, as the model has it.
  std::map<std::pair<std::string, int>, OverlapPrediction> overlap;
  auto overlap_for = [&](const std::string& kind, int ctas) {
    const auto key = std::make_pair(kind, ctas);
    auto it = overlap.find(key);
    if (it == overlap.end()) it = overlap.emplace(key, predict_gemm_overlap(npu, m.gemm, kind, ctas)).first;
    return it->second;
  };
  const double model_alone_us = overlap_for("", 0).gemm_us;
  for (const GpuMeasurement& r : m.rows) {
    Prediction p;
    p.row = &r;
    if (r.experiment == "comm_alone" || r.experiment == "memcpy_alone") {
      p.quantity = "GB/s";
      p.measured = r.payload_GBps;
      p.predicted = predict_transfer_GBps(npu, r.kernel, r.ctas, r.bytes);
    } else {
      p.quantity = "GEMM us";
      p.measured = r.gemm_us;
      const bool alone = r.experiment == "gemm_alone";
      const OverlapPrediction o = overlap_for(r.experiment == "gemm_with_comm" ? r.kernel : "", alone ? 0 : r.ctas);
      p.predicted = o.gemm_us;
      const double base = r.experiment == "gemm_with_comm" ? r.gemm_alone_us : alone_us;
      p.measured_slowdown = r.gemm_us / base - 1.0;
      p.predicted_slowdown = o.gemm_us / model_alone_us - 1.0;
      if (r.experiment == "gemm_with_comm") {
        p.comm_measured_GBps = r.payload_GBps;
        p.comm_predicted_GBps = o.comm_GBps;
      }
    }
    c.predictions.push_back(p);
  }
  summarize(c);
  return c;
}

Calibration fit_calibration(const GpuMeasurements& m, const NpuConfig& base) {
  NpuConfig npu = base;
  std::vector<FittedParameter> params;
  npu.compute_units = m.sm_count;
  params.push_back({"npu.compute_units", static_cast<double>(m.sm_count), "",
                    "the GPU's SMs (gpu.json sm_count): one compute unit per SM"});

  std::vector<double> tflops;
  for (const GpuMeasurement* r : rows_of(m, "gemm_alone")) tflops.push_back(r->gemm_TFLOPS);
  const double gemm_TFLOPS = median(tflops);
  npu.unit_TFLOPS = gemm_TFLOPS / m.sm_count;
  params.push_back({"npu.unit_TFLOPS", npu.unit_TFLOPS, "",
                    fmt::format("the GEMM alone ({:g}x{:g}x{:g} bf16, cuBLAS): {:.1f} TFLOP/s achieved / {} SMs", m.gemm.m,
                                m.gemm.n, m.gemm.k, gemm_TFLOPS, m.sm_count)});

  const GpuMeasurement* best_hbm = nullptr;
  for (const GpuMeasurement& r : m.rows) {
    if ((r.experiment == "comm_alone" || r.experiment == "memcpy_alone") && !std::isnan(r.hbm_GBps) &&
        (best_hbm == nullptr || r.hbm_GBps > best_hbm->hbm_GBps)) {
      best_hbm = &r;
    }
  }
  if (best_hbm != nullptr) {
    npu.hbm_GBps = best_hbm->hbm_GBps;
    params.push_back({"npu.hbm_GBps", npu.hbm_GBps, "",
                      fmt::format("the most HBM traffic any kernel alone achieved: {} on {} CTAs (line {})",
                                  best_hbm->kernel, best_hbm->ctas, best_hbm->line)});
  }

  FittedParameter copy = fit_per_unit(m, "copy", "communication.sm.copy_GBps_per_unit");
  FittedParameter reduce = fit_per_unit(m, "reduce", "communication.sm.reduce_GBps_per_unit");
  npu.sm.copy_GBps_per_unit = copy.value;
  npu.sm.reduce_GBps_per_unit = reduce.value;
  params.push_back(copy);
  params.push_back(reduce);

  const auto memcpys = rows_of(m, "memcpy_alone");
  if (!memcpys.empty()) {
    const GpuMeasurement* best = *std::max_element(memcpys.begin(), memcpys.end(), [](const auto* a, const auto* b) {
      return a->payload_GBps < b->payload_GBps;
    });
    npu.ace.dma_GBps = 2.0 * best->payload_GBps;
    params.push_back({"communication.ace.dma_GBps", npu.ace.dma_GBps, "",
                      fmt::format("copy engines ({}, line {}): {:.0f} GB/s copied, each byte read and written once "
                                  "through the DMA, so twice that",
                                  best->kernel, best->line, best->payload_GBps)});
  }

  std::vector<PolicyScore> policies;
  if (!rows_of(m, "gemm_with_comm").empty()) {
    for (HbmSharing h : {HbmSharing::kFair, HbmSharing::kComputePriority, HbmSharing::kCommPriority}) {
      NpuConfig t = npu;
      t.hbm_sharing = h;
      policies.push_back({h, overlap_rms_error(m, t)});
    }
    const PolicyScore best = *std::min_element(policies.begin(), policies.end(),
                                               [](const PolicyScore& a, const PolicyScore& b) { return a.rms_error < b.rms_error; });
    npu.hbm_sharing = best.policy;
    params.push_back({"npu.hbm_sharing", 0.0, std::string(to_string(best.policy)),
                      fmt::format("of fair, compute-priority and communication-priority, the one whose predicted "
                                  "overlapped GEMM times are closest to the measured ones (RMS {:.1f}%)",
                                  100.0 * best.rms_error)});
  }
  const std::string problem = validate(npu);
  if (!problem.empty()) throw InputError(m.csv_file + ": the fitted NPU is not valid: " + problem);
  Calibration c = check_calibration(m, npu);
  c.parameters = std::move(params);
  c.policies = std::move(policies);
  return c;
}

// ---------------------------------------------------------------------------
// Reports.

std::string format_calibration(const Calibration& c, const GpuMeasurements& m, bool fitted) {
  std::string out = fmt::format("# acesim calibrate: {} ({} SMs){}; {} measurements from {}\n", m.gpu_name, m.sm_count,
                                m.date_utc.empty() ? "" : ", measured " + m.date_utc, m.rows.size(), m.dir);
  if (fitted) {
    out += "# fitted parameters\n";
    for (const FittedParameter& p : c.parameters) {
      out += fmt::format("  {:<40} {:>12}  {}\n", p.key, p.text.empty() ? fmt_value(p.value) : p.text, p.how);
    }
    if (!c.policies.empty()) {
      out += "# HBM sharing policies: RMS error of the predicted overlapped GEMM times\n";
      for (const PolicyScore& s : c.policies) {
        out += fmt::format("  {:<24} {:>7.1f}%\n", to_string(s.policy), 100.0 * s.rms_error);
      }
    }
  }
  out += "# measured vs predicted by acesim from the NPU above\n";
  out += fmt::format("# {:<15} {:<9} {:>5} {:>9} {:>12} {:>12} {:>8} {:>10} {:>10} {:>10} {:>10}\n", "experiment",
                     "kernel", "ctas", "quantity", "measured", "predicted", "error", "slow.meas", "slow.pred",
                     "comm.meas", "comm.pred");
  for (const Prediction& p : c.predictions) {
    const GpuMeasurement& r = *p.row;
    const bool gemm = p.quantity == "GEMM us";
    out += fmt::format("  {:<15} {:<9} {:>5} {:>9} {:>12.2f} {:>12.2f} {:>7.1f}%", r.experiment, r.kernel, r.ctas,
                       p.quantity, p.measured, p.predicted, 100.0 * p.error());
    if (gemm && r.experiment != "gemm_alone") {
      out += fmt::format(" {:>9.1f}% {:>9.1f}%", 100.0 * p.measured_slowdown, 100.0 * p.predicted_slowdown);
    }
    if (r.experiment == "gemm_with_comm") {
      out += fmt::format(" {:>10.1f} {:>10.1f}", p.comm_measured_GBps, p.comm_predicted_GBps);
    }
    out += "\n";
  }
  if (c.overlap_rows > 0) {
    out += fmt::format(
        "# GEMM beside communication: {} of {} overlapped GEMM times predicted within 10% (largest error {:.1f}%); "
        "slowdown measured mean {:.1f}%, max {:.1f}%; predicted mean {:.1f}%, max {:.1f}% (published, NCCL on "
        "A100/H100/MI250: mean 18.9%, up to 40%, arXiv 2507.03114)\n",
        c.overlap_within_10pct, c.overlap_rows, 100.0 * c.max_overlap_error, 100.0 * c.measured_mean_slowdown,
        100.0 * c.measured_max_slowdown, 100.0 * c.predicted_mean_slowdown, 100.0 * c.predicted_max_slowdown);
  } else {
    out += "# no gemm_with_comm rows: the overlap is not validated\n";
  }
  return out;
}

nlohmann::json calibration_json(const Calibration& c, const GpuMeasurements& m) {
  nlohmann::json params = nlohmann::json::array();
  for (const FittedParameter& p : c.parameters) {
    nlohmann::json j = {{"key", p.key}, {"how", p.how}};
    if (p.text.empty()) {
      j["value"] = p.value;
    } else {
      j["value"] = p.text;
    }
    params.push_back(std::move(j));
  }
  nlohmann::json policies = nlohmann::json::array();
  for (const PolicyScore& s : c.policies) policies.push_back({{"policy", to_string(s.policy)}, {"rms_error", s.rms_error}});
  nlohmann::json rows = nlohmann::json::array();
  for (const Prediction& p : c.predictions) {
    nlohmann::json j = {{"line", p.row->line},         {"experiment", p.row->experiment}, {"kernel", p.row->kernel},
                        {"ctas", p.row->ctas},         {"quantity", p.quantity},          {"measured", p.measured},
                        {"predicted", p.predicted},    {"error", p.error()}};
    if (p.quantity == "GEMM us") {
      j["measured_slowdown"] = p.measured_slowdown;
      j["predicted_slowdown"] = p.predicted_slowdown;
    }
    if (p.row->experiment == "gemm_with_comm") {
      j["comm_measured_GBps"] = p.comm_measured_GBps;
      j["comm_predicted_GBps"] = p.comm_predicted_GBps;
    }
    rows.push_back(std::move(j));
  }
  return {{"gpu", m.gpu_name},
          {"sm_count", m.sm_count},
          {"date_utc", m.date_utc},
          {"parameters", params},
          {"hbm_sharing_policies", policies},
          {"predictions", rows},
          {"overlap", {{"rows", c.overlap_rows},
                       {"within_10pct", c.overlap_within_10pct},
                       {"max_error", c.max_overlap_error},
                       {"measured_mean_slowdown", c.measured_mean_slowdown},
                       {"measured_max_slowdown", c.measured_max_slowdown},
                       {"predicted_mean_slowdown", c.predicted_mean_slowdown},
                       {"predicted_max_slowdown", c.predicted_max_slowdown}}}};
}

std::string predictions_csv(const Calibration& c) {
  std::string out =
      "line,experiment,kernel,ctas,quantity,measured,predicted,error,measured_slowdown,predicted_slowdown,"
      "comm_measured_GBps,comm_predicted_GBps\n";
  for (const Prediction& p : c.predictions) {
    const bool gemm = p.quantity == "GEMM us";
    const bool overlap = p.row->experiment == "gemm_with_comm";
    CsvLine row;
    row << p.row->line << p.row->experiment << p.row->kernel << p.row->ctas << p.quantity << p.measured << p.predicted
        << p.error();
    if (gemm) {
      row << p.measured_slowdown << p.predicted_slowdown;
    } else {
      row << "" << "";
    }
    if (overlap) {
      row << p.comm_measured_GBps << p.comm_predicted_GBps;
    } else {
      row << "" << "";
    }
    out += row.text();
  }
  return out;
}

namespace {

// The top-level key a line starts, or "" (indented, comment or blank lines).
std::string top_level_key(const std::string& line) {
  if (line.empty() || line[0] == ' ' || line[0] == '\t' || line[0] == '#' || line[0] == '-') return "";
  const std::size_t colon = line.find(':');
  return colon == std::string::npos ? "" : line.substr(0, colon);
}

}  // namespace

std::string calibrated_platform_yaml(const Calibration& c, const GpuMeasurements& m, const std::string& base_yaml,
                                     const std::string& base_name) {
  // The base without its npu and communication sections.
  std::vector<std::string> lines;
  {
    std::stringstream ss(base_yaml);
    std::string line;
    bool dropping = false;
    while (std::getline(ss, line)) {
      const std::string key = top_level_key(line);
      if (!key.empty()) dropping = key == "npu" || key == "communication";
      if (!dropping) lines.push_back(line);
    }
  }
  const NpuConfig& n = c.npu;
  std::string out = fmt::format(
      "# acesim platform: {} with its NPU calibrated on {} ({} SMs){} by\n"
      "# tools/gpu-characterize, fitted by `acesim calibrate` (docs/gpu-calibration.md).\n"
      "# Fitted:\n",
      base_name, m.gpu_name, m.sm_count, m.date_utc.empty() ? "" : ", measured " + m.date_utc);
  for (const FittedParameter& p : c.parameters) {
    out += fmt::format("#   {} = {}: {}\n", p.key, p.text.empty() ? fmt_value(p.value) : p.text, p.how);
  }
  if (c.overlap_rows > 0) {
    out += fmt::format("# Checked: {} of {} overlapped GEMM times predicted within 10% (largest error {:.1f}%).\n",
                       c.overlap_within_10pct, c.overlap_rows, 100.0 * c.max_overlap_error);
  }
  out += "# Everything else comes from " + base_name + ".\n";
  bool header_comments = true;
  for (const std::string& line : lines) {
    // The base's own leading comment block describes the base, not this file.
    if (header_comments && (line.empty() || line[0] == '#')) continue;
    header_comments = false;
    out += line + "\n";
  }
  out += "npu:                      # calibrated (see the header)\n";
  out += fmt::format("  compute_units: {}\n", n.compute_units);
  out += fmt::format("  unit_TFLOPS: {}\n", fmt_value(n.unit_TFLOPS));
  out += fmt::format("  hbm_GBps: {}\n", fmt_value(n.hbm_GBps));
  if (n.hbm_capacity_GB > 0.0) out += fmt::format("  hbm_capacity_GB: {}\n", fmt_value(n.hbm_capacity_GB));
  out += fmt::format("  hbm_sharing: {}\n", to_string(n.hbm_sharing));
  if (n.hbm_sharing == HbmSharing::kStatic) out += fmt::format("  hbm_comm_share: {}\n", fmt_value(n.hbm_comm_share));
  out += "communication:\n";
  out += fmt::format("  executor: {}\n", n.executor);
  out += "  sm:\n";
  out += fmt::format("    units: {}\n", n.sm.units);
  out += fmt::format("    copy_GBps_per_unit: {}\n", fmt_value(n.sm.copy_GBps_per_unit));
  out += fmt::format("    reduce_GBps_per_unit: {}\n", fmt_value(n.sm.reduce_GBps_per_unit));
  out += fmt::format("    hbm_bytes_per_byte_sent: {{reduce-scatter: {}, all-gather: {}, all-to-all: {}}}\n",
                     fmt_value(n.sm.hbm_per_byte_reduce), fmt_value(n.sm.hbm_per_byte_gather),
                     fmt_value(n.sm.hbm_per_byte_alltoall));
  out += "  ace:\n";
  out += fmt::format("    sram: {}\n", n.ace.sram_bytes);
  out += fmt::format("    alu_GBps: {}\n", fmt_value(n.ace.alu_GBps));
  out += fmt::format("    dma_GBps: {}\n", fmt_value(n.ace.dma_GBps));
  // What we write must read back as a valid platform.
  parse_platform_yaml(out, "the calibrated platform");
  return out;
}

}  // namespace acesim
