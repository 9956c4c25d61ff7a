// Runs collectives: splits each into chunks, walks every chunk through the
// phases of its plan, and hands each phase on each group to the network.
//
// A phase on one group (for example one ring of dimension 1) starts for a
// chunk when every member of that group has finished the previous phase for
// that chunk (or, for the first phase, has arrived at the collective), and
// when the group has a free slot: at most `active_chunks_per_dim` chunks run
// at once on one group, shared by every collective using it. Waiting chunks
// are served by collective (LIFO: the most recently created first; FIFO: the
// oldest first), then later phases first (to drain the pipeline), then lower
// chunk index.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <tuple>
#include <string>
#include <unordered_map>
#include <vector>

#include "collective/nccl_model.h"
#include "collective/plan.h"
#include "endpoint/endpoint.h"
#include "engine/simulation.h"
#include "engine/slot_pool.h"
#include "network/network.h"
#include "network/transfer_shape.h"
#include "topology/topology.h"

namespace acesim {

using CollectiveId = std::uint32_t;

struct CollectiveRequest {
  CollectiveOp op = CollectiveOp::kAllReduce;
  double bytes = 0.0;     // nccl-tests convention, see build_plan() and docs/model.md
  std::vector<int> dims;  // dimensions it spans; empty: all
  std::string name;
  // When not empty, the collective runs on exactly these ranks (ascending,
  // distinct) as one group routed over the fabric, and `dims` is unused.
  // Needs a full simulation.
  std::vector<Rank> members;
  // Rooted operations: the root's position in every group, in member order
  // (the first dimension varies fastest; `members`: ascending ranks).
  long long root = 0;
  // With `members`: CollectiveEngine::group(members) when the caller has it
  // (spares looking the list up again), else -1.
  std::int32_t group = -1;
};

class CollectiveListener {
 public:
  // `rank` has finished its part of collective `id`.
  virtual void collective_done(CollectiveId id, Rank rank) = 0;

 protected:
  ~CollectiveListener() = default;
};

class CollectiveEngine final : private TransferListener, private EventHandler {
 public:
  // `endpoint` may be null: communication then costs the endpoints nothing
  // and no per-NPU statistics are kept.
  CollectiveEngine(Simulation& sim, const Topology& topo, NetworkBackend& net, CollectiveConfig cfg,
                   Endpoints* endpoints = nullptr);
  CollectiveEngine(const CollectiveEngine&) = delete;
  CollectiveEngine& operator=(const CollectiveEngine&) = delete;

  // Symmetric simulation: only the groups that contain `rank` are simulated
  // and only `rank` arrives and finishes; every other rank is taken to do
  // exactly the same (docs/performance.md, "Symmetry"). Call before create().
  void set_representative(Rank rank);
  Rank representative() const { return rep_; }
  // Whole groups of representatives (docs/performance.md, "Symmetry"):
  // only `ranks` arrive and finish; every collective is over listed ranks,
  // each group holding at least one of them, and runs on all its members'
  // links; groups of no representative are taken to run the same on links
  // of their own. Call before create().
  void set_representatives(std::vector<Rank> ranks);
  bool several_representatives() const { return !reps_.empty(); }
  // Ranks simulated: 1 in symmetric mode, the representatives, else all.
  Rank simulated_ranks() const {
    return rep_ >= 0 ? 1 : !reps_.empty() ? static_cast<Rank>(reps_.size()) : topo_.num_npus();
  }
  bool simulated(Rank r) const {
    return rep_ >= 0 ? r == rep_ : reps_.empty() || rep_slot_[static_cast<std::size_t>(r)] >= 0;
  }

  // Throws std::invalid_argument for bad dimensions, sizes or an algorithm
  // that cannot run on a group the request produces (plan_refusal).
  CollectiveId create(const CollectiveRequest& req, CollectiveListener* listener = nullptr);
  // Why create() would refuse `op` over `dims` (empty: all) or, when given,
  // the listed `members` because the platform cannot run it on that group
  // (plan_refusal, collective/plan.h), or nullopt; nothing is created or
  // registered. Dimensions that do not exist are left to create().
  std::optional<std::string> refusal(CollectiveOp op, const std::vector<int>& dims, const std::vector<Rank>& members) const;
  // The caller reads nothing more of finished collective `id`: its record is
  // cleared and its id may be given to a collective created later (a
  // training run creates hundreds of thousands; only those in flight are
  // kept). Throws std::logic_error when `id` has not finished.
  void release(CollectiveId id);
  // The index of an explicit group (ascending, distinct ranks of the
  // topology), the same for every request over it; a request may carry it
  // (CollectiveRequest::group). Throws std::invalid_argument for a bad list.
  std::int32_t group(const std::vector<Rank>& members);
  // `rank` reaches the collective now. Throws std::logic_error when it already has.
  void arrive(CollectiveId id, Rank rank);
  void arrive_all(CollectiveId id);

  bool finished(CollectiveId id) const { return collectives_[id].ranks_done == collectives_[id].participants; }
  TimePs first_arrival(CollectiveId id) const { return collectives_[id].first_arrival; }
  TimePs finish_time(CollectiveId id) const { return collectives_[id].finish; }
  std::size_t num_collectives() const { return collectives_.size(); }
  std::size_t unfinished() const;
  // One line per unfinished collective: which ranks have not arrived, and
  // which phases/chunks/groups are waiting or running.
  std::vector<std::string> stuck_report() const;

  const CollectiveConfig& config() const { return cfg_; }
  const std::vector<PhaseSpec>& phases(CollectiveId id) const { return collectives_[id].specs; }
  std::size_t shapes_built() const { return shapes_.size() + listed_shapes_.size() + nccl_shapes_.size(); }
  int chunks(CollectiveId id) const { return collectives_[id].chunks; }
  // NPUs in one group of the collective (the product of its dimensions' sizes).
  long long group_npus(CollectiveId id) const { return collectives_[id].group_npus; }
  std::uint64_t phases_run() const { return phases_run_; }
  // What NCCL's model chose for the collective, when it ran it.
  const std::optional<NcclChoice>& nccl_choice(CollectiveId id) const { return collectives_[id].nccl; }
  // Phases finished on groups of chunks, over all the collective will run:
  // 0 before it starts, 1 once every simulated rank is done (for progress).
  double fraction_done(CollectiveId id) const;

 private:
  struct Phase {
    std::uint32_t dims_mask = 0;
    std::vector<int> other_dims;            // dimensions that separate groups
    std::vector<long long> other_weight;    // instance index = sum coord x weight
    long long instances = 0;       // simulated groups (1 in symmetric mode)
    long long full_instances = 0;  // groups in the full system
    std::vector<std::int32_t> arrived;      // [instance * chunks + chunk]
    std::vector<std::int32_t> queue;        // queue index per instance, -1 until used
  };
  struct Collective {
    std::int64_t serial = 0;  // creation order (ids are reused after release())
    CollectiveRequest req;    // members left empty: an explicit group's are group_members()
    CollectiveListener* listener = nullptr;
    std::vector<PhaseSpec> specs;
    std::vector<Phase> phases;
    int chunks = 1;
    double chunk_bytes = 0.0;
    long long group_npus = 1;
    double chunk_in = 0.0;    // a chunk's input at one NPU
    double chunk_out = 0.0;   // a chunk's output at one NPU
    long long participants = 0;  // simulated ranks taking part
    std::int32_t group_id = -1;  // explicit members: their group's index
    std::vector<std::int32_t> rank_chunks_done;
    std::vector<std::uint8_t> rank_arrived;
    long long arrivals = 0;
    long long ranks_done = 0;
    long long phase_runs = 0;       // (phase, group, chunk) to run, all simulated groups
    long long phase_runs_done = 0;
    TimePs first_arrival = kTimeNever;
    TimePs finish = kTimeNever;
    std::optional<NcclChoice> nccl;  // run by NCCL's model
    int nccl_ppn = 1;
    LibraryKernels kernels;  // what its library says of its kernels (NCCL's)
    // Coupled entry (full simulations where the endpoints gate entry and
    // the first phase's groups are smaller than the collective's groups):
    // a chunk enters on every NPU of its collective group, in one order
    // (see admit()). span_mask: the dimensions its phases span.
    bool coupled = false;
    std::uint32_t span_mask = 0;
    // Per (first-phase group, chunk): -1 before the chunk entered anywhere
    // in its collective group; then the members still waiting for room.
    std::vector<std::int32_t> entry_wait;
    // Per collective group (span_index): ranks arrived.
    std::vector<std::int32_t> span_arrived;
  };
  struct Waiting {
    std::int64_t order;  // smaller runs first (collective position under the policy)
    std::int32_t phase;
    std::int32_t chunk;
    CollectiveId coll;
    long long instance;
  };
  struct GroupQueue {
    int running = 0;
    std::vector<Waiting> heap;  // the best (runs_later's order) first
    static bool later(const Waiting& a, const Waiting& b);
    void push(const Waiting& w);
  };
  struct RunningPhase {
    bool active = false;
    CollectiveId coll;
    std::int32_t phase;
    std::int32_t chunk;
    long long instance;
    std::int32_t queue;
  };

  long long instance_of(const Phase& ph, Rank r) const;
  // A chunk's bytes, and its input and output at one NPU, from c.chunks.
  void set_chunk_bytes(Collective& c) const;
  std::size_t slot(Rank r) const {
    return rep_ >= 0 ? 0 : !reps_.empty() ? static_cast<std::size_t>(rep_slot_[static_cast<std::size_t>(r)]) : static_cast<std::size_t>(r);
  }
  std::int32_t needed(const Collective& c, int phase) const {
    if (!reps_.empty()) return static_cast<std::int32_t>(c.participants);
    return rep_ >= 0 ? 1 : static_cast<std::int32_t>(c.specs[phase].group_size);
  }
  Rank base_rank(const Phase& ph, long long instance) const;
  // The members of phase `phase`'s group `instance`, the root first for a
  // rooted operation.
  void members(const Collective& c, int phase, long long instance, std::vector<Rank>& out) const;
  void dim_members(const PhaseSpec& spec, Rank base, std::vector<Rank>& out) const;
  const TransferShape& shape_of(const Collective& c, int phase, Rank base, std::span<const Rank> members);
  // Plan and group of an explicit-member request; throws std::invalid_argument.
  void plan_explicit(Collective& c, std::int32_t group);
  const std::vector<Rank>& group_members(const Collective& c) const {
    return *group_members_[static_cast<std::size_t>(c.group_id)];
  }
  // One phase of what NCCL's model picks for the collective over `dims`.
  void plan_nccl(Collective& c, const NcclView& view, std::span<const int> dims);
  std::uint64_t queue_key(const Collective& c, const Phase& ph, long long instance) const;
  void ready(CollectiveId id, int phase, long long instance, int chunk);
  void dispatch(std::int32_t queue);
  void dispatch_queue(std::int32_t queue);
  // Dispatching waits until every completion and arrival of the current
  // instant has been applied, so that what runs next does not depend on the
  // order of simultaneous events (and a symmetric run equals a full one).
  void request_dispatch(std::int32_t queue);
  void launch(const Waiting& w, std::int32_t queue);
  // After w, the head of its (collective, queue) entering chunks, launched:
  // the next of them into the queue's heap.
  void next_entering(const Waiting& w, std::int32_t queue);
  void advance(const RunningPhase& rp);
  void rank_finished(CollectiveId id, Rank r);
  // Whether chunk w may run its first phase now: it enters the collective,
  // holding room at its members' endpoints until it leaves (docs/model.md,
  // "ace executor": chunks enter every NPU in one order).
  bool admit(const Waiting& w);
  // A coupled collective's chunk enters its collective group, from the
  // first-phase group `instance` (whose members hold room already): room
  // is taken at every other NPU of the group that owes nothing and has it,
  // the others owe it (owed_).
  void start_entry(CollectiveId id, long long instance, int chunk);
  // Takes room at rank r for the chunks r owes, oldest first, while it fits.
  void settle_owed(Rank r);
  // The collective group of a coupled collective that holds rank r, and its ranks.
  long long span_index(const Collective& c, Rank r) const;
  void span_members(const Collective& c, Rank r, std::vector<Rank>& out) const;
  bool owes(std::span<const Rank> ranks) const;
  ChunkBytes chunk_bytes(const Collective& c) const { return ChunkBytes{c.chunk_in, c.chunk_out, c.kernels.streamed}; }
  void transfer_done(std::uint64_t tag) override;
  void handle_event(std::uint64_t tag) override;

  Simulation& sim_;
  const Topology& topo_;
  NetworkBackend& net_;
  CollectiveConfig cfg_;
  Endpoints* endpoints_;
  bool gated_;  // the endpoints admit chunks entering a collective (Endpoints::try_enter)
  ShapeCache shapes_;
  // Shapes of rooted operations and explicit groups, keyed by an index
  // given to each distinct (op, algorithm, member list).
  ShapeCache listed_shapes_;
  std::map<std::tuple<int, int, std::vector<Rank>>, std::uint32_t> listed_index_;
  std::map<std::vector<Rank>, std::int32_t> group_index_;  // explicit groups
  std::vector<const std::vector<Rank>*> group_members_;    // per explicit group: its key in group_index_
  // Per explicit group (by its index): its shape on the topology.
  std::vector<ListedGroup> group_shapes_;
  // NCCL's choice and kernels by (explicit group or -1, dimension mask, op, bytes).
  std::map<std::tuple<std::int32_t, std::uint32_t, int, double>, std::pair<NcclChoice, LibraryKernels>> nccl_choices_;
  // Shapes of NCCL's choices, by (op, algorithm, protocol, channels, dimensions, base rank).
  std::map<std::tuple<int, int, int, int, std::uint32_t, Rank, std::int32_t>, std::unique_ptr<TransferShape>> nccl_shapes_;
  std::deque<Collective> collectives_;
  std::vector<CollectiveId> released_;  // ids free for reuse, the last released first
  std::int64_t created_ = 0;
  std::deque<GroupQueue> queues_;
  std::unordered_map<std::uint64_t, std::int32_t> queue_index_;
  SlotPool<RunningPhase> running_;
  std::vector<Rank> scratch_members_;
  std::vector<Rank> scratch_advance_;
  EndpointLoad load_;
  Rank rep_ = -1;
  std::vector<Rank> reps_;               // several representatives, ascending
  std::vector<std::int32_t> rep_slot_;   // per rank: its index in reps_, or -1
  std::vector<std::int32_t> entry_blocked_;  // queues whose entering chunks wait for room at the endpoints
  std::vector<Waiting> skipped_;
  // Chunks entering a collective where the endpoints gate entry: each
  // (collective, queue) keeps its smallest waiting chunk in the queue's
  // heap and the later ones here, in order. They all need the same room at
  // the same members, so when the head is refused the rest would be too:
  // a dispatch passes them over at the cost of one, not of every chunk
  // (100,000 chunks through ACE's SRAM took minutes otherwise). Keyed by
  // pack_key(collective, queue).
  struct Entering {
    long long instance = 0;
    std::int32_t head = -1;  // the chunk in the heap
    std::deque<std::int32_t> rest;
  };
  std::unordered_map<std::uint64_t, Entering> entering_;
  // Per rank (coupled collectives only): chunks that entered their
  // collective elsewhere and wait for room here, oldest first. Every NPU
  // gives room to chunks in the order they entered, so that no two groups
  // hold room for different chunks while each waits for the other's.
  struct Owed {
    CollectiveId coll;
    std::int32_t chunk;
  };
  std::vector<std::vector<Owed>> owed_;
  std::size_t owed_total_ = 0;
  std::vector<Rank> scratch_span_;
  std::vector<long long> scratch_instances_;
  std::vector<std::int32_t> dispatch_queues_;
  std::vector<std::uint8_t> dispatch_marked_;  // per queue
  bool dispatch_pending_ = false;
  std::int32_t dispatching_ = -1;    // the queue dispatch() serves now
  bool redispatch_ = false;          // ... and something it skipped may run now
  bool entry_freed_ = false;
  std::uint64_t phases_run_ = 0;
};

}  // namespace acesim
