// A platform assembled for one simulation: clock, topology, network backend,
// endpoints and the collective engine, wired in the data flow's order
// (docs/model.md). Every runner (collective sweeps, characterization,
// training) starts from one.
#pragma once

#include <memory>

#include "collective/collective_engine.h"
#include "config/platform.h"
#include "endpoint/endpoint.h"
#include "engine/simulation.h"
#include "network/network.h"
#include "topology/topology.h"

namespace acesim {

struct PlatformInstance {
  explicit PlatformInstance(const PlatformConfig& config)
      : topology(config.dims),
        network(make_network(config.network, sim, topology)),
        endpoint(sim, topology, config.npu),
        collectives(sim, topology, *network, config.collectives, &endpoint) {}
  PlatformInstance(const PlatformInstance&) = delete;
  PlatformInstance& operator=(const PlatformInstance&) = delete;

  Simulation sim;
  Topology topology;
  std::unique_ptr<NetworkBackend> network;
  Endpoint endpoint;
  CollectiveEngine collectives;
};

}  // namespace acesim
