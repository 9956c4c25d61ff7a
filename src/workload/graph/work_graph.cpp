#include "workload/graph/work_graph.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace acesim {

bool is_communication(WorkNodeKind k) { return k == WorkNodeKind::kCollective || k == WorkNodeKind::kSend || k == WorkNodeKind::kRecv; }

std::uint32_t dims_mask(const std::vector<int>& dims, const Topology& topo) {
  std::uint32_t mask = 0;
  if (dims.empty()) {
    for (int d = 0; d < topo.num_dims(); ++d) mask |= 1u << d;
  }
  for (int d : dims) mask |= 1u << d;
  return mask;
}

std::uint32_t WorkGraph::add_kernel(const Kernel& k) {
  kernels_.push_back(k);
  return static_cast<std::uint32_t>(kernels_.size() - 1);
}

namespace {

bool same(const CollectiveSpec& a, const CollectiveSpec& b) {
  return a.op == b.op && a.bytes == b.bytes && a.root == b.root && a.dims == b.dims && a.members == b.members &&
         a.name == b.name;
}

std::size_t hash_of(const CollectiveSpec& c) {
  std::size_t h = std::hash<double>{}(c.bytes) ^ (static_cast<std::size_t>(c.op) << 56) ^ static_cast<std::size_t>(c.root);
  const auto mix = [&h](std::size_t v) { h = (h ^ v) * 0x100000001b3ULL; };
  for (int d : c.dims) mix(static_cast<std::size_t>(d));
  for (Rank r : c.members) mix(static_cast<std::size_t>(r));
  mix(std::hash<std::string>{}(c.name));
  return h;
}

}  // namespace

std::uint32_t WorkGraph::add_collective(CollectiveSpec c) {
  const std::size_t h = hash_of(c);
  const auto [first, last] = collective_index_.equal_range(h);
  for (auto it = first; it != last; ++it) {
    if (same(collectives_[it->second], c)) return it->second;
  }
  collectives_.push_back(std::move(c));
  const auto id = static_cast<std::uint32_t>(collectives_.size() - 1);
  collective_index_.emplace(h, id);
  return id;
}

std::uint32_t WorkGraph::add_message(const MessageSpec& m) {
  messages_.push_back(m);
  return static_cast<std::uint32_t>(messages_.size() - 1);
}

std::uint32_t WorkGraph::add_node(WorkNodeKind kind, std::uint32_t payload, std::span<const std::uint32_t> deps) {
  if (kind == WorkNodeKind::kWait) throw std::logic_error("work graph: add waits with add_wait");
  const auto id = static_cast<std::uint32_t>(nodes_.size());
  for (std::uint32_t d : deps) deps_.push_back({d, 0});
  nodes_.push_back({kind, WaitRule::kGate, payload, kNone});
  dep_begin_.push_back(static_cast<std::uint32_t>(deps_.size()));
  return id;
}

std::uint32_t WorkGraph::add_wait(WaitRule rule, std::uint32_t after, std::span<const GraphDep> comm) {
  const auto id = static_cast<std::uint32_t>(nodes_.size());
  // The executor tells the stream's arrival from communication by the
  // parent's kind: a wait follows exactly one stream node.
  if (after >= id || is_communication(nodes_[after].kind)) throw std::logic_error("work graph: a wait must follow a stream node");
  deps_.push_back({after, 0});
  for (const GraphDep& d : comm) {
    if (d.node >= id || !is_communication(nodes_[d.node].kind)) {
      throw std::logic_error("work graph: a wait waits for communication only");
    }
    deps_.push_back(d);
  }
  nodes_.push_back({WorkNodeKind::kWait, rule, waits_++, after});
  dep_begin_.push_back(static_cast<std::uint32_t>(deps_.size()));
  return id;
}

void WorkGraph::relabel_ranks(const std::function<Rank(Rank)>& to) {
  for (CollectiveSpec& c : collectives_) {
    if (c.members.empty()) throw std::logic_error("work graph: relabelling a collective over dimensions, not listed ranks");
    Rank prev = -1;
    for (Rank& r : c.members) {
      r = to(r);
      if (r <= prev) throw std::logic_error("work graph: a relabelling that does not keep the ranks' order");
      prev = r;
    }
  }
  for (MessageSpec& m : messages_) m.peer = to(m.peer);
}

void WorkGraph::list_groups(const Topology& topo, Rank r) {
  for (CollectiveSpec& c : collectives_) {
    if (!c.members.empty()) continue;
    std::vector<Rank> group{r};
    for (int d = 0; d < topo.num_dims(); ++d) {
      if (!c.dims.empty() && std::find(c.dims.begin(), c.dims.end(), d) == c.dims.end()) continue;
      std::vector<Rank> wider;
      for (Rank x : group) {
        for (int v = 0; v < topo.dim(d).npus; ++v) wider.push_back(topo.with_coord(x, d, v));
      }
      group = std::move(wider);
    }
    std::sort(group.begin(), group.end());
    c.members = std::move(group);
  }
}

void WorkGraph::finish() {
  const std::size_t n = nodes_.size();
  for (const GraphDep& d : deps_) {
    if (d.node >= n) throw std::logic_error("work graph: a dependency on a node that does not exist");
  }
  indegree_.assign(n, 0);
  child_begin_.assign(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::uint32_t k = dep_begin_[i]; k < dep_begin_[i + 1]; ++k) {
      ++child_begin_[deps_[k].node + 1];
      ++indegree_[i];
    }
  }
  for (std::size_t i = 0; i < n; ++i) child_begin_[i + 1] += child_begin_[i];
  children_.resize(child_begin_[n]);
  child_delay_.resize(child_begin_[n]);
  std::vector<std::uint32_t> fill(child_begin_.begin(), child_begin_.end() - 1);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::uint32_t k = dep_begin_[i]; k < dep_begin_[i + 1]; ++k) {
      const std::uint32_t at = fill[deps_[k].node]++;
      children_[at] = static_cast<std::uint32_t>(i);
      child_delay_[at] = deps_[k].delay;
    }
  }
  std::vector<GraphDep>().swap(deps_);
  std::vector<std::uint32_t>().swap(dep_begin_);
  std::unordered_multimap<std::size_t, std::uint32_t>().swap(collective_index_);
  collectives_.shrink_to_fit();
}

}  // namespace acesim
