// One training simulation and its summary: what `acesim run` reports. The
// workload is lowered into a work graph (workload/graph/training_lowering.h)
// and run by the graph executor; the report is computed from the nodes'
// timings and what the lowering says each node stands for.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collective/types.h"
#include "config/platform.h"
#include "endpoint/endpoint.h"
#include "engine/progress.h"
#include "topology/topology.h"
#include "workload/workload.h"

namespace acesim {

class GraphExecutor;

struct TrainOptions {
  int trace_ranks = 0;  // record timeline events for ranks 0 .. trace_ranks-1
  bool full = false;    // simulate every rank even when one could stand for all
  // Stragglers: rank -> factor by which its kernels are slower. Any makes the
  // run asymmetric (simulated in full).
  std::vector<std::pair<Rank, double>> stragglers;
  Progress progress;  // told how far the run is
};

// One span on a rank's timeline, for traces and per-layer tables.
struct Span {
  Rank rank;
  int iteration;
  int layer;
  PassKind pass;
  enum Kind { kCompute, kCollective, kWait } kind;
  TimePs begin;
  TimePs end;
};

struct CollectiveRecord {
  int iteration;
  int layer;
  PassKind pass;
  CollectiveOp op;
  double bytes;
  std::vector<int> dims;
  TimePs issue_ps;  // rank 0
  TimePs done_ps;   // rank 0
};

struct LayerReport {
  std::string name;
  TimePs compute_ps[3] = {0, 0, 0};  // forward, input-grad, weight-grad, as run (rank 0, measured iteration(s))
  TimePs comm_ps[3] = {0, 0, 0};     // issue to done
  double comm_bytes[3] = {0, 0, 0};
  std::string comm_op[3];
  TimePs exposed_ps = 0;  // compute stream idle waiting for this layer's communication
};

struct TrainReport {
  std::string workload;
  std::string parallelism;
  std::string platform;
  std::string executor = "ideal";
  long long npus = 0;
  long long simulated_ranks = 0;  // 1 when symmetric
  std::string simulation;         // "symmetric", or "full" with the reason
  int iterations = 0;
  // Iteration k ends when its last computation and its last collective (plus
  // update) are done on every NPU. The measured iteration is the steady
  // state: from the end of the next-to-last iteration to the end of the last
  // (the first can differ: it waits for nothing from before); with one
  // iteration, from 0 to its end.
  TimePs total_ps = 0;
  std::vector<TimePs> iteration_end_ps;  // end of each iteration
  TimePs first_iteration_ps = 0;  // end of iteration 0
  TimePs iteration_ps = 0;
  TimePs compute_ps = 0;       // rank 0's kernels of the measured iteration, as run
  TimePs exposed_comm_ps = 0;  // iteration - compute: waiting for communication
  TimePs comm_ps = 0;          // rank 0 has a collective in flight
  TimePs overlap_ps = 0;       // communication hidden behind compute: comm - exposed
  // Model FLOPs per GPU and second over the measured iteration (Megatron's
  // count, Workload::model_flops_per_rank), and that over the NPU's peak;
  // 0 where the workload has no model FLOPs.
  double tflops_per_gpu = 0.0;
  double mfu = 0.0;
  // Whole run, averaged over NPUs: bytes sent on each dimension over what its
  // links could carry out of an NPU in that time.
  std::vector<double> network_utilization_per_dim;
  // The same bytes over what the links could carry while communication over
  // that dimension was in flight (docs/model.md, "Network utilization").
  std::vector<double> network_utilization_in_flight_per_dim;
  std::vector<double> comm_in_flight_ps_per_dim;  // per NPU, whole run
  std::vector<double> network_bytes_per_dim;  // per NPU, whole run
  double hbm_utilization_compute = 0.0;
  double hbm_utilization_comm = 0.0;
  double hbm_bytes_compute = 0.0;  // per NPU, whole run
  double hbm_bytes_comm = 0.0;
  double comm_unit_seconds = 0.0;  // per NPU, whole run
  std::optional<double> energy_J;  // every NPU, whole run; none without an energy model
  std::vector<LayerReport> layers;
  std::vector<CollectiveRecord> collectives;
  std::vector<Span> spans;
  std::uint64_t events = 0;
};

// Refuses up front (InputError) what would overflow simulated time or
// exhaust memory: the run's simulated ranks (one when symmetric, else every
// NPU) and their graphs past 8 GiB, with `remedy` said. Returns that
// memory, in bytes.
double check_training_size(const PlatformConfig& platform, const Workload& workload, bool symmetric,
                           std::string_view remedy = "leave out --full and stragglers, or use a smaller platform");

// Throws SimulationStuck (engine/simulation.h) when the run cannot finish.
TrainReport run_training(const PlatformConfig& platform, const Workload& workload, TrainOptions options = {});

// Whole-run resource use, averaged over the simulated NPUs: bytes each
// dimension's links carried out of an NPU over what they could carry in
// `total_ps` and in the time communication over that dimension was in flight
// (`ex`'s mean per NPU), and HBM bytes over what HBM could move. Checks that
// the links carried into NPUs what they carried out of them.
struct EndpointSummary {
  std::vector<double> network_utilization_per_dim;
  std::vector<double> network_utilization_in_flight_per_dim;
  std::vector<double> comm_in_flight_ps_per_dim;
  std::vector<double> network_bytes_per_dim;
  double hbm_utilization_compute = 0.0;
  double hbm_utilization_comm = 0.0;
  double hbm_bytes_compute = 0.0;
  double hbm_bytes_comm = 0.0;
  double comm_unit_seconds = 0.0;
  double compute_unit_seconds = 0.0;
};
// Joules of every NPU of the platform over `total_ps` (docs/model.md,
// "Energy"): compute and communication units busy, all HBM bytes, the
// bytes sent; none without an energy model.
std::optional<double> run_energy_J(const PlatformConfig& platform, const EndpointSummary& es, TimePs total_ps);
EndpointSummary summarize_endpoints(Endpoints& endpoint, const Topology& topo, const NpuConfig& npu,
                                    const GraphExecutor& ex, TimePs total_ps);

// Outbound link capacity of one NPU in dimension d, bytes/s (both ring
// directions, every fully-connected peer, one switch port).
double npu_link_capacity_Bps(const DimensionSpec& d);

}  // namespace acesim
