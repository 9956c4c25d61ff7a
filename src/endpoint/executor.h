// An endpoint executor: what runs collective communication on each NPU
// (ideal, sm, ace, dma; docs/model.md, "Endpoint"). The collective engine and
// point-to-point messages reach it only through Endpoints, which owns the
// NPUs' compute and HBM; an executor adds its own resources to each NPU and
// answers five questions:
//   - what a phase costs the endpoints (phase_load: HBM, units, DMA, ALUs),
//   - what it holds while a collective runs on an NPU (phase_begin/end),
//   - whether a chunk may enter a collective now (try_enter) and what it
//     gives back when it leaves (leave),
//   - whether a collective's chunks fit at all (unfit_reason),
//   - how local transfers run, for the single-NPU characterization.
// Every hook has a default that costs and holds nothing (the ideal
// executor), so an executor overrides only what it models.
//
// Adding one: a file in src/endpoint/executors/ that defines a class derived
// from Executor and a `register_<name>_executor(ExecutorRegistry&)`, and one
// line in register_builtin_executors() (executor_registry.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "algorithm/collective_op.h"
#include "engine/fluid_model.h"
#include "network/network.h"
#include "network/transfer_shape.h"
#include "topology/topology.h"

namespace acesim {

class Endpoints;

// What the library that runs a collective says of its kernels, where it
// says anything (NCCL: one compute unit per channel, its protocol's HBM
// traffic, its data streamed through fixed buffers in slices; see
// collective/nccl_endpoint.h). Zeros: the executor's own settings, as for
// the acesim library's plans.
struct LibraryKernels {
  int units = 0;                   // compute units its kernels hold (sm)
  double hbm_per_byte_sent = 0.0;  // HBM bytes per byte put on the links (sm)
  bool streamed = false;           // never whole at an endpoint: only slices in flight (ace's SRAM)
};

// What one phase of one chunk costs each member's endpoint.
struct PhaseCost {
  CollectiveOp op;       // the phase's operation
  std::uint32_t collective = 0;  // the key phase_begin was given for this phase
  bool first = false;    // the chunk enters the collective in this phase
  bool last = false;     // ... and leaves it at the end of this one
  double in_bytes = 0.0;   // the chunk's input at one NPU
  double out_bytes = 0.0;  // the chunk's output at one NPU
  LibraryKernels kernels;
};

// A chunk of a collective at one NPU: its input (as it enters) and its
// output (as it leaves), in bytes.
struct ChunkBytes {
  double in = 0.0;
  double out = 0.0;
  bool streamed = false;  // LibraryKernels::streamed
};

// Transfers inside one NPU (the single-GPU characterization): a copy (read
// 1, write 1 HBM byte per byte) or a reduction (read 2, write 1) by kernels
// on the compute units, or a copy by an offload engine's DMA.
enum class LocalTransfer { kCopy, kReduce, kDma };
std::string_view to_string(LocalTransfer t);

class Executor {
 public:
  // `endpoints` outlives the executor (it owns it).
  explicit Executor(Endpoints& endpoints) : ep_(endpoints) {}
  virtual ~Executor() = default;
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // An NPU is touched for the first time: its compute and HBM resources
  // exist; add the executor's own (names start with `prefix`, "npu3.").
  // `npu` counts touched NPUs from 0 (Endpoints::Npu::index): executors
  // keep per-NPU state in that order.
  virtual void add_npu(std::size_t npu, const std::string& prefix);

  // Appends to `out.demands` what a phase of `phase_bytes` (laid out by
  // `shape`, member i of `members` is shape's member i) costs each simulated
  // member. `out` arrives cleared, with the communication priority class.
  virtual void phase_load(const PhaseCost& cost, std::span<const Rank> members, const TransferShape& shape,
                          double phase_bytes, EndpointLoad& out);
  // A phase of collective `collective` (or a message, for point-to-point
  // keys) starts / ends on `members`: what an executor holds while a
  // collective runs there. `units`: LibraryKernels::units (0: the
  // executor's setting); a collective's phases all say the same.
  virtual void phase_begin(std::uint32_t collective, std::span<const Rank> members, int units);
  virtual void phase_end(std::uint32_t collective, std::span<const Rank> members);

  // What every transfer step costs on top of the links' latency (an
  // engine's launch and synchronisation); 0 by default.
  virtual TimePs step_latency_ps() const { return 0; }
  // The host's serial cost per further copy command a GPU issues in one
  // step (the dma executor's host_issue_ps).
  virtual TimePs command_issue_ps() const { return 0; }
  // Whether the NPU's copy engines run a library's copy-only collectives
  // (NCCL's copy-engine all-gather and all-to-all inside one NVLink domain,
  // collective/collective_engine.cpp); false by default.
  virtual bool copy_engine_collectives() const { return false; }

  // Why a collective whose chunks have these bytes can never run (one line
  // for the user), or an empty string.
  virtual std::string unfit_reason(const ChunkBytes& chunk) const;
  // Into how many pieces a chunk is streamed (an engine whose buffer cannot
  // hold a whole chunk); 1 by default. Each piece runs as a chunk of its own.
  virtual int pieces(const ChunkBytes& chunk) const;
  // Whether try_enter can refuse; when false, the collective engine skips
  // admission altogether.
  virtual bool gates_entry() const { return false; }
  // A chunk enters a collective on `members`: reserves what it holds until
  // it leaves, on every simulated member or on none (false: it waits).
  virtual bool try_enter(std::span<const Rank> members, const ChunkBytes& chunk);
  // A chunk has left its collective at `rank`. True when that freed room a
  // waiting chunk may need.
  virtual bool leave(Rank rank, const ChunkBytes& chunk);
  // What chunks refused by try_enter wait for, for stuck-run reports.
  virtual std::string_view entry_resource() const { return {}; }

  // Single-NPU characterization: `units` more (negative: fewer) compute
  // units held by communication kernels on `rank` outside any collective.
  virtual void hold_units(Rank rank, int units);
  // Fills `out` with the resources a local transfer uses per byte moved.
  // Throws std::invalid_argument when this executor cannot run it.
  virtual void local_transfer_usage(Rank rank, LocalTransfer kind, std::vector<Usage>& out);

 protected:
  Endpoints& endpoints() const { return ep_; }

 private:
  Endpoints& ep_;
};

}  // namespace acesim
