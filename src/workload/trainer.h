// Runs a training workload on every rank (SPMD) and records where the time
// goes (docs/workloads.md, "Training loop").
//
// Per rank, per iteration:
//   forward, layer 0 .. L-1: wait until the layer's weight-gradient
//     collective of the previous iteration is done (plus its update time);
//     compute; issue the forward collective (a blocking one is waited for).
//   backward, layer L-1 .. 0: weight-gradient compute; issue its collective
//     (non-blocking: it overlaps what follows); input-gradient compute (not
//     for layer 0: nothing consumes it); issue the input-gradient collective
//     (blocking).
// After the last iteration a rank waits for its outstanding collectives.
// Compute runs on one stream per rank: kernels never overlap each other, but
// they overlap communication and contend with it at the endpoint.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "collective/collective_engine.h"
#include "endpoint/endpoint.h"
#include "engine/simulation.h"
#include "workload/workload.h"

namespace acesim {

struct TrainOptions {
  int trace_ranks = 0;  // record timeline events for ranks 0 .. trace_ranks-1
  bool full = false;    // simulate every rank even when one could stand for all
  // Stragglers: rank -> factor by which its kernels are slower. Any makes the
  // run asymmetric (simulated in full).
  std::vector<std::pair<Rank, double>> stragglers;
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

struct LayerStats {
  // Rank 0, the last (measured) iteration.
  TimePs compute_ps[3] = {0, 0, 0};     // by PassKind, as run (slowed by contention)
  TimePs comm_ps[3] = {0, 0, 0};        // issue to done, by PassKind
  TimePs wait_ps = 0;                   // compute stream idle because of this layer's communication
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

class Trainer final : private ActivityListener, private CollectiveListener, private EventHandler {
 public:
  Trainer(Simulation& sim, const Topology& topo, CollectiveEngine& collectives, Endpoints& endpoint,
          const Workload& workload, TrainOptions options = {});
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // Starts every rank at the current time.
  void start();
  bool finished() const { return ranks_done_ == sim_ranks_; }
  Rank simulated_ranks() const { return sim_ranks_; }
  std::vector<std::string> stuck_report() const;

  // Results (valid once finished). Iteration k ends when every rank has
  // finished its computation and its collectives (plus update times) of
  // iteration k; iterations overlap (k+1 starts while k's gradients move).
  const std::vector<TimePs>& iteration_end_ps() const { return iteration_end_; }  // max over ranks
  TimePs finish_ps() const { return finish_; }
  // Rank r's compute time spent on kernels of iteration `iteration`.
  TimePs iteration_compute_ps(Rank r, int iteration) const {
    return iteration_compute_[static_cast<std::size_t>(r) * workload_.iterations + iteration];
  }
  // Rank r's compute-busy and communication-busy time in [from, to).
  TimePs compute_busy_ps(Rank r, TimePs from, TimePs to) const;
  TimePs comm_busy_ps(Rank r, TimePs from, TimePs to) const;
  const std::vector<LayerStats>& layer_stats() const { return layers_; }
  const std::vector<CollectiveRecord>& collectives() const { return records_; }
  const std::vector<Span>& spans() const { return spans_; }

 private:
  enum class Step : std::uint8_t {
    kFwdWait, kFwdCompute, kFwdComm,
    kRecompute, kRecomputeComm,
    kWgCompute, kWgComm, kIgCompute, kIgComm,
    kDrain, kDone
  };
  struct RankState {
    int iteration = 0;
    int layer = 0;
    Step step = Step::kFwdWait;
    TimePs wait_since = -1;        // compute stream idle since (or -1)
    int waiting_layer = -1;        // layer whose communication it waits for
    int outstanding = 0;           // collectives issued and not done
    TimePs kernel_start = 0;
    PassKind waiting_pass = PassKind::kWeightGrad;
    std::uint32_t blocking_key = 0;  // collective key a blocking wait is for
    bool blocked = false;            // waiting for a blocking collective
    bool resume_from_block = false;  // the event that ends a blocking wait is pending
    bool in_kernel = false;
    int recompute_index = 0;  // position in the layer's recompute_forward list
  };
  struct Interval {
    TimePs begin;
    TimePs end;
  };

  void advance(Rank r);
  void run_kernel(Rank r, const Kernel& k);
  // Issues layer `layer`'s collective of kind `kind` (a PassKind, or
  // kRecomputeKind) on rank r. Sets must_wait when the rank must block.
  void issue(Rank r, int layer, int kind, const CommSpec& spec, bool& must_wait);
  std::uint32_t key(int iteration, int layer, int kind) const;
  void enter_backward(Rank r, int layer);
  bool gate_open(Rank r, int layer) const;
  static constexpr int kRecomputeKind = 3;
  void finish_wait(Rank r, TimePs now);
  bool traced(Rank r) const { return r < options_.trace_ranks; }
  bool counted(int iteration) const;
  // An iteration ends on a rank when its last computation and its last
  // collective (plus update time) are done.
  void mark_iteration(Rank r, int iteration, TimePs t);

  void activity_done(std::uint64_t rank) override;
  void collective_done(CollectiveId id, Rank rank) override;
  void handle_event(std::uint64_t tag) override;

  Simulation& sim_;
  CollectiveEngine& collectives_;
  Endpoints& endpoint_;
  const Workload& workload_;
  TrainOptions options_;
  int num_layers_;
  Rank sim_ranks_;  // 1 (rank 0) in symmetric simulation, else all ranks

  std::vector<RankState> ranks_;
  // Per (rank, layer), the forward gate: non-blocking collectives the
  // layer's next forward must wait for (its weight gradients; DLRM's
  // embedding all-to-alls) still in flight, and when the last one's update
  // is done.
  std::vector<std::int32_t> gate_pending_;
  std::vector<TimePs> gate_time_;
  std::unordered_map<std::uint32_t, int> gate_of_;  // collective key -> layer it gates (-1: none)
  std::unordered_map<std::uint32_t, CollectiveId> by_key_;
  std::unordered_map<CollectiveId, std::uint32_t> key_of_;
  std::unordered_map<std::uint32_t, std::size_t> record_of_;
  std::vector<std::vector<Interval>> compute_intervals_;  // per rank
  std::vector<std::vector<Interval>> comm_intervals_;     // per rank (union of in-flight collectives)
  std::vector<TimePs> comm_since_;                         // per rank: start of the current comm-busy interval
  std::vector<TimePs> rank_iteration_end_;                 // [rank * iterations + it]
  std::vector<TimePs> iteration_compute_;                  // [rank * iterations + it]
  std::vector<TimePs> iteration_end_;
  std::vector<LayerStats> layers_;
  std::vector<CollectiveRecord> records_;
  std::vector<Span> spans_;
  std::unordered_map<std::uint64_t, TimePs> issued_at_;   // (key, rank) -> issue time, traced ranks and rank 0
  long long ranks_done_ = 0;
  TimePs finish_ = 0;
};

}  // namespace acesim
