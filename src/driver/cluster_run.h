// Several jobs on one platform (docs/cluster.md): `acesim cluster FILE.yaml`.
// Every job's ranks are placed on whole nodes of the platform, and all jobs
// run in one simulation, so their transfers share links, switches and NICs
// max-min fairly in the fluid model. Each job also runs alone on the same
// nodes; its slowdown is its iteration time beside the others over that.
//
// A job is a loop of collectives (a fixed compute time, then a collective
// over all the job's GPUs, per iteration) or a training job (an LLM plan, a
// SimAI file, a built-in model's layer table, Chakra traces), built on a
// topology of its own nodes and placed with its ranks mapped onto the
// cluster's (WorkGraph::list_groups, WorkGraph::relabel_ranks). Every rank
// of every job is simulated.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collective/types.h"
#include "config/platform.h"
#include "engine/progress.h"
#include "engine/time.h"
#include "topology/topology.h"
#include "workload/graph/work_graph.h"

namespace acesim {

// One rank of a training job: its graph on the job's own topology, its
// collectives over listed ranks (WorkGraph::list_groups), and per node the
// iteration its end counts toward (-1: none) and what that iteration waits
// for after it (an optimizer update; empty: nothing).
struct JobRankGraph {
  WorkGraph graph;
  std::vector<int> iteration_of;
  std::vector<TimePs> tail_ps;
};

struct ClusterJobSpec {
  std::string name;
  std::string what;             // the workload in words
  std::string placement;        // how its nodes were chosen, in words
  std::vector<long long> nodes;  // the cluster's nodes it holds, ascending
  TimePs start_ps = 0;
  int iterations = 10;
  // A loop of collectives: per iteration, compute_ps of compute, then `op`
  // of `bytes` over all the job's GPUs.
  struct Loop {
    CollectiveOp op = CollectiveOp::kAllReduce;
    double bytes = 0.0;
    TimePs compute_ps = 0;
  };
  std::optional<Loop> loop;
  // Or a training job on `topology` (the job's nodes alone): `build(r)` is
  // job rank r's graph; what it needs it holds. Its iterations are
  // `iterations`.
  std::shared_ptr<const Topology> topology;
  std::function<JobRankGraph(Rank)> build;
  double graph_bytes = 0.0;  // about what its ranks' graphs hold (limits::kMaxGraphBytes over all jobs)
};

// Degraded hardware (docs/cluster.md, "Degraded hardware"): GPUs whose
// kernels take longer, links at a share of their rate (a NIC's links, or
// one link by name), links down with their routes moved to others. It holds in every run of the cluster; a run of the same
// jobs on healthy hardware is the baseline of its effect.
struct ClusterDegradation {
  std::vector<std::pair<Rank, double>> compute;  // GPU, factor its kernels take longer
  std::vector<std::pair<LinkId, double>> links;  // link, share of its rate
  std::vector<LinkId> down;                      // links down (Topology::set_link_down): routes go around them
  std::vector<std::string> text;                 // each item in words
  bool any() const { return !compute.empty() || !links.empty() || !down.empty(); }
};

struct ClusterSpec {
  std::string source;  // the cluster file
  PlatformConfig platform;
  long long nodes = 1;
  long long gpus_per_node = 1;
  std::vector<ClusterJobSpec> jobs;
  ClusterDegradation degraded;
};

struct ClusterRunOptions {
  bool alone = true;  // also run each job alone (its slowdown)
  bool trace = false;  // keep each job's first rank's spans (a trace)
  Progress progress;
};

struct ClusterJobReport {
  std::string name, what, placement;
  std::vector<long long> nodes;
  long long gpus = 0;
  TimePs start_ps = 0;
  std::vector<TimePs> iteration_end_ps;  // beside the others
  // Mean iteration (after the first, when there are several), beside the
  // others and alone on the same nodes; slowdown = the first over the second.
  TimePs iteration_ps = 0;
  TimePs alone_iteration_ps = 0;  // 0: not run (--no-alone)
  double slowdown = 0.0;          // 0: not known
  // With degraded hardware: the same run on healthy hardware (0: none).
  TimePs healthy_iteration_ps = 0;
  TimePs finish_ps = 0;
  double network_bytes = 0.0;  // its bytes on every link
};

struct ClusterLinkReport {
  std::string name;  // "dim1:npu3->switch"
  int dim = 0;
  double bandwidth_GBps = 0.0;
  std::vector<double> bytes_by_job;
  double utilization = 0.0;  // all jobs' bytes over what it could carry in the run
};

// A kernel or a communication of a job's first rank, beside the others.
struct ClusterSpan {
  int job = 0;
  bool compute = true;
  std::string what;
  TimePs begin = 0, end = 0;
};

struct ClusterReport {
  std::string source;
  std::string platform;
  long long nodes = 0, gpus = 0;
  std::vector<ClusterJobReport> jobs;
  std::vector<ClusterLinkReport> links;  // links that carried bytes, busiest first
  std::vector<ClusterSpan> spans;        // with ClusterRunOptions::trace
  std::vector<std::string> degraded;     // the degraded hardware, in words
  TimePs total_ps = 0;
  std::uint64_t events = 0;
  double wall_s = 0.0;  // simulation wall time (not deterministic; reports leave it out of comparisons)
};

// Placement (docs/cluster.md): `count` of the nodes not `used`, ascending.
// `how`: packed (the lowest), spread (round robin over leaves of
// `leaf_nodes` nodes: each leaf's first free node, then its second, ...) or
// random (a Fisher-Yates shuffle from `seed`; job i of a cluster file is seeded with the file's seed ^ splitmix64(i)). The caller has checked that
// enough are free and that `how` is one of these.
std::vector<long long> choose_nodes(const std::string& how, long long count, const std::vector<bool>& used, long long leaf_nodes,
                                    std::uint64_t seed);
// Nodes per leaf switch of the platform's node dimension: its fat-tree's
// leaf_size, else the whole dimension.
long long leaf_nodes(const PlatformConfig& platform);
// The platform's node dimension made a fat-tree with these parameters
// (names of the fat-tree kind's, e.g. leaf_size, oversubscription); throws
// std::invalid_argument for a platform without a node dimension.
void set_fat_tree_nodes(PlatformConfig& platform, const std::vector<KindParam>& params);

// Throws InputError for jobs the platform cannot run and SimulationStuck
// when a run cannot finish.
ClusterReport run_cluster(const ClusterSpec& spec, const ClusterRunOptions& options = {});

}  // namespace acesim
