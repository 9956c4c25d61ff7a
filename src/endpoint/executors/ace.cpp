// The ace executor: the offload engine of the ACE paper. A chunk is read
// from HBM once as it enters a collective (DMA) and written once as it
// leaves; in between it stays in the engine's SRAM, and reductions run on
// its ALUs. A chunk holds its footprint of SRAM on every member from entry
// to exit, so SRAM bounds the chunks in flight (docs/model.md, "ace
// executor").
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "config/units.h"
#include "endpoint/endpoint.h"
#include "endpoint/executor_registry.h"

namespace acesim {
namespace {

// SRAM a chunk holds at each NPU from entry to exit. A streamed chunk (a
// library's pipeline: NCCL's channels and slices) never sits whole in the
// SRAM: its slices cycle through a buffer of at most half of it, the other
// half left to a second collective (docs/model.md, "ace executor").
double footprint(const ChunkBytes& chunk, double sram) {
  const double whole = std::max(chunk.in, chunk.out);
  return chunk.streamed ? std::min(whole, sram / 2.0) : whole;
}

class AceExecutor final : public Executor {
 public:
  explicit AceExecutor(Endpoints& ep) : Executor(ep), ace_(ep.config().ace) {}

  // NPUs come in index order: npus_[Npu::index].
  void add_npu(std::size_t, const std::string& prefix) override {
    FluidModel& f = endpoints().sim().fluid();
    State s;
    s.dma = f.add_resource(prefix + "ace.dma", ace_.dma_GBps * 1e9);
    s.alu = f.add_resource(prefix + "ace.alu", ace_.alu_GBps * 1e9);
    npus_.push_back(s);
  }

  void phase_load(const PhaseCost& cost, std::span<const Rank> members, const TransferShape& shape,
                  double phase_bytes, EndpointLoad& out) override {
    Endpoints& ep = endpoints();
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (!ep.simulated(members[i])) continue;
      Endpoints::Npu& n = ep.npu(members[i]);
      const State& s = npus_[n.index];
      const double received = shape.terminated[i] * phase_bytes;
      // HBM read once as the chunk enters, written once as it leaves.
      double hbm = 0.0;
      if (cost.first) hbm += cost.in_bytes;
      if (cost.last) hbm += cost.out_bytes;
      if (hbm > 0.0) {
        out.demands.push_back({n.hbm_comm, hbm});
        out.demands.push_back({s.dma, hbm});
      }
      const double reduced = received * reduce_share(cost.op);
      if (reduced > 0.0) out.demands.push_back({s.alu, reduced});
      n.stats.hbm_bytes_comm += hbm;
    }
  }

  std::string unfit_reason(const ChunkBytes& chunk) const override {
    const double f = footprint(chunk, sram());
    if (f <= sram()) return {};
    return "ace: a chunk of " + std::to_string(static_cast<long long>(std::ceil(f))) +
           " bytes per NPU does not fit the ACE SRAM (communication.ace.sram = " + std::to_string(ace_.sram_bytes) +
           " bytes); split collectives into more chunks (collectives.chunks, collectives.max_chunk_bytes or --chunks)";
  }

  // A chunk larger than the SRAM streams through it in pieces of at most
  // half the SRAM, so that the DMA fills one piece while the previous one
  // is on the network (double buffering): k = ceil(footprint / (SRAM / 2)).
  // A chunk that fits runs whole, as before.
  int pieces(const ChunkBytes& chunk) const override {
    const double f = footprint(chunk, sram());
    if (f <= sram()) return 1;
    const double k = std::ceil(f / (sram() / 2.0));
    return k > 2e9 ? std::numeric_limits<int>::max() : static_cast<int>(k);
  }

  bool gates_entry() const override { return true; }

  bool try_enter(std::span<const Rank> members, const ChunkBytes& chunk) override {
    Endpoints& ep = endpoints();
    const double bytes = footprint(chunk, sram());
    const double cap = sram();
    for (Rank r : members) {
      if (ep.simulated(r) && npus_[ep.npu(r).index].sram_used + bytes > cap) return false;
    }
    for (Rank r : members) {
      if (ep.simulated(r)) npus_[ep.npu(r).index].sram_used += bytes;
    }
    return true;
  }

  bool leave(Rank r, const ChunkBytes& chunk) override {
    State& s = npus_[endpoints().npu(r).index];
    s.sram_used = std::max(0.0, s.sram_used - footprint(chunk, sram()));
    return true;
  }

  std::string_view entry_resource() const override { return "ACE SRAM"; }

  void local_transfer_usage(Rank r, LocalTransfer kind, std::vector<Usage>& out) override {
    if (kind != LocalTransfer::kDma) Executor::local_transfer_usage(r, kind, out);  // no kernels
    // Read and write each byte once through the DMA engine.
    Endpoints::Npu& n = endpoints().npu(r);
    out.push_back({npus_[n.index].dma, 2.0});
    out.push_back({n.hbm_comm, 2.0});
  }

 private:
  struct State {
    ResourceId dma = Endpoints::kNone;  // HBM <-> SRAM, bytes/s
    ResourceId alu = Endpoints::kNone;  // bytes reduced per second
    double sram_used = 0.0;
  };

  double sram() const { return static_cast<double>(ace_.sram_bytes); }

  AceParams ace_;
  std::vector<State> npus_;
};

}  // namespace

void register_ace_executor(ExecutorRegistry& registry) {
  ExecutorEntry e;
  e.name = "ace";
  e.help = "the offload engine: SRAM, reduction ALUs, DMA to HBM";
  e.make = [](Endpoints& ep) -> std::unique_ptr<Executor> { return std::make_unique<AceExecutor>(ep); };
  e.describe = [](const NpuConfig& npu) { return fmt::format(" ({} SRAM)", format_bytes(npu.ace.sram_bytes)); };
  registry.add(std::move(e));
}

}  // namespace acesim
