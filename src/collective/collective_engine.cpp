#include "collective/collective_engine.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <string_view>

#include "collective/nccl_endpoint.h"
#include "collective/nccl_shape.h"
#include "engine/key.h"


namespace acesim {
namespace {

// Heap order: the element that should run first on top.
bool runs_later(std::int64_t oa, int pa, int ca, std::int64_t ob, int pb, int cb) {
  if (oa != ob) return oa > ob;
  if (pa != pb) return pa < pb;  // later phases first
  return ca > cb;
}

std::uint64_t shape_key(CollectiveOp op, Algorithm alg, std::uint32_t mask, Rank base) {
  if (alg->id < 0) throw std::logic_error("algorithm '" + alg->name + "' was not added with register_algorithm()");
  // At most 16 dimensions (mask), 4 operations, 8192 algorithms.
  return pack_key(mask | (static_cast<std::uint32_t>(op) << 16) | (static_cast<std::uint32_t>(alg->id) << 19),
                  static_cast<std::uint32_t>(base));
}

}  // namespace

CollectiveEngine::CollectiveEngine(Simulation& sim, const Topology& topo, NetworkBackend& net,
                                   CollectiveConfig cfg, Endpoints* endpoint)
    : sim_(sim),
      topo_(topo),
      net_(net),
      cfg_(std::move(cfg)),
      endpoints_(endpoint),
      gated_(endpoint != nullptr && endpoint->gates_entry()),
      shapes_(topo, net.wants_messages()),
      listed_shapes_(topo, net.wants_messages()) {
  if (topo_.num_dims() > 16) throw std::invalid_argument("at most 16 topology dimensions are supported");
  const std::string problem = validate(cfg_, topo_);
  if (!problem.empty()) throw std::invalid_argument(problem);
}

void CollectiveEngine::set_representatives(std::vector<Rank> ranks) {
  if (!collectives_.empty()) throw std::logic_error("set_representatives after collectives were created");
  if (rep_ >= 0 || ranks.empty()) throw std::logic_error("set_representatives: one representative is set, or none given");
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  rep_slot_.assign(static_cast<std::size_t>(topo_.num_npus()), -1);
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] < 0 || ranks[i] >= topo_.num_npus()) throw std::logic_error("representative rank out of range");
    rep_slot_[static_cast<std::size_t>(ranks[i])] = static_cast<std::int32_t>(i);
  }
  reps_ = std::move(ranks);
}

void CollectiveEngine::set_representative(Rank rank) {
  if (!collectives_.empty()) throw std::logic_error("set_representative after collectives were created");
  if (!reps_.empty()) throw std::logic_error("set_representative: several representatives are set");
  if (rank < 0 || rank >= topo_.num_npus()) throw std::logic_error("representative rank out of range");
  rep_ = rank;
}

CollectiveId CollectiveEngine::create(const CollectiveRequest& req, CollectiveListener* listener) {
  if (!(req.bytes >= 0.0) || !std::isfinite(req.bytes)) {
    throw std::invalid_argument("collective size must be a finite number of bytes >= 0");
  }
  if (is_rooted(req.op) && rep_ >= 0) {
    throw std::invalid_argument(std::string(to_string(req.op)) +
                                ": a rooted collective needs a full simulation (its root works unlike the other ranks)");
  }
  Collective c;
  // Field by field: an explicit group's members are kept once per group
  // (group_members_), not once per collective.
  c.req.op = req.op;
  c.req.bytes = req.bytes;
  c.req.dims = req.dims;
  c.req.name = req.name;
  c.req.root = req.root;
  c.listener = listener;
  if (!req.members.empty()) {
    if (rep_ >= 0) throw std::invalid_argument("a collective over listed ranks needs a full simulation");
    plan_explicit(c, req.group >= 0 ? req.group : group(req.members));
  } else if (!reps_.empty()) {
    throw std::invalid_argument("with several representatives every collective lists its ranks");
  } else {
    std::vector<int> dims = req.dims;
    if (dims.empty()) {
      for (int d = 0; d < topo_.num_dims(); ++d) dims.push_back(d);
    }
    std::uint32_t seen = 0;
    for (int d : dims) {
      if (d < 0 || d >= topo_.num_dims()) {
        throw std::invalid_argument("collective dimension " + std::to_string(d) + " does not exist (topology has " +
                                    std::to_string(topo_.num_dims()) + ")");
      }
      if (seen & (1u << d)) throw std::invalid_argument("collective names dimension " + std::to_string(d) + " twice");
      seen |= 1u << d;
    }
    c.req.dims = dims;
    GroupPlan plan = plan_on_dims(req.op, cfg_, topo_, dims);
    if (auto why = plan_refusal(req.op, cfg_, plan)) throw std::invalid_argument(*why);
    if (plan.nccl) {
      plan_nccl(c, *plan.nccl, dims);
    } else {
      c.specs = std::move(plan.phases);
    }
    c.group_npus = plan.npus;
  }
  if (is_rooted(req.op) && (req.root < 0 || req.root >= c.group_npus)) {
    throw std::invalid_argument(std::string(to_string(req.op)) + ": root position " + std::to_string(req.root) +
                                " is outside its group of " + std::to_string(c.group_npus) + " ranks");
  }
  c.participants = req.members.empty() ? simulated_ranks() : static_cast<long long>(req.members.size());
  if (!reps_.empty()) {
    c.participants = std::count_if(req.members.begin(), req.members.end(), [this](Rank r) { return simulated(r); });
    if (c.participants == 0) throw std::invalid_argument("a collective over listed ranks holds no representative");
  }
  // NCCL's channels split the data inside the phase; no chunks.
  c.chunks = c.nccl ? 1 : cfg_.chunks;
  if (cfg_.max_chunk_bytes > 0 && !c.nccl) {
    const double needed = std::ceil(req.bytes / static_cast<double>(cfg_.max_chunk_bytes));
    if (needed > 1'000'000.0) {
      throw std::invalid_argument("a collective of " + std::to_string(static_cast<long long>(req.bytes)) +
                                  " bytes needs more than 1000000 chunks of max_chunk_bytes");
    }
    c.chunks = std::max(c.chunks, static_cast<int>(needed));
  }
  set_chunk_bytes(c);
  if (endpoints_ != nullptr && !c.specs.empty()) {
    // An executor that cannot hold a whole chunk streams it in pieces; each
    // piece walks the phases as a chunk does (docs/model.md, "ace executor").
    const int pieces = endpoints_->pieces(ChunkBytes{c.chunk_in, c.chunk_out, c.kernels.streamed});
    if (pieces > 1) {
      if (static_cast<double>(c.chunks) * pieces > 1'000'000.0) {
        throw std::invalid_argument("a collective of " + std::to_string(static_cast<long long>(req.bytes)) +
                                    " bytes would stream more than 1000000 pieces through the endpoint");
      }
      c.chunks *= pieces;
      set_chunk_bytes(c);
    }
    const std::string why = endpoints_->unfit_reason(ChunkBytes{c.chunk_in, c.chunk_out, c.kernels.streamed});
    if (!why.empty()) throw std::invalid_argument(why);
  }
  for (const PhaseSpec& spec : c.specs) {
    Phase ph;
    for (int d : spec.dims) ph.dims_mask |= 1u << d;
    long long weight = 1;
    for (int d = 0; d < topo_.num_dims() && c.group_id < 0; ++d) {  // an explicit group is one instance
      if (ph.dims_mask & (1u << d)) continue;
      ph.other_dims.push_back(d);
      ph.other_weight.push_back(weight);
      weight *= topo_.dim(d).npus;
    }
    ph.instances = rep_ >= 0 ? 1 : weight;  // symmetric: the representative's group only
    ph.full_instances = weight;
    ph.arrived.assign(static_cast<std::size_t>(ph.instances) * c.chunks, 0);
    ph.queue.assign(static_cast<std::size_t>(ph.instances), -1);
    c.phase_runs += ph.instances * c.chunks;
    c.phases.push_back(std::move(ph));
  }
  c.rank_chunks_done.assign(static_cast<std::size_t>(simulated_ranks()), 0);
  c.rank_arrived.assign(static_cast<std::size_t>(simulated_ranks()), 0);
  // Several first-phase groups in one collective group, every one simulated:
  // chunks enter the whole collective group in one order (admit()).
  if (gated_ && rep_ < 0 && reps_.empty() && c.group_id < 0 && !c.specs.empty() &&
      c.specs[0].group_size < c.group_npus) {
    c.coupled = true;
    for (const Phase& ph : c.phases) c.span_mask |= ph.dims_mask;
    c.entry_wait.assign(static_cast<std::size_t>(c.phases[0].instances) * c.chunks, -1);
    c.span_arrived.assign(static_cast<std::size_t>(topo_.num_npus() / c.group_npus), 0);
  }
  c.serial = created_++;
  if (!released_.empty()) {
    const CollectiveId id = released_.back();
    released_.pop_back();
    collectives_[id] = std::move(c);
    return id;
  }
  collectives_.push_back(std::move(c));
  return static_cast<CollectiveId>(collectives_.size() - 1);
}

void CollectiveEngine::release(CollectiveId id) {
  if (id >= collectives_.size() || !finished(id)) throw std::logic_error("release of an unfinished collective");
  collectives_[id] = Collective{};  // holds no rank: counts as finished
  released_.push_back(id);
}

std::int32_t CollectiveEngine::group(const std::vector<Rank>& m) {
  auto known = group_index_.find(m);
  if (known == group_index_.end()) {
    // A new group: checked, and its shape on the topology kept for the
    // collectives that follow on it.
    group_shapes_.push_back(listed_group(topo_, m));
    known = group_index_.emplace(m, static_cast<std::int32_t>(group_index_.size())).first;
    group_members_.push_back(&known->first);
  }
  return known->second;
}

void CollectiveEngine::plan_explicit(Collective& c, std::int32_t group) {
  if (group < 0 || static_cast<std::size_t>(group) >= group_members_.size()) throw std::logic_error("unknown explicit group");
  const ListedGroup& g = group_shapes_[static_cast<std::size_t>(group)];
  c.req.dims.clear();
  c.group_npus = g.npus;
  c.group_id = group;
  GroupPlan plan = plan_on_group(c.req.op, cfg_, g);
  if (auto why = plan_refusal(c.req.op, cfg_, plan)) throw std::invalid_argument(*why);
  if (plan.nccl) {
    plan_nccl(c, *plan.nccl, g.differ);
  } else {
    c.specs = std::move(plan.phases);
  }
}

std::optional<std::string> CollectiveEngine::refusal(CollectiveOp op, const std::vector<int>& dims_in,
                                                     const std::vector<Rank>& members) const {
  try {
    if (!members.empty()) return plan_refusal(op, cfg_, plan_on_group(op, cfg_, listed_group(topo_, members)));
    std::vector<int> dims = dims_in;
    if (dims.empty()) {
      for (int d = 0; d < topo_.num_dims(); ++d) dims.push_back(d);
    }
    std::uint32_t seen = 0;
    for (int d : dims) {
      if (d < 0 || d >= topo_.num_dims() || (seen & (1u << d)) != 0) return std::nullopt;  // create() says what is wrong
      seen |= 1u << d;
    }
    return plan_refusal(op, cfg_, plan_on_dims(op, cfg_, topo_, dims));
  } catch (const std::invalid_argument& e) {
    return std::string(e.what());
  }
}

double CollectiveEngine::fraction_done(CollectiveId id) const {
  const Collective& c = collectives_[id];
  if (finished(id)) return 1.0;
  return c.phase_runs > 0 ? static_cast<double>(c.phase_runs_done) / static_cast<double>(c.phase_runs) : 0.0;
}

void CollectiveEngine::set_chunk_bytes(Collective& c) const {
  c.chunk_bytes = c.req.bytes / c.chunks;
  const double n = static_cast<double>(c.group_npus);
  switch (c.req.op) {
    case CollectiveOp::kAllReduce:
    case CollectiveOp::kAllToAll:
      c.chunk_in = c.chunk_out = c.chunk_bytes;
      break;
    case CollectiveOp::kReduceScatter:
      c.chunk_in = c.chunk_bytes;
      c.chunk_out = c.chunk_bytes / n;
      break;
    case CollectiveOp::kAllGather:
      c.chunk_in = c.chunk_bytes / n;
      c.chunk_out = c.chunk_bytes;
      break;
    // Rooted: what the root holds, charged to every member (an upper bound
    // for the others; docs/model.md, "Rooted collectives").
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kReduce:
      c.chunk_in = c.chunk_out = c.chunk_bytes;
      break;
    case CollectiveOp::kGather:
      c.chunk_in = c.chunk_bytes / n;
      c.chunk_out = c.chunk_bytes;
      break;
    case CollectiveOp::kScatter:
      c.chunk_in = c.chunk_bytes;
      c.chunk_out = c.chunk_bytes / n;
      break;
  }
}

long long CollectiveEngine::instance_of(const Phase& ph, Rank r) const {
  if (rep_ >= 0) return 0;
  long long idx = 0;
  for (std::size_t i = 0; i < ph.other_dims.size(); ++i) idx += topo_.coord(r, ph.other_dims[i]) * ph.other_weight[i];
  return idx;
}

Rank CollectiveEngine::base_rank(const Phase& ph, long long instance) const {
  if (rep_ >= 0) {
    // The representative's group: its coordinates on the phase's dimensions set to 0.
    Rank base = rep_;
    for (int d = 0; d < topo_.num_dims(); ++d) {
      if (ph.dims_mask & (1u << d)) base -= static_cast<Rank>(topo_.coord(rep_, d)) * topo_.stride(d);
    }
    return base;
  }
  Rank base = 0;
  for (std::size_t i = 0; i < ph.other_dims.size(); ++i) {
    const int d = ph.other_dims[i];
    const long long digit = (instance / ph.other_weight[i]) % topo_.dim(d).npus;
    base += static_cast<Rank>(digit) * topo_.stride(d);
  }
  return base;
}

void CollectiveEngine::members(const Collective& c, int phase, long long instance, std::vector<Rank>& out) const {
  if (c.group_id >= 0) {
    const std::vector<Rank>& m = group_members(c);
    out.assign(m.begin(), m.end());
  } else {
    dim_members(c.specs[static_cast<std::size_t>(phase)], base_rank(c.phases[static_cast<std::size_t>(phase)], instance), out);
  }
  // Patterns of rooted phases take member 0 as the root; the symmetric
  // phases of a rooted collective may span fewer dimensions than its root's
  // position counts, and need no rotation.
  if (is_rooted(c.specs[static_cast<std::size_t>(phase)].op) && c.req.root > 0) {
    std::rotate(out.begin(), out.begin() + c.req.root, out.end());
  }
}

void CollectiveEngine::plan_nccl(Collective& c, const NcclView& view, std::span<const int> dims) {
  // NCCL's choice depends on the group, the operation and the size only:
  // kept for the collectives that repeat them (a training step repeats a
  // few thousand times).
  std::uint32_t mask = 0;
  for (int d : dims) mask |= 1u << d;
  const auto key = std::make_tuple(c.group_id, c.group_id >= 0 ? 0u : mask, static_cast<int>(c.req.op), c.req.bytes);
  auto known = nccl_choices_.find(key);
  if (known == nccl_choices_.end()) {
    // Copy engines that run NCCL's copy-engine path take its all-gather and
    // all-to-all inside one NVLink domain: no kernel, no units.
    std::optional<NcclChoice> ce;
    if (endpoints_ && endpoints_->copy_engine_collectives()) {
      ce = nccl_copy_engine_choice(view, c.req.op, endpoints_->step_latency_ps(), endpoints_->command_issue_ps());
    }
    const NcclChoice choice = ce ? *ce : nccl_choose(view, c.req.op, c.req.bytes, cfg_.nccl);
    const LibraryKernels kernels = ce ? LibraryKernels{} : nccl_kernels(c.req.op, choice, view.nranks, view.ppn);
    known = nccl_choices_.emplace(key, std::make_pair(choice, kernels)).first;
  }
  c.nccl = known->second.first;
  c.nccl_ppn = view.ppn;
  c.kernels = known->second.second;
  std::vector<int> spanned;
  for (int d : dims) {
    if (topo_.dim(d).npus > 1) spanned.push_back(d);
  }
  static const Algorithm ring = algorithm("ring");
  c.specs.push_back(PhaseSpec{c.req.op, ring, std::move(spanned), c.nccl->wire_factor, view.nranks});
}

const TransferShape& CollectiveEngine::shape_of(const Collective& c, int phase, Rank base, std::span<const Rank> members) {
  const PhaseSpec& spec = c.specs[static_cast<std::size_t>(phase)];
  if (c.nccl) {
    const NcclChoice& ch = *c.nccl;
    // Listed ranks have their own shape, by their group.
    auto key = std::make_tuple(static_cast<int>(spec.op), static_cast<int>(ch.algo), static_cast<int>(ch.proto),
                               ch.channels, c.phases[static_cast<std::size_t>(phase)].dims_mask, base, c.group_id);
    std::unique_ptr<TransferShape>& shape = nccl_shapes_[key];
    if (!shape) {
      shape = std::make_unique<TransferShape>(
          nccl_shape(topo_, spec.op, ch, c.nccl_ppn, members, net_.wants_messages()));
    }
    return *shape;
  }
  if (c.group_id < 0 && !is_rooted(c.req.op)) {
    const std::uint32_t mask = c.phases[static_cast<std::size_t>(phase)].dims_mask;
    return shapes_.get(shape_key(spec.op, spec.algorithm, mask, base), spec.op, spec.algorithm, members);
  }
  auto key = std::make_tuple(static_cast<int>(spec.op), spec.algorithm->id, std::vector<Rank>(members.begin(), members.end()));
  const auto it = listed_index_.emplace(std::move(key), static_cast<std::uint32_t>(listed_index_.size())).first;
  return listed_shapes_.get(it->second, spec.op, spec.algorithm, members);
}

std::uint64_t CollectiveEngine::queue_key(const Collective& c, const Phase& ph, long long instance) const {
  // Dimension masks use the low 16 bits; explicit groups are counted above them.
  if (c.group_id >= 0) return pack_key(0x80000000u | static_cast<std::uint32_t>(c.group_id), 0);
  return pack_key(ph.dims_mask, static_cast<std::uint32_t>(base_rank(ph, instance)));
}

void CollectiveEngine::dim_members(const PhaseSpec& spec, Rank base, std::vector<Rank>& out) const {
  // Member order: the first listed dimension varies fastest.
  out.clear();
  if (spec.dims.size() == 1) {
    const int d = spec.dims[0];
    for (int k = 0; k < topo_.dim(d).npus; ++k) out.push_back(base + static_cast<Rank>(k) * topo_.stride(d));
    return;
  }
  std::vector<int> digits(spec.dims.size(), 0);
  for (long long m = 0; m < spec.group_size; ++m) {
    Rank r = base;
    for (std::size_t i = 0; i < spec.dims.size(); ++i) r += static_cast<Rank>(digits[i]) * topo_.stride(spec.dims[i]);
    out.push_back(r);
    for (std::size_t i = 0; i < spec.dims.size(); ++i) {
      if (++digits[i] < topo_.dim(spec.dims[i]).npus) break;
      digits[i] = 0;
    }
  }
}

void CollectiveEngine::arrive(CollectiveId id, Rank rank) {
  if (id >= collectives_.size()) throw std::logic_error("unknown collective id");
  if (rank < 0 || rank >= topo_.num_npus()) throw std::logic_error("rank out of range");
  Collective& c = collectives_[id];
  if (!simulated(rank)) throw std::logic_error("symmetric simulation: only representative ranks arrive");
  // A finished collective keeps no per-rank state (rank_finished).
  if (finished(id)) throw std::logic_error("rank " + std::to_string(rank) + " arrived twice at collective " + c.req.name);
  if (c.group_id >= 0 && !std::binary_search(group_members(c).begin(), group_members(c).end(), rank)) {
    throw std::logic_error("rank " + std::to_string(rank) + " is not a member of collective " + c.req.name);
  }
  if (c.rank_arrived[slot(rank)]) {
    throw std::logic_error("rank " + std::to_string(rank) + " arrived twice at collective " + c.req.name);
  }
  c.rank_arrived[slot(rank)] = 1;
  ++c.arrivals;
  c.first_arrival = std::min(c.first_arrival, sim_.now());
  if (c.phases.empty()) {
    // Nothing to communicate: done at once, reported from an event.
    sim_.schedule_in(0, this, pack_key(id, static_cast<std::uint32_t>(rank)),
                     EventPriority::kCompletion);
    return;
  }
  Phase& ph = c.phases[0];
  const long long g = instance_of(ph, rank);
  const std::int32_t group = needed(c, 0);
  for (int chunk = 0; chunk < c.chunks; ++chunk) {
    if (++ph.arrived[g * c.chunks + chunk] == group) ready(id, 0, g, chunk);
  }
  if (c.coupled && ++c.span_arrived[static_cast<std::size_t>(span_index(c, rank))] == c.group_npus) {
    // The whole collective group is here: its chunks may enter now, from
    // whichever first-phase group has a slot.
    span_members(c, rank, scratch_span_);
    for (Rank r : scratch_span_) {
      const std::int32_t q = ph.queue[static_cast<std::size_t>(instance_of(ph, r))];
      if (q >= 0 && queues_[static_cast<std::size_t>(q)].running < cfg_.active_chunks_per_dim) request_dispatch(q);
    }
  }
}

long long CollectiveEngine::span_index(const Collective& c, Rank r) const {
  long long idx = 0, weight = 1;
  for (int d = 0; d < topo_.num_dims(); ++d) {
    if (c.span_mask & (1u << d)) continue;
    idx += topo_.coord(r, d) * weight;
    weight *= topo_.dim(d).npus;
  }
  return idx;
}

void CollectiveEngine::span_members(const Collective& c, Rank r, std::vector<Rank>& out) const {
  // Rank order: the lowest dimension varies fastest.
  std::vector<int> dims;
  Rank base = r;
  for (int d = 0; d < topo_.num_dims(); ++d) {
    if (!(c.span_mask & (1u << d))) continue;
    dims.push_back(d);
    base -= static_cast<Rank>(topo_.coord(r, d)) * topo_.stride(d);
  }
  out.clear();
  std::vector<int> digits(dims.size(), 0);
  for (long long m = 0; m < c.group_npus; ++m) {
    Rank at = base;
    for (std::size_t i = 0; i < dims.size(); ++i) at += static_cast<Rank>(digits[i]) * topo_.stride(dims[i]);
    out.push_back(at);
    for (std::size_t i = 0; i < dims.size(); ++i) {
      if (++digits[i] < topo_.dim(dims[i]).npus) break;
      digits[i] = 0;
    }
  }
}

void CollectiveEngine::arrive_all(CollectiveId id) {
  if (rep_ >= 0) {
    arrive(id, rep_);
    return;
  }
  if (collectives_[id].group_id >= 0) {
    const std::vector<Rank>& ranks = group_members(collectives_[id]);
    for (Rank r : ranks) {
      if (simulated(r)) arrive(id, r);
    }
    return;
  }
  for (Rank r = 0; r < topo_.num_npus(); ++r) arrive(id, r);
}

namespace {
constexpr std::uint64_t kDispatchTag = ~0ULL;
}  // namespace

void CollectiveEngine::handle_event(std::uint64_t tag) {
  if (tag == kDispatchTag) {
    dispatch_pending_ = false;
    std::vector<std::int32_t> queues;
    queues.swap(dispatch_queues_);
    std::sort(queues.begin(), queues.end());
    // A queue stays marked until its turn: asking for it again before then
    // (a chunk entering elsewhere made room for it here) changes nothing.
    for (std::int32_t q : queues) {
      dispatch_marked_[static_cast<std::size_t>(q)] = 0;
      dispatch(q);
    }
    return;
  }
  rank_finished(key_hi(tag), static_cast<Rank>(key_lo(tag)));
}

void CollectiveEngine::request_dispatch(std::int32_t q) {
  if (q == dispatching_) {
    redispatch_ = true;  // dispatch(q) asks again as it ends, if it can run more
    return;
  }
  if (dispatch_marked_.size() <= static_cast<std::size_t>(q)) dispatch_marked_.resize(queues_.size(), 0);
  if (dispatch_marked_[static_cast<std::size_t>(q)]) return;  // pending already
  dispatch_marked_[static_cast<std::size_t>(q)] = 1;
  dispatch_queues_.push_back(q);
  if (!dispatch_pending_) {
    dispatch_pending_ = true;
    sim_.schedule_in(0, this, kDispatchTag, EventPriority::kDefault);
  }
}

void CollectiveEngine::ready(CollectiveId id, int phase, long long instance, int chunk) {
  Collective& c = collectives_[id];
  Phase& ph = c.phases[phase];
  std::int32_t q = ph.queue[instance];
  if (q < 0) {
    const std::uint64_t key = queue_key(c, ph, instance);
    auto [it, inserted] = queue_index_.emplace(key, static_cast<std::int32_t>(queues_.size()));
    if (inserted) queues_.emplace_back();
    q = it->second;
    ph.queue[instance] = q;
  }
  const std::int64_t order = cfg_.policy == SchedulingPolicy::kLifo ? -c.serial : c.serial;
  GroupQueue& gq = queues_[q];
  if (phase == 0 && gated_) {
    Entering& e = entering_[pack_key(id, static_cast<std::uint32_t>(q))];
    if (e.head >= 0 && e.instance == instance && chunk > (e.rest.empty() ? e.head : e.rest.back())) {
      e.rest.push_back(chunk);
      request_dispatch(q);
      return;
    }
    if (e.head < 0) {
      e.head = chunk;
      e.instance = instance;
    }  // else out of order: waits in the heap on its own
  }
  gq.push(Waiting{order, phase, chunk, id, instance});
  request_dispatch(q);
}

bool CollectiveEngine::admit(const Waiting& w) {
  if (w.phase != 0 || !gated_) return true;
  Collective& c = collectives_[w.coll];
  members(c, 0, w.instance, scratch_members_);
  // Room is given at every NPU in one order, the order in which chunks
  // enter their collective (docs/model.md, "ace executor"). A chunk held
  // at some first-phase groups of its collective waits at its later phases
  // for the others; were another chunk let in before it there, and the
  // same at the first groups the other way round, both would wait forever.
  if (c.coupled) {
    std::int32_t& wait = c.entry_wait[static_cast<std::size_t>(w.instance) * c.chunks + w.chunk];
    if (wait == 0) return true;  // entered elsewhere; room held here
    if (wait > 0) {
      // Entered elsewhere and owed room here: taken in order, as it fits.
      for (Rank m : scratch_members_) settle_owed(m);
      return wait == 0;
    }
    // The first group to let it in: only once every rank of its collective
    // group has arrived (so that the room it takes everywhere never waits
    // on a rank that must first finish something else there).
    if (c.span_arrived[static_cast<std::size_t>(span_index(c, scratch_members_.front()))] < c.group_npus) return false;
  }
  if (owed_total_ > 0 && owes(scratch_members_)) return false;  // older chunks first
  if (!endpoints_->try_enter(scratch_members_, chunk_bytes(c))) return false;
  if (c.coupled) start_entry(w.coll, w.instance, w.chunk);
  return true;
}

bool CollectiveEngine::owes(std::span<const Rank> ranks) const {
  for (Rank r : ranks) {
    if (!owed_[static_cast<std::size_t>(r)].empty()) return true;
  }
  return false;
}

namespace {
// start_entry: marks a first-phase group with a member whose NPU is not
// made yet, a bit above its waiting count (a group has fewer than
// limits::kMaxNpus = 2^24 members).
constexpr std::int32_t kUntouched = 1 << 24;
}  // namespace

void CollectiveEngine::start_entry(CollectiveId id, long long instance, int chunk) {
  Collective& c = collectives_[id];
  const Phase& ph = c.phases[0];
  c.entry_wait[static_cast<std::size_t>(instance) * c.chunks + chunk] = 0;
  if (owed_.empty()) owed_.resize(static_cast<std::size_t>(topo_.num_npus()));
  span_members(c, base_rank(ph, instance), scratch_span_);
  scratch_instances_.clear();
  const ChunkBytes bytes = chunk_bytes(c);
  for (Rank n : scratch_span_) {
    const long long g = instance_of(ph, n);
    if (g == instance) continue;
    std::int32_t& wait = c.entry_wait[static_cast<std::size_t>(g) * c.chunks + chunk];
    if (wait < 0) {
      wait = 0;
      scratch_instances_.push_back(g);
    }
    // Room now where nothing older is owed; an NPU not yet touched takes
    // it when its group first asks (so NPUs are made in the same order).
    std::vector<Owed>& list = owed_[static_cast<std::size_t>(n)];
    if (list.empty()) {
      if (!endpoints_->touched(n)) {
        wait |= kUntouched;  // its group's dispatch takes the room (settle_owed)
      } else if (endpoints_->try_enter(std::span<const Rank>(&n, 1), bytes)) {
        continue;
      }
    }
    list.push_back(Owed{id, chunk});
    ++owed_total_;
    ++wait;
  }
  // The groups that may run it now, or that must ask for room themselves,
  // are dispatched; the others when room frees (a chunk leaving).
  for (long long g : scratch_instances_) {
    std::int32_t& wait = c.entry_wait[static_cast<std::size_t>(g) * c.chunks + chunk];
    const bool untouched = (wait & kUntouched) != 0;
    wait &= kUntouched - 1;
    const std::int32_t q = ph.queue[static_cast<std::size_t>(g)];
    if ((wait == 0 || untouched) && q >= 0 && queues_[static_cast<std::size_t>(q)].running < cfg_.active_chunks_per_dim) {
      request_dispatch(q);
    }
  }
}

void CollectiveEngine::settle_owed(Rank r) {
  if (owed_total_ == 0) return;
  std::vector<Owed>& list = owed_[static_cast<std::size_t>(r)];
  std::size_t done = 0;
  while (done < list.size()) {
    const Owed o = list[done];
    Collective& c = collectives_[o.coll];
    if (!endpoints_->try_enter(std::span<const Rank>(&r, 1), chunk_bytes(c))) break;
    ++done;
    const Phase& ph = c.phases[0];
    const long long g = instance_of(ph, r);
    if (--c.entry_wait[static_cast<std::size_t>(g) * c.chunks + o.chunk] == 0) {
      const std::int32_t q = ph.queue[static_cast<std::size_t>(g)];
      if (q >= 0 && queues_[static_cast<std::size_t>(q)].running < cfg_.active_chunks_per_dim) request_dispatch(q);
    }
  }
  list.erase(list.begin(), list.begin() + static_cast<std::ptrdiff_t>(done));
  owed_total_ -= done;
}

void CollectiveEngine::dispatch(std::int32_t q) {
  dispatching_ = q;
  redispatch_ = false;
  dispatch_queue(q);
  dispatching_ = -1;
  const GroupQueue& gq = queues_[q];
  if (redispatch_ && gq.running < cfg_.active_chunks_per_dim && !gq.heap.empty()) request_dispatch(q);
}

void CollectiveEngine::dispatch_queue(std::int32_t q) {
  GroupQueue& gq = queues_[q];
  while (gq.running < cfg_.active_chunks_per_dim && !gq.heap.empty()) {
    // The best waiting chunk that can run now. A chunk entering a
    // collective may need room at every member's endpoint (admit); while it
    // waits for some, work behind it that needs none (later phases of other
    // collectives, whose completion frees room) must not wait with it, or
    // the group deadlocks.
    skipped_.clear();
    bool found = false;
    while (!gq.heap.empty()) {
      std::pop_heap(gq.heap.begin(), gq.heap.end(), GroupQueue::later);
      const Waiting w = gq.heap.back();
      gq.heap.pop_back();
      if (admit(w)) {
        for (const Waiting& s : skipped_) {
          gq.push(s);
        }
        ++gq.running;
        launch(w, q);
        if (w.phase == 0 && gated_) next_entering(w, q);
        found = true;
        break;
      }
      skipped_.push_back(w);
    }
    if (!found) {
      for (const Waiting& s : skipped_) {
        gq.push(s);
      }
      entry_blocked_.push_back(q);
      return;
    }
  }
}

bool CollectiveEngine::GroupQueue::later(const Waiting& a, const Waiting& b) {
  return runs_later(a.order, a.phase, a.chunk, b.order, b.phase, b.chunk);
}

void CollectiveEngine::GroupQueue::push(const Waiting& w) {
  heap.push_back(w);
  std::push_heap(heap.begin(), heap.end(), later);
}

void CollectiveEngine::next_entering(const Waiting& w, std::int32_t q) {
  const auto it = entering_.find(pack_key(w.coll, static_cast<std::uint32_t>(q)));
  if (it == entering_.end() || it->second.head != w.chunk || it->second.instance != w.instance) return;
  Entering& e = it->second;
  if (e.rest.empty()) {
    entering_.erase(it);
    return;
  }
  e.head = e.rest.front();
  e.rest.pop_front();
  queues_[q].push(Waiting{w.order, 0, e.head, w.coll, w.instance});
}

void CollectiveEngine::launch(const Waiting& w, std::int32_t q) {
  Collective& c = collectives_[w.coll];
  const PhaseSpec& spec = c.specs[w.phase];
  const Phase& ph = c.phases[w.phase];
  const Rank base = base_rank(ph, w.instance);
  members(c, w.phase, w.instance, scratch_members_);
  const TransferShape& shape = shape_of(c, w.phase, base, scratch_members_);
  const std::uint32_t slot = running_.acquire();
  running_[slot] = RunningPhase{true, w.coll, w.phase, w.chunk, w.instance, q};
  ++phases_run_;
  const double bytes = c.chunk_bytes * spec.size_factor;
  // Several representatives: the groups like this one (of no representative).
  const double replicas = rep_ >= 0    ? static_cast<double>(ph.full_instances)
                          : reps_.empty() ? 1.0
                                          : static_cast<double>(topo_.num_npus()) * static_cast<double>(c.participants) /
                                                (static_cast<double>(reps_.size()) * static_cast<double>(c.group_npus));
  // NCCL's hop latency stands for the endpoint's per-step delay.
  // An executor's own per-step cost (copy engines' launch and sync) adds to
  // it where the executor moves the data, not the library's kernels.
  const TimePs step_ps = (c.nccl ? c.nccl->step_ps : cfg_.endpoint_delay_ps) +
                         (endpoints_ && c.kernels.units == 0 ? endpoints_->step_latency_ps() : 0);
  if (endpoints_ == nullptr) {
    net_.start(shape, bytes, step_ps, this, slot, nullptr, replicas);
    return;
  }
  PhaseCost cost;
  cost.op = spec.op;
  cost.collective = w.coll;
  cost.first = w.phase == 0;
  cost.last = w.phase + 1 == static_cast<int>(c.specs.size());
  cost.in_bytes = c.chunk_in;
  cost.out_bytes = c.chunk_out;
  cost.kernels = c.kernels;
  endpoints_->phase_begin(w.coll, scratch_members_, c.kernels.units);
  endpoints_->phase_load(cost, scratch_members_, shape, bytes, load_);
  endpoints_->record_traffic(shape, bytes);
  net_.start(shape, bytes, step_ps, this, slot, &load_, replicas);
}

void CollectiveEngine::transfer_done(std::uint64_t tag) {
  // Invariant: every phase of every chunk completes exactly once.
  if (tag >= running_.size() || !running_[tag].active) {
    throw std::logic_error("invariant broken: a transfer was reported done twice (or never started)");
  }
  running_[tag].active = false;
  const RunningPhase rp = running_[tag];
  running_.release(static_cast<std::uint32_t>(tag));
  --queues_[rp.queue].running;
  advance(rp);
  request_dispatch(rp.queue);
  if (!entry_blocked_.empty() && entry_freed_) {
    entry_freed_ = false;
    std::vector<std::int32_t> blocked;
    blocked.swap(entry_blocked_);
    for (std::int32_t q : blocked) request_dispatch(q);
  }
}

void CollectiveEngine::advance(const RunningPhase& rp) {
  Collective& c = collectives_[rp.coll];
  ++c.phase_runs_done;
  std::vector<Rank>& group = scratch_advance_;
  members(c, rp.phase, rp.instance, group);
  if (endpoints_ != nullptr) endpoints_->phase_end(rp.coll, group);
  const int next = rp.phase + 1;
  if (next < static_cast<int>(c.phases.size())) {
    const std::int32_t size = needed(c, next);
    for (Rank r : group) {
      if (!simulated(r)) continue;
      Phase& nph = collectives_[rp.coll].phases[next];
      const long long g = instance_of(nph, r);
      if (++nph.arrived[g * c.chunks + rp.chunk] == size) ready(rp.coll, next, g, rp.chunk);
    }
    return;
  }
  const ChunkBytes chunk{c.chunk_in, c.chunk_out, c.kernels.streamed};
  for (Rank r : group) {
    if (!simulated(r)) continue;
    if (endpoints_ != nullptr && endpoints_->leave(r, chunk)) entry_freed_ = true;
    const std::int32_t done = ++collectives_[rp.coll].rank_chunks_done[slot(r)];
    if (done > c.chunks) throw std::logic_error("invariant broken: a rank finished a chunk of a collective twice");
    if (done == c.chunks) rank_finished(rp.coll, r);
  }
}

void CollectiveEngine::rank_finished(CollectiveId id, Rank r) {
  Collective& c = collectives_[id];
  ++c.ranks_done;
  if (c.ranks_done == c.participants) {
    c.finish = sim_.now();
    // Done: what only a running collective needs goes back to the heap now
    // (a training run creates hundreds of thousands of collectives), keeping
    // what reports read (operation, size, plan, timings).
    std::vector<Phase>().swap(c.phases);
    std::vector<std::int32_t>().swap(c.entry_wait);
    std::vector<std::int32_t>().swap(c.span_arrived);
    std::vector<std::int32_t>().swap(c.rank_chunks_done);
    std::vector<std::uint8_t>().swap(c.rank_arrived);
  }
  if (c.listener != nullptr) c.listener->collective_done(id, r);
}

std::size_t CollectiveEngine::unfinished() const {
  std::size_t n = 0;
  for (CollectiveId id = 0; id < collectives_.size(); ++id) n += finished(id) ? 0 : 1;
  return n;
}

std::vector<std::string> CollectiveEngine::stuck_report() const {
  std::vector<std::string> lines;
  for (CollectiveId id = 0; id < collectives_.size(); ++id) {
    if (finished(id)) continue;
    const Collective& c = collectives_[id];
    std::string line = "collective " + std::to_string(id) + " (" + std::string(to_string(c.req.op));
    if (!c.req.name.empty()) line += " '" + c.req.name + "'";
    line += "): " + std::to_string(c.arrivals) + "/" + std::to_string(c.participants) + " ranks arrived, " +
            std::to_string(c.ranks_done) + " done";
    if (c.arrivals < c.participants) {
      line += "; missing ranks";
      int shown = 0;
      for (Rank r = 0; r < topo_.num_npus() && shown < 8; ++r) {
        if (!simulated(r)) continue;
        const bool member = c.group_id < 0 || std::binary_search(group_members(c).begin(), group_members(c).end(), r);
        if (member && !c.rank_arrived[slot(r)]) {
          line += " " + std::to_string(r);
          ++shown;
        }
      }
      if (c.participants - c.arrivals > shown) line += " ...";
    }
    for (std::size_t p = 0; p < c.phases.size(); ++p) {
      const Phase& ph = c.phases[p];
      const std::int32_t need = needed(c, static_cast<int>(p));
      long long partial = 0;
      std::string example;
      for (long long g = 0; g < ph.instances; ++g) {
        for (int k = 0; k < c.chunks; ++k) {
          const std::int32_t a = ph.arrived[static_cast<std::size_t>(g * c.chunks + k)];
          if (a > 0 && a < need) {
            if (partial++ == 0) {
              example = " (e.g. chunk " + std::to_string(k) + " on the group of rank " +
                        std::to_string(base_rank(ph, g)) + ": " + std::to_string(a) + " of " + std::to_string(need) +
                        " members ready)";
            }
          }
        }
      }
      if (partial > 0) {
        std::string dims;
        for (std::size_t i = 0; i < c.specs[p].dims.size(); ++i) dims += (i ? "," : "") + std::to_string(c.specs[p].dims[i]);
        const std::string on = c.group_id >= 0 ? " on its listed ranks" : " on dimension " + dims;
        line += "; phase " + std::to_string(p) + " (" + std::string(to_string(c.specs[p].op)) + on +
                "): " + std::to_string(partial) + " chunk-groups waiting for members" + example;
      }
    }
    long long queued = 0, running = 0;
    for (const GroupQueue& gq : queues_) {
      for (const Waiting& w : gq.heap) queued += w.coll == id ? 1 : 0;
    }
    for (const RunningPhase& rp : running_) running += rp.active && rp.coll == id ? 1 : 0;
    if (queued > 0) {
      const std::string_view room = endpoints_ != nullptr ? endpoints_->entry_resource() : std::string_view();
      line += "; " + std::to_string(queued) + " chunk-phases queued for a group (slot" +
              (room.empty() ? std::string() : " or " + std::string(room)) + ")";
    }
    if (running > 0) line += "; " + std::to_string(running) + " chunk-phases running";
    const long long owed = std::count_if(c.entry_wait.begin(), c.entry_wait.end(), [](std::int32_t w) { return w > 0; });
    if (owed > 0) {
      const std::string_view room = endpoints_ != nullptr ? endpoints_->entry_resource() : std::string_view();
      line += "; " + std::to_string(owed) + " chunk-groups entered elsewhere, waiting for " +
              (room.empty() ? std::string("room") : std::string(room)) + " here";
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace acesim
