// One simulation of Chakra execution traces and its summary: what
// `acesim run --chakra PREFIX` reports (docs/workloads.md, "Chakra execution
// traces").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "chakra/chakra_trace.h"
#include "config/platform.h"
#include "engine/progress.h"
#include "workload/formats/chakra_workload.h"

namespace acesim {

struct ChakraRunOptions {
  bool full = false;      // simulate every rank even when the traces are the same program
  bool roofline = false;  // compute nodes with num_ops through the NPU roofline
  int trace_ranks = 0;    // keep node timings of ranks 0 .. trace_ranks-1 (rank 0 always)
  std::vector<std::pair<Rank, double>> stragglers;
  const ChakraGroups* groups = nullptr;  // communicator groups (pg_name), or none
  // Passes over the traces, back to back on every rank: a pass's nodes start
  // once every node of the rank's previous pass is done.
  int iterations = 1;
  Progress progress;  // told how far the run is
};

struct ChakraNodeRecord {
  Rank rank = 0;
  std::uint64_t id = 0;
  std::string name;
  std::string type;    // COMP_NODE, COMM_COLL_NODE, ...
  std::string detail;  // e.g. "ALL_REDUCE 1048576 B dims 0,1", "send to 3 tag 0", "cpu"
  int iteration = 0;
  TimePs ready_ps = -1, start_ps = -1, end_ps = -1;
};

struct ChakraReport {
  std::string prefix;
  std::string platform;
  std::string executor = "ideal";
  long long npus = 0;
  long long simulated_ranks = 0;
  std::string simulation;  // "symmetric", or "full" with the reason
  // Rank 0's trace: nodes by type (the format's names).
  std::vector<std::pair<std::string, long long>> node_types;
  long long nodes = 0;
  TimePs total_ps = 0;  // the last node on any rank ends
  // Iterations (docs/workloads.md, "Iterations of a trace"): the passes of
  // ChakraRunOptions::iterations, each split at ProfilerStep#N markers.
  // Iteration k ends when its last node on any rank is done; the measured
  // iteration is the last, from the end of the one before (from 0 when
  // there is one), as for built-in workloads.
  int iterations = 1;
  std::vector<TimePs> iteration_end_ps;
  TimePs iteration_ps = 0;
  TimePs first_iteration_ps = 0;
  // Rank 0, measured iteration.
  TimePs compute_ps = 0;       // its compute stream ran the iteration's kernels
  TimePs cpu_ps = 0;           // its CPU ran the iteration's CPU nodes
  TimePs comm_ps = 0;          // it had a collective or message in flight
  TimePs compute_idle_ps = 0;  // iteration - compute: waiting for communication, the CPU or dependencies
  TimePs exposed_comm_ps = 0;  // communication in flight while neither a kernel nor a CPU node runs
  TimePs overlap_ps = 0;       // comm - exposed: communication hidden behind compute or the CPU
  std::vector<double> network_utilization_per_dim;
  std::vector<double> network_utilization_in_flight_per_dim;  // as TrainReport's
  std::vector<double> comm_in_flight_ps_per_dim;
  std::vector<double> network_bytes_per_dim;  // per NPU
  double hbm_utilization_compute = 0.0;
  double hbm_utilization_comm = 0.0;
  double hbm_bytes_compute = 0.0;  // per NPU, whole run
  double hbm_bytes_comm = 0.0;
  double comm_unit_seconds = 0.0;  // per NPU, whole run
  std::optional<double> energy_J;  // every NPU, whole run; none without an energy model
  std::size_t collectives = 0;
  std::size_t messages = 0;
  std::vector<ChakraNodeRecord> node_records;  // ranks kept, file order
  std::uint64_t events = 0;
};

// Checks the traces against each other (a send and the receive it pairs with
// agree on the size; chakra::read_traces has checked that every send has its
// receive) and against the platform (one trace per NPU). Throws InputError.
void check_chakra_traces(const std::vector<chakra::Trace>& traces, long long npus);

// Where each node of a trace belongs: the index of the latest ProfilerStep#N
// marker (by N) it descends from (a marker belongs to its own), 0 for nodes
// that descend from none. Returns the labels in node order and sets `markers`
// to how many the trace has.
std::vector<int> chakra_iteration_labels(const chakra::Trace& trace, int& markers);

// Each of the `nodes` nodes of trace `t` run `passes` times (repeat_trace;
// `nodes` is the repeated graph's size): pass p's k-th iteration is
// p x per_pass + k, per_pass the trace's markers (at least 1). Sets
// `iterations` to passes x per_pass.
std::vector<int> chakra_pass_labels(const chakra::Trace& t, int passes, std::size_t nodes, int& iterations);

// The trace run `passes` times back to back: node ids renumbered, and every
// node of pass p after a metadata node that waits for all of pass p-1.
// Throws InputError past kMaxNodesPerTrace.
chakra::Trace repeat_trace(const chakra::Trace& t, int passes);

// Throws InputError for traces the platform cannot run and SimulationStuck
// when the run cannot finish.
ChakraReport run_chakra(const PlatformConfig& platform, const std::vector<chakra::Trace>& traces,
                        const std::string& prefix, const ChakraRunOptions& options = {});


}  // namespace acesim
