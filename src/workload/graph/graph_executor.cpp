#include "workload/graph/graph_executor.h"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <unordered_set>

#include <fmt/format.h>

#include "algorithm/pattern.h"
#include "config/input_error.h"
#include "engine/key.h"

namespace acesim {
namespace {

constexpr std::uint32_t kP2pKeyBase = 0x80000000u;  // endpoint unit-holding keys of messages
constexpr std::uint64_t kTransferTag = 1ULL << 63;  // an empty message arrives
constexpr std::uint64_t kWakeTag = 1ULL << 62;      // a rank's compute stream wakes up
constexpr std::uint64_t kDelayTag = 1ULL << 61;     // a delay node is done: rank << 32 | node
constexpr std::uint64_t kStartTag = 1ULL << 60;     // a rank that starts late (GraphRunOptions::rank_start_ps) starts

}  // namespace

GraphExecutor::GraphExecutor(Simulation& sim, const Topology& topo, NetworkBackend& net, CollectiveEngine& collectives,
                             Endpoints& endpoint, std::vector<const WorkGraph*> graphs, GraphRunOptions options)
    : sim_(sim),
      topo_(topo),
      net_(net),
      collectives_(collectives),
      endpoints_(endpoint),
      options_(options),
      sim_ranks_(collectives.several_representatives() ? topo.num_npus() : collectives.simulated_ranks()) {
  // Several representatives: every rank has a graph, empty but theirs.
  if (collectives.representative() > 0) throw std::invalid_argument("symmetric runs take rank 0 as the representative");
  // A delay node's event tag packs its rank above bit 32, below kDelayTag.
  if (sim_ranks_ >= (Rank{1} << 29)) throw std::logic_error("graph executor: more than 2^29 ranks");
  if (static_cast<Rank>(graphs.size()) != sim_ranks_) {
    throw std::logic_error(fmt::format("{} graphs for {} simulated ranks", graphs.size(), sim_ranks_));
  }
  const auto dims = static_cast<std::size_t>(topo.num_dims());
  auto init = [dims](RankState& rs, const WorkGraph* g) {
    rs.graph = g;
    rs.dim_in_flight.assign(dims, 0);
    rs.dim_since.assign(dims, 0);
    rs.dim_busy.assign(dims, 0);
  };
  // With several representatives the other ranks' graphs are empty and no
  // collective finishes on them: they keep no state of their own (a 9,216-GPU
  // job simulating 12 ranks would otherwise hold 9,216 states).
  const bool sparse = collectives.several_representatives();
  slot_.assign(static_cast<std::size_t>(sim_ranks_), -1);
  init(idle_, nullptr);
  for (Rank r = 0; r < sim_ranks_; ++r) {
    const WorkGraph* g = graphs[static_cast<std::size_t>(r)];
    if (sparse && g->size() == 0 && !collectives.simulated(r)) {
      ++ranks_done_;
      continue;
    }
    slot_[static_cast<std::size_t>(r)] = static_cast<std::int32_t>(ranks_.size());
    RankState& rs = ranks_.emplace_back();
    init(rs, g);
    rs.pending = g->indegree();
    nodes_total_ += g->size();
    rs.wait_ready.assign(g->waits(), 0);
    if (kept(r)) rs.timing.assign(g->size(), NodeTiming{});
  }
  graphs_ = std::move(graphs);
  check_collectives();
}

void GraphExecutor::check_collectives() const {
  // Each distinct collective (operation and group) once; ranks running the
  // same program share a graph.
  std::set<std::tuple<CollectiveOp, std::vector<int>, std::vector<Rank>>> runnable;
  std::unordered_set<const WorkGraph*> graphs;
  for (Rank r = 0; r < sim_ranks_; ++r) {
    if (slot_[static_cast<std::size_t>(r)] < 0) continue;
    const WorkGraph& g = *graphs_[static_cast<std::size_t>(r)];
    if (!graphs.insert(&g).second) continue;
    std::vector<bool> checked(g.collectives(), false);
    for (std::uint32_t i = 0; i < g.size(); ++i) {
      const GraphNode& n = g.node(i);
      if (n.kind != WorkNodeKind::kCollective || checked[n.payload]) continue;
      checked[n.payload] = true;
      const CollectiveSpec& c = g.collective(n.payload);
      auto key = std::make_tuple(c.op, c.members.empty() ? c.dims : std::vector<int>{}, c.members);
      if (runnable.contains(key)) continue;
      if (auto why = collectives_.refusal(c.op, c.dims, c.members)) throw InputError(where(r, i) + ": " + *why);
      runnable.insert(std::move(key));
    }
  }
}

std::string GraphExecutor::where(Rank r, std::uint32_t node) const {
  const WorkGraph& g = graph(r);
  if (g.where) return g.where(node);
  return fmt::format("{}: rank {} node {}", g.source, r, node);
}

void GraphExecutor::start() {
  for (Rank r = 0; r < sim_ranks_; ++r) {
    if (slot_[static_cast<std::size_t>(r)] < 0) continue;  // idle: counted done
    RankState& rs = rank(r);
    const std::uint32_t n = rs.graph->size();
    if (n == 0) {
      ++ranks_done_;
      continue;
    }
    const auto late = static_cast<std::size_t>(r);
    if (late < options_.rank_start_ps.size() && options_.rank_start_ps[late] > 0) {
      sim_.schedule_at(options_.rank_start_ps[late], this, kStartTag | static_cast<std::uint64_t>(r));
      continue;
    }
    start_rank(r);
  }
  drain();
}

void GraphExecutor::start_rank(Rank r) {
  RankState& rs = rank(r);
  for (std::uint32_t i = 0; i < rs.graph->size(); ++i) {
    if (rs.pending[i] == 0) ready(r, i);
  }
}

void GraphExecutor::ready(Rank r, std::uint32_t node) {
  RankState& rs = rank(r);
  if (kept(r)) rs.timing[node].ready = sim_.now();
  switch (rs.graph->node(node).kind) {
    case WorkNodeKind::kCompute:
      rs.compute.queue.push_back(node);
      start_stream(r, rs.compute);
      return;
    case WorkNodeKind::kCpu:
      rs.cpu.queue.push_back(node);
      start_stream(r, rs.cpu);
      return;
    case WorkNodeKind::kDelay: {
      if (kept(r)) rs.timing[node].start = sim_.now();
      const TimePs t = std::max<TimePs>(0, rs.graph->kernel(rs.graph->node(node).payload).time_ps);
      sim_.schedule_in(t, this, kDelayTag | static_cast<std::uint64_t>(r) << 32 | node);
      return;
    }
    case WorkNodeKind::kCollective: issue_collective(r, node); return;
    case WorkNodeKind::kSend: issue_send(r, node); return;
    case WorkNodeKind::kRecv: issue_recv(r, node); return;
    case WorkNodeKind::kWait:  // reached through wait_dep_done only
    case WorkNodeKind::kNop: break;
  }
  if (kept(r)) rs.timing[node].start = sim_.now();
  completed_.push_back({r, node, sim_.now()});
}

void GraphExecutor::start_stream(Rank r, Stream& s) {
  RankState& rs = rank(r);
  const bool compute = &s == &rs.compute;
  while (!s.running && !s.queue.empty()) {
    const std::uint32_t node = s.queue.front();
    s.queue.pop_front();
    if (kept(r)) rs.timing[node].start = sim_.now();
    const Kernel& k = rs.graph->kernel(rs.graph->node(node).payload);
    if (k.time_ps == 0 || (k.time_ps < 0 && k.flops <= 0.0 && k.hbm_bytes <= 0.0)) {
      completed_.push_back({r, node, sim_.now()});  // nothing to run
      continue;
    }
    s.running = true;
    s.node = node;
    s.since = sim_.now();
    // The compute stream runs a kernel through the NPU model; the CPU a delay.
    if (compute) {
      endpoints_.start_kernel(r, k, this, static_cast<std::uint64_t>(r));
    } else {
      sim_.schedule_in(k.time_ps, this, static_cast<std::uint64_t>(r));
    }
  }
}

void GraphExecutor::stream_done(Rank r, Stream& s) {
  s.running = false;
  s.busy += sim_.now() - s.since;
  completed_.push_back({r, s.node, s.since});
  start_stream(r, s);
  drain();
}

// Rank r's stream reached `wait` (its parent is the stream node before it),
// or one of the communications it waits for is done.
void GraphExecutor::wait_dep_done(Rank r, std::uint32_t wait, std::uint32_t parent, TimePs delay) {
  RankState& rs = rank(r);
  const WorkGraph& g = *rs.graph;
  const GraphNode& w = g.node(wait);
  const TimePs now = sim_.now();
  const bool comm = is_communication(g.node(parent).kind);
  TimePs& ready_at = rs.wait_ready[w.payload];
  if (comm) ready_at = std::max(ready_at, now + delay);
  const std::int32_t left = --rs.pending[wait];
  if (!comm) {
    rs.parked = wait;
    rs.parked_since = now;
    if (kept(r)) rs.timing[wait].ready = rs.timing[wait].start = now;
    if (left == 0) check_wait(r, wait);
    return;
  }
  // The last communication is done while the stream is at the wait, or
  // sleeps (kResume) right before it.
  if (left != 0 && !(left == 1 && rs.armed != WorkGraph::kNone && rs.armed == w.after)) return;
  const TimePs at = w.rule == WaitRule::kEnd ? now + delay : ready_at;
  sim_.schedule_at(at, this, kWakeTag | static_cast<std::uint64_t>(r), EventPriority::kStart);
  if (w.rule == WaitRule::kResume && left == 0) rs.armed = wait;
}

void GraphExecutor::check_wait(Rank r, std::uint32_t wait) {
  RankState& rs = rank(r);
  const TimePs at = rs.wait_ready[rs.graph->node(wait).payload];
  if (at <= sim_.now()) {
    release_wait(r, wait);
  } else {
    sim_.schedule_at(at, this, kWakeTag | static_cast<std::uint64_t>(r), EventPriority::kStart);
  }
}

void GraphExecutor::release_wait(Rank r, std::uint32_t wait) {
  RankState& rs = rank(r);
  TimePs since = sim_.now();
  if (rs.parked == wait) {
    since = rs.parked_since;
    rs.parked = WorkGraph::kNone;
  }
  if (rs.armed == wait) rs.armed = WorkGraph::kNone;
  completed_.push_back({r, wait, since});
}

// Any wake-up ends a kResume sleep; otherwise the wait the stream is at is
// checked again.
void GraphExecutor::wake(Rank r) {
  RankState& rs = rank(r);
  if (rs.armed != WorkGraph::kNone) {
    release_wait(r, rs.armed);
  } else if (rs.parked != WorkGraph::kNone && rs.pending[rs.parked] == 0) {
    check_wait(r, rs.parked);
  }
  drain();
}

void GraphExecutor::comm_begin(Rank r, std::uint32_t dims) {
  // A rank without state (a mirrored put's destination, outside the ranks
  // simulated) keeps no communication account.
  if (slot_[static_cast<std::size_t>(r)] < 0) return;
  RankState& rs = rank(r);
  for (std::size_t d = 0; d < rs.dim_in_flight.size(); ++d) {
    if ((dims >> d & 1u) != 0 && rs.dim_in_flight[d]++ == 0) rs.dim_since[d] = sim_.now();
  }
  if (rs.comm_in_flight++ == 0) rs.comm_since = sim_.now();
}

void GraphExecutor::comm_end(Rank r, std::uint32_t dims) {
  if (slot_[static_cast<std::size_t>(r)] < 0) return;
  RankState& rs = rank(r);
  for (std::size_t d = 0; d < rs.dim_in_flight.size(); ++d) {
    if ((dims >> d & 1u) != 0 && --rs.dim_in_flight[d] == 0) rs.dim_busy[d] += sim_.now() - rs.dim_since[d];
  }
  if (--rs.comm_in_flight > 0) return;
  rs.comm_busy += sim_.now() - rs.comm_since;
  if (kept(r)) rs.comm_intervals.push_back({rs.comm_since, sim_.now()});
}

// Dimension-ordered routes cross exactly the dimensions whose coordinates differ.
std::uint32_t GraphExecutor::route_dims(Rank src, Rank dst) const {
  std::uint32_t mask = 0;
  for (int d = 0; d < topo_.num_dims(); ++d) {
    if (topo_.coord(src, d) != topo_.coord(dst, d)) mask |= 1u << d;
  }
  return mask;
}

void GraphExecutor::issue_collective(Rank r, std::uint32_t node) {
  RankState& rs = rank(r);
  if (kept(r)) rs.timing[node].start = sim_.now();
  const std::uint32_t payload = rs.graph->node(node).payload;
  const CollectiveSpec& c = rs.graph->collective(payload);
  // Collectives match across ranks by their group and their order on it:
  // a dimension mask, or (bit 31 set) the engine's number of a listed group.
  if (rs.payload_group.empty()) rs.payload_group.assign(rs.graph->collectives(), 0);
  std::uint64_t& known = rs.payload_group[payload];
  if (known == 0) {
    if (c.members.empty()) {
      known = dims_mask(c.dims, topo_);
    } else {
      std::int32_t g;
      try {
        g = collectives_.group(c.members);
      } catch (const std::invalid_argument& e) {
        if (!rs.graph->where) throw;
        throw InputError(where(r, node) + ": " + e.what());
      }
      known = (static_cast<std::uint64_t>(g) + 1) << 32 | 0x80000000u | static_cast<std::uint32_t>(g);
    }
  }
  const auto mask = static_cast<std::uint32_t>(known);
  const std::int32_t group = static_cast<std::int32_t>(known >> 32) - 1;
  const std::uint32_t seq = rs.coll_seq[mask]++;
  const std::uint64_t key = pack_key(mask, seq);
  auto it = colls_.find(key);
  if (it == colls_.end()) {
    CollectiveRequest req;
    req.op = c.op;
    req.bytes = c.bytes;
    req.dims = c.dims;
    req.name = c.name;
    req.members = c.members;
    req.group = group;
    req.root = c.root;
    CollectiveId id;
    try {
      id = collectives_.create(req, this);
    } catch (const std::invalid_argument& e) {
      if (!rs.graph->where) throw;
      throw InputError(where(r, node) + ": " + e.what());
    }
    it = colls_.emplace(key, Coll{id, c.op, c.bytes, c.root, r, node}).first;
    created_.emplace_back(r, node);
  } else if (it->second.op != c.op || it->second.bytes != c.bytes) {
    const Coll& first = it->second;
    throw InputError(fmt::format(
        "{}: collective {} over dimensions mask {:#x} is {} of {:.0f} bytes, but {} (the same collective on rank {}) "
        "is {} of {:.0f} bytes",
        where(r, node), seq, mask, to_string(c.op), c.bytes, where(first.first_rank, first.first_node), first.first_rank,
        to_string(first.op), first.bytes));
  } else if (it->second.root != c.root) {
    const Coll& first = it->second;
    throw InputError(fmt::format("{}: {} {} has its root at position {} of its group, but {} (the same collective on "
                                 "rank {}) at position {}",
                                 where(r, node), to_string(c.op), seq, c.root, where(first.first_rank, first.first_node),
                                 first.first_rank, first.root));
  }
  coll_node_[pack_key(it->second.id, static_cast<std::uint32_t>(r))] = {node, sim_.now(), mask, key};
  comm_begin(r, mask);
  collectives_.arrive(it->second.id, r);
}

const TransferShape& GraphExecutor::p2p_shape(Rank src, Rank dst) {
  const std::uint64_t key = pack_key(static_cast<std::uint32_t>(src), static_cast<std::uint32_t>(dst));
  auto it = p2p_shapes_.find(key);
  if (it == p2p_shapes_.end()) {
    Pattern p;
    PatternStep st;
    st.messages.push_back({0, 1, 1.0});
    p.steps.push_back(st);
    const Rank members[2] = {src, dst};
    it = p2p_shapes_.emplace(key, std::make_unique<TransferShape>(build_shape(topo_, p, members, net_.wants_messages()))).first;
  }
  return *it->second;
}

void GraphExecutor::issue_send(Rank r, std::uint32_t node) {
  RankState& rs = rank(r);
  if (kept(r)) rs.timing[node].start = sim_.now();
  const MessageSpec& m = rs.graph->message(rs.graph->node(node).payload);
  const Rank dst = m.peer;
  const double bytes = m.bytes;
  const auto idx = static_cast<std::uint32_t>(transfers_.size());
  transfers_.push_back(Transfer{r, dst, node, -1, bytes, false, sim_.now(), 0});
  const MessageKey key{r, dst, m.tag};
  // A mirrored put: no receive will claim it, so it waits for none.
  auto w = m.mirrored ? waiting_recvs_.end() : waiting_recvs_.find(key);
  if (w != waiting_recvs_.end() && !w->second.empty()) {
    transfers_[idx].recv_node = w->second.front().first;
    transfers_[idx].posted = w->second.front().second;
    w->second.pop_front();
    if (w->second.empty()) waiting_recvs_.erase(w);  // keys are seldom reused: keep the map to what waits
  } else if (!m.mirrored) {
    unmatched_sends_[key].push_back(idx);
  }
  const std::uint32_t route = route_dims(r, dst);
  comm_begin(r, route);
  comm_begin(dst, route);
  if (bytes <= 0.0) {
    sim_.schedule_in(0, this, kTransferTag | idx);
    return;
  }
  // A message moves through the links of its route; at the endpoints it is
  // a copy (read at the source, written at the destination).
  const TransferShape& shape = p2p_shape(r, dst);
  members_.assign({r, dst});
  PhaseCost cost;
  cost.op = CollectiveOp::kAllGather;
  cost.first = cost.last = true;
  cost.in_bytes = cost.out_bytes = bytes / 2.0;  // ACE: one HBM pass at each end
  cost.collective = kP2pKeyBase + idx % kP2pKeyBase;
  endpoints_.phase_begin(cost.collective, members_);
  endpoints_.phase_load(cost, members_, shape, bytes, load_);
  endpoints_.record_traffic(shape, bytes);
  net_.start(shape, bytes, collectives_.config().endpoint_delay_ps + endpoints_.step_latency_ps(), this, idx, &load_);
}

void GraphExecutor::issue_recv(Rank r, std::uint32_t node) {
  RankState& rs = rank(r);
  if (kept(r)) rs.timing[node].start = sim_.now();
  const MessageSpec& m = rs.graph->message(rs.graph->node(node).payload);
  const MessageKey key{m.peer, r, m.tag};
  auto s = unmatched_sends_.find(key);
  if (s != unmatched_sends_.end() && !s->second.empty()) {
    Transfer& t = transfers_[s->second.front()];
    s->second.pop_front();
    if (s->second.empty()) unmatched_sends_.erase(s);
    t.recv_node = node;
    t.posted = sim_.now();
    if (t.delivered) completed_.push_back({r, node, t.posted});
    return;
  }
  waiting_recvs_[key].emplace_back(node, sim_.now());
}

void GraphExecutor::transfer_done(std::uint64_t tag) {
  Transfer& t = transfers_[tag];
  t.delivered = true;
  if (t.bytes > 0.0) {
    members_.assign({t.src, t.dst});
    endpoints_.phase_end(kP2pKeyBase + static_cast<std::uint32_t>(tag) % kP2pKeyBase, members_);
  }
  const std::uint32_t route = route_dims(t.src, t.dst);
  comm_end(t.src, route);
  comm_end(t.dst, route);
  completed_.push_back({t.src, t.send_node, t.sent});
  if (t.recv_node >= 0) completed_.push_back({t.dst, static_cast<std::uint32_t>(t.recv_node), t.posted});
  drain();
}

void GraphExecutor::complete(const Done& d) {
  RankState& rs = rank(d.rank);
  const TimePs now = sim_.now();
  if (kept(d.rank)) rs.timing[d.node].end = now;
  rs.pending[d.node] = -1;  // done
  rs.last_end = std::max(rs.last_end, now);
  if (options_.observer != nullptr) options_.observer->node_done(d.rank, d.node, d.start, now);
  const WorkGraph& g = *rs.graph;
  const bool waits = g.waits() > 0;  // Chakra graphs have none: skip the lookup
  for (std::uint32_t e = g.child_begin(d.node); e < g.child_end(d.node); ++e) {
    const std::uint32_t child = g.child(e);
    if (waits && g.node(child).kind == WorkNodeKind::kWait) {
      wait_dep_done(d.rank, child, d.node, g.child_delay(e));
    } else if (--rs.pending[child] == 0) {
      ready(d.rank, child);
    }
  }
  ++nodes_done_;
  if (++rs.done == g.size()) {
    ++ranks_done_;
    finish_ = std::max(finish_, now);
  }
}

void GraphExecutor::drain() {
  if (draining_) return;
  draining_ = true;
  // complete() may make more nodes ready and done at once (zero-time nodes):
  // a worklist, not recursion, so long chains do not exhaust the stack.
  for (std::size_t i = 0; i < completed_.size(); ++i) {
    const Done d = completed_[i];
    complete(d);
  }
  completed_.clear();
  draining_ = false;
}

void GraphExecutor::activity_done(std::uint64_t tag) {
  const Rank r = static_cast<Rank>(tag);
  stream_done(r, rank(r).compute);
}

void GraphExecutor::handle_event(std::uint64_t tag) {
  if (tag & kTransferTag) {
    transfer_done(tag & ~kTransferTag);  // an empty message
    return;
  }
  if (tag & kWakeTag) {
    wake(static_cast<Rank>(tag & ~kWakeTag));
    return;
  }
  if (tag & kStartTag) {
    start_rank(static_cast<Rank>(tag & ~kStartTag));
    drain();
    return;
  }
  if (tag & kDelayTag) {
    const auto r = static_cast<Rank>((tag & ~kDelayTag) >> 32);
    const auto node = static_cast<std::uint32_t>(tag & 0xffffffffu);
    const TimePs t = std::max<TimePs>(0, graph(r).kernel(graph(r).node(node).payload).time_ps);
    completed_.push_back({r, node, sim_.now() - t});
    drain();
    return;
  }
  const Rank r = static_cast<Rank>(tag);
  stream_done(r, rank(r).cpu);
}

void GraphExecutor::collective_done(CollectiveId id, Rank r) {
  const auto it = coll_node_.find(pack_key(id, static_cast<std::uint32_t>(r)));
  if (it == coll_node_.end()) throw std::logic_error("graph executor: a collective finished on a rank that never issued it");
  const InFlight f = it->second;
  coll_node_.erase(it);
  if (collectives_.finished(id)) {
    // Every rank taking part has issued it and is done: no rank matches it
    // again, and the engine may give its id to a later collective.
    colls_.erase(f.key);
    collectives_.release(id);
  }
  comm_end(r, f.dims);
  completed_.push_back({r, f.node, f.issued});
  drain();
}

std::vector<std::string> GraphExecutor::stuck_report() const {
  std::vector<std::string> lines;
  for (Rank r = 0; r < sim_ranks_; ++r) {
    const RankState& rs = rank(r);
    const WorkGraph& g = graph(r);
    if (rs.done == g.size()) continue;
    std::string waiting;
    int shown = 0;
    for (std::uint32_t i = 0; i < g.size() && shown < 4; ++i) {
      if (rs.pending[i] != 0 || !is_communication(g.node(i).kind)) continue;  // done, waits on another node, or not communication
      const std::string text = g.pending_text ? g.pending_text(i) : fmt::format("node {} ({})", i, g.node(i).kind == WorkNodeKind::kCollective ? g.collective(g.node(i).payload).name : "message");
      if (text.empty()) continue;
      waiting += " " + text + ";";
      ++shown;
    }
    // Graphs shared by ranks (one program) name the rank; Chakra's name their file.
    const std::string who =
        g.pending_text ? g.source : fmt::format("{} rank {} ({} communications in flight)", g.source, r, rs.comm_in_flight);
    lines.push_back(fmt::format("{}: {} of {} nodes done;{}", who, rs.done, g.size(), waiting.empty() ? " waiting" : waiting));
    if (lines.size() >= 16) {
      lines.push_back("...");
      break;
    }
  }
  for (const std::string& l : collectives_.stuck_report()) lines.push_back(l);
  return lines;
}

void run_graphs(Simulation& sim, GraphExecutor& ex, const Progress& progress) {
  ex.start();
  progress.stage("simulating");
  progress.watch(sim, [&] { return ex.fraction_done(); });
  run_or_report_stuck(sim, [&] { return ex.finished(); }, [&] { return ex.stuck_report(); });
  progress.report(sim.now(), sim.stats().events + sim.stats().completions, 1.0);
}

}  // namespace acesim
