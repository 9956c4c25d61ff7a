// ASTRA-sim 1.0 text workloads (docs/formats.md, "ASTRA-sim 1.0 workloads").
// Compute columns count cycles of 1 ns; sizes are bytes.
#pragma once

#include <string>
#include <string_view>

#include "topology/topology.h"
#include "workload/workload.h"

namespace acesim {

// Reads and binds to `topo` (which dimensions each collective spans).
// Throws InputError naming file, line, column and the problem.
Workload read_astra_workload(const std::string& path, const Topology& topo);
Workload parse_astra_workload(std::string_view text, const std::string& file, const Topology& topo);

}  // namespace acesim
