// What a workload builder asks for a kernel's resources: the compute
// model's time (compute_model.h), or a measured one (kernel_times.h), as
// the endpoint's Kernel. The kernel holds the resource that bounds it for
// the whole of that time and the other at its nominal efficiency, so that
// communication sharing the NPU slows it as before (docs/model.md,
// "Endpoint").
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "compute/compute_model.h"
#include "compute/kernel_times.h"
#include "endpoint/endpoint.h"

namespace acesim {

class KernelPricer {
 public:
  // A model for the NPU's architecture (none without npu.arch) and the
  // measured times, if any.
  KernelPricer(const NpuConfig& npu, std::shared_ptr<const KernelTimes> measured);

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

 private:
  std::unique_ptr<ShapeModel> model_;
  std::shared_ptr<const KernelTimes> measured_;
  std::string gpu_;
  double peak_flops_;
  double hbm_Bps_;
  double tensor_efficiency_;
  double memory_efficiency_;
};

// A pricer for the NPU, or none where neither a model (npu.arch) nor
// measured times apply.
std::shared_ptr<const KernelPricer> make_kernel_pricer(const NpuConfig& npu, std::shared_ptr<const KernelTimes> measured = {});

// The GPU names a kernel-times file may give: every architecture's in the
// compute model's data file.
std::vector<std::string> known_gpus();

}  // namespace acesim
