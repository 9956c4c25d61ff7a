// The sm executor: collective kernels on the compute units, data staged in
// HBM at every step (NCCL-like; docs/model.md, "sm executor"). A collective
// holds `communication.sm.units` compute units on an NPU while any of its
// phases runs there, or as many as its library says (NCCL: one per
// channel); the held units move bytes at copy_GBps_per_unit each.
#include <algorithm>
#include <memory>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "endpoint/endpoint.h"
#include "endpoint/executor_registry.h"
#include "endpoint/executors/held_units.h"
#include "engine/key.h"

namespace acesim {
namespace {

class SmExecutor final : public Executor {
 public:
  explicit SmExecutor(Endpoints& ep) : Executor(ep), sm_(ep.config().sm), units_(ep, sm_.copy_GBps_per_unit) {}

  void add_npu(std::size_t, const std::string& prefix) override { units_.add_npu(prefix + "sm.units"); }

  void phase_load(const PhaseCost& cost, std::span<const Rank> members, const TransferShape& shape,
                  double phase_bytes, EndpointLoad& out) override {
    Endpoints& ep = endpoints();
    const double hbm_per_byte =
        cost.kernels.hbm_per_byte_sent > 0.0 ? cost.kernels.hbm_per_byte_sent : sm_hbm_per_byte(sm_, cost.op);
    const double unit_per_byte = sm_unit_cost_per_byte(sm_, cost.op);
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (!ep.simulated(members[i])) continue;
      Endpoints::Npu& n = ep.npu(members[i]);
      const double sent = shape.originated[i] * phase_bytes;
      const double hbm = sent * hbm_per_byte;
      out.demands.push_back({n.hbm_comm, hbm});
      out.demands.push_back({units_.resource(n), sent * unit_per_byte});
      n.stats.hbm_bytes_comm += hbm;
    }
  }

  void phase_begin(std::uint32_t collective, std::span<const Rank> members, int units) override {
    const int held = units > 0 ? units : sm_.units;
    for (Rank r : members) {
      if (!endpoints().simulated(r)) continue;
      units_.begin(collective, r);
      units_.hold(collective, r, held);
    }
  }

  void phase_end(std::uint32_t collective, std::span<const Rank> members) override {
    for (Rank r : members) {
      if (endpoints().simulated(r)) units_.end(collective, r);
    }
  }

  void hold_units(Rank r, int units) override {
    Endpoints::Npu& n = endpoints().npu(r);
    units_.request(n, units_.requested(n) + units);
  }

  void local_transfer_usage(Rank r, LocalTransfer kind, std::vector<Usage>& out) override {
    if (kind == LocalTransfer::kDma) Executor::local_transfer_usage(r, kind, out);  // no DMA engine
    Endpoints::Npu& n = endpoints().npu(r);
    if (n.units_held <= 0) throw std::invalid_argument("a copy or reduce kernel needs units held (hold_units)");
    const bool reduce = kind == LocalTransfer::kReduce;
    out.push_back({units_.resource(n), reduce ? sm_.copy_GBps_per_unit / sm_.reduce_GBps_per_unit : 1.0});
    out.push_back({n.hbm_comm, reduce ? 3.0 : 2.0});
  }

 private:
  SmParams sm_;
  HeldUnits units_;
};

}  // namespace

void register_sm_executor(ExecutorRegistry& registry) {
  ExecutorEntry e;
  e.name = "sm";
  e.help = "collective kernels on the compute units, data staged in HBM (NCCL-like)";
  e.make = [](Endpoints& ep) -> std::unique_ptr<Executor> { return std::make_unique<SmExecutor>(ep); };
  e.describe = [](const NpuConfig& npu) { return fmt::format(" ({} of {} units)", npu.sm.units, npu.compute_units); };
  registry.add(std::move(e));
}

}  // namespace acesim
