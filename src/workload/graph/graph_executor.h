// Runs per-rank work graphs (work_graph.h) on a platform: the one engine for
// built-in models, ASTRA-sim tables and Chakra traces (docs/workloads.md).
//
// A node starts when all its dependencies are done and its resource is free:
//   compute stream  kCompute: one kernel at a time per rank, through the NPU
//                   model, so kernels contend with communication at the endpoint
//   CPU             kCpu: one at a time per rank, a pure delay
//   nothing         kDelay: any number at once, done time_ps after ready
//   communication   kCollective: handed to the collective engine at once;
//                   kSend / kRecv: point-to-point messages
//   waits           kWait: the compute stream stops there (see below)
// The k-th collective a rank issues over a set of dimensions is the same
// collective as every other rank's k-th over that set. A send and a receive
// match by (source, destination, tag), in issue order.
//
// Waits. The compute stream reaches a wait when the stream node before it is
// done; it passes once every communication the wait depends on is done and
// the latest end-plus-delay has come. The stream is woken by events at
// EventPriority::kStart: when it reaches a wait whose communication is done
// but whose time has not come; when a wait's last communication finishes
// while the stream is at it, or sleeps just before it (WaitRule says for
// when); on a wake-up it checks again where it stands. These are the
// training loop's rules (a next forward waits for its gradients plus the
// update; a blocking collective holds the stream), kept event for event.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "collective/collective_engine.h"
#include "endpoint/endpoint.h"
#include "engine/progress.h"
#include "engine/simulation.h"
#include "network/network.h"
#include "network/transfer_shape.h"
#include "topology/topology.h"
#include "workload/graph/work_graph.h"

namespace acesim {

struct NodeTiming {
  TimePs ready = -1;  // dependencies done (a wait: the stream reached it)
  TimePs start = -1;  // resource granted (collectives and messages: issued)
  TimePs end = -1;
};

struct BusyInterval {
  TimePs begin;
  TimePs end;
};

class GraphObserver {
 public:
  // Node `node` of rank r's graph is done at `end`; it started (kernel
  // granted the stream, collective issued, wait reached) at `start`.
  virtual void node_done(Rank r, std::uint32_t node, TimePs start, TimePs end) = 0;

 protected:
  ~GraphObserver() = default;
};

struct GraphRunOptions {
  int keep_ranks = 0;  // keep node timings for ranks 0 .. keep_ranks-1 (rank 0 always)
  GraphObserver* observer = nullptr;
  // Per rank, when its graph starts (several jobs on one platform, started
  // at different times); empty or 0: at the start.
  std::vector<TimePs> rank_start_ps;
};

// A point-to-point message: source, destination, tag; and its hash.
using MessageKey = std::tuple<Rank, Rank, std::int64_t>;
struct MessageKeyHash {
  std::size_t operator()(const MessageKey& k) const noexcept {
    std::uint64_t h = static_cast<std::uint64_t>(static_cast<std::uint32_t>(std::get<0>(k))) * 0x9E3779B97F4A7C15ull;
    h ^= static_cast<std::uint64_t>(static_cast<std::uint32_t>(std::get<1>(k))) + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
    h ^= static_cast<std::uint64_t>(std::get<2>(k)) + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    return static_cast<std::size_t>(h);
  }
};

class GraphExecutor final : private ActivityListener,
                            private CollectiveListener,
                            private TransferListener,
                            private EventHandler {
 public:
  // graphs[r]: rank r's graph, one per simulated rank (ranks running the
  // same program share one). With a representative collective engine
  // (symmetric), only rank 0 runs. Throws InputError, before anything runs,
  // for a collective the platform cannot run on its group (an algorithm
  // that cannot serve the group's size: CollectiveEngine::refusal), naming
  // the first node that issues it (WorkGraph::where, or the graph's source,
  // rank and node).
  GraphExecutor(Simulation& sim, const Topology& topo, NetworkBackend& net, CollectiveEngine& collectives,
                Endpoints& endpoints, std::vector<const WorkGraph*> graphs, GraphRunOptions options = {});
  GraphExecutor(const GraphExecutor&) = delete;
  GraphExecutor& operator=(const GraphExecutor&) = delete;

  void start();
  bool finished() const { return ranks_done_ == sim_ranks_; }
  std::vector<std::string> stuck_report() const;
  // Nodes done over nodes of every simulated rank's graph (for progress).
  double fraction_done() const {
    return nodes_total_ > 0 ? static_cast<double>(nodes_done_) / static_cast<double>(nodes_total_) : 1.0;
  }

  Rank simulated_ranks() const { return sim_ranks_; }
  TimePs finish_ps() const { return finish_; }
  TimePs rank_finish_ps(Rank r) const { return rank(r).last_end; }
  // Time rank r's compute stream ran a kernel, its CPU ran, and it had at
  // least one collective or message in flight.
  TimePs compute_busy_ps(Rank r) const { return rank(r).compute.busy; }
  TimePs cpu_busy_ps(Rank r) const { return rank(r).cpu.busy; }
  TimePs comm_busy_ps(Rank r) const { return rank(r).comm_busy; }
  // Per dimension d: time rank r had at least one collective over d, or a
  // message whose route crosses d, in flight (docs/model.md, "Network
  // utilization").
  const std::vector<TimePs>& comm_busy_per_dim_ps(Rank r) const { return rank(r).dim_busy; }
  // Kept ranks: the intervals with communication in flight.
  const std::vector<BusyInterval>& comm_intervals(Rank r) const { return rank(r).comm_intervals; }
  // Node timings for the ranks kept (empty for others).
  const std::vector<NodeTiming>& timings(Rank r) const { return rank(r).timing; }
  const WorkGraph& graph(Rank r) const { return *graphs_[static_cast<std::size_t>(r)]; }
  // Collectives in the order they were created: (first rank, its node).
  const std::vector<std::pair<Rank, std::uint32_t>>& collectives_created() const { return created_; }
  std::size_t messages() const { return transfers_.size(); }

 private:
  // A resource that runs one node at a time, in the order nodes became ready.
  struct Stream {
    std::deque<std::uint32_t> queue;
    bool running = false;
    std::uint32_t node = 0;  // the one running
    TimePs since = 0;
    TimePs busy = 0;  // total time running
  };
  struct RankState {
    const WorkGraph* graph = nullptr;
    std::vector<std::int32_t> pending;  // dependencies not done; -1: done
    std::vector<TimePs> wait_ready;     // per wait: latest end + delay of its communication so far
    Stream compute, cpu;
    std::uint32_t parked = WorkGraph::kNone;  // the wait the compute stream is at
    std::uint32_t armed = WorkGraph::kNone;   // a kResume wait whose wake-up is scheduled
    TimePs parked_since = 0;
    std::size_t done = 0;
    std::unordered_map<std::uint32_t, std::uint32_t> coll_seq;  // group key -> collectives issued over it
    // Per collective payload of the graph: its group key, and for listed
    // ranks the engine's group + 1 above bit 32; 0 until first issued.
    std::vector<std::uint64_t> payload_group;
    int comm_in_flight = 0;
    TimePs comm_since = 0;
    TimePs comm_busy = 0;
    TimePs last_end = 0;
    std::vector<BusyInterval> comm_intervals;
    std::vector<int> dim_in_flight;  // per dimension: communication over it in flight
    std::vector<TimePs> dim_since, dim_busy;
    std::vector<NodeTiming> timing;
  };
  struct Coll {
    CollectiveId id;
    CollectiveOp op;
    double bytes;
    long long root;
    Rank first_rank;
    std::uint32_t first_node;
  };
  struct InFlight {
    std::uint32_t node;
    TimePs issued;
    std::uint32_t dims;  // mask of the dimensions it spans
    std::uint64_t key;   // its entry in colls_
  };
  struct Transfer {
    Rank src, dst;
    std::uint32_t send_node;
    std::int64_t recv_node = -1;  // matched receive, -1 until then
    double bytes;
    bool delivered = false;
    TimePs sent = 0;
    TimePs posted = 0;  // the receive
  };
  struct Done {
    Rank rank;
    std::uint32_t node;
    TimePs start;
  };

  // Ranks with an empty graph that no collective simulates (every rank but
  // the representatives when there are several) share one idle state.
  RankState& rank(Rank r) { return ranks_[static_cast<std::size_t>(slot_[static_cast<std::size_t>(r)])]; }
  const RankState& rank(Rank r) const {
    const std::int32_t s = slot_[static_cast<std::size_t>(r)];
    return s >= 0 ? ranks_[static_cast<std::size_t>(s)] : idle_;
  }
  void ready(Rank r, std::uint32_t node);
  void start_rank(Rank r);
  void complete(const Done& d);
  void drain();
  void start_stream(Rank r, Stream& s);
  void stream_done(Rank r, Stream& s);
  void wait_dep_done(Rank r, std::uint32_t wait, std::uint32_t parent, TimePs delay);
  void check_wait(Rank r, std::uint32_t wait);
  void release_wait(Rank r, std::uint32_t wait);
  void wake(Rank r);
  // Every collective the simulated ranks' graphs issue, against the
  // platform (the constructor's check).
  void check_collectives() const;
  void issue_collective(Rank r, std::uint32_t node);
  void issue_send(Rank r, std::uint32_t node);
  void issue_recv(Rank r, std::uint32_t node);
  void comm_begin(Rank r, std::uint32_t dims);
  void comm_end(Rank r, std::uint32_t dims);
  std::uint32_t route_dims(Rank src, Rank dst) const;
  bool kept(Rank r) const { return r == 0 || r < options_.keep_ranks; }
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
  Endpoints& endpoints_;
  GraphRunOptions options_;
  Rank sim_ranks_;
  std::vector<RankState> ranks_;    // the ranks with work
  std::vector<std::int32_t> slot_;  // per rank: its index in ranks_, -1: idle
  RankState idle_;
  std::vector<const WorkGraph*> graphs_;
  std::vector<Done> completed_;  // to complete, in order
  bool draining_ = false;
  std::unordered_map<std::uint64_t, Coll> colls_;              // (group key, seq) -> collective, until it finishes
  std::unordered_map<std::uint64_t, InFlight> coll_node_;      // (collective, rank) -> node
  std::vector<std::pair<Rank, std::uint32_t>> created_;
  std::vector<Transfer> transfers_;
  // Looked up, never walked: the order of the maps changes no result.
  std::unordered_map<MessageKey, std::deque<std::uint32_t>, MessageKeyHash> unmatched_sends_;  // -> transfers not yet received
  std::unordered_map<MessageKey, std::deque<std::pair<std::uint32_t, TimePs>>, MessageKeyHash> waiting_recvs_;  // -> receives posted first
  std::unordered_map<std::uint64_t, std::unique_ptr<TransferShape>> p2p_shapes_;
  EndpointLoad load_;
  std::vector<Rank> members_;
  long long ranks_done_ = 0;
  TimePs finish_ = 0;
  std::uint64_t nodes_total_ = 0;
  std::uint64_t nodes_done_ = 0;
};

// Starts `ex` and runs `sim` until every graph is done, telling `progress`
// (stage "simulating", then the end); a run that cannot finish throws
// SimulationStuck naming what waits.
void run_graphs(Simulation& sim, GraphExecutor& ex, const Progress& progress);

}  // namespace acesim
