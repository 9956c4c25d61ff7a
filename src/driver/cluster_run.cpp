// Several jobs on one platform (cluster_run.h).
#include "driver/cluster_run.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <stdexcept>
#include <unordered_map>

#include <fmt/format.h>

#include "config/input_error.h"
#include "engine/random.h"
#include "platform/platform_instance.h"
#include "topology/topology_kinds.h"
#include "workload/graph/graph_executor.h"

namespace acesim {
namespace {

// One job's graphs on the cluster's ranks.
struct PlacedJob {
  std::vector<Rank> ranks;  // the cluster ranks it holds, ascending (job rank i is ranks[i])
  // Loop jobs: one graph for all ranks; training jobs: one per rank.
  std::vector<std::unique_ptr<WorkGraph>> graphs;
  std::vector<std::vector<int>> iteration_of;    // per graph, per node: the iteration its end counts toward, else -1
  std::vector<std::vector<TimePs>> tail_ps;      // per graph, per node (or empty): what that iteration waits for after it
  int iterations = 0;
  const WorkGraph& graph_of(std::size_t i) const { return *graphs[graphs.size() == 1 ? 0 : i]; }
  std::size_t index_of(std::size_t i) const { return graphs.size() == 1 ? 0 : i; }
};

std::vector<Rank> cluster_ranks(const ClusterSpec& spec, const ClusterJobSpec& job) {
  std::vector<Rank> ranks;
  for (long long n : job.nodes) {
    for (long long l = 0; l < spec.gpus_per_node; ++l) ranks.push_back(static_cast<Rank>(n * spec.gpus_per_node + l));
  }
  return ranks;
}

PlacedJob place(const ClusterSpec& spec, const ClusterJobSpec& job) {
  PlacedJob p;
  p.ranks = cluster_ranks(spec, job);
  if (job.loop) {
    const ClusterJobSpec::Loop& l = *job.loop;
    auto g = std::make_unique<WorkGraph>();
    std::vector<std::uint32_t> prev;
    Kernel compute;
    compute.time_ps = l.compute_ps;
    const std::uint32_t kc = g->add_kernel(compute);
    CollectiveSpec c;
    c.op = l.op;
    c.bytes = l.bytes;
    c.name = job.name;
    c.members = p.ranks;
    const std::uint32_t coll = g->add_collective(c);
    std::vector<int> iteration_of;
    for (int it = 0; it < job.iterations; ++it) {
      if (l.compute_ps > 0) prev = {g->add_node(WorkNodeKind::kCompute, kc, prev)};
      const std::uint32_t n = g->add_node(WorkNodeKind::kCollective, coll, prev);
      const std::uint32_t end = g->add_node(WorkNodeKind::kNop, 0, std::vector<std::uint32_t>{n});
      iteration_of.resize(end + 1, -1);
      iteration_of[end] = it;
      prev = {end};
    }
    g->source = job.name;
    g->finish();
    iteration_of.resize(g->size(), -1);
    p.graphs.push_back(std::move(g));
    p.iteration_of.push_back(std::move(iteration_of));
    p.tail_ps.emplace_back();
  } else {
    const auto to = [&](Rank r) { return p.ranks[static_cast<std::size_t>(r)]; };
    for (std::size_t i = 0; i < p.ranks.size(); ++i) {
      JobRankGraph g = job.build(static_cast<Rank>(i));
      g.graph.relabel_ranks(to);
      g.graph.source = job.name;
      g.iteration_of.resize(g.graph.size(), -1);
      p.iteration_of.push_back(std::move(g.iteration_of));
      p.tail_ps.push_back(std::move(g.tail_ps));
      p.graphs.push_back(std::make_unique<WorkGraph>(std::move(g.graph)));
    }
  }
  p.iterations = job.iterations;
  return p;
}

// Every job's iteration ends: the last of its ranks' ends of each iteration.
class ClusterRecorder final : public GraphObserver {
 public:
  ClusterRecorder(const std::vector<const PlacedJob*>& jobs, Rank npus) : jobs_(jobs), job_of_(static_cast<std::size_t>(npus), -1) {
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      for (std::size_t i = 0; i < jobs[j]->ranks.size(); ++i) {
        job_of_[static_cast<std::size_t>(jobs[j]->ranks[i])] = static_cast<int>(j);
        index_[jobs[j]->ranks[i]] = i;
      }
      ends_.emplace_back(static_cast<std::size_t>(jobs[j]->iterations), 0);
      finish_.push_back(0);
    }
  }
  void node_done(Rank r, std::uint32_t node, TimePs start, TimePs end) override {
    const int j = job_of_[static_cast<std::size_t>(r)];
    if (j < 0) return;
    const PlacedJob& p = *jobs_[static_cast<std::size_t>(j)];
    const std::size_t i = index_.at(r);
    if (trace_ && i == 0) span(j, p.graph_of(0), node, start, end);
    const std::size_t g = p.index_of(i);
    const int k = p.iteration_of[g][node];
    finish_[static_cast<std::size_t>(j)] = std::max(finish_[static_cast<std::size_t>(j)], end);
    if (k < 0) return;
    const TimePs done = end + (p.tail_ps[g].empty() ? 0 : p.tail_ps[g][node]);
    TimePs& e = ends_[static_cast<std::size_t>(j)][static_cast<std::size_t>(k)];
    e = std::max(e, done);
  }
  void keep_spans() { trace_ = true; }
  std::vector<ClusterSpan>& spans() { return spans_; }
  const std::vector<TimePs>& ends(std::size_t j) const { return ends_[j]; }
  TimePs finish(std::size_t j) const { return finish_[j]; }
  const std::vector<int>& job_of() const { return job_of_; }

 private:
  const std::vector<const PlacedJob*>& jobs_;
  std::vector<int> job_of_;
  std::unordered_map<Rank, std::size_t> index_;
  std::vector<std::vector<TimePs>> ends_;
  std::vector<TimePs> finish_;
  bool trace_ = false;
  std::vector<ClusterSpan> spans_;

  void span(int job, const WorkGraph& g, std::uint32_t node, TimePs start, TimePs end) {
    const GraphNode& n = g.node(node);
    switch (n.kind) {
      case WorkNodeKind::kCompute:
        spans_.push_back({job, true, "compute", start, end});
        return;
      case WorkNodeKind::kCollective: {
        const CollectiveSpec& c = g.collective(n.payload);
        spans_.push_back({job, false, fmt::format("{} {:.0f} B over {} GPUs", to_string(c.op), c.bytes, c.members.size()), start, end});
        return;
      }
      case WorkNodeKind::kSend:
        spans_.push_back({job, false, fmt::format("send {:.0f} B", g.message(n.payload).bytes), start, end});
        return;
      default:
        return;
    }
  }
};

// Mean iteration after the first (all of them when there is one), from the job's start.
TimePs mean_iteration(const std::vector<TimePs>& ends, TimePs start) {
  if (ends.empty()) return 0;
  if (ends.size() == 1) return ends[0] - start;
  return (ends.back() - ends.front()) / static_cast<TimePs>(ends.size() - 1);
}

struct Outcome {
  std::vector<std::vector<TimePs>> ends;
  std::vector<TimePs> finish;
  std::vector<std::vector<double>> link_bytes;  // [job][link]
  std::vector<ClusterSpan> spans;
  TimePs total_ps = 0;
  std::uint64_t events = 0;
};

// The listed jobs together in one simulation.
Outcome simulate(const ClusterSpec& spec, const std::vector<const PlacedJob*>& jobs, const std::vector<TimePs>& starts,
                 const Progress& progress, bool count_links, bool trace = false, bool healthy = false) {
  PlatformInstance pi(spec.platform, false);
  const Rank npus = pi.topology.num_npus();
  if (!healthy) {
    for (const auto& [gpu, factor] : spec.degraded.compute) pi.endpoints.set_compute_slowdown(gpu, factor);
    for (const auto& [link, share] : spec.degraded.links) pi.topology.set_link_share(link, share);
    for (LinkId link : spec.degraded.down) pi.topology.set_link_down(link);
  }
  ClusterRecorder rec(jobs, npus);
  if (trace) rec.keep_spans();
  if (count_links) pi.network->set_tenants(rec.job_of(), static_cast<int>(jobs.size()), pi.topology.num_links());
  static const WorkGraph kEmpty = [] {
    WorkGraph g;
    g.finish();
    return g;
  }();
  std::vector<const WorkGraph*> graphs(static_cast<std::size_t>(npus), &kEmpty);
  GraphRunOptions ro;
  ro.observer = &rec;
  ro.rank_start_ps.assign(static_cast<std::size_t>(npus), 0);
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    for (std::size_t i = 0; i < jobs[j]->ranks.size(); ++i) {
      const auto r = static_cast<std::size_t>(jobs[j]->ranks[i]);
      graphs[r] = &jobs[j]->graph_of(i);
      ro.rank_start_ps[r] = starts[j];
    }
  }
  GraphExecutor ex(pi.sim, pi.topology, *pi.network, pi.collectives, pi.endpoints, graphs, ro);
  run_graphs(pi.sim, ex, progress);
  Outcome o;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    // Each iteration ends no earlier than the one before (a Chakra trace's
    // ProfilerStep may hold no node).
    std::vector<TimePs> ends = rec.ends(j);
    for (std::size_t k = 1; k < ends.size(); ++k) ends[k] = std::max(ends[k], ends[k - 1]);
    o.ends.push_back(std::move(ends));
    o.finish.push_back(rec.finish(j));
  }
  if (count_links) o.link_bytes = pi.network->link_bytes_by_tenant();
  o.spans = std::move(rec.spans());
  o.total_ps = ex.finish_ps();
  o.events = pi.sim.stats().events + pi.sim.stats().completions;
  return o;
}

}  // namespace

long long leaf_nodes(const PlatformConfig& p) {
  const DimensionSpec& d = p.dims[static_cast<std::size_t>(p.nodes_dim)];
  return d.kind.name() == "fat-tree" ? static_cast<long long>(d.param("leaf_size", 32)) : d.npus;
}

std::vector<long long> choose_nodes(const std::string& how, long long count, const std::vector<bool>& used, long long leaf,
                                    std::uint64_t seed) {
  const auto nodes = static_cast<long long>(used.size());
  std::vector<long long> order;
  if (how == "spread") {
    const long long leaves = (nodes + leaf - 1) / leaf;
    for (long long i = 0; i < leaf; ++i) {
      for (long long l = 0; l < leaves; ++l) {
        if (l * leaf + i < nodes) order.push_back(l * leaf + i);
      }
    }
  } else {
    for (long long n = 0; n < nodes; ++n) order.push_back(n);
    if (how == "random") {
      std::mt19937_64 gen(splitmix64(seed));
      for (long long i = nodes - 1; i > 0; --i) {
        std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(gen() % static_cast<std::uint64_t>(i + 1))]);
      }
    }
  }
  std::vector<long long> out;
  for (long long n : order) {
    if (static_cast<long long>(out.size()) == count) break;
    if (!used[static_cast<std::size_t>(n)]) out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void set_fat_tree_nodes(PlatformConfig& platform, const std::vector<KindParam>& params) {
  if (platform.nodes_dim < 0) throw std::invalid_argument(platform.source + " has no node dimension");
  DimensionSpec& d = platform.dims[static_cast<std::size_t>(platform.nodes_dim)];
  d.kind = DimKind(topology_kind_registry().find("fat-tree")->name);
  d.params = params;
}

ClusterReport run_cluster(const ClusterSpec& spec, const ClusterRunOptions& options) {
  const auto began = std::chrono::steady_clock::now();
  const Topology topo(spec.platform.dims);
  std::vector<PlacedJob> placed;
  placed.reserve(spec.jobs.size());
  for (const ClusterJobSpec& j : spec.jobs) placed.push_back(place(spec, j));
  std::vector<const PlacedJob*> all;
  std::vector<TimePs> starts;
  for (std::size_t j = 0; j < placed.size(); ++j) {
    all.push_back(&placed[j]);
    starts.push_back(spec.jobs[j].start_ps);
  }
  const std::size_t runs = 1 + (options.alone && spec.jobs.size() > 1 ? spec.jobs.size() : 0) + (spec.degraded.any() ? 1 : 0);
  Outcome shared = simulate(spec, all, starts, options.progress.part(0, runs, "all jobs"), true, options.trace);
  ClusterReport rep;
  rep.source = spec.source;
  rep.platform = spec.platform.source;
  rep.nodes = spec.nodes;
  rep.gpus = topo.num_npus();
  rep.total_ps = shared.total_ps;
  rep.events = shared.events;
  rep.spans = std::move(shared.spans);
  rep.degraded = spec.degraded.text;
  std::optional<Outcome> healthy;
  if (spec.degraded.any()) healthy = simulate(spec, all, starts, options.progress.part(runs - 1, runs, "healthy"), false, false, true);
  for (std::size_t j = 0; j < spec.jobs.size(); ++j) {
    const ClusterJobSpec& s = spec.jobs[j];
    ClusterJobReport r;
    r.name = s.name;
    r.what = s.what;
    r.placement = s.placement;
    r.nodes = s.nodes;
    r.gpus = static_cast<long long>(placed[j].ranks.size());
    r.start_ps = s.start_ps;
    r.iteration_end_ps = shared.ends[j];
    r.iteration_ps = mean_iteration(shared.ends[j], s.start_ps);
    r.finish_ps = shared.finish[j];
    for (double b : shared.link_bytes[j]) r.network_bytes += b;
    if (options.alone && spec.jobs.size() > 1) {
      const Outcome alone = simulate(spec, {&placed[j]}, {0}, options.progress.part(1 + j, runs, s.name + " alone"), false);
      r.alone_iteration_ps = mean_iteration(alone.ends[0], 0);
    } else if (spec.jobs.size() == 1) {
      r.alone_iteration_ps = r.iteration_ps;  // it is alone
    }
    r.slowdown = r.alone_iteration_ps > 0 ? static_cast<double>(r.iteration_ps) / static_cast<double>(r.alone_iteration_ps) : 0.0;
    if (healthy) r.healthy_iteration_ps = mean_iteration(healthy->ends[j], s.start_ps);
    rep.jobs.push_back(std::move(r));
  }
  // Links that carried bytes, busiest first (ties: by id).
  const double seconds = ps_to_seconds(rep.total_ps);
  for (LinkId l = 0; l < topo.num_links(); ++l) {
    ClusterLinkReport lr;
    double total = 0.0;
    for (std::size_t j = 0; j < spec.jobs.size(); ++j) {
      const double b = shared.link_bytes[j][static_cast<std::size_t>(l)];
      lr.bytes_by_job.push_back(b);
      total += b;
    }
    if (total <= 0.0) continue;
    const Link link = topo.link(l);
    lr.name = topo.link_name(l);
    lr.dim = link.dim;
    lr.bandwidth_GBps = link.bandwidth_Bps / 1e9;
    lr.utilization = seconds > 0.0 ? total / (link.bandwidth_Bps * seconds) : 0.0;
    rep.links.push_back(std::move(lr));
  }
  std::stable_sort(rep.links.begin(), rep.links.end(),
                   [](const ClusterLinkReport& a, const ClusterLinkReport& b) { return a.utilization > b.utilization; });
  rep.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  return rep;
}

}  // namespace acesim
