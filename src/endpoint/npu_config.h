// The NPU at each endpoint: compute units, HBM, and the executor that runs
// collective communication (see docs/model.md, "Endpoint").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "algorithm/collective_op.h"
#include "engine/time.h"

namespace acesim {

enum class HbmSharing {
  kFair,           // compute and communication progress at equal shares of their own full speed
  kComputePriority,
  kCommPriority,
  kStatic,         // a fixed fraction of HBM bandwidth reserved for communication
};

std::string_view to_string(HbmSharing h);
std::optional<HbmSharing> parse_hbm_sharing(std::string_view s);
std::vector<std::string> hbm_sharing_names();

struct SmParams {
  int units = 8;                       // compute units a collective's kernels hold while it runs
  double copy_GBps_per_unit = 20.0;    // bytes sent per second per unit, copy-type steps
  double reduce_GBps_per_unit = 15.0;  // bytes sent per second per unit, reduce-type steps
  // HBM bytes per byte sent (ACE.md's memory-traffic model).
  double hbm_per_byte_reduce = 5.0;    // reduce-scatter step: write recv, read recv+local, write sum, read to send
  double hbm_per_byte_gather = 2.0;    // all-gather step: write recv, read to forward
  double hbm_per_byte_alltoall = 2.0;  // all-to-all: read to send, write on receive
};

struct AceParams {
  std::uint64_t sram_bytes = 4ull << 20;
  double alu_GBps = 400.0;  // reduction throughput, bytes reduced per second
  double dma_GBps = 400.0;  // HBM <-> SRAM
};

// The GPU's copy engines (DMA): what the dma executor moves collective data
// with (docs/model.md, "dma executor"). None by default: a platform
// declares them.
struct DmaParams {
  int engines = 0;                 // engines per GPU that move peer data
  double GBps_per_engine = 0.0;    // bytes each moves per second
  TimePs latency_ps = 0;           // per transfer step: the copies' launch and their completion's synchronisation
  // The host's time to build and enqueue one copy command and ring its
  // engine's doorbell, paid in series for each further command a GPU
  // issues in a step (one per peer: ConCCL's and DMA-Latte's host-driven
  // collectives); 0 where a step's copies go as one batch (NCCL 2.28).
  TimePs host_issue_ps = 0;
};

struct NpuConfig {
  int compute_units = 80;
  double unit_TFLOPS = 1.5;  // per compute unit
  double hbm_GBps = 900.0;
  // HBM capacity, 10^9 bytes; 0 = unknown (nothing is checked against it).
  double hbm_capacity_GB = 0.0;
  HbmSharing hbm_sharing = HbmSharing::kFair;
  double hbm_comm_share = 0.5;  // static sharing only
  // Kernels given only as a time ran on all units with this HBM demand
  // (fraction of peak bandwidth); fixed_kernel_times keeps them as given.
  double timed_kernel_hbm_fraction = 0.5;
  bool fixed_kernel_times = false;
  // FP8 tensor cores (Hopper, Blackwell): what --precision fp8 needs.
  bool fp8 = false;
  // Block-scaled FP8 tensor cores (Blackwell's: MXFP8, a scale per 32
  // values), what --precision mxfp8 needs. Those tensor cores also take FP8
  // operands in either layout, so per-tensor FP8 keeps no transposed copies.
  bool mxfp8 = false;
  // The compute model (compute/compute_model.h): the architecture whose
  // kernel constants price LLM kernels by shape (empty: every kernel at
  // the constant efficiencies of default_llm_efficiency()), the GPU's name
  // as kernel-times files give it, and the clocks: the one the datasheet's
  // peak is quoted at and the one sustained under the power limit (0: the
  // measured GPU's, whose constants the architecture holds).
  std::string arch;
  std::string gpu;
  double peak_clock_MHz = 0.0;
  double sustained_clock_MHz = 0.0;
  // The executor's canonical name in executor_registry() (executor_registry.h).
  std::string executor = "ideal";
  SmParams sm;
  AceParams ace;
  DmaParams dma;

  double peak_flops() const { return compute_units * unit_TFLOPS * 1e12; }
  // Sustained over peak clock; 0 when the clocks are not given.
  double sustained_clock_ratio() const {
    return peak_clock_MHz > 0.0 && sustained_clock_MHz > 0.0 ? sustained_clock_MHz / peak_clock_MHz : 0.0;
  }
};

// The default NPU (a V100/TPU-v3-era accelerator; docs/model.md says why).
NpuConfig default_npu();

// Why the NPU cannot train at `bytes_per_element` per value (1: fp8;
// `block_scaled`: MXFP8), or an empty string.
std::string precision_unsupported(const NpuConfig& npu, int bytes_per_element, bool block_scaled = false);

// A description of the first problem (an unknown executor included), or an
// empty string.
std::string validate(const NpuConfig& npu);

// HBM bytes per byte sent by the sm executor for a phase running `op`; an
// all-reduce phase is half reduce-scatter, half all-gather.
double sm_hbm_per_byte(const SmParams& sm, CollectiveOp op);
// Compute-unit time per byte sent relative to a copy: reduce steps are slower.
double sm_unit_cost_per_byte(const SmParams& sm, CollectiveOp op);
// Share of received bytes that must be reduced (ACE's ALUs).
double reduce_share(CollectiveOp op);

}  // namespace acesim
