// What a workload builder asks for a kernel's resources: the compute
// model's time (compute_model.h), or a measured one (kernel_times.h), as
// the endpoint's Kernel. The kernel holds the resource that bounds it for
// the whole of that time and the other at its nominal efficiency, so that
// communication sharing the NPU slows it as before (docs/model.md,
// "Endpoint").
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>

#include "compute/compute_model.h"
#include "compute/in_situ.h"
#include "compute/kernel_times.h"
#include "endpoint/endpoint.h"

namespace acesim {

// The in-situ parameters a pricer applies (in_situ.h): their values for the
// NPU's architecture and the run's precision, and the job's GPUs, over which
// a synchronous step waits for the slowest.
struct InSituSetting {
  InSitu values;
  long long gpus = 1;
  std::string file;  // the calibration file; empty: none (every value neutral)
};

class KernelPricer {
 public:
  // A model for the NPU's architecture (none without npu.arch) and the
  // measured times, if any; in situ, each kernel's time times its kind's
  // in-situ factor and the stragglers' (in_situ.h).
  KernelPricer(const NpuConfig& npu, std::shared_ptr<const KernelTimes> measured, InSituSetting in_situ = {});

  struct Priced {
    Kernel kernel;
    bool measured = false;
  };
  // None when neither the file nor a model prices it (no npu.arch): the
  // builder keeps its constant efficiencies.
  std::optional<Priced> price(const KernelDesc& k) const;
  // The endpoint's kernel taking `seconds` alone.
  Kernel kernel(const KernelDesc& k, double seconds) const;
  const ComputeModel* model() const { return model_.get(); }
  const KernelTimes* measured() const { return measured_.get(); }
  const InSituSetting& in_situ() const { return in_situ_; }
  // What a kernel of this kind takes in situ over its isolated time.
  double in_situ_factor(KernelKind kind) const;
  // Host work per step that the GPUs wait for, in picoseconds.
  std::int64_t step_fixed_ps() const;

 private:
  std::unique_ptr<ShapeModel> model_;
  std::shared_ptr<const KernelTimes> measured_;
  std::string gpu_;
  double peak_flops_;
  double hbm_Bps_;
  double tensor_efficiency_;
  double memory_efficiency_;
  InSituSetting in_situ_;
  double straggler_factor_ = 1.0;
  // What price() gave for each kernel asked for: a step repeats a few dozen
  // kernels over every layer and micro-batch. Threads may share a pricer.
  using Key = std::tuple<KernelKind, Dtype, double, double, double, double, int, int, bool, AttentionImpl, double, double>;
  mutable std::mutex mu_;
  mutable std::map<Key, std::optional<Priced>> priced_;
  std::optional<Priced> price_uncached(const KernelDesc& k) const;
};

// A pricer for the NPU, or none where neither a model (npu.arch) nor
// measured times apply.
// A run's in-situ setting: the calibration file's values for the NPU's
// architecture and the run's precision (1 byte an element: fp8, else bf16)
// over `gpus` GPUs; neutral without a file. InputError when the file has no
// entry that applies to the architecture (a calibration for another GPU).
InSituSetting in_situ_setting(const std::string& calibration_file, const NpuConfig& npu, int bytes_per_element, long long gpus);

// A calibration's values apply only to kernels a model or a file prices:
// InputError when the NPU has neither.
std::shared_ptr<const KernelPricer> make_kernel_pricer(const NpuConfig& npu, std::shared_ptr<const KernelTimes> measured = {},
                                                       InSituSetting in_situ = {});

// The GPU names a kernel-times file may give: every architecture's in the
// compute model's data file.
std::vector<std::string> known_gpus();

}  // namespace acesim
