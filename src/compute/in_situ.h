// In-situ parameters (docs/in-situ.md): what a real training stack loses
// beyond its kernels as isolated benchmarks time them, as a few named
// parameters, each with a physical meaning and a plausible range whose
// source docs/in-situ-sources.md gives:
//   tensor         in-situ over isolated time of the tensor-core kernels
//                  (GEMMs, fused attention): caches, clocks under sustained
//                  power, collectives beside them beyond the SMs and HBM
//                  bandwidth the endpoint already takes from them
//   memory         the same for memory-bound kernels
//   straggler_cv   the spread of a GPU's compute time around the mean
//                  (coefficient of variation); a synchronous step waits for
//                  the slowest of the job's N GPUs, so compute takes
//                  1 + straggler_cv x E[max of N standard normals] times as
//                  long: stragglers grow with the job
//   step_fixed_ms  per step, host work the GPUs wait for (data loading not
//                  hidden, logging, the loss's and gradient norm's syncs)
// They are applied in one place, the kernel pricer (kernel_pricer.h), and
// the LLM step's graph takes step_fixed_ms from it. Without a calibration
// every parameter is neutral and results are those of the isolated kernels.
//
// A calibration file (YAML) gives values for every GPU architecture or for
// one, optionally for one precision; each parameter takes the value of the
// most specific entry that gives it (architecture and precision, then
// architecture, then precision, then neither).
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace acesim {

enum class InSituParam : std::uint8_t { kTensor, kMemory, kStragglerCv, kStepFixedMs };
inline constexpr int kInSituParams = 4;

struct InSituParamInfo {
  InSituParam param;
  const char* name;     // as the calibration file writes it
  const char* unit;     // "x" for a multiplier
  double neutral;       // the value that changes nothing
  double low, high;     // the plausible range (docs/in-situ-sources.md)
  const char* meaning;  // one line
};
const std::array<InSituParamInfo, kInSituParams>& in_situ_params();
const InSituParamInfo& info(InSituParam p);

// Values for one GPU architecture and precision.
struct InSitu {
  std::array<double, kInSituParams> value{1.0, 1.0, 0.0, 0.0};
  double operator[](InSituParam p) const { return value[static_cast<std::size_t>(p)]; }
  double& operator[](InSituParam p) { return value[static_cast<std::size_t>(p)]; }
  bool neutral() const;
};

// E[max of n independent standard normals] (0 for n = 1), by quadrature.
double expected_max_normal(long long n);

// The calibration as read: its entries, in file order.
struct InSituEntry {
  std::string arch;       // empty: every architecture
  std::string precision;  // empty: every precision ("bf16", "fp8")
  std::array<std::optional<double>, kInSituParams> value;
  int line = 0;
};

struct InSituCalibration {
  std::string file;    // where it was read ("" built in)
  std::string source;  // what it was fitted to, as the file says
  std::vector<InSituEntry> entries;

  // The values for an architecture and precision ("bf16", "fp8"); neutral
  // where no entry gives one.
  InSitu resolve(std::string_view arch, std::string_view precision) const;
  // Whether any entry applies to this architecture.
  bool covers(std::string_view arch) const;
};

// The calibration fitted to the repository's published runs, shipped in the
// binary: `--calibration published-runs` (`acesim calibrate runs
// tests/data/llm-runs/runs.csv --out presets/calibration/published-runs.yaml`
// writes it; docs/validation.md, section 7, gives its errors).
inline constexpr const char* kPublishedRunsCalibration = "published-runs";
inline constexpr const char* kPublishedRunsCalibrationFile = "presets/calibration/published-runs.yaml";

// Reads a calibration file (or the shipped one by its name, above):
// InputError naming file, line and key for what
// is wrong (an unknown parameter, architecture or precision, a value outside
// its plausible range, two entries for one architecture and precision).
InSituCalibration load_calibration(const std::string& file);
InSituCalibration parse_calibration(std::string_view yaml_text, const std::string& file);
// The file's text for these entries (what `acesim calibrate runs` writes).
std::string calibration_yaml(const InSituCalibration& c);

// What a report says: "tensor 1.08x, memory 1.10x, straggler_cv 0.004
// (compute 1.013x at 8,192 GPUs), step_fixed_ms 12" for the values that
// are not neutral; "neutral" when none is.
std::string in_situ_text(const InSitu& s, long long gpus);

}  // namespace acesim
