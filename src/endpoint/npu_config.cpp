#include "endpoint/npu_config.h"

#include <cmath>

#include "endpoint/executor_registry.h"
#include "registry/registry.h"

namespace acesim {
namespace {
bool positive(double v) { return v > 0.0 && std::isfinite(v); }
}  // namespace

std::string_view to_string(HbmSharing h) {
  switch (h) {
    case HbmSharing::kFair: return "fair";
    case HbmSharing::kComputePriority: return "compute-priority";
    case HbmSharing::kCommPriority: return "communication-priority";
    case HbmSharing::kStatic: return "static";
  }
  return "?";
}

std::optional<HbmSharing> parse_hbm_sharing(std::string_view s) {
  const std::string n = normalize_name(s);
  if (n == "fair") return HbmSharing::kFair;
  if (n == "computepriority") return HbmSharing::kComputePriority;
  if (n == "communicationpriority" || n == "commpriority") return HbmSharing::kCommPriority;
  if (n == "static") return HbmSharing::kStatic;
  return std::nullopt;
}

std::vector<std::string> hbm_sharing_names() { return {"fair", "compute-priority", "communication-priority", "static"}; }

NpuConfig default_npu() { return NpuConfig{}; }

std::string precision_unsupported(const NpuConfig& npu, int bytes_per_element, bool block_scaled) {
  if (block_scaled && !npu.mxfp8) {
    return "mxfp8 needs block-scaled FP8 tensor cores, which this platform's GPU lacks (npu.mxfp8 is false, as for H100 "
           "and H200; B200 and GB200 have them)";
  }
  if (bytes_per_element != 1 || npu.fp8) return {};
  return "fp8 needs FP8 tensor cores, which this platform's GPU lacks (npu.fp8 is false, as for A100 and older GPUs; "
         "H100, H200 and B200 have them)";
}

std::string validate(const NpuConfig& npu) {
  if (executor_registry().find(npu.executor) == nullptr) return executor_registry().unknown(npu.executor);
  if (npu.compute_units < 1) return "npu.compute_units must be >= 1";
  if (!positive(npu.unit_TFLOPS)) return "npu.unit_TFLOPS must be > 0";
  if (!positive(npu.hbm_GBps)) return "npu.hbm_GBps must be > 0";
  if (!(npu.hbm_capacity_GB >= 0.0 && std::isfinite(npu.hbm_capacity_GB))) {
    return "npu.hbm_capacity_GB must be >= 0 (0: unknown)";
  }
  if (!(npu.hbm_comm_share > 0.0 && npu.hbm_comm_share < 1.0)) return "npu.hbm_comm_share must be in (0, 1)";
  if (!(npu.timed_kernel_hbm_fraction >= 0.0 && npu.timed_kernel_hbm_fraction <= 1.0)) {
    return "npu.timed_kernel_hbm_fraction must be in [0, 1]";
  }
  if (npu.sm.units < 1) return "communication.sm.units must be >= 1";
  if (npu.sm.units > npu.compute_units) {
    return "communication.sm.units (" + std::to_string(npu.sm.units) + ") is more than the NPU's " +
           std::to_string(npu.compute_units) + " compute units";
  }
  if (!positive(npu.sm.copy_GBps_per_unit)) return "communication.sm.copy_GBps_per_unit must be > 0";
  if (!positive(npu.sm.reduce_GBps_per_unit)) return "communication.sm.reduce_GBps_per_unit must be > 0";
  if (!(npu.sm.hbm_per_byte_reduce >= 0.0) || !(npu.sm.hbm_per_byte_gather >= 0.0) ||
      !(npu.sm.hbm_per_byte_alltoall >= 0.0)) {
    return "communication.sm.hbm_bytes_per_byte_sent values must be >= 0";
  }
  if (npu.ace.sram_bytes < 1) return "communication.ace.sram must be > 0";
  if (!positive(npu.ace.alu_GBps)) return "communication.ace.alu_GBps must be > 0";
  if (!positive(npu.ace.dma_GBps)) return "communication.ace.dma_GBps must be > 0";
  if (npu.dma.engines < 0) return "communication.dma.engines must be >= 0";
  if (npu.dma.engines > 0 && !positive(npu.dma.GBps_per_engine)) return "communication.dma.GBps_per_engine must be > 0";
  if (npu.dma.latency_ps < 0) return "communication.dma.latency_ns must be >= 0";
  if (npu.executor == "dma" && npu.dma.engines == 0) {
    return "executor dma: the platform declares no copy engines (communication.dma.engines, GBps_per_engine, latency_ns)";
  }
  return {};
}

double sm_hbm_per_byte(const SmParams& sm, CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kReduceScatter: return sm.hbm_per_byte_reduce;
    case CollectiveOp::kAllGather: return sm.hbm_per_byte_gather;
    case CollectiveOp::kAllReduce: return 0.5 * (sm.hbm_per_byte_reduce + sm.hbm_per_byte_gather);
    case CollectiveOp::kAllToAll: return sm.hbm_per_byte_alltoall;
    // Rooted phases move data without reducing it, as an all-gather does;
    // a reduce's reductions are in its reduce-scatter phase.
    case CollectiveOp::kReduce: return sm.hbm_per_byte_reduce;
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kGather:
    case CollectiveOp::kScatter: return sm.hbm_per_byte_gather;
  }
  return 0.0;
}

double sm_unit_cost_per_byte(const SmParams& sm, CollectiveOp op) {
  const double reduce = sm.copy_GBps_per_unit / sm.reduce_GBps_per_unit;
  switch (op) {
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kReduce: return reduce;
    case CollectiveOp::kAllReduce: return 0.5 * (reduce + 1.0);
    case CollectiveOp::kAllGather:
    case CollectiveOp::kAllToAll:
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kGather:
    case CollectiveOp::kScatter: return 1.0;
  }
  return 1.0;
}

double reduce_share(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kReduce: return 1.0;
    case CollectiveOp::kAllReduce: return 0.5;
    case CollectiveOp::kAllGather:
    case CollectiveOp::kAllToAll:
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kGather:
    case CollectiveOp::kScatter: return 0.0;
  }
  return 0.0;
}

}  // namespace acesim
