// Runs Chakra execution traces (one dependency graph per rank) on a platform
// (docs/workloads.md, "Chakra execution traces").
//
// A node starts when all its data and control dependencies are done and its
// resource is free:
//   compute stream  COMP_NODE (not is_cpu_op), MEM_LOAD_NODE, MEM_STORE_NODE:
//                   one kernel at a time per rank, through the NPU model, so
//                   kernels contend with communication at the endpoint
//   CPU             COMP_NODE with is_cpu_op: one at a time per rank, a pure
//                   delay of its duration
//   communication   COMM_COLL_NODE: handed to the collective engine at once
//                   (its scheduler decides what moves, as for every workload);
//                   COMM_SEND_NODE / COMM_RECV_NODE: point-to-point messages
// The k-th collective a rank issues over a set of dimensions is the same
// collective as every other rank's k-th over that set. A send and a receive
// match by (source, destination, tag), in issue order.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "chakra/chakra_trace.h"
#include "collective/collective_engine.h"
#include "endpoint/endpoint.h"
#include "engine/simulation.h"
#include "network/network.h"
#include "topology/topology.h"

namespace acesim {

// Communicator groups (ASTRA-sim's --comm-group-configuration JSON:
// {"name": [ranks...]}), each resolved to the topology dimensions whose NPUs
// it is. A collective whose pg_name names a group runs over those dimensions.
struct ChakraGroup {
  std::vector<Rank> ranks;  // sorted
  std::vector<int> dims;
};
using ChakraGroups = std::map<std::string, ChakraGroup>;
// Throws InputError naming the file and group: bad JSON, ranks out of range
// or repeated, a group that is not the NPUs of whole dimensions.
ChakraGroups read_chakra_groups(const std::string& path, const Topology& topo);

struct ChakraOptions {
  // Compute nodes with num_ops run as FLOPs (and tensor_size as HBM bytes)
  // through the NPU's roofline instead of taking their recorded duration.
  bool roofline = false;
  int trace_ranks = 0;  // keep node timings for ranks 0 .. trace_ranks-1 (rank 0 always)
  const ChakraGroups* groups = nullptr;  // when given, pg_name picks a collective's dimensions
};

struct ChakraNodeTiming {
  TimePs ready = -1;  // dependencies done
  TimePs start = -1;  // resource granted (collectives and messages: issued)
  TimePs end = -1;
};

// Every collective's pg_name is a group of `groups` that has its rank.
// Throws InputError naming the file and node.
void check_chakra_groups(const std::vector<chakra::Trace>& traces, const ChakraGroups& groups);

// Why a set of traces is not the same program on every rank (so one
// representative rank cannot stand for all), or "" when it is. Node ids may
// differ; what must match is each node's position, contents and the
// positions of its dependencies; with groups, pg_names whose groups span the
// same dimensions match. Sends and receives are never symmetric.
std::string chakra_asymmetry(const std::vector<chakra::Trace>& traces, const ChakraGroups* groups = nullptr);

class ChakraExecutor final : private ActivityListener,
                             private CollectiveListener,
                             private TransferListener,
                             private EventHandler {
 public:
  // Throws InputError for nodes the platform cannot run (dimensions it does
  // not have, unsupported collective types), naming file and node; groups
  // must have passed check_chakra_groups. With a
  // representative collective engine (symmetric), only rank 0 runs.
  ChakraExecutor(Simulation& sim, const Topology& topo, NetworkBackend& net, CollectiveEngine& collectives,
                 Endpoints& endpoint, const std::vector<chakra::Trace>& traces, ChakraOptions options = {});
  ChakraExecutor(const ChakraExecutor&) = delete;
  ChakraExecutor& operator=(const ChakraExecutor&) = delete;

  void start();
  bool finished() const { return ranks_done_ == sim_ranks_; }
  std::vector<std::string> stuck_report() const;

  Rank simulated_ranks() const { return sim_ranks_; }
  TimePs finish_ps() const { return finish_; }
  TimePs rank_finish_ps(Rank r) const { return ranks_[static_cast<std::size_t>(r)].last_end; }
  // Time rank r's compute stream ran a kernel, its CPU ran, and it had at
  // least one collective or message in flight.
  TimePs compute_busy_ps(Rank r) const { return ranks_[static_cast<std::size_t>(r)].compute.busy; }
  TimePs cpu_busy_ps(Rank r) const { return ranks_[static_cast<std::size_t>(r)].cpu.busy; }
  TimePs comm_busy_ps(Rank r) const { return ranks_[static_cast<std::size_t>(r)].comm_busy; }
  // Node timings, in file order, for the ranks kept (empty for others).
  const std::vector<ChakraNodeTiming>& timings(Rank r) const { return ranks_[static_cast<std::size_t>(r)].timing; }
  const chakra::Trace& trace(Rank r) const { return *ranks_[static_cast<std::size_t>(r)].graph->trace; }
  std::size_t collectives_created() const { return colls_.size(); }
  std::size_t messages() const { return transfers_.size(); }

 private:
  struct Graph {
    const chakra::Trace* trace = nullptr;
    std::vector<std::uint32_t> child_begin;  // CSR: children of node i in children[child_begin[i] .. child_begin[i+1])
    std::vector<std::uint32_t> children;
    std::vector<std::int32_t> indegree;
    std::vector<std::vector<int>> dims;  // per node: a collective's dimensions
  };
  // A resource that runs one node at a time, in the order nodes became ready.
  struct Stream {
    std::deque<std::uint32_t> queue;
    bool running = false;
    std::uint32_t node = 0;  // the one running
    TimePs since = 0;
    TimePs busy = 0;  // total time running
  };
  struct RankState {
    const Graph* graph = nullptr;
    std::vector<std::int32_t> pending;
    Stream compute, cpu;
    std::size_t done = 0;
    std::unordered_map<std::uint32_t, std::uint32_t> coll_seq;  // dims mask -> collectives issued over it
    int comm_in_flight = 0;
    TimePs comm_since = 0;
    TimePs comm_busy = 0;
    TimePs last_end = 0;
    std::vector<ChakraNodeTiming> timing;
  };
  struct Coll {
    CollectiveId id;
    CollectiveOp op;
    double bytes;
    Rank first_rank;
    std::uint32_t first_node;
  };
  struct Transfer {
    Rank src, dst;
    std::uint32_t send_node;
    std::int64_t recv_node = -1;  // matched receive, -1 until then
    double bytes;
    bool delivered = false;
  };

  void build_graph(Graph& g, const chakra::Trace& t);
  void ready(Rank r, std::uint32_t node);
  void complete(Rank r, std::uint32_t node);
  void drain();
  // Starts queued nodes on a stream (rank r's compute stream or CPU) while
  // it is free; zero-time ones finish at once.
  void start_stream(Rank r, Stream& s);
  // The running node of a stream is done: complete it and start the next.
  void stream_done(Rank r, Stream& s);
  void issue_collective(Rank r, std::uint32_t node);
  void issue_send(Rank r, std::uint32_t node);
  void issue_recv(Rank r, std::uint32_t node);
  void comm_begin(Rank r);
  void comm_end(Rank r);
  Kernel kernel_of(const chakra::Node& n) const;
  bool kept(Rank r) const { return r == 0 || r < options_.trace_ranks; }
  std::string where(Rank r, std::uint32_t node) const;
  const TransferShape& p2p_shape(Rank src, Rank dst);

  void activity_done(std::uint64_t tag) override;
  void collective_done(CollectiveId id, Rank rank) override;
  void transfer_done(std::uint64_t tag) override;
  void handle_event(std::uint64_t tag) override;

  Simulation& sim_;
  const Topology& topo_;
  NetworkBackend& net_;
  CollectiveEngine& collectives_;
  Endpoints& endpoint_;
  ChakraOptions options_;
  Rank sim_ranks_;
  std::vector<Graph> graphs_;  // one per simulated rank (one in symmetric mode)
  std::vector<RankState> ranks_;
  std::vector<std::pair<Rank, std::uint32_t>> completed_;  // to complete, in order
  bool draining_ = false;
  std::unordered_map<std::uint64_t, Coll> colls_;                  // (mask, seq) -> collective
  std::unordered_map<std::uint64_t, std::uint32_t> coll_node_;     // (collective, rank) -> node
  std::vector<Transfer> transfers_;
  using MessageKey = std::tuple<Rank, Rank, std::int64_t>;  // source, destination, tag
  std::map<MessageKey, std::deque<std::uint32_t>> unmatched_sends_;  // -> transfers not yet received
  std::map<MessageKey, std::deque<std::uint32_t>> waiting_recvs_;    // -> receive nodes posted first
  std::unordered_map<std::uint64_t, std::unique_ptr<TransferShape>> p2p_shapes_;
  EndpointLoad load_;
  std::vector<Rank> members_;
  long long ranks_done_ = 0;
  TimePs finish_ = 0;
};

}  // namespace acesim
