#include "endpoint/executor.h"

#include <stdexcept>

#include "endpoint/endpoint.h"

namespace acesim {

std::string_view to_string(LocalTransfer t) {
  switch (t) {
    case LocalTransfer::kCopy: return "copy";
    case LocalTransfer::kReduce: return "reduce";
    case LocalTransfer::kDma: return "DMA";
  }
  return "?";
}

void Executor::add_npu(std::size_t, const std::string&) {}

void Executor::phase_load(const PhaseCost&, std::span<const Rank>, const TransferShape&, double, EndpointLoad&) {}

void Executor::phase_begin(std::uint32_t, std::span<const Rank>, int) {}

void Executor::phase_end(std::uint32_t, std::span<const Rank>) {}

std::string Executor::unfit_reason(const ChunkBytes&) const { return {}; }
int Executor::pieces(const ChunkBytes&) const { return 1; }

bool Executor::try_enter(std::span<const Rank>, const ChunkBytes&) { return true; }

bool Executor::leave(Rank, const ChunkBytes&) { return false; }

void Executor::hold_units(Rank, int) {
  throw std::invalid_argument("hold_units: the " + ep_.config().executor + " executor holds no compute units");
}

void Executor::local_transfer_usage(Rank, LocalTransfer kind, std::vector<Usage>&) {
  throw std::invalid_argument("a local " + std::string(to_string(kind)) + " transfer: the " + ep_.config().executor +
                              " executor does not run one");
}

}  // namespace acesim
