#include "workload/chakra_executor.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "algorithm/pattern.h"
#include "config/input_error.h"
#include "config/platform.h"

namespace acesim {

using chakra::CommType;
using chakra::NodeType;

namespace {

// The collective engine runs these; the rest of the format's types have no
// counterpart in acesim (yet).
std::optional<CollectiveOp> op_of(CommType t) {
  switch (t) {
    case CommType::kAllReduce: return CollectiveOp::kAllReduce;
    case CommType::kAllGather: return CollectiveOp::kAllGather;
    case CommType::kReduceScatter:
    case CommType::kReduceScatterBlock: return CollectiveOp::kReduceScatter;
    case CommType::kAllToAll: return CollectiveOp::kAllToAll;
    case CommType::kBarrier: return CollectiveOp::kAllReduce;  // of one byte: latency only
    default: return std::nullopt;
  }
}

bool on_compute_stream(const chakra::Node& n) {
  return (n.type == NodeType::kComp && !n.is_cpu_op) || n.type == NodeType::kMemLoad || n.type == NodeType::kMemStore;
}

// With groups, two pg_names are the same when their groups span the same
// dimensions (one tensor-parallel group per rank, say).
bool same_group(const chakra::Node& a, const chakra::Node& b, const ChakraGroups* groups) {
  if (a.pg_name == b.pg_name) return true;
  if (groups == nullptr || a.pg_name.empty() || b.pg_name.empty()) return false;
  const auto ga = groups->find(a.pg_name);
  const auto gb = groups->find(b.pg_name);
  return ga != groups->end() && gb != groups->end() && ga->second.dims == gb->second.dims;
}

bool same_node(const chakra::Node& a, const chakra::Node& b, const ChakraGroups* groups) {
  return a.name == b.name && a.type == b.type && a.duration_micros == b.duration_micros && a.is_cpu_op == b.is_cpu_op &&
         a.comm_type == b.comm_type && a.comm_size == b.comm_size && a.involved_dim == b.involved_dim &&
         a.num_ops == b.num_ops && a.tensor_size == b.tensor_size && same_group(a, b, groups) &&
         a.data_deps.size() == b.data_deps.size() && a.ctrl_deps.size() == b.ctrl_deps.size();
}

constexpr std::uint32_t kP2pKeyBase = 0x80000000u;  // endpoint unit-holding keys of messages

}  // namespace

ChakraGroups read_chakra_groups(const std::string& path, const Topology& topo) {
  const std::string text = read_text_file(path);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(path + ": not valid JSON: " + e.what());
  }
  if (!j.is_object()) throw InputError(path + ": must be an object of groups, {\"name\": [ranks...]}");
  ChakraGroups groups;
  for (const auto& item : j.items()) {
    const std::string name = item.key();
    const nlohmann::json& value = item.value();
    const auto problem = [&](const std::string& what) { throw InputError(path + ": group '" + name + "': " + what); };
    if (!value.is_array() || value.empty()) problem("must be a non-empty list of ranks");
    ChakraGroup g;
    for (const nlohmann::json& v : value) {
      if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() >= topo.num_npus()) {
        problem(fmt::format("{} is not a rank of the topology's {} NPUs", v.dump(), topo.num_npus()));
      }
      g.ranks.push_back(static_cast<Rank>(v.get<long long>()));
    }
    std::sort(g.ranks.begin(), g.ranks.end());
    if (std::adjacent_find(g.ranks.begin(), g.ranks.end()) != g.ranks.end()) problem("a rank appears twice");
    // The dimensions along which members differ; the group must be all the
    // NPUs that differ from its first member only along them.
    long long size = 1;
    for (int d = 0; d < topo.num_dims(); ++d) {
      for (Rank r : g.ranks) {
        if (topo.coord(r, d) != topo.coord(g.ranks.front(), d)) {
          g.dims.push_back(d);
          size *= topo.dim(d).npus;
          break;
        }
      }
    }
    if (size != static_cast<long long>(g.ranks.size())) {
      std::string dims;
      for (int d : g.dims) dims += (dims.empty() ? "" : ",") + std::to_string(d);
      problem(fmt::format("its {} ranks are not all the NPUs of dimensions {} ({} NPUs) around rank {}: acesim runs "
                          "collectives over whole topology dimensions",
                          g.ranks.size(), dims.empty() ? "none" : dims, size, g.ranks.front()));
    }
    groups.emplace(name, std::move(g));
  }
  return groups;
}

void check_chakra_groups(const std::vector<chakra::Trace>& traces, const ChakraGroups& groups) {
  for (std::size_t r = 0; r < traces.size(); ++r) {
    for (const chakra::Node& n : traces[r].nodes) {
      if (n.type != NodeType::kCommColl || n.pg_name.empty()) continue;
      const auto g = groups.find(n.pg_name);
      const auto problem = [&](const std::string& what) {
        throw InputError(fmt::format("{}: node {} ({}): {}", traces[r].file, n.id, n.name, what));
      };
      if (g == groups.end()) problem("pg_name '" + n.pg_name + "' is not a group of the groups file");
      if (!std::binary_search(g->second.ranks.begin(), g->second.ranks.end(), static_cast<Rank>(r))) {
        problem(fmt::format("rank {} is not a member of its group '{}'", r, n.pg_name));
      }
    }
  }
}

std::string chakra_asymmetry(const std::vector<chakra::Trace>& traces, const ChakraGroups* groups) {
  if (traces.empty()) return "";
  const chakra::Trace& t0 = traces[0];
  for (const chakra::Node& n : t0.nodes) {
    if (n.type == NodeType::kCommSend || n.type == NodeType::kCommRecv) {
      return "the traces send point-to-point messages (" + t0.file + ": node " + std::to_string(n.id) + ")";
    }
  }
  std::unordered_map<std::uint64_t, std::size_t> pos0;
  for (std::size_t i = 0; i < t0.nodes.size(); ++i) pos0.emplace(t0.nodes[i].id, i);
  for (std::size_t r = 1; r < traces.size(); ++r) {
    const chakra::Trace& t = traces[r];
    if (t.nodes.size() != t0.nodes.size()) return t.file + " has a different number of nodes than " + t0.file;
    std::unordered_map<std::uint64_t, std::size_t> pos;
    for (std::size_t i = 0; i < t.nodes.size(); ++i) pos.emplace(t.nodes[i].id, i);
    for (std::size_t i = 0; i < t.nodes.size(); ++i) {
      const chakra::Node& a = t0.nodes[i];
      const chakra::Node& b = t.nodes[i];
      bool same = same_node(a, b, groups);
      for (std::size_t k = 0; same && k < a.data_deps.size(); ++k) same = pos0[a.data_deps[k]] == pos[b.data_deps[k]];
      for (std::size_t k = 0; same && k < a.ctrl_deps.size(); ++k) same = pos0[a.ctrl_deps[k]] == pos[b.ctrl_deps[k]];
      if (!same) return fmt::format("{} node {} differs from {} node {}", t.file, b.id, t0.file, a.id);
    }
  }
  return "";
}

ChakraExecutor::ChakraExecutor(Simulation& sim, const Topology& topo, NetworkBackend& net,
                               CollectiveEngine& collectives, Endpoints& endpoint,
                               const std::vector<chakra::Trace>& traces, ChakraOptions options)
    : sim_(sim),
      topo_(topo),
      net_(net),
      collectives_(collectives),
      endpoint_(endpoint),
      options_(options),
      sim_ranks_(collectives.simulated_ranks()) {
  if (static_cast<Rank>(traces.size()) != topo.num_npus()) {
    throw InputError(fmt::format("{} traces for a topology of {} NPUs", traces.size(), topo.num_npus()));
  }
  graphs_.resize(static_cast<std::size_t>(sim_ranks_));
  ranks_.resize(static_cast<std::size_t>(sim_ranks_));
  for (Rank r = 0; r < sim_ranks_; ++r) {
    build_graph(graphs_[static_cast<std::size_t>(r)], traces[static_cast<std::size_t>(r)]);
    RankState& rs = ranks_[static_cast<std::size_t>(r)];
    rs.graph = &graphs_[static_cast<std::size_t>(r)];
    rs.pending = rs.graph->indegree;
    if (kept(r)) rs.timing.assign(rs.graph->trace->nodes.size(), ChakraNodeTiming{});
  }
}

void ChakraExecutor::build_graph(Graph& g, const chakra::Trace& t) {
  g.trace = &t;
  const std::size_t n = t.nodes.size();
  std::unordered_map<std::uint64_t, std::uint32_t> index;
  index.reserve(n);
  for (std::size_t i = 0; i < n; ++i) index.emplace(t.nodes[i].id, static_cast<std::uint32_t>(i));
  g.indegree.assign(n, 0);
  g.child_begin.assign(n + 1, 0);
  g.dims.resize(n);
  // Count, then fill (CSR). The reader has checked every id and the acyclicity.
  auto for_each_dep = [&](auto&& f) {
    for (std::size_t i = 0; i < n; ++i) {
      const chakra::Node& node = t.nodes[i];
      for (const auto* deps : {&node.data_deps, &node.ctrl_deps}) {
        for (std::uint64_t d : *deps) f(index.at(d), static_cast<std::uint32_t>(i));
      }
    }
  };
  for_each_dep([&](std::uint32_t parent, std::uint32_t child) {
    ++g.child_begin[parent + 1];
    ++g.indegree[child];
  });
  for (std::size_t i = 0; i < n; ++i) g.child_begin[i + 1] += g.child_begin[i];
  g.children.resize(g.child_begin[n]);
  std::vector<std::uint32_t> fill(g.child_begin.begin(), g.child_begin.end() - 1);
  for_each_dep([&](std::uint32_t parent, std::uint32_t child) { g.children[fill[parent]++] = child; });

  for (std::size_t i = 0; i < n; ++i) {
    const chakra::Node& node = t.nodes[i];
    if (node.type != NodeType::kCommColl) continue;
    const auto problem = [&](const std::string& what) {
      throw InputError(fmt::format("{}: node {} ({}): {}", t.file, node.id, node.name, what));
    };
    if (!op_of(*node.comm_type)) {
      problem("comm_type " + chakra::to_string(*node.comm_type) +
              " is not supported (acesim runs ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, REDUCE_SCATTER_BLOCK, "
              "ALL_TO_ALL and BARRIER)");
    }
    if (options_.groups != nullptr && !node.pg_name.empty()) {
      // check_chakra_groups has checked the name and the membership.
      g.dims[i] = options_.groups->at(node.pg_name).dims;
      continue;
    }
    if (!node.involved_dim.empty() && static_cast<int>(node.involved_dim.size()) != topo_.num_dims()) {
      problem(fmt::format("involved_dim has {} entries for a topology of {} dimensions", node.involved_dim.size(),
                          topo_.num_dims()));
    }
    for (int d = 0; d < topo_.num_dims(); ++d) {
      if (node.involved_dim.empty() || node.involved_dim[static_cast<std::size_t>(d)]) g.dims[i].push_back(d);
    }
  }
}

std::string ChakraExecutor::where(Rank r, std::uint32_t node) const {
  const chakra::Trace& t = *ranks_[static_cast<std::size_t>(r)].graph->trace;
  const chakra::Node& n = t.nodes[node];
  return fmt::format("{}: node {} ({})", t.file, n.id, n.name);
}

void ChakraExecutor::start() {
  for (Rank r = 0; r < sim_ranks_; ++r) {
    RankState& rs = ranks_[static_cast<std::size_t>(r)];
    const std::size_t n = rs.graph->trace->nodes.size();
    if (n == 0) {
      ++ranks_done_;
      continue;
    }
    for (std::uint32_t i = 0; i < n; ++i) {
      if (rs.pending[i] == 0) ready(r, i);
    }
  }
  drain();
}

Kernel ChakraExecutor::kernel_of(const chakra::Node& n) const {
  Kernel k;
  if (options_.roofline && n.type == NodeType::kComp && n.num_ops && *n.num_ops > 0.0) {
    k.flops = *n.num_ops;
    k.hbm_bytes = n.tensor_size ? static_cast<double>(*n.tensor_size) : 0.0;
    return k;
  }
  if ((n.type == NodeType::kMemLoad || n.type == NodeType::kMemStore) && n.duration_micros == 0 && n.tensor_size) {
    k.hbm_bytes = static_cast<double>(*n.tensor_size);  // a memory node known by its size only
    return k;
  }
  k.time_ps = static_cast<TimePs>(n.duration_micros) * kPsPerUs;
  return k;
}

void ChakraExecutor::ready(Rank r, std::uint32_t node) {
  RankState& rs = ranks_[static_cast<std::size_t>(r)];
  if (kept(r)) rs.timing[node].ready = sim_.now();
  const chakra::Node& n = rs.graph->trace->nodes[node];
  if (on_compute_stream(n)) {
    rs.compute.queue.push_back(node);
    start_stream(r, rs.compute);
  } else if (n.type == NodeType::kComp) {
    rs.cpu.queue.push_back(node);
    start_stream(r, rs.cpu);
  } else if (n.type == NodeType::kCommColl) {
    issue_collective(r, node);
  } else if (n.type == NodeType::kCommSend) {
    issue_send(r, node);
  } else if (n.type == NodeType::kCommRecv) {
    issue_recv(r, node);
  } else {
    // Metadata nodes take no time.
    if (kept(r)) rs.timing[node].start = sim_.now();
    completed_.emplace_back(r, node);
  }
}

void ChakraExecutor::start_stream(Rank r, Stream& s) {
  RankState& rs = ranks_[static_cast<std::size_t>(r)];
  const bool compute = &s == &rs.compute;
  while (!s.running && !s.queue.empty()) {
    const std::uint32_t node = s.queue.front();
    s.queue.pop_front();
    if (kept(r)) rs.timing[node].start = sim_.now();
    const chakra::Node& n = rs.graph->trace->nodes[node];
    // The compute stream runs a kernel through the NPU model; the CPU a delay.
    const Kernel k = compute ? kernel_of(n) : Kernel{0.0, 0.0, static_cast<TimePs>(n.duration_micros) * kPsPerUs};
    if (k.time_ps == 0 || (k.time_ps < 0 && k.flops <= 0.0 && k.hbm_bytes <= 0.0)) {
      completed_.emplace_back(r, node);  // nothing to run
      continue;
    }
    s.running = true;
    s.node = node;
    s.since = sim_.now();
    if (compute) {
      endpoint_.start_kernel(r, k, this, static_cast<std::uint64_t>(r));
    } else {
      sim_.schedule_in(k.time_ps, this, static_cast<std::uint64_t>(r));
    }
  }
}

void ChakraExecutor::stream_done(Rank r, Stream& s) {
  s.running = false;
  s.busy += sim_.now() - s.since;
  completed_.emplace_back(r, s.node);
  start_stream(r, s);
  drain();
}

void ChakraExecutor::comm_begin(Rank r) {
  RankState& rs = ranks_[static_cast<std::size_t>(r)];
  if (rs.comm_in_flight++ == 0) rs.comm_since = sim_.now();
}

void ChakraExecutor::comm_end(Rank r) {
  RankState& rs = ranks_[static_cast<std::size_t>(r)];
  if (--rs.comm_in_flight == 0) rs.comm_busy += sim_.now() - rs.comm_since;
}

void ChakraExecutor::issue_collective(Rank r, std::uint32_t node) {
  RankState& rs = ranks_[static_cast<std::size_t>(r)];
  if (kept(r)) rs.timing[node].start = sim_.now();
  const chakra::Node& n = rs.graph->trace->nodes[node];
  const std::vector<int>& dims = rs.graph->dims[node];
  long long group = 1;
  std::uint32_t mask = 0;
  for (int d : dims) {
    group *= topo_.dim(d).npus;
    mask |= 1u << d;
  }
  const CollectiveOp op = *op_of(*n.comm_type);
  const double bytes = *n.comm_type == CommType::kBarrier ? 1.0 : static_cast<double>(*n.comm_size);
  if (group <= 1 || bytes <= 0.0) {
    completed_.emplace_back(r, node);  // nothing to move
    return;
  }
  const std::uint32_t seq = rs.coll_seq[mask]++;
  const std::uint64_t key = (static_cast<std::uint64_t>(mask) << 32) | seq;
  auto it = colls_.find(key);
  if (it == colls_.end()) {
    CollectiveRequest req;
    req.op = op;
    req.bytes = bytes;
    req.dims = dims;
    req.name = n.name;
    CollectiveId id;
    try {
      id = collectives_.create(req, this);
    } catch (const std::invalid_argument& e) {
      throw InputError(where(r, node) + ": " + e.what());
    }
    it = colls_.emplace(key, Coll{id, op, bytes, r, node}).first;
  } else if (it->second.op != op || it->second.bytes != bytes) {
    const Coll& c = it->second;
    throw InputError(fmt::format(
        "{}: collective {} over dimensions mask {:#x} is {} of {:.0f} bytes, but {} (the same collective on rank {}) "
        "is {} of {:.0f} bytes",
        where(r, node), seq, mask, to_string(op), bytes, where(c.first_rank, c.first_node), c.first_rank,
        to_string(c.op), c.bytes));
  }
  coll_node_[(static_cast<std::uint64_t>(it->second.id) << 32) | static_cast<std::uint32_t>(r)] = node;
  comm_begin(r);
  collectives_.arrive(it->second.id, r);
}

const TransferShape& ChakraExecutor::p2p_shape(Rank src, Rank dst) {
  const std::uint64_t key = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(src)) << 32) |
                            static_cast<std::uint32_t>(dst);
  auto it = p2p_shapes_.find(key);
  if (it == p2p_shapes_.end()) {
    Pattern p;
    PatternStep st;
    st.messages.push_back({0, 1, 1.0});
    p.steps.push_back(st);
    const Rank members[2] = {src, dst};
    it = p2p_shapes_.emplace(key, std::make_unique<TransferShape>(build_shape(topo_, p, members))).first;
  }
  return *it->second;
}

void ChakraExecutor::issue_send(Rank r, std::uint32_t node) {
  RankState& rs = ranks_[static_cast<std::size_t>(r)];
  if (kept(r)) rs.timing[node].start = sim_.now();
  const chakra::Node& n = rs.graph->trace->nodes[node];
  const Rank dst = static_cast<Rank>(*n.comm_dst);
  const double bytes = static_cast<double>(n.comm_size.value_or(0));
  const auto idx = static_cast<std::uint32_t>(transfers_.size());
  transfers_.push_back(Transfer{r, dst, node, -1, bytes, false});
  const MessageKey key{r, dst, n.comm_tag.value_or(0)};
  auto w = waiting_recvs_.find(key);
  if (w != waiting_recvs_.end() && !w->second.empty()) {
    transfers_[idx].recv_node = w->second.front();
    w->second.pop_front();
  } else {
    unmatched_sends_[key].push_back(idx);
  }
  comm_begin(r);
  comm_begin(dst);
  if (bytes <= 0.0) {
    sim_.schedule_in(0, this, (static_cast<std::uint64_t>(1) << 63) | idx);
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
  endpoint_.phase_begin(kP2pKeyBase + idx % kP2pKeyBase, members_);
  endpoint_.phase_load(cost, members_, shape, bytes, load_);
  endpoint_.record_traffic(shape, bytes);
  net_.start(shape, bytes, collectives_.config().endpoint_delay_ps, this, idx, &load_);
}

void ChakraExecutor::issue_recv(Rank r, std::uint32_t node) {
  RankState& rs = ranks_[static_cast<std::size_t>(r)];
  if (kept(r)) rs.timing[node].start = sim_.now();
  const chakra::Node& n = rs.graph->trace->nodes[node];
  const MessageKey key{static_cast<Rank>(*n.comm_src), r, n.comm_tag.value_or(0)};
  auto s = unmatched_sends_.find(key);
  if (s != unmatched_sends_.end() && !s->second.empty()) {
    Transfer& t = transfers_[s->second.front()];
    s->second.pop_front();
    t.recv_node = node;
    if (t.delivered) completed_.emplace_back(r, node);
    return;
  }
  waiting_recvs_[key].push_back(node);
}

void ChakraExecutor::transfer_done(std::uint64_t tag) {
  Transfer& t = transfers_[tag];
  t.delivered = true;
  if (t.bytes > 0.0) {
    members_.assign({t.src, t.dst});
    endpoint_.phase_end(kP2pKeyBase + static_cast<std::uint32_t>(tag) % kP2pKeyBase, members_);
  }
  comm_end(t.src);
  comm_end(t.dst);
  completed_.emplace_back(t.src, t.send_node);
  if (t.recv_node >= 0) completed_.emplace_back(t.dst, static_cast<std::uint32_t>(t.recv_node));
  drain();
}

void ChakraExecutor::complete(Rank r, std::uint32_t node) {
  RankState& rs = ranks_[static_cast<std::size_t>(r)];
  const TimePs now = sim_.now();
  if (kept(r)) rs.timing[node].end = now;
  rs.pending[node] = -1;  // done
  rs.last_end = std::max(rs.last_end, now);
  const Graph& g = *rs.graph;
  for (std::uint32_t c = g.child_begin[node]; c < g.child_begin[node + 1]; ++c) {
    const std::uint32_t child = g.children[c];
    if (--rs.pending[child] == 0) ready(r, child);
  }
  if (++rs.done == g.trace->nodes.size()) {
    ++ranks_done_;
    finish_ = std::max(finish_, now);
  }
}

void ChakraExecutor::drain() {
  if (draining_) return;
  draining_ = true;
  // complete() may make more nodes ready and done at once (zero-time nodes):
  // a worklist, not recursion, so long chains do not exhaust the stack.
  for (std::size_t i = 0; i < completed_.size(); ++i) {
    const auto [r, node] = completed_[i];
    complete(r, node);
  }
  completed_.clear();
  draining_ = false;
}

void ChakraExecutor::activity_done(std::uint64_t tag) {
  const Rank r = static_cast<Rank>(tag);
  stream_done(r, ranks_[static_cast<std::size_t>(r)].compute);
}

void ChakraExecutor::handle_event(std::uint64_t tag) {
  if (tag >> 63) {
    transfer_done(tag & ~(static_cast<std::uint64_t>(1) << 63));  // an empty message
    return;
  }
  const Rank r = static_cast<Rank>(tag);
  stream_done(r, ranks_[static_cast<std::size_t>(r)].cpu);
}

void ChakraExecutor::collective_done(CollectiveId id, Rank rank) {
  const auto it = coll_node_.find((static_cast<std::uint64_t>(id) << 32) | static_cast<std::uint32_t>(rank));
  if (it == coll_node_.end()) throw std::logic_error("chakra: a collective finished on a rank that never issued it");
  const std::uint32_t node = it->second;
  coll_node_.erase(it);
  comm_end(rank);
  completed_.emplace_back(rank, node);
  drain();
}

std::vector<std::string> ChakraExecutor::stuck_report() const {
  std::vector<std::string> lines;
  for (Rank r = 0; r < sim_ranks_; ++r) {
    const RankState& rs = ranks_[static_cast<std::size_t>(r)];
    const std::size_t n = rs.graph->trace->nodes.size();
    if (rs.done == n) continue;
    std::string waiting;
    int shown = 0;
    for (std::uint32_t i = 0; i < n && shown < 4; ++i) {
      const chakra::Node& node = rs.graph->trace->nodes[i];
      if (rs.pending[i] != 0) continue;  // done, or waits on another node
      if (node.type == NodeType::kCommRecv) {
        waiting += fmt::format(" node {} ({}) receives from rank {} tag {};", node.id, node.name, *node.comm_src,
                               node.comm_tag.value_or(0));
      } else if (node.type == NodeType::kCommSend) {
        waiting += fmt::format(" node {} ({}) sends to rank {} tag {};", node.id, node.name, *node.comm_dst,
                               node.comm_tag.value_or(0));
      } else if (node.type == NodeType::kCommColl) {
        waiting += fmt::format(" node {} ({}) {} of {} bytes;", node.id, node.name, chakra::to_string(*node.comm_type),
                               node.comm_size.value_or(0));
      } else {
        continue;
      }
      ++shown;
    }
    lines.push_back(fmt::format("{}: {} of {} nodes done;{}", rs.graph->trace->file, rs.done, n,
                                waiting.empty() ? " waiting" : waiting));
    if (lines.size() >= 16) {
      lines.push_back("...");
      break;
    }
  }
  for (const std::string& l : collectives_.stuck_report()) lines.push_back(l);
  return lines;
}

}  // namespace acesim
