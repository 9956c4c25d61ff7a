// Compute units that communication kernels hold on each NPU (the sm
// executor's collectives, the dma executor's reductions), as one fluid
// resource per NPU of bytes per second: the units held times a rate per
// unit. More units than the NPU has are asked for when collectives overlap:
// they hold all of them until enough finish.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "endpoint/endpoint.h"
#include "engine/key.h"

namespace acesim {

class HeldUnits {
 public:
  HeldUnits(Endpoints& ep, double GBps_per_unit) : ep_(ep), rate_(GBps_per_unit * 1e9) {}

  // NPUs come in index order (Endpoints::Npu::index).
  void add_npu(const std::string& name) { npus_.push_back(State{ep_.sim().fluid().add_resource(name, 0.0), 0}); }
  ResourceId resource(const Endpoints::Npu& n) const { return npus_[n.index].units; }
  int requested(const Endpoints::Npu& n) const { return npus_[n.index].requested; }

  // A collective's phases begin and end on rank r: the units it holds there
  // (hold(): from then until none of its phases runs on r).
  void begin(std::uint32_t collective, Rank r) { ++running_[pack_key(collective, static_cast<std::uint32_t>(r))].phases; }
  // Makes the collective hold `units` on r unless it already holds some.
  void hold(std::uint32_t collective, Rank r, int units) {
    Running& run = running_[pack_key(collective, static_cast<std::uint32_t>(r))];
    if (run.units > 0) return;
    run.units = units;
    Endpoints::Npu& n = ep_.npu(r);
    request(n, requested(n) + units);
  }
  void end(std::uint32_t collective, Rank r) {
    const auto it = running_.find(pack_key(collective, static_cast<std::uint32_t>(r)));
    if (it == running_.end()) throw std::logic_error("endpoint: phase_end without phase_begin");
    if (--it->second.phases > 0) return;
    const int held = it->second.units;
    running_.erase(it);
    if (held > 0) {
      Endpoints::Npu& n = ep_.npu(r);
      request(n, requested(n) - held);
    }
  }

  // Running collectives (and hold_units) now ask for `requested` units of `n`.
  void request(Endpoints::Npu& n, int requested) {
    if (requested < 0) throw std::logic_error("communication units: releasing units that are not held");
    State& s = npus_[n.index];
    s.requested = requested;
    if (!ep_.set_units_held(n, requested)) return;
    ep_.sim().fluid().set_capacity(ep_.sim().now(), s.units, n.units_held * rate_);
  }

 private:
  struct State {
    ResourceId units;  // bytes/s the held units can move
    int requested;     // units asked for
  };
  struct Running {
    std::int32_t phases = 0;
    std::int32_t units = 0;
  };
  Endpoints& ep_;
  double rate_;
  std::vector<State> npus_;
  std::unordered_map<std::uint64_t, Running> running_;  // (collective, rank)
};

}  // namespace acesim
