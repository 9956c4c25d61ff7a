#include "topology/link_graph.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <queue>
#include <stdexcept>
#include <utility>

namespace acesim {
namespace {

// A path length: what the metric minimises, then what breaks its ties.
using Cost = std::pair<std::int64_t, std::int64_t>;
constexpr Cost kUnreached{std::numeric_limits<std::int64_t>::max(), 0};

Cost link_cost(const LinkGraph::GraphLink& l, LinkGraph::Metric metric) {
  return metric == LinkGraph::Metric::kHops ? Cost{1, l.latency_ps} : Cost{l.latency_ps, 1};
}

Cost plus(Cost a, Cost b) { return {a.first + b.first, a.second + b.second}; }

}  // namespace

LinkGraph::LinkGraph(int npus) : npus_(npus) {
  if (npus < 1) throw std::invalid_argument("graph: npus must be >= 1");
  for (int i = 0; i < npus; ++i) add_node(NodeKind::kNpu, "npu" + std::to_string(i));
}

NodeId LinkGraph::add_node(NodeKind kind, std::string name) {
  if (finished_) throw std::logic_error("graph: node added after finish()");
  if (kind == NodeKind::kNpu && num_nodes() >= npus_) throw std::invalid_argument("graph: NPUs are the first nodes");
  kinds_.push_back(kind);
  names_.push_back(std::move(name));
  out_.emplace_back();
  return num_nodes() - 1;
}

LinkId LinkGraph::add_link(NodeId src, NodeId dst, double bandwidth_Bps, TimePs latency_ps) {
  if (finished_) throw std::logic_error("graph: link added after finish()");
  const std::string where = "graph: link " + std::to_string(src) + "->" + std::to_string(dst) + ": ";
  if (src < 0 || src >= num_nodes() || dst < 0 || dst >= num_nodes()) throw std::invalid_argument(where + "unknown node");
  if (src == dst) throw std::invalid_argument(where + "joins a node to itself");
  if (!(bandwidth_Bps > 0.0) || !std::isfinite(bandwidth_Bps)) throw std::invalid_argument(where + "bandwidth must be > 0");
  if (latency_ps < 0) throw std::invalid_argument(where + "latency must be >= 0");
  links_.push_back({src, dst, bandwidth_Bps, latency_ps});
  out_[src].push_back(num_links() - 1);
  return num_links() - 1;
}

void LinkGraph::add_duplex(NodeId a, NodeId b, double bandwidth_Bps, TimePs latency_ps) {
  add_link(a, b, bandwidth_Bps, latency_ps);
  add_link(b, a, bandwidth_Bps, latency_ps);
}

// Dijkstra from `dst` over the links reversed; then each node takes, among
// its links that start a shortest path, the lowest id.
std::vector<std::int32_t> LinkGraph::next_links_to(NodeId dst, Metric metric) const {
  const std::size_t n = kinds_.size();
  std::vector<std::vector<LinkId>> in(n);
  for (LinkId l = 0; l < num_links(); ++l) in[links_[l].dst].push_back(l);
  std::vector<Cost> dist(n, kUnreached);
  using Item = std::pair<Cost, NodeId>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> queue;
  dist[dst] = {0, 0};
  queue.push({dist[dst], dst});
  while (!queue.empty()) {
    const auto [d, v] = queue.top();
    queue.pop();
    if (d != dist[v]) continue;
    for (LinkId l : in[v]) {
      const NodeId u = links_[l].src;
      const Cost c = plus(d, link_cost(links_[l], metric));
      if (c < dist[u]) {
        dist[u] = c;
        queue.push({c, u});
      }
    }
  }
  std::vector<std::int32_t> next(n, -1);
  for (std::size_t v = 0; v < n; ++v) {
    if (static_cast<NodeId>(v) == dst || dist[v] == kUnreached) continue;
    for (LinkId l : out_[v]) {
      const NodeId w = links_[l].dst;
      if (dist[w] != kUnreached && plus(dist[w], link_cost(links_[l], metric)) == dist[v]) {
        next[v] = static_cast<std::int32_t>(l);
        break;
      }
    }
  }
  return next;
}

void LinkGraph::finish(Metric metric) {
  if (finished_) throw std::logic_error("graph: finish() called twice");
  if (num_links() > std::numeric_limits<std::int32_t>::max()) throw std::invalid_argument("graph: too many links");
  const std::size_t n = kinds_.size();
  next_.assign(static_cast<std::size_t>(npus_) * n, -1);
  for (int dst = 0; dst < npus_; ++dst) {
    const std::vector<std::int32_t> next = next_links_to(dst, metric);
    for (int src = 0; src < npus_; ++src) {
      if (src != dst && next[src] < 0) {
        throw std::invalid_argument("graph: npu" + std::to_string(src) + " cannot reach npu" + std::to_string(dst));
      }
    }
    std::copy(next.begin(), next.end(), next_.begin() + static_cast<std::ptrdiff_t>(dst * n));
  }
  finished_ = true;
}

void LinkGraph::route(int src, int dst, std::vector<LinkId>& out) const {
  const std::size_t n = kinds_.size();
  NodeId at = src;
  while (at != dst) {
    const std::int32_t l = next_[static_cast<std::size_t>(dst) * n + static_cast<std::size_t>(at)];
    out.push_back(l);
    at = links_[l].dst;
  }
}

namespace {

class GraphFabric final : public DimensionFabric {
 public:
  explicit GraphFabric(LinkGraph graph) : g_(std::move(graph)) {}

  LinkId num_links(const DimPlace& p) const override {
    if (p.npus() != g_.num_npus()) {
      throw std::invalid_argument("dimension " + std::to_string(p.dim) + ": its graph has " +
                                  std::to_string(g_.num_npus()) + " NPUs, not " + std::to_string(p.npus()));
    }
    return static_cast<LinkId>(p.num_groups()) * g_.num_links();
  }

  Link link(const DimPlace& p, LinkId local) const override {
    const Rank group = static_cast<Rank>(local / g_.num_links());
    const LinkGraph::GraphLink& l = g_.link(local % g_.num_links());
    return Link{node(p, group, l.src), node(p, group, l.dst), p.dim, l.bandwidth_Bps, l.latency_ps};
  }

  void route(const DimPlace& p, Rank at, int to, std::vector<LinkId>& out) const override {
    const std::size_t first = out.size();
    g_.route(p.coord(at), to, out);
    const LinkId base = p.link_base + static_cast<LinkId>(p.group_of(at)) * g_.num_links();
    for (std::size_t i = first; i < out.size(); ++i) out[i] += base;
  }

  int npu_links_out(int npus) const override {
    (void)npus;
    int count = 0;
    for (LinkId l = 0; l < g_.num_links(); ++l) count += g_.link(l).src == 0 ? 1 : 0;
    return count;
  }

  int nodes_per_group(int npus) const override { return static_cast<int>(g_.num_nodes()) - npus; }
  NodeKind node_kind(int local) const override { return g_.node_kind(g_.num_npus() + local); }
  std::string node_name(const DimPlace& p, NodeId node) const override {
    const NodeId i = node - p.node_base;
    const std::string& name = g_.node_name(g_.num_npus() + i % p.nodes_per_group);
    return p.num_groups() > 1 ? name + "/" + std::to_string(i / p.nodes_per_group) : name;
  }

 private:
  static NodeId node(const DimPlace& p, Rank group, NodeId local) {
    return local < p.npus() ? p.rank_in_group(group, static_cast<int>(local))
                            : p.group_node(group, static_cast<int>(local - p.npus()));
  }

  LinkGraph g_;
};

}  // namespace

std::shared_ptr<const DimensionFabric> make_graph_fabric(LinkGraph graph) {
  if (!graph.finished()) throw std::logic_error("graph: make_graph_fabric() before finish()");
  return std::make_shared<const GraphFabric>(std::move(graph));
}

}  // namespace acesim
