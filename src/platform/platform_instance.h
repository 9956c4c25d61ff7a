// A platform assembled for one simulation: clock, topology, network backend,
// endpoints and the collective engine, wired in the data flow's order
// (docs/model.md). Every runner (collective sweeps, characterization,
// training) starts from one.
#pragma once

#include <memory>
#include <string>

#include "collective/collective_engine.h"
#include "config/platform.h"
#include "endpoint/endpoint.h"
#include "engine/simulation.h"
#include "network/network.h"
#include "topology/topology.h"

namespace acesim {

// Why this platform's collectives are not symmetric across ranks (the flat
// plan over several dimensions, the double binary tree: members play
// different roles), or an empty string when one representative rank stands
// for all (docs/performance.md, "Symmetry").
std::string asymmetry_reason(const PlatformConfig& config);

struct PlatformInstance {
  // `symmetric`: simulate rank 0 only (the caller has checked
  // asymmetry_reason() and that the workload is the same on every rank).
  PlatformInstance(const PlatformConfig& config, bool symmetric)
      : topology(config.dims),
        network(make_network(config.network, sim, topology)),
        endpoints(sim, topology, config.npu),
        collectives(sim, topology, *network, config.collectives, &endpoints) {
    sim.fluid().set_checking(config.check);
    if (symmetric) {
      network->set_representative(0);
      endpoints.set_representative(0);
      collectives.set_representative(0);
    }
  }
  // Several representatives (CollectiveEngine::set_representatives): the
  // network runs their groups on all their links.
  PlatformInstance(const PlatformConfig& config, const std::vector<Rank>& representatives)
      : topology(config.dims),
        network(make_network(config.network, sim, topology)),
        endpoints(sim, topology, config.npu),
        collectives(sim, topology, *network, config.collectives, &endpoints) {
    sim.fluid().set_checking(config.check);
    endpoints.set_representatives(representatives);
    collectives.set_representatives(representatives);
  }
  PlatformInstance(const PlatformInstance&) = delete;
  PlatformInstance& operator=(const PlatformInstance&) = delete;

  Simulation sim;
  Topology topology;
  std::unique_ptr<NetworkBackend> network;
  Endpoints endpoints;
  CollectiveEngine collectives;
};

}  // namespace acesim
