#include "workload/graph/work_graph.h"

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

std::uint32_t WorkGraph::add_collective(CollectiveSpec c) {
  collectives_.push_back(std::move(c));
  return static_cast<std::uint32_t>(collectives_.size() - 1);
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
}

}  // namespace acesim
