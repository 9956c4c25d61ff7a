// Helpers shared by the scenario tests: platforms built in code.
#pragma once

#include <vector>

#include "collective/plan.h"
#include "config/platform.h"
#include "report/collective_sweep.h"

namespace acesim::test {

inline PlatformConfig platform(std::vector<DimensionSpec> dims, std::string backend = "fluid",
                               int chunks = 1) {
  PlatformConfig p;
  p.source = "test";
  p.dims = std::move(dims);
  p.network.backend = backend;
  p.collectives = default_collective_config(Topology(p.dims));
  p.collectives.chunks = chunks;
  return p;
}

inline DimensionSpec dim(DimKind kind, int npus, double bw_GBps, double lat_ns) {
  DimensionSpec d;
  d.kind = kind;
  d.npus = npus;
  d.bandwidth_GBps = bw_GBps;
  d.latency_ns = lat_ns;
  return d;
}

// The closed-form tests' setting: a collective of kS bytes on links of kB
// bytes/s per direction and kA ns each.
namespace closed_form {
constexpr double kS = 64.0 * 1024 * 1024;  // bytes
constexpr double kB = 100e9;               // bytes/s per link direction
constexpr double kA = 500.0;               // ns per link
inline double xfer_ns(double bytes) { return bytes / kB * 1e9; }
}  // namespace closed_form

inline void set_algorithm(PlatformConfig& p, CollectiveOp op, Algorithm alg) {
  auto& oc = p.collectives.op(op);
  oc.per_dim.assign(p.dims.size(), alg);
  oc.flat = alg;
}

inline double time_ns(const PlatformConfig& p, CollectiveOp op, double bytes, std::vector<int> dims = {}) {
  CollectiveRequestSpec req;
  req.op = op;
  req.dims = std::move(dims);
  return ps_to_ns(run_collective(p, req, static_cast<std::uint64_t>(bytes)).time_ps);
}

}  // namespace acesim::test
