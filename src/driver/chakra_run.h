// One simulation of Chakra execution traces and its summary: what
// `acesim run --chakra PREFIX` reports (docs/workloads.md, "Chakra execution
// traces").
#pragma once

#include <cstdint>
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
  Progress progress;  // told how far the run is
};

struct ChakraNodeRecord {
  Rank rank = 0;
  std::uint64_t id = 0;
  std::string name;
  std::string type;    // COMP_NODE, COMM_COLL_NODE, ...
  std::string detail;  // e.g. "ALL_REDUCE 1048576 B dims 0,1", "send to 3 tag 0", "cpu"
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
  // Rank 0.
  TimePs compute_ps = 0;       // its compute stream ran kernels
  TimePs cpu_ps = 0;           // its CPU ran CPU nodes
  TimePs comm_ps = 0;          // it had a collective or message in flight
  TimePs compute_idle_ps = 0;  // total - compute: waiting for communication, the CPU or dependencies
  std::vector<double> network_utilization_per_dim;
  std::vector<double> network_bytes_per_dim;  // per NPU
  double hbm_utilization_compute = 0.0;
  double hbm_utilization_comm = 0.0;
  std::size_t collectives = 0;
  std::size_t messages = 0;
  std::vector<ChakraNodeRecord> node_records;  // ranks kept, file order
  std::uint64_t events = 0;
};

// Checks the traces against each other (a send and the receive it pairs with
// agree on the size; chakra::read_traces has checked that every send has its
// receive) and against the platform (one trace per NPU). Throws InputError.
void check_chakra_traces(const std::vector<chakra::Trace>& traces, long long npus);

// Throws InputError for traces the platform cannot run and SimulationStuck
// when the run cannot finish.
ChakraReport run_chakra(const PlatformConfig& platform, const std::vector<chakra::Trace>& traces,
                        const std::string& prefix, const ChakraRunOptions& options = {});


}  // namespace acesim
