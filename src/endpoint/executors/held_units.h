// Compute units that communication kernels hold on each NPU (the sm
// executor's collectives, the dma executor's reductions), as one fluid
// resource per NPU of bytes per second: the units held times a rate per
// unit. More units than the NPU has are asked for when collectives overlap:
// they hold all of them until enough finish.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "endpoint/endpoint.h"

namespace acesim {

class HeldUnits {
 public:
  HeldUnits(Endpoints& ep, double GBps_per_unit) : ep_(ep), rate_(GBps_per_unit * 1e9) {}

  // NPUs come in index order (Endpoints::Npu::index).
  void add_npu(const std::string& name) { npus_.push_back(State{ep_.sim().fluid().add_resource(name, 0.0), 0}); }
  ResourceId resource(const Endpoints::Npu& n) const { return npus_[n.index].units; }
  int requested(const Endpoints::Npu& n) const { return npus_[n.index].requested; }

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
  Endpoints& ep_;
  double rate_;
  std::vector<State> npus_;
};

}  // namespace acesim
