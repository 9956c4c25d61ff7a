// `acesim reproduce placement` (docs/cluster.md, "Placement study"): two
// identical data-parallel jobs on an HGX H100 cluster whose scale-out is a
// rail-optimized two-tier fat-tree, oversubscribed 1:1, 2:1 and 4:1 at the
// leaves. How their placement (packed, spread, random) and a time shift
// between them change each job's slowdown beside the other: the effect
// CASSINI (NSDI'24) and Crux (SIGCOMM'24) exploit. With it, the closed forms
// of two jobs on one bottleneck link (docs/cluster.md, "Checks").
#pragma once

#include <string>
#include <vector>

#include "engine/time.h"

namespace acesim {

struct PlacementPoint {
  double oversubscription = 1.0;
  std::string placement;  // packed, spread, random
  double shift = 0.0;     // job b's start, in iterations of job a alone
  TimePs alone_ps = 0;    // each job's iteration alone on its nodes (the mean of the two)
  TimePs together_ps[2] = {};  // each job's iteration beside the other
  double slowdown[2] = {};
  double shared_bytes = 0.0;  // bytes of both jobs on links both used
};

// Two identical jobs on one bottleneck link (docs/cluster.md, "Checks"):
// alone, together, and together with a time shift, against the closed forms.
struct ClosedFormCase {
  std::string name;
  double expected_slowdown = 0.0;
  double slowdown = 0.0;  // job a's, acesim
  TimePs expected_ps = 0, iteration_ps = 0;
};

struct PlacementStudy {
  int nodes = 0, job_nodes = 0, leaf_nodes = 0;
  double compute_ms = 0.0;
  std::string collective;  // "all-reduce of 1 GiB over 128 GPUs"
  std::vector<PlacementPoint> points;
  std::vector<ClosedFormCase> closed_forms;
  double seconds = 0.0;  // wall time of the study
};

PlacementStudy run_placement_study();
std::string placement_tables(const PlacementStudy& s);
// DIR/results.csv and DIR/report.md. Throws InputError when it cannot.
void write_placement(const PlacementStudy& s, const std::string& dir);

}  // namespace acesim
