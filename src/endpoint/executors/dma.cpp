// The dma executor: collective data moved by the GPU's copy engines, with no
// compute units (docs/model.md, "dma executor"): NVIDIA's copy engines as
// NCCL's copy-engine collectives drive them, AMD's SDMA engines as ConCCL
// and DMA collectives do. Each NPU's engines together move
// communication.dma.engines x GBps_per_engine bytes per second; every byte
// a phase sends is read from the sender's HBM and written to the receiver's
// by them. Each transfer step costs latency_ns (the copies' launch and the
// synchronisation on their completion), on top of the links'. Engines
// cannot reduce: a phase that reduces (reduce-scatter, all-reduce, reduce)
// runs its reductions as the sm executor's kernels do, on
// communication.sm.units compute units taken from compute while the
// collective's reducing work is in flight, at reduce_GBps_per_unit, reading
// what arrived and the local data and writing the sum.
//
// A collective its library runs as kernels (LibraryKernels::units > 0: NCCL's
// reducing collectives, which NCCL 2.28 has no copy-engine path for) runs as
// the sm executor runs it: its units held, its HBM traffic, no engine and no
// engine latency (collective/collective_engine.cpp asks step_latency_ps only
// of collectives the engines move).
#include <cmath>
#include <memory>
#include <stdexcept>
#include <unordered_map>

#include <fmt/format.h>

#include "endpoint/endpoint.h"
#include "endpoint/executor_registry.h"
#include "endpoint/executors/held_units.h"
#include "engine/key.h"

namespace acesim {
namespace {

// HBM bytes a reduction moves per byte reduced: what arrived and the local
// part read, the sum written.
constexpr double kReduceHbmPerByte = 3.0;

class DmaExecutor final : public Executor {
 public:
  explicit DmaExecutor(Endpoints& ep)
      : Executor(ep), dma_(ep.config().dma), sm_(ep.config().sm), units_(ep, sm_.reduce_GBps_per_unit) {}

  void add_npu(std::size_t, const std::string& prefix) override {
    engines_.push_back(endpoints().sim().fluid().add_resource(prefix + "dma.engines", dma_.engines * dma_.GBps_per_engine * 1e9));
    units_.add_npu(prefix + "dma.reduce_units");
  }

  void phase_load(const PhaseCost& cost, std::span<const Rank> members, const TransferShape& shape,
                  double phase_bytes, EndpointLoad& out) override {
    Endpoints& ep = endpoints();
    if (cost.kernels.units > 0) {
      kernel_load(cost, members, shape, phase_bytes, out);
      return;
    }
    const double share = reduce_share(cost.op);
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (!ep.simulated(members[i])) continue;
      Endpoints::Npu& n = ep.npu(members[i]);
      const double sent = shape.originated[i] * phase_bytes;
      const double received = shape.terminated[i] * phase_bytes;
      const double reduced = received * share;
      const double hbm = sent + received + kReduceHbmPerByte * reduced;
      out.demands.push_back({engines_[n.index], sent});
      out.demands.push_back({n.hbm_comm, hbm});
      n.stats.hbm_bytes_comm += hbm;
      if (reduced > 0.0) {
        out.demands.push_back({units_.resource(n), reduced});
        units_.hold(cost.collective, members[i], sm_.units);  // from its first reducing phase on
      }
    }
  }

  void phase_begin(std::uint32_t collective, std::span<const Rank> members, int units) override {
    for (Rank r : members) {
      if (!endpoints().simulated(r)) continue;
      units_.begin(collective, r);
      if (units > 0) units_.hold(collective, r, units);  // the library's kernels
    }
  }

  void phase_end(std::uint32_t collective, std::span<const Rank> members) override {
    for (Rank r : members) {
      if (endpoints().simulated(r)) units_.end(collective, r);
    }
  }

  TimePs step_latency_ps() const override { return dma_.latency_ps; }
  TimePs command_issue_ps() const override { return dma_.host_issue_ps; }
  bool copy_engine_collectives() const override { return true; }

  void local_transfer_usage(Rank r, LocalTransfer kind, std::vector<Usage>& out) override {
    if (kind != LocalTransfer::kDma) Executor::local_transfer_usage(r, kind, out);  // copy engines only
    Endpoints::Npu& n = endpoints().npu(r);
    out.push_back({engines_[n.index], 1.0});
    out.push_back({n.hbm_comm, 2.0});
  }

 private:
  // The sm executor's pricing of a library's kernels (its units hold the
  // reduce rate here: a byte at the copy rate costs copy / reduce of it).
  void kernel_load(const PhaseCost& cost, std::span<const Rank> members, const TransferShape& shape, double phase_bytes,
                   EndpointLoad& out) {
    Endpoints& ep = endpoints();
    const double unit_per_byte = sm_unit_cost_per_byte(sm_, cost.op) * sm_.reduce_GBps_per_unit / sm_.copy_GBps_per_unit;
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (!ep.simulated(members[i])) continue;
      Endpoints::Npu& n = ep.npu(members[i]);
      const double sent = shape.originated[i] * phase_bytes;
      const double hbm = sent * cost.kernels.hbm_per_byte_sent;
      out.demands.push_back({n.hbm_comm, hbm});
      out.demands.push_back({units_.resource(n), sent * unit_per_byte});
      n.stats.hbm_bytes_comm += hbm;
    }
  }

  DmaParams dma_;
  SmParams sm_;
  HeldUnits units_;
  std::vector<ResourceId> engines_;  // per NPU index: bytes/s of its copy engines
};

}  // namespace

void register_dma_executor(ExecutorRegistry& registry) {
  ExecutorEntry e;
  e.name = "dma";
  e.aliases = {"copy-engine", "ce", "sdma"};
  e.help = "collective data moved by the GPU's copy engines, no compute units; reductions on compute units (copy-engine / SDMA collectives)";
  e.make = [](Endpoints& ep) -> std::unique_ptr<Executor> { return std::make_unique<DmaExecutor>(ep); };
  e.describe = [](const NpuConfig& npu) {
    const std::string issue = npu.dma.host_issue_ps > 0
                                  ? fmt::format(", the host's {:g} us a further command", static_cast<double>(npu.dma.host_issue_ps) / 1e6)
                                  : std::string();
    return fmt::format(" ({} copy engines x {:g} GB/s, {:g} us a step{}; reductions on {} of {} units)", npu.dma.engines,
                       npu.dma.GBps_per_engine, static_cast<double>(npu.dma.latency_ps) / 1e6, issue, npu.sm.units,
                       npu.compute_units);
  };
  registry.add(std::move(e));
}

}  // namespace acesim
