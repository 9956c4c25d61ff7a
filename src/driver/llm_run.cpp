// LLM training runs (llm_run.h).
#include "driver/llm_run.h"

#include <algorithm>
#include <memory>
#include <unordered_map>

#include <fmt/format.h>

#include "collective/collective_engine.h"
#include "config/input_error.h"
#include "config/limits.h"
#include "platform/platform_instance.h"
#include "workload/graph/graph_executor.h"

namespace acesim {
namespace {

// Errors about a node of rank r's graph (a collective the platform cannot
// run on its group) in the job's terms: its rank, pass, layer and
// micro-batch, and its kind of communication. `g` outlives its graph's runs.
void name_nodes(LlmRankGraph& g, Rank r, const std::string& job) {
  g.graph.where = [&g, r, job](std::uint32_t node) {
    const LlmNodeTag& t = g.tags[node];
    std::string s = fmt::format("{}: rank {}, iteration {}, {}", job, r, t.iteration, to_string(t.pass));
    if (t.layer >= 0) s += fmt::format(" layer {}", t.layer);
    if (t.micro_batch >= 0) s += fmt::format(" micro-batch {}", t.micro_batch);
    if (g.label) {
      const std::string what = g.label(t);
      if (!what.empty()) s += " (" + what + ")";
    }
    if (t.comm != LlmComm::kNone) s += fmt::format(", {} communication", to_string(t.comm));
    return s;
  };
}

struct Timing {
  TimePs start = -1, end = -1;
};

// Records what the report needs while the graphs run: every node of the
// followed ranks, every rank's iteration ends, and when pipeline messages
// to the followed ranks were sent.
class LlmRecorder final : public GraphObserver {
 public:
  LlmRecorder(const std::vector<const LlmRankGraph*>& graphs, const std::vector<Rank>& followed, int iterations)
      : graphs_(graphs), ends_(static_cast<std::size_t>(iterations), 0) {
    timings_.resize(followed.size());
    index_.assign(graphs.size(), kNotFollowed);
    for (std::size_t i = 0; i < followed.size(); ++i) {
      index_[static_cast<std::size_t>(followed[i])] = i;
      timings_[i].resize(graphs[static_cast<std::size_t>(followed[i])]->graph.size());
      own_ends_.emplace_back(static_cast<std::size_t>(iterations), 0);
    }
  }

  void node_done(Rank r, std::uint32_t node, TimePs start, TimePs end) override {
    const LlmRankGraph& g = *graphs_[static_cast<std::size_t>(r)];
    const std::size_t fi = index_[static_cast<std::size_t>(r)];
    if (fi != kNotFollowed) timings_[fi][node] = {start, end};
    const WorkNodeKind kind = g.graph.node(node).kind;
    if (kind == WorkNodeKind::kNop) {
      const auto e = std::find(g.iteration_end.begin(), g.iteration_end.end(), node);
      if (e != g.iteration_end.end()) {
        const auto k = static_cast<std::size_t>(e - g.iteration_end.begin());
        ends_[k] = std::max(ends_[k], end);
        if (fi != kNotFollowed) own_ends_[fi][k] = end;
      }
    } else if (kind == WorkNodeKind::kSend && g.tags[node].comm == LlmComm::kPp) {
      const MessageSpec& m = g.graph.message(g.graph.node(node).payload);
      if (index_[static_cast<std::size_t>(m.peer)] != kNotFollowed) sends_[{r, m.peer, m.tag}] = start;
    }
  }

  const std::vector<Timing>& timings(std::size_t i) const { return timings_[i]; }
  const std::vector<TimePs>& ends() const { return ends_; }
  const std::vector<TimePs>& own_ends(std::size_t i) const { return own_ends_[i]; }
  TimePs sent(Rank src, Rank dst, std::int64_t tag) const {
    const auto it = sends_.find({src, dst, tag});
    return it == sends_.end() ? -1 : it->second;
  }

 private:
  static constexpr std::size_t kNotFollowed = static_cast<std::size_t>(-1);
  const std::vector<const LlmRankGraph*>& graphs_;
  std::vector<std::size_t> index_;  // per rank: its place among the followed ranks
  std::vector<std::vector<Timing>> timings_;
  std::vector<TimePs> ends_;
  std::vector<std::vector<TimePs>> own_ends_;
  std::unordered_map<MessageKey, TimePs, MessageKeyHash> sends_;  // looked up, never walked
};

// How many ranks a run simulates (docs/performance.md, "Symmetry"):
//   one      a single stage on a symmetric platform: rank 0 stands for all
//   stages   one rank per pipeline stage (its context-parallel ring with
//            context parallelism, whose messages stay among them; with
//            --tp-comm-overlap, the ring exchange's puts into its next
//            tensor-parallel rank, which stands for the puts it receives), each
//            group they are in run whole on its links; the groups of no
//            representative are taken to run the same on links of their
//            own, which holds on fabrics of switches, rails and full meshes
//            (no link shared by two groups)
//   full     every rank
// Memory a run may take: its graphs' nodes over all simulated ranks
// (StagedJob::estimated_bytes_per_rank).
constexpr double kMaxBytes = limits::kMaxGraphBytes;

struct Mode {
  enum Kind { kOne, kStages, kFull } kind = kFull;
  std::string why;  // full: the reason
};

Mode choose_mode(const PlatformConfig& platform, const StagedJob& job, const LlmRunOptions& options) {
  if (options.full) return {Mode::kFull, ""};
  const ParallelPlan& p = job.plan();
  if (p.pp == 1 && p.cp == 1 && !p.tp_comm_overlap && asymmetry_reason(platform).empty()) {
    const LlmRankGraph g0 = job.build(0, false);
    bool whole = true;
    for (std::uint32_t i = 0; i < g0.graph.size() && whole; ++i) {
      const GraphNode& n = g0.graph.node(i);
      whole = n.kind != WorkNodeKind::kCollective || g0.graph.collective(n.payload).members.empty();
    }
    if (whole) return {Mode::kOne, ""};
  }
  for (const DimensionSpec& d : platform.dims) {
    if (d.npus > 1 && !(d.kind == DimKind::kSwitch || d.kind == DimKind::kFullyConnected || d.kind.name() == "rail")) {
      return {Mode::kFull, "a " + std::string(d.kind.name()) + " dimension may carry several groups on one link"};
    }
  }
  return {Mode::kStages, ""};
}

// The stream waited from `from` to `to` for node c (a kernel or the
// iteration's end). The communication among c's parents that finished last
// gated it: the wait is charged to its kind from when it started; before
// that, to what it waited for in turn (a chain of blocking collectives with
// no kernel between them, as SimAI files have), else to it as well.
void add_idle(LlmStageReport& s, const LlmRankGraph& g, const LlmRecorder& rec, std::size_t fi, Rank me,
              const std::vector<std::vector<std::uint32_t>>& parents, std::uint32_t c, TimePs from, TimePs to) {
  if (to <= from) return;
  const std::vector<Timing>& t = rec.timings(fi);
  std::uint32_t gating = WorkGraph::kNone;
  for (std::uint32_t p : parents[c]) {
    if (gating == WorkGraph::kNone || t[p].end > t[gating].end) gating = p;
  }
  if (gating == WorkGraph::kNone || t[gating].end <= from) {
    s.other_idle_ps += to - from;
    return;
  }
  const LlmComm kind = g.tags[gating].comm;
  if (kind == LlmComm::kPp && g.graph.node(gating).kind == WorkNodeKind::kRecv) {
    const MessageSpec& m = g.graph.message(g.graph.node(gating).payload);
    const TimePs sent = rec.sent(m.peer, me, m.tag);
    const TimePs bubble = std::clamp<TimePs>(sent - from, 0, to - from);
    s.bubble_ps += bubble;
    s.exposed_ps[static_cast<int>(kind)] += to - from - bubble;
    return;
  }
  const TimePs began = std::clamp<TimePs>(t[gating].start, from, to);
  bool earlier = false;
  for (std::uint32_t p : parents[gating]) earlier = earlier || t[p].end > from;
  if (began > from && earlier) {
    s.exposed_ps[static_cast<int>(kind)] += to - began;
    add_idle(s, g, rec, fi, me, parents, gating, from, began);
    return;
  }
  s.exposed_ps[static_cast<int>(kind)] += to - from;
}

LlmStageReport analyse_stage(const LlmRankGraph& g, const LlmRecorder& rec, std::size_t fi, Rank me, int stage,
                             int iterations) {
  LlmStageReport s;
  s.stage = stage;
  s.rank = me;
  const std::vector<TimePs>& own = rec.own_ends(fi);
  const TimePs w1 = own.back();
  const TimePs w0 = iterations > 1 ? own[own.size() - 2] : 0;
  s.iteration_ps = w1 - w0;
  const WorkGraph& wg = g.graph;
  std::vector<std::vector<std::uint32_t>> parents(wg.size());
  for (std::uint32_t n = 0; n < wg.size(); ++n) {
    if (!is_communication(wg.node(n).kind)) continue;
    for (std::uint32_t e = wg.child_begin(n); e < wg.child_end(n); ++e) {
      const WorkNodeKind kind = wg.node(wg.child(e)).kind;
      // Into kernels and the iteration's end, and into communication that
      // waited for other communication.
      if (kind == WorkNodeKind::kCompute || kind == WorkNodeKind::kNop || is_communication(kind)) {
        parents[wg.child(e)].push_back(n);
      }
    }
  }
  const std::vector<Timing>& t = rec.timings(fi);
  const bool kinds = !g.kernel_kinds.empty();
  if (kinds) s.compute_by_kind_ps.assign(kKernelKinds, 0);
  TimePs prev_end = 0;
  for (std::uint32_t c = 0; c < wg.size(); ++c) {
    if (wg.node(c).kind != WorkNodeKind::kCompute || t[c].start >= w1) continue;
    add_idle(s, g, rec, fi, me, parents, c, std::max(prev_end, w0), std::min(t[c].start, w1));
    const TimePs busy = std::max<TimePs>(0, std::min(t[c].end, w1) - std::max(t[c].start, w0));
    s.compute_ps += busy;
    if (kinds) {
      const std::uint32_t k = wg.node(c).payload;
      if (k < g.kernel_kinds.size() && g.kernel_kinds[k]) s.compute_by_kind_ps[static_cast<std::size_t>(*g.kernel_kinds[k])] += busy;
    }
    prev_end = t[c].end;
  }
  // The iteration ends when the step's communication does (parameter
  // gathers without overlap): that wait is the last idle stretch.
  const std::uint32_t end = g.iteration_end[static_cast<std::size_t>(iterations - 1)];
  add_idle(s, g, rec, fi, me, parents, end, std::max(prev_end, w0), w1);
  return s;
}

std::string node_text(const WorkGraph& g, std::uint32_t n) {
  const GraphNode& node = g.node(n);
  switch (node.kind) {
    case WorkNodeKind::kCollective: {
      const CollectiveSpec& c = g.collective(node.payload);
      return fmt::format("{} {:.0f} B", to_string(c.op), c.bytes);
    }
    case WorkNodeKind::kSend: return fmt::format("send to {}", g.message(node.payload).peer);
    case WorkNodeKind::kRecv: return fmt::format("receive from {}", g.message(node.payload).peer);
    default: {
      const Kernel& k = g.kernel(node.payload);
      if (k.time_ps >= 0) return fmt::format("kernel {:.3f} us", static_cast<double>(k.time_ps) / 1e6);
      return fmt::format("kernel {:.3g} FLOP {:.3g} B", k.flops, k.hbm_bytes);
    }
  }
}

void collect_spans(LlmReport& rep, const LlmRankGraph& g, const LlmRecorder& rec, std::size_t fi, int stage) {
  const std::vector<Timing>& t = rec.timings(fi);
  for (std::uint32_t n = 0; n < g.graph.size(); ++n) {
    const WorkNodeKind kind = g.graph.node(n).kind;
    if (kind != WorkNodeKind::kCompute && !is_communication(kind)) continue;
    if (t[n].end < 0 || (kind == WorkNodeKind::kRecv)) continue;  // a receive's span is its message's
    std::string what = node_text(g.graph, n);
    if (g.label) what += " (" + g.label(g.tags[n]) + ")";
    rep.spans.push_back({stage, g.tags[n], kind == WorkNodeKind::kCompute, std::move(what), t[n].start, t[n].end});
  }
}

void summarise(LlmReport& rep, const PlatformConfig& platform, const StagedJob& job) {
  const std::size_t n = rep.stages.size();
  for (const LlmStageReport& s : rep.stages) {
    rep.compute_ps += s.compute_ps;
    rep.pipeline_bubble_ps += s.bubble_ps;
    rep.other_idle_ps += s.other_idle_ps;
    rep.stage_iteration_ps += s.iteration_ps;
    for (int k = 0; k < kLlmCommKinds; ++k) rep.exposed_ps[k] += s.exposed_ps[k];
  }
  const auto mean = [n](TimePs v) { return static_cast<TimePs>(v / static_cast<TimePs>(n)); };
  rep.compute_ps = mean(rep.compute_ps);
  rep.pipeline_bubble_ps = mean(rep.pipeline_bubble_ps);
  rep.other_idle_ps = mean(rep.other_idle_ps);
  rep.stage_iteration_ps = mean(rep.stage_iteration_ps);
  for (TimePs& v : rep.exposed_ps) v = mean(v);
  if (std::all_of(rep.stages.begin(), rep.stages.end(), [](const LlmStageReport& s) { return !s.compute_by_kind_ps.empty(); })) {
    rep.compute_by_kind_ps.assign(kKernelKinds, 0);
    for (const LlmStageReport& s : rep.stages) {
      for (int k = 0; k < kKernelKinds; ++k) rep.compute_by_kind_ps[static_cast<std::size_t>(k)] += s.compute_by_kind_ps[static_cast<std::size_t>(k)];
    }
    for (TimePs& v : rep.compute_by_kind_ps) v = mean(v);
  }
  rep.model_flops_per_gpu = job.model_flops_per_gpu();
  rep.model_flops_no_recompute_per_gpu = job.model_flops_no_recompute_per_gpu();
  if (rep.iteration_ps > 0 && rep.model_flops_per_gpu > 0.0) {
    const double seconds = ps_to_seconds(rep.iteration_ps);
    rep.tflops_per_gpu = rep.model_flops_per_gpu / seconds / 1e12;
    rep.hfu = rep.tflops_per_gpu * 1e12 / platform.npu.peak_flops();
    rep.mfu = rep.model_flops_no_recompute_per_gpu / seconds / platform.npu.peak_flops();
  }
}

}  // namespace

std::optional<MemoryBreakdown> worst_stage_memory(const StagedJob& job) {
  std::optional<MemoryBreakdown> worst;
  for (int s = 0; s < job.plan().pp; ++s) {
    const std::optional<MemoryBreakdown> m = job.stage_memory(s);
    if (m && (!worst || m->total_bytes() > worst->total_bytes())) worst = m;
  }
  return worst;
}

LlmReport run_llm(const PlatformConfig& platform, const StagedJob& job, const LlmRunOptions& options) {
  const Topology topo(platform.dims);
  const ParallelPlan& plan = job.plan();
  const std::optional<MemoryBreakdown> worst = worst_stage_memory(job);
  const double hbm_GB = platform.npu.hbm_capacity_GB;
  if (worst && !options.allow_oom && !fits_in_hbm(*worst, hbm_GB)) {
    throw InputError("the plan does not fit in HBM: " + format_memory(*worst, hbm_GB) + "; " + activations_why(*worst, plan) +
                     " (--allow-oom runs it anyway; more --tp/--pp, --zero, --recompute or a smaller --micro-batch need less)");
  }
  // Building the graphs counts for a fifth of the progress shown, so that
  // a long build shows an estimate of the time left too.
  const Progress building = options.progress.share(0.0, 0.2, "");
  const Progress simulating = options.progress.share(0.2, 1.0, "");
  building.stage("building");
  const Mode mode = choose_mode(platform, job, options);
  std::vector<Rank> followed, simulated;
  for (int s = 0; s < (mode.kind == Mode::kOne ? 1 : plan.pp); ++s) {
    followed.push_back(job.layout().in_stage(0, s));
    for (Rank r : job.layout().cp_group(followed.back())) simulated.push_back(r);
  }
  const double ranks_built = mode.kind == Mode::kFull ? static_cast<double>(topo.num_npus()) : static_cast<double>(simulated.size());
  const double nodes = job.estimated_nodes_per_rank() * ranks_built;
  const double bytes = job.estimated_bytes_per_rank() * ranks_built;
  if (bytes > kMaxBytes) {
    const std::string why = mode.kind == Mode::kOne      ? "one rank for all"
                            : mode.kind == Mode::kStages ? (plan.cp > 1 ? "one rank per stage with its context-parallel ring"
                                                                        : "one rank per stage")
                            : mode.why.empty()           ? "--full"
                                                         : "full: " + mode.why;
    throw InputError(fmt::format("the simulation would hold about {:.3g} graph nodes ({:.0f} ranks ({}) x {:.4g} per rank: {}), "
                                 "about {:.1f} GiB ({:.0f} B a node{}); the limit is 8 GiB: fewer micro-batches or iterations{}{}",
                                 nodes, ranks_built, why, job.estimated_nodes_per_rank(), job.estimate_terms(),
                                 bytes / (1ULL << 30), StagedJob::kBytesPerNode,
                                 plan.cp > 1 ? fmt::format(", {:.0f} B a ring node", StagedJob::kBytesPerRingNode) : "",
                                 plan.cp > 1 ? ", a smaller --cp" : "",
                                 options.full ? ", or without --full" : ""));
  }
  std::unique_ptr<PlatformInstance> owned =
      mode.kind == Mode::kStages ? std::make_unique<PlatformInstance>(platform, simulated)
                                 : std::make_unique<PlatformInstance>(platform, mode.kind == Mode::kOne);
  PlatformInstance& pi = *owned;
  // One graph per rank the executor knows (all, with several
  // representatives: the others' are empty).
  const Rank ranks = mode.kind == Mode::kOne ? 1 : static_cast<Rank>(topo.num_npus());
  std::vector<std::unique_ptr<LlmRankGraph>> built(static_cast<std::size_t>(ranks));
  const LlmRankGraph empty;
  std::vector<const LlmRankGraph*> graphs(static_cast<std::size_t>(ranks), &empty);
  std::vector<const WorkGraph*> per_rank(static_cast<std::size_t>(ranks), &empty.graph);
  double ranks_done = 0.0;
  for (Rank r = 0; r < ranks; ++r) {
    if (mode.kind == Mode::kStages && std::find(simulated.begin(), simulated.end(), r) == simulated.end()) continue;
    built[static_cast<std::size_t>(r)] = std::make_unique<LlmRankGraph>(job.build(r, mode.kind == Mode::kStages));
    name_nodes(*built[static_cast<std::size_t>(r)], r, job.name());
    graphs[static_cast<std::size_t>(r)] = built[static_cast<std::size_t>(r)].get();
    per_rank[static_cast<std::size_t>(r)] = &built[static_cast<std::size_t>(r)]->graph;
    building.report(-1, 0, static_cast<double>(++ranks_done) / ranks_built);
  }
  const int iterations = job.iterations();
  LlmRecorder rec(graphs, followed, iterations);
  GraphRunOptions ro;
  ro.observer = &rec;
  GraphExecutor ex(pi.sim, pi.topology, *pi.network, pi.collectives, pi.endpoints, per_rank, ro);
  run_graphs(pi.sim, ex, simulating);
  pi.endpoints.settle();

  LlmReport rep;
  rep.model = job.name();
  rep.platform = platform.source;
  rep.executor = platform.npu.executor;
  rep.plan = job.plan_text();
  rep.npus = topo.num_npus();
  rep.simulated_ranks = mode.kind == Mode::kFull ? topo.num_npus() : static_cast<long long>(simulated.size());
  rep.simulation = mode.kind == Mode::kOne      ? "symmetric"
                   : mode.kind == Mode::kStages ? "one rank per pipeline stage, its groups whole"
                                                : mode.why.empty() ? "full (--full)" : "full: " + mode.why;
  rep.iterations = iterations;
  rep.memory = worst;
  rep.hbm_capacity_GB = hbm_GB;
  rep.fits = !worst || fits_in_hbm(*worst, hbm_GB);
  rep.micro_batches = plan.micro_batches();
  if (platform.energy) {
    // The simulated ranks' means stand for every GPU (each stage's rank for
    // its stage's).
    NpuStatsMean mean;
    if (mode.kind == Mode::kFull) {
      mean = pi.endpoints.mean_stats(topo.num_npus());
    } else {
      for (Rank r : simulated) mean.add(pi.endpoints.stats(r));
    }
    rep.energy_J = platform.energy->joules(ps_to_seconds(ex.finish_ps()), topo.num_npus(), platform.npu.compute_units,
                                           mean.compute_unit_seconds + mean.comm_unit_seconds,
                                           mean.hbm_bytes_compute + mean.hbm_bytes_comm, mean.sent_per_dim);
  }
  rep.iteration_end_ps = rec.ends();
  rep.iteration_ps = rep.iteration_end_ps.back() - (iterations > 1 ? rep.iteration_end_ps[rep.iteration_end_ps.size() - 2] : 0);
  rep.total_ps = ex.finish_ps();
  for (std::size_t i = 0; i < followed.size(); ++i) {
    const LlmRankGraph& g = *graphs[static_cast<std::size_t>(followed[i])];
    rep.stages.push_back(analyse_stage(g, rec, i, followed[i], static_cast<int>(i), iterations));
    rep.stages.back().memory = job.stage_memory(static_cast<int>(i));
    if (options.trace_ranks > 0) collect_spans(rep, g, rec, i, static_cast<int>(i));
  }
  summarise(rep, platform, job);
  rep.collectives = ex.collectives_created().size();
  rep.messages = ex.messages();
  rep.events = pi.sim.stats().events + pi.sim.stats().completions;
  for (const auto& g : built) {
    if (!g) continue;
    rep.kernels_measured += g->kernels_measured;
    rep.kernels_modelled += g->kernels_modelled;
    rep.kernels_constant += g->kernels_constant;
  }
  rep.compute_model = platform.npu.arch;
  rep.kernel_times = job.kernel_times();
  rep.calibration = job.calibration();
  rep.in_situ = job.in_situ();
  rep.model_state_bytes = job.model_state_bytes();
  rep.model_state_text = job.model_state_text();
  return rep;
}

}  // namespace acesim
