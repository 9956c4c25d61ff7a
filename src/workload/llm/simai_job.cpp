// SimAI / AICB workload files as pipelined training jobs (simai_job.h).
#include "workload/llm/simai_job.h"

#include <map>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "config/input_error.h"
#include "workload/llm/pipeline_schedule.h"

namespace acesim {
namespace {

LlmComm comm_kind(SimaiGroup g) {
  switch (g) {
    case SimaiGroup::kTp: return LlmComm::kTp;
    case SimaiGroup::kEp: return LlmComm::kEp;
    case SimaiGroup::kDpEp:
    case SimaiGroup::kDp: return LlmComm::kDp;
  }
  return LlmComm::kNone;
}

class Builder {
 public:
  Builder(const SimaiJob& job, const Topology& topo, Rank r, bool listed)
      : job_(job), w_(job.workload()), p_(job.plan()), r_(r), stage_(job.layout().stage(r)), g_(out_.graph) {
    listed = listed || p_.pp > 1;  // stages run different programs: their groups are listed
    constexpr SimaiGroup kGroups[] = {SimaiGroup::kTp, SimaiGroup::kEp, SimaiGroup::kDpEp, SimaiGroup::kDp};
    for (SimaiGroup k : kGroups) groups_[static_cast<int>(k)] = llm_group_spec(job.group(r, k), topo, listed);
  }

  LlmRankGraph run() {
    const std::vector<PipeOp> order = pipeline_order(p_.schedule, p_.pp, stage_, w_.ga, 1);
    const std::size_t n = w_.rows.size();
    for (iter_ = 0; iter_ < job_.iterations(); ++iter_) {
      micro_batch_ = -1;
      rows_forward(0, w_.preamble);
      for (const PipeOp& op : order) op.backward ? backward(op.micro_batch) : forward(op.micro_batch);
      micro_batch_ = -1;
      rows_forward(w_.tail_begin(), n);
      rows_backward(w_.tail_begin(), n);
      rows_backward(0, w_.preamble);
      // The iteration ends once every collective of the rank is done; the
      // next one's first kernel waits for them.
      pass_ = LlmPass::kOptimizer;
      std::vector<std::uint32_t> deps = gate_;
      for (std::uint32_t c : outstanding_) {
        deps.push_back(c);
        gate_.push_back(c);
      }
      outstanding_.clear();
      if (last_compute_ != WorkGraph::kNone) deps.push_back(last_compute_);
      out_.iteration_end.push_back(node(WorkNodeKind::kNop, 0, deps, LlmComm::kNone));
    }
    g_.finish();
    return std::move(out_);
  }

 private:
  std::uint32_t node(WorkNodeKind kind, std::uint32_t payload, std::span<const std::uint32_t> deps, LlmComm comm) {
    const std::uint32_t id = g_.add_node(kind, payload, deps);
    out_.tags.push_back({iter_, comm, pass_, 0, micro_batch_, layer_});
    return id;
  }
  // AICB writes 1 ns where it has no time for a pass (its placeholder):
  // those entries are not run (docs/workloads.md); they would be most of
  // the kernels and move an iteration by nanoseconds.
  static constexpr TimePs kPlaceholderPs = kPsPerNs;
  void compute(TimePs t) {
    if (t <= kPlaceholderPs) return;
    Kernel k;
    k.time_ps = t;
    std::vector<std::uint32_t> deps = std::move(gate_);
    gate_.clear();
    if (last_compute_ != WorkGraph::kNone) deps.push_back(last_compute_);
    last_compute_ = node(WorkNodeKind::kCompute, g_.add_kernel(k), deps, LlmComm::kNone);
  }
  void collective(const SimaiComm& c, bool blocking) {
    const std::optional<CollectiveSpec>& group = groups_[static_cast<int>(c.group)];
    if (!c.op || c.bytes <= 0.0 || !group) return;
    // Rows repeat every micro-batch and iteration: one payload each.
    auto [known, added] = payloads_.try_emplace({static_cast<int>(c.group), static_cast<int>(*c.op), c.bytes}, 0u);
    if (added) {
      CollectiveSpec spec = *group;
      spec.op = *c.op;
      spec.bytes = c.bytes;
      known->second = g_.add_collective(std::move(spec));
    }
    // Issued when the stream gets there: after the compute so far and what
    // holds the stream (blocking collectives, received messages), as SimAI
    // issues a row's collective only once the row before let go.
    std::vector<std::uint32_t> deps = gate_;
    if (last_compute_ != WorkGraph::kNone) deps.push_back(last_compute_);
    const std::uint32_t id = node(WorkNodeKind::kCollective, known->second, deps, comm_kind(c.group));
    if (blocking) {
      gate_.assign(1, id);  // it waited for the rest
    } else {
      outstanding_.push_back(id);
    }
  }
  void row_forward(std::size_t i) {
    const SimaiRow& row = w_.rows[i];
    compute(row.compute_ps[0]);
    collective(row.comm[0], true);
  }
  void row_backward(std::size_t i) {
    const SimaiRow& row = w_.rows[i];
    compute(row.compute_ps[1]);
    collective(row.comm[1], true);
    compute(row.compute_ps[2]);
    collective(row.comm[2], false);
  }
  void rows_forward(std::size_t from, std::size_t to) {
    pass_ = LlmPass::kForward;
    for (std::size_t i = from; i < to; ++i) {
      layer_ = static_cast<std::int32_t>(i);
      row_forward(i);
    }
    layer_ = -1;
  }
  void rows_backward(std::size_t from, std::size_t to) {
    pass_ = LlmPass::kBackward;
    for (std::size_t i = to; i-- > from;) {
      layer_ = static_cast<std::int32_t>(i);
      row_backward(i);
    }
    layer_ = -1;
  }

  // ---- pipeline ----
  std::int64_t tag(int micro_batch, bool backward) const {
    return (static_cast<std::int64_t>(iter_) * 2 + (backward ? 1 : 0)) * w_.ga + micro_batch;
  }
  void receive(int stage, int micro_batch, bool backward) {
    if (stage < 0 || stage >= p_.pp) return;
    const Rank peer = job_.layout().in_stage(r_, stage);
    gate_.push_back(node(WorkNodeKind::kRecv, g_.add_message({peer, tag(micro_batch, backward), w_.pp_comm_bytes}), {}, LlmComm::kPp));
  }
  void send(int stage, int micro_batch, bool backward) {
    if (stage < 0 || stage >= p_.pp) return;
    // The activation (or gradient) is ready once the kernels and the
    // blocking collectives that produce it are done.
    std::vector<std::uint32_t> deps = gate_;
    if (last_compute_ != WorkGraph::kNone) deps.push_back(last_compute_);
    const Rank peer = job_.layout().in_stage(r_, stage);
    node(WorkNodeKind::kSend, g_.add_message({peer, tag(micro_batch, backward), w_.pp_comm_bytes}), deps, LlmComm::kPp);
  }
  void forward(int mb) {
    micro_batch_ = mb;
    pass_ = LlmPass::kForward;
    receive(stage_ - 1, mb, false);
    const std::size_t first = w_.preamble + static_cast<std::size_t>(mb) * w_.block;
    for (std::size_t j = 0; j < w_.block; ++j) {
      layer_ = static_cast<std::int32_t>(first + j);
      row_forward(first + j);
    }
    layer_ = -1;
    send(stage_ + 1, mb, false);
  }
  void backward(int mb) {
    micro_batch_ = mb;
    pass_ = LlmPass::kBackward;
    receive(stage_ + 1, mb, true);
    const std::size_t first = w_.preamble + static_cast<std::size_t>(mb) * w_.block;
    for (std::size_t j = w_.block; j-- > 0;) {
      layer_ = static_cast<std::int32_t>(first + j);
      row_backward(first + j);
    }
    layer_ = -1;
    send(stage_ - 1, mb, true);
  }

  const SimaiJob& job_;
  const SimaiWorkload& w_;
  const ParallelPlan& p_;
  Rank r_;
  int stage_;
  LlmRankGraph out_;
  WorkGraph& g_;
  std::optional<CollectiveSpec> groups_[4];
  std::map<std::tuple<int, int, double>, std::uint32_t> payloads_;  // (group, operation, bytes) -> collective
  int iter_ = 0;
  LlmPass pass_ = LlmPass::kForward;
  std::int32_t micro_batch_ = -1, layer_ = -1;
  std::uint32_t last_compute_ = WorkGraph::kNone;
  std::vector<std::uint32_t> gate_;
  std::vector<std::uint32_t> outstanding_;
};

ParallelPlan simai_plan(const SimaiWorkload& w, const Topology& topo, PipeSchedule schedule) {
  const long long gpus = topo.num_npus();
  const std::string where = w.file + ": ";
  if (w.all_gpus > 0 && w.all_gpus != gpus) {
    throw InputError(where + fmt::format("all_gpus {} but the platform has {} GPUs (--nodes sets how many servers)", w.all_gpus, gpus));
  }
  const long long tp_pp = static_cast<long long>(w.tp) * w.pp;
  if (gpus % tp_pp != 0) {
    throw InputError(where + fmt::format("model_parallel_NPU_group * pp = {} * {} = {} does not divide the {} GPUs", w.tp, w.pp, tp_pp, gpus));
  }
  ParallelPlan p;
  p.tp = w.tp;
  p.pp = w.pp;
  p.dp = static_cast<int>(gpus / tp_pp);
  p.ep = w.ep;
  if (p.dp % p.ep != 0) {
    throw InputError(where + fmt::format("ep {} does not divide dp = GPUs / (tp * pp) = {} (expert parallelism is within data parallelism)", w.ep, p.dp));
  }
  p.global_batch = w.ga * p.dp;  // micro-batches of one unit: ga per replica
  if (schedule == PipeSchedule::kInterleaved) {
    throw InputError("--schedule: interleaved needs model chunks, which a SimAI file does not have (1f1b or gpipe)");
  }
  p.schedule = schedule;
  return p;
}

}  // namespace

SimaiJob::SimaiJob(SimaiWorkload workload, const Topology& topo, SimaiJobOptions options)
    : workload_(std::move(workload)), topo_(topo), options_(options),
      plan_(simai_plan(workload_, topo, options.schedule)), layout_(plan_) {}

std::string SimaiJob::plan_text() const {
  std::string s = fmt::format("tp {}, pp {}, dp {}", plan_.tp, plan_.pp, plan_.dp);
  if (plan_.ep > 1) s += fmt::format(", ep {}", plan_.ep);
  if (plan_.pp > 1) s += fmt::format(", {}", to_string(plan_.schedule));
  s += fmt::format(", {} micro-batch{} per replica (ga), {} rows", workload_.ga, workload_.ga == 1 ? "" : "es", workload_.rows.size());
  return s;
}

std::vector<Rank> SimaiJob::group(Rank r, SimaiGroup g) const {
  switch (g) {
    case SimaiGroup::kTp: return layout_.tp_group(r);
    case SimaiGroup::kEp: return layout_.ep_group(r);
    case SimaiGroup::kDpEp: return layout_.dpo_group(r);
    case SimaiGroup::kDp: return layout_.dp_group(r);
  }
  return {};
}

LlmRankGraph SimaiJob::build(Rank r, bool listed) const {
  Builder b(*this, topo_, r, listed);
  LlmRankGraph g = b.run();
  g.graph.source = workload_.file;
  // Spans name their row (a tag's layer is the row's index).
  g.label = [this](const LlmNodeTag& t) {
    return t.layer >= 0 ? workload_.rows[static_cast<std::size_t>(t.layer)].name : std::string("iteration end");
  };
  return g;
}

}  // namespace acesim
