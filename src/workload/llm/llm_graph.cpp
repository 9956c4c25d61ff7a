// LLM training work graphs (llm_graph.h). Sizes are per rank and
// micro-batch; kernels as FLOPs and HBM bytes, collectives in nccl-tests'
// convention (the whole buffer), messages in bytes. docs/models.md, "LLM
// training", gives every formula.
#include "workload/llm/llm_graph.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "config/input_error.h"
#include "config/units.h"
#include "registry/registry.h"
#include "workload/llm/pipeline_schedule.h"

namespace acesim {

LlmEfficiency default_llm_efficiency() {
  LlmEfficiency e;
  e.gemm = 0.80;                // cuBLAS bf16, large GEMMs: 0.80 of peak on H100, 0.80-0.87 on A100
  e.attention_forward = 0.60;   // FlashAttention-3 forward on H100 (FA2 on A100: 0.65)
  e.attention_backward = 0.50;  // FlashAttention-3 backward on H100 (FA2 on A100: 0.55)
  e.hbm = 0.85;                 // memory-bound kernels (0.85-0.90 of peak HBM bandwidth)
  return e;
}

std::string_view to_string(LlmComm c) {
  switch (c) {
    case LlmComm::kNone: return "none";
    case LlmComm::kTp: return "tp";
    case LlmComm::kCp: return "cp";
    case LlmComm::kEp: return "ep";
    case LlmComm::kPp: return "pp";
    case LlmComm::kDp: return "dp";
  }
  return "?";
}

std::string_view to_string(LlmPass p) {
  switch (p) {
    case LlmPass::kForward: return "forward";
    case LlmPass::kBackward: return "backward";
    case LlmPass::kRecompute: return "recompute";
    case LlmPass::kOptimizer: return "optimizer";
  }
  return "?";
}

namespace {

// --tp-comm-overlap: the chunks a row-parallel GEMM is split into, each
// reduce-scattered while the next computes (Transformer Engine's
// "pipeline" overlap for proj_fprop and fc2_fprop, num_splits 4 in its
// default configuration and NeMo's).
constexpr int kTpOverlapSplits = 4;

// The plan, once check_plan has passed it (the layer split needs a valid one).
const ParallelPlan& checked_plan(const ParallelPlan& plan, const TransformerShape& shape, const Topology& topo) {
  check_plan(plan, shape, topo.num_npus());
  return plan;
}

}  // namespace

std::vector<std::string> llm_precision_names() {
  std::vector<std::string> names = precision_names();
  names.insert(names.begin() + 1, {"fp8-cs", "mxfp8"});
  return names;
}

bool llm_only_precision(std::string_view name) { return name == "fp8-cs" || name == "mxfp8"; }

std::string set_llm_precision(LlmOptions& o, std::string_view name, const NpuConfig& npu) {
  Fp8Recipe recipe = Fp8Recipe::kDelayed;
  std::optional<int> bytes;
  if (llm_only_precision(name)) {
    recipe = name == "mxfp8" ? Fp8Recipe::kMxfp8 : Fp8Recipe::kCurrent;
    bytes = 1;
  } else {
    bytes = parse_precision(name);
  }
  if (!bytes) return "unknown precision '" + std::string(name) + "'" + suggestion(name, llm_precision_names());
  if (std::string why = precision_unsupported(npu, *bytes, recipe == Fp8Recipe::kMxfp8); !why.empty()) return why;
  o.bytes_per_element = *bytes;
  o.fp8_recipe = recipe;
  o.fp8_transposes = !npu.mxfp8;
  return {};
}

LlmJob::LlmJob(TransformerShape shape, ParallelPlan plan, const Topology& topo, LlmOptions options)
    : shape_(std::move(shape)), plan_(plan), topo_(topo), options_(options), layout_(plan_),
      split_(checked_plan(plan_, shape_, topo_), shape_.layers) {
  // A rank's graph beyond this would not fit in memory.
  constexpr double kMaxNodes = 50e6;
  const double nodes = estimated_nodes_per_rank();
  if (nodes > kMaxNodes) {
    throw InputError(fmt::format("parallel plan: a rank would run about {:.3g} graph nodes ({}), more than 5e7: fewer "
                                 "micro-batches, more stages or fewer iterations{}",
                                 nodes, estimate_terms(), plan_.cp > 1 ? ", or a smaller --cp" : ""));
  }
}

std::string LlmJob::estimate_terms() const {
  std::string s = fmt::format("{} micro-batches x {} layers per stage x {} iterations x {:.0f} nodes per layer",
                              plan_.micro_batches(), split_.most_stage_layers(), options_.iterations,
                              nodes_per_layer());
  if (plan_.cp > 1) s += fmt::format(", of which {} attention passes x 3 (cp {} - 1) around the ring", attention_passes(), plan_.cp);
  return s;
}

double LlmJob::nodes_per_layer() const {
  const double base = plan_.recompute == Recompute::kFull ? 90.0 : 60.0;
  double fetch = 0.0;
  if (plan_.zero == 3 && plan_.zero3_fetch == Zero3Fetch::kBlocking) {
    // Per tensor and pass (forward, backward): the host's launch, the
    // gather and the copy; MoE layers add the router, shared experts' four
    // and each local expert's two.
    const double tensors = shape_.dense_layer_tensors() + (shape_.moe() ? 5.0 + 2.0 * shape_.experts / plan_.ep : 0.0);
    fetch = 2.0 * 3.0 * tensors;
  }
  // --tp-comm-overlap: per pass (forward, recomputed forward, backward)
  // two ring exchanges of tp GEMM chunks with a put each (nodes counted
  // with room to spare), and two row-parallel GEMMs of four chunks and
  // reduce-scatters.
  const double overlap = plan_.tp_comm_overlap ? 3.0 * (2.0 * 3.0 * plan_.tp + 2.0 * 2.0 * kTpOverlapSplits) : 0.0;
  return base + fetch + overlap + 3.0 * (plan_.cp - 1) * attention_passes();
}

double LlmJob::padded_vocab() const {
  const double unit = 128.0 * plan_.tp;
  return std::ceil(shape_.vocab / unit) * unit;
}

double LlmJob::flops_per_gpu(bool with_recompute) const {
  const TransformerShape& m = shape_;
  const double s = m.seq, h = m.hidden, q = m.q_width(), kv = m.kv_width();
  const double g = m.swiglu ? 3.0 : 2.0;
  double layers = 0.0, attention_scores = 0.0;
  for (int i = 0; i < m.layers; ++i) {
    double mlp = 2.0 * s * h * m.ffn_hidden * g;
    if (m.is_moe_layer(i)) {
      mlp = 2.0 * s * h * m.experts + 2.0 * s * h * m.moe_ffn_hidden * g * (m.top_k + m.shared_experts);
    }
    layers += 2.0 * s * h * (q + 2.0 * kv) + 4.0 * s * s * q + 2.0 * s * h * q + mlp;
    attention_scores += 4.0 * s * s * q;
  }
  const double logits = 2.0 * s * h * padded_vocab();
  double per_sequence = 3.0 * (layers + logits);
  if (with_recompute && plan_.recompute == Recompute::kFull) per_sequence += layers;
  if (with_recompute && plan_.recompute == Recompute::kSelective) per_sequence += attention_scores;
  return per_sequence * plan_.effective_global_batch() / static_cast<double>(plan_.world());
}

std::optional<CollectiveSpec> llm_group_spec(const std::vector<Rank>& ranks, const Topology& topo, bool listed) {
  if (ranks.size() <= 1) return std::nullopt;
  CollectiveSpec spec;
  if (listed) {
    spec.members = ranks;
    return spec;
  }
  long long size = 1;
  for (int d = 0; d < topo.num_dims(); ++d) {
    for (Rank x : ranks) {
      if (topo.coord(x, d) != topo.coord(ranks.front(), d)) {
        spec.dims.push_back(d);
        size *= topo.dim(d).npus;
        break;
      }
    }
  }
  if (size != static_cast<long long>(ranks.size())) {
    spec.dims.clear();
    spec.members = ranks;
  }
  return spec;
}

namespace {

constexpr std::int64_t kCpTagBase = std::int64_t{1} << 40;
constexpr std::int64_t kTpTagBase = std::int64_t{2} << 40;
// Gradients are reduced as Megatron-LM keeps them: fp32 main gradients
// (bf16 training accumulates and all-reduces gradients in fp32).
constexpr double kGradBytes = 4.0;
// DeepSpeed ZeRO-3 as of 2021 (--zero3-fetch blocking): the host's cost of
// each per-tensor parameter all-gather, 130 us before the launch and 250 us
// launching it, as profiled on one node of 8 A100s (DeepSpeed issue 1069,
// June 2021). A calibration constant of one collective on one node.
constexpr TimePs kBlockingFetchHostPs = 380 * kPsPerUs;
// Of which the host's work per rank of the group: DeepSpeed's
// _allgather_param cuts the flat buffer into one narrow() view per rank in
// Python (3.4 us an op: PyTorch's operator micro-benchmark of a view op on
// CUDA tensors, split, in pytorch/pytorch PR 32194, 2020). The rest of
// those 380 us (the 8 ranks' views taken out) is fixed.
constexpr TimePs kBlockingFetchViewPs = 3400 * kPsPerNs;
constexpr int kBlockingFetchProfiledRanks = 8;
// DeepSpeed's ZeRO-3 defaults of the time (stage3.py, the
// FP16_DeepSpeedZeroOptimizer_Stage3 constructor, and docs/_pages/
// config-json.md): stage3_param_persistence_threshold, the elements below
// which a parameter is not partitioned, and stage3_max_reuse_distance, the
// parameters used in between within which a gathered one is kept.
constexpr double kPersistenceElements = 1e5;
constexpr double kReuseDistanceElements = 1e9;
// FP8 amax history length: NeMo's recipes' fp8_amax_history_len (e.g.
// dgxc-benchmarking's grok1_314b.yaml; Megatron-LM's own default is 1).
constexpr double kAmaxHistory = 1024.0;

class Builder {
 public:
  Builder(const LlmJob& job, const Topology& topo, Rank r, bool listed)
      : job_(job), m_(job.shape()), p_(job.plan()), e_(job.options().efficiency), r_(r),
        stage_(job.layout().stage(r)), g_(out_.graph), split_(job.split()) {
    const RankLayout& l = job.layout();
    bpe_ = job.options().bytes_per_element;
    t_ = p_.tp;
    etp_ = p_.etp();
    h_ = m_.hidden;
    q_ = m_.q_width();
    kv_ = m_.kv_width();
    tokens_ = static_cast<double>(p_.micro_batch) * m_.seq / p_.cp;
    sp_tokens_ = p_.sequence_parallel ? tokens_ / t_ : tokens_;
    gated_ = m_.swiglu ? 2.0 : 1.0;
    hd_ = q_ / m_.heads;
    fp8_ = bpe_ == 1;
    recipe_ = job.options().fp8_recipe;
    // Transformer Engine's FP8 runs the GEMMs alone in FP8 (their
    // operands cast just before them, the casts priced where they run);
    // activations, the kernels between the GEMMs, attention, the
    // activations' communication and the parameters' gathers stay in BF16
    // (Megatron's --fp8-param-gather, FP8 gathers, is not modelled).
    abe_ = fp8_ ? 2.0 : bpe_;
    pricer_ = job.options().pricer.get();
    // Stages run different programs: their groups are listed.
    listed = listed || p_.pp > 1;
    tp_ = llm_group_spec(l.tp_group(r), topo, listed);
    dp_ = llm_group_spec(l.dp_group(r), topo, listed);
    edp_ = llm_group_spec(l.expert_dp_group(r), topo, listed);
    dp_ranks_ = static_cast<int>(l.dp_group(r).size());
    edp_ranks_ = static_cast<int>(l.expert_dp_group(r).size());
    ep_ = llm_group_spec(l.ep_group(r), topo, listed);
    if (fp8_) amax_ = llm_group_spec(l.stage_group(r), topo, listed);
    if (p_.pp > 1 && m_.tied_embeddings && (stage_ == 0 || stage_ == p_.pp - 1)) {
      emb_ = llm_group_spec({l.in_stage(r, 0), l.in_stage(r, p_.pp - 1)}, topo, true);
    }
    const std::vector<Rank> cp = l.cp_group(r);
    const auto me = static_cast<int>(std::find(cp.begin(), cp.end(), r) - cp.begin());
    cp_next_ = cp[static_cast<std::size_t>((me + 1) % p_.cp)];
    cp_prev_ = cp[static_cast<std::size_t>((me + p_.cp - 1) % p_.cp)];
    const std::vector<Rank> tp = l.tp_group(r);
    const auto tme = static_cast<int>(std::find(tp.begin(), tp.end(), r) - tp.begin());
    tp_next_ = tp[static_cast<std::size_t>((tme + 1) % p_.tp)];
    // Each chunk's layers take slots after the stage's earlier chunks'.
    int slots = 0;
    for (int c = 0; c < p_.virtual_stages; ++c) {
      chunk_slot_.push_back(slots);
      slots += split_.chunk_layers(stage_, c);
    }
    param_ready_.assign(static_cast<std::size_t>(slots + 2), {WorkGraph::kNone, WorkGraph::kNone});
  }

  LlmRankGraph run() {
    const std::vector<PipeOp> order =
        pipeline_order(p_.schedule, p_.pp, stage_, p_.micro_batches(), p_.virtual_stages);
    for (iter_ = 0; iter_ < job_.options().iterations; ++iter_) {
      for (const PipeOp& op : order) op.backward ? backward(op) : forward(op);
      optimizer_step();
    }
    // The run ends once the last parameter gathers are done too.
    pass_ = LlmPass::kOptimizer;
    std::vector<std::uint32_t> deps = {last_compute_};
    for (const auto& ready : param_ready_) {
      for (std::uint32_t n : ready) {
        if (n != WorkGraph::kNone) deps.push_back(n);
      }
    }
    node(WorkNodeKind::kNop, 0, deps, LlmComm::kNone);
    g_.finish();
    return std::move(out_);
  }

 private:
  // ---- nodes ----
  std::uint32_t node(WorkNodeKind kind, std::uint32_t payload, std::span<const std::uint32_t> deps, LlmComm comm) {
    const std::uint32_t id = g_.add_node(kind, payload, deps);
    out_.tags.push_back({iter_, comm, pass_, static_cast<std::int16_t>(chunk_), micro_batch_, layer_});
    return id;
  }
  // A kernel on the compute stream, after the one before and what gates
  // it: priced by its shape where the job has a pricer that prices it, else
  // at `flops_efficiency` and the HBM efficiency.
  // `count` > 1: that many launches of the kernel back to back, one node
  // (each launch priced as one kernel, its floor included).
  void compute(const KernelDesc& d, double flops_efficiency, int count = 1) {
    if (d.flops <= 0.0 && d.hbm_bytes <= 0.0) return;
    Kernel k;
    std::optional<KernelPricer::Priced> priced;
    if (pricer_ != nullptr) priced = pricer_->price(d);
    if (priced) {
      k = priced->kernel;
      (priced->measured ? out_.kernels_measured : out_.kernels_modelled) += static_cast<std::uint64_t>(count);
    } else {
      k.flops = d.flops;
      k.hbm_bytes = d.hbm_bytes;
      k.flops_efficiency = flops_efficiency;
      k.hbm_efficiency = e_.hbm;
      out_.kernels_constant += static_cast<std::uint64_t>(count);
    }
    // The same rates over count times the work: count times the time.
    k.flops *= count;
    k.hbm_bytes *= count;
    std::vector<std::uint32_t> deps = std::move(gate_);
    gate_.clear();
    if (last_compute_ != WorkGraph::kNone) deps.push_back(last_compute_);
    last_compute_ = node(WorkNodeKind::kCompute, kernel(k, d.kind), deps, LlmComm::kNone);
  }
  // The graph's kernel, its kind kept for the report's breakdown.
  std::uint32_t kernel(const Kernel& k, std::optional<KernelKind> kind) {
    const std::uint32_t id = g_.add_kernel(k);
    out_.kernel_kinds.resize(id + 1);
    out_.kernel_kinds[id] = kind;
    return id;
  }
  static KernelDesc desc(KernelKind kind, double flops, double hbm_bytes, double m, double n, double k = 0.0, double batch = 1.0) {
    KernelDesc d;
    d.kind = kind;
    d.flops = flops;
    d.hbm_bytes = hbm_bytes;
    d.m = m;
    d.n = n;
    d.k = k;
    d.batch = batch;
    return d;
  }
  // A GEMM of batch x (m x k) . (k x n), its FLOPs and HBM elements as
  // given; in FP8 its inputs are FP8.
  void gemm(double flops, double hbm_elements, double m, double n, double k, double batch = 1.0) {
    KernelDesc d = desc(KernelKind::kGemm, flops, hbm_elements * bpe_, m, n, k, batch);
    if (fp8_) d.dtype = Dtype::kFp8;
    compute(d, e_.gemm);
  }
  // In FP8, the cast of a rows x width activation (or gradient) to a GEMM's
  // FP8 input: bf16 read, FP8 written, 3 bytes an element; 4 with the
  // transposed copy a backward keeps (`transposed`, where the tensor cores
  // need one). Current scaling reads the tensor once more first, for its
  // amax (Transformer Engine docs, fp8_current_scaling: "the tensor needs
  // to be read twice"). MXFP8 writes the rowwise and the columnwise
  // quantisation, each block of 32 along its own axis, and their E8M0
  // scales: 2 + 2 x (1 + 1/32) bytes an element.
  void cast(double rows, double width, bool transposed) {
    if (!fp8_) return;
    const double elements = rows * width;
    double bytes = 3.0;
    if (recipe_ == Fp8Recipe::kMxfp8) {
      bytes = 2.0 + 2.0 * (1.0 + 1.0 / 32.0);
    } else if (transposed && job_.options().fp8_transposes) {
      bytes = 4.0;
    }
    if (recipe_ == Fp8Recipe::kCurrent) compute(desc(KernelKind::kCast, 0.0, 2.0 * elements, rows, width), 1.0);
    compute(desc(KernelKind::kCast, 0.0, bytes * elements, rows, width), 1.0);
  }
  // A norm's output cast for the GEMM after it: fused into the norm
  // (Transformer Engine's LayerNormLinear) except under current scaling,
  // whose scale needs the whole output's amax first.
  void norm_cast(double rows, double width) {
    if (recipe_ == Fp8Recipe::kCurrent) cast(rows, width, false);
  }
  void memory_bound(KernelKind kind, double hbm_elements, double rows, double width) {
    compute(desc(kind, 0.0, hbm_elements * abe_, rows, width), 1.0);
  }
  void repeated(const KernelDesc& d, int count) { compute(d, 1.0, count); }
  // A (fused residual add and) norm over the sequence-parallel share of
  // tokens: `passes` reads and writes of the hidden state.
  // Rotary embedding of the queries and keys (their gradients in
  // backward): read and written once, fused (Megatron-Core's fused RoPE).
  void rope() {
    if (m_.rope) memory_bound(KernelKind::kRope, 2.0 * tokens_ * (q_ + kv_) / t_, tokens_, (q_ + kv_) / t_);
  }
  void norm(double passes) { memory_bound(KernelKind::kNorm, passes * sp_tokens_ * h_, sp_tokens_, h_); }
  // A collective issued after the compute so far; blocking ones gate the
  // next kernel, others are returned for whoever waits on them.
  std::uint32_t collective(const std::optional<CollectiveSpec>& group, CollectiveOp op, double bytes, LlmComm kind,
                           bool blocking, std::span<const std::uint32_t> extra_deps = {}) {
    if (!group || bytes <= 0.0) return WorkGraph::kNone;
    CollectiveSpec c = *group;
    c.op = op;
    c.bytes = bytes;
    std::vector<std::uint32_t> deps(extra_deps.begin(), extra_deps.end());
    if (last_compute_ != WorkGraph::kNone) deps.push_back(last_compute_);
    const std::uint32_t id = node(WorkNodeKind::kCollective, g_.add_collective(std::move(c)), deps, kind);
    if (blocking) gate_.push_back(id);
    return id;
  }
  std::uint32_t send(Rank peer, std::int64_t tag, double bytes, LlmComm kind, std::span<const std::uint32_t> deps) {
    return node(WorkNodeKind::kSend, g_.add_message({peer, tag, bytes}), deps, kind);
  }
  std::uint32_t recv(Rank peer, std::int64_t tag, double bytes, LlmComm kind) {
    return node(WorkNodeKind::kRecv, g_.add_message({peer, tag, bytes}), {}, kind);
  }
  void gate(std::uint32_t n) {
    if (n != WorkGraph::kNone) gate_.push_back(n);
  }

  // ---- tensor parallelism around a block: all-gather the input (sequence
  // parallel) before, all-reduce or reduce-scatter the output after ----
  void tp_enter() {
    if (p_.sequence_parallel) collective(tp_, CollectiveOp::kAllGather, tokens_ * h_ * abe_, LlmComm::kTp, true);
  }
  void tp_leave() {
    collective(tp_, p_.sequence_parallel ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce,
               tokens_ * h_ * abe_, LlmComm::kTp, true);
  }
  bool tp_overlap() const { return p_.tp_comm_overlap && p_.sequence_parallel && p_.tp > 1; }
  // A column-parallel GEMM (m = tokens rows, `weights` elements) on the
  // sequence-parallel all-gather of its input (or, in backward, a
  // row-parallel one's input gradient on the gathered output gradient).
  // With --tp-comm-overlap, Transformer Engine's ring exchange: tp steps,
  // each computing the rows of one rank's shard while the shard received
  // last goes on to the next rank; else the all-gather, then the GEMM.
  // Every rank of the group puts a shard into its next one's buffer at
  // each step (userbuffers' copy-engine puts), so a rank's shard from its
  // previous one lands when its own put does: the ranks are alike, and a
  // step waits for the rank's own put. The receiving side needs no node,
  // and a run can follow one rank of the group (the others' puts into it
  // are its own, mirrored).
  void gathered_gemm(double flops, double weights, double m, double n, double k) {
    if (!tp_overlap()) {
      tp_enter();
      gemm(flops, weights + m * (n + k), m, n, k);
      return;
    }
    const double shard = sp_tokens_ * h_ * abe_, rows = m / t_;
    std::uint32_t have = last_compute_;  // the shard a step computes on: its own first
    for (int j = 0; j < p_.tp; ++j) {
      std::uint32_t next = WorkGraph::kNone;
      if (j + 1 < p_.tp) {
        const std::uint32_t deps[1] = {have};
        MessageSpec put{tp_next_, kTpTagBase + tp_tag_++, shard};
        put.mirrored = true;
        next = node(WorkNodeKind::kSend, g_.add_message(put), have == WorkGraph::kNone ? std::span<const std::uint32_t>{} : deps,
                    LlmComm::kTp);
      }
      if (j > 0) gate(have);
      gemm(flops / t_, weights + rows * (n + k), rows, n, k);
      have = next;
    }
  }
  // A row-parallel GEMM, then the reduce-scatter (all-reduce without
  // sequence parallelism) of its output; with --tp-comm-overlap in
  // kTpOverlapSplits row chunks, each reduce-scattered on the executor's
  // units while the next chunk computes beside it.
  void scattered_gemm(double flops, double weights, double m, double n, double k) {
    if (!tp_overlap()) {
      gemm(flops, weights + m * (n + k), m, n, k);
      tp_leave();
      return;
    }
    const double rows = m / kTpOverlapSplits;
    std::array<std::uint32_t, kTpOverlapSplits> scattered{};
    for (int c = 0; c < kTpOverlapSplits; ++c) {
      gemm(flops / kTpOverlapSplits, weights + rows * (n + k), rows, n, k);
      scattered[static_cast<std::size_t>(c)] =
          collective(tp_, CollectiveOp::kReduceScatter, tokens_ * h_ * abe_ / kTpOverlapSplits, LlmComm::kTp, false);
    }
    for (std::uint32_t s : scattered) gate(s);
  }

  // ---- one transformer layer ----
  double attention_flops() const { return 2.0 * tokens_ * m_.seq * q_ / t_; }  // causal: half of 4 (s/cp) s q
  // Unfused attention (Megatron-LM before FlashAttention): batched score
  // and context GEMMs over the whole s x s (the causal mask does not skip
  // work), with the fused scale-mask-softmax and the dropout reading and
  // writing the b x a/t x s/cp x s scores in HBM. Backward: the two GEMMs'
  // gradients (twice their FLOPs), dropout and softmax backward.
  void unfused_attention(bool backward) {
    const double gemm_flops = 2.0 * tokens_ * m_.seq * q_ / t_;  // one of the two batched GEMMs
    const double scores = static_cast<double>(p_.micro_batch) * (m_.heads / t_) * (m_.seq / static_cast<double>(p_.cp)) * m_.seq;
    const double qkv = tokens_ * (q_ + 2.0 * kv_) / t_;
    // Batched over micro-batch x heads: (s/cp x d) . (d x s), (s/cp x s) . (s x d).
    const double bh = static_cast<double>(p_.micro_batch) * (m_.heads / t_);
    const double sq = m_.seq / static_cast<double>(p_.cp), s = m_.seq;
    const KernelDesc dropout = desc(KernelKind::kDropout, 0.0, scores * (2.0 * abe_ + 1.0), bh * sq, s);
    if (!backward) {
      gemm(gemm_flops, qkv + scores, sq, s, hd_, bh);                    // Q K^T
      memory_bound(KernelKind::kSoftmax, 2.0 * scores, bh * sq, s);       // scale, mask, softmax
      compute(dropout, 1.0);                                              // dropout and its mask
      gemm(gemm_flops, scores + qkv + tokens_ * q_ / t_, sq, hd_, s, bh);  // P V
      return;
    }
    gemm(2.0 * gemm_flops, 2.0 * scores + qkv + tokens_ * q_ / t_, sq, s, hd_, 2.0 * bh);  // dV, dP
    compute(dropout, 1.0);                                                               // dropout backward
    memory_bound(KernelKind::kSoftmax, 3.0 * scores, bh * sq, s);                        // softmax backward
    gemm(2.0 * gemm_flops, 2.0 * scores + 2.0 * qkv, sq, hd_, s, 2.0 * bh);             // dQ, dK
  }
  void attention_core(bool backward) {
    if (p_.attention == AttentionKernel::kUnfused) {
      unfused_attention(backward);
      return;
    }
    // Fused attention: reads Q, K, V, writes the context (backward: reads
    // them and the output gradient, writes three gradients); FlashAttention-2
    // does 2.5x the forward's FLOPs in backward (5 matrix products for 2).
    const double flops = attention_flops() * (backward ? 2.5 : 1.0);
    const double hbm = (tokens_ * (2.0 * q_ + 2.0 * kv_) / t_) * abe_ * (backward ? 2.0 : 1.0);
    const double efficiency = backward ? e_.attention_backward : e_.attention_forward;
    // The kernel: micro-batch x heads/t queries of s/cp against s keys
    // (s/cp a block around the context-parallel ring), causal.
    KernelDesc a = desc(backward ? KernelKind::kAttentionBackward : KernelKind::kAttentionForward, flops, hbm,
                        m_.seq / static_cast<double>(p_.cp), m_.seq, hd_, p_.micro_batch);
    a.heads = std::max(1, m_.heads / p_.tp);
    a.kv_heads = std::max(1, m_.kv_heads / p_.tp);
    a.causal = true;
    a.attention = p_.attention == AttentionKernel::kFa2     ? AttentionImpl::kFa2
                  : p_.attention == AttentionKernel::kCudnn ? AttentionImpl::kCudnn
                                                            : AttentionImpl::kNative;
    if (p_.cp == 1) {
      compute(a, efficiency);
      return;
    }
    a.flops = flops / p_.cp;
    a.hbm_bytes = hbm / p_.cp;
    a.n = a.m;
    // Context parallelism: cp steps around the ring, each on one block of
    // keys and values (and their gradients in backward) while the next
    // block travels.
    const double block = static_cast<double>(p_.micro_batch) * m_.seq / p_.cp * 2.0 * kv_ / t_ * abe_ * (backward ? 2.0 : 1.0);
    std::uint32_t have = last_compute_;
    for (int j = 0; j < p_.cp; ++j) {
      std::uint32_t next = WorkGraph::kNone;
      if (j + 1 < p_.cp) {
        const std::int64_t tag = kCpTagBase + cp_tag_++;
        const std::uint32_t deps[1] = {have};
        send(cp_next_, tag, block, LlmComm::kCp, have == WorkGraph::kNone ? std::span<const std::uint32_t>{} : deps);
        next = recv(cp_prev_, tag, block, LlmComm::kCp);
      }
      if (j > 0) gate(have);
      a.causal = j == 0;  // the rank's own block holds the diagonal
      compute(a, efficiency);
      have = next;
    }
  }
  void attention_forward() {
    norm(4.0);  // residual add and norm
    norm_cast(sp_tokens_, h_);
    gathered_gemm(2.0 * tokens_ * h_ * (q_ + 2.0 * kv_) / t_, h_ * (q_ + 2.0 * kv_) / t_, tokens_, (q_ + 2.0 * kv_) / t_, h_);
    rope();
    attention_core(false);
    cast(tokens_, q_ / t_, false);
    scattered_gemm(2.0 * tokens_ * q_ * h_ / t_, q_ * h_ / t_, tokens_, h_, q_ / t_);
  }
  void dense_mlp_forward(double width) {
    norm(4.0);
    norm_cast(sp_tokens_, h_);
    gathered_gemm(2.0 * tokens_ * h_ * width * gated_ / t_, h_ * width * gated_ / t_, tokens_, width * gated_ / t_, h_);
    memory_bound(KernelKind::kActivation, tokens_ * width * (gated_ + 1.0) / t_, tokens_, width / t_);  // activation (and gate product)
    cast(tokens_, width / t_, false);
    scattered_gemm(2.0 * tokens_ * width * h_ / t_, width * h_ / t_, tokens_, h_, width / t_);
  }
  // Routed experts as Megatron-Core's all-to-all token dispatcher runs
  // them (balanced routing; with moe_pad_expert_input_to_capacity and a
  // capacity factor of 1 every expert takes exactly its share). Each rank
  // routes its sequence-parallel share of the tokens: the router's GEMM,
  // softmax and top-k, the permutation of top_k copies of each token into
  // expert order, the all-to-all to the ranks holding the experts; with
  // expert tensor parallelism tp (Megatron's default) the received tokens
  // are all-gathered over the tensor-parallel group, each rank computing
  // 1/tp of every local expert's width, and its partial outputs
  // reduce-scattered before the all-to-all back; then the un-permutation
  // (weighted by the router's probabilities, summed into the tokens).
  // More than one local expert: the received tokens sorted into
  // expert-major order and back (sort_chunks_by_idxs).
  double routed() const { return sp_tokens_ * m_.top_k; }
  double expert_rows() const { return routed() * etp_; }  // the tokens the local experts compute
  double local_experts() const { return static_cast<double>(m_.experts) / p_.ep; }
  void permute(double hbm_elements, double rows) { memory_bound(KernelKind::kPermute, hbm_elements, rows, h_); }
  void router_softmax() {
    // fp32 logits of sp_tokens x experts: softmax and top-k, read and written.
    compute(desc(KernelKind::kSoftmax, 0.0, 8.0 * sp_tokens_ * m_.experts, sp_tokens_, m_.experts), 1.0);
  }
  // Into expert order: each routed copy read and written. Back: the
  // outputs read, scaled by their probabilities and written, then summed
  // into a zeroed tensor of the rank's tokens (read, written).
  void permute_tokens() { permute(2.0 * routed() * h_, routed()); }
  void unpermute_tokens() { permute(3.0 * routed() * h_ + 3.0 * sp_tokens_ * h_, sp_tokens_); }
  void sort_by_local_expert() {
    if (local_experts() > 1.0) permute(2.0 * expert_rows() * h_, expert_rows());
  }
  // The dispatcher's collectives run one after the other on the stream:
  // each waits for the blocking one before it.
  void expert_tp_collective(CollectiveOp op) {
    if (etp_ > 1) collective(tp_, op, expert_rows() * h_ * abe_, LlmComm::kTp, true, std::vector<std::uint32_t>(gate_));
  }
  void expert_all_to_all() {
    collective(ep_, CollectiveOp::kAllToAll, routed() * h_ * abe_, LlmComm::kEp, true, std::vector<std::uint32_t>(gate_));
  }
  void moe_forward() {
    norm(4.0);
    const double width = m_.moe_ffn_hidden / etp_;
    const double rows = expert_rows(), local = local_experts(), per_expert = rows / local;
    gemm(2.0 * sp_tokens_ * h_ * m_.experts, h_ * m_.experts + sp_tokens_ * (h_ + m_.experts), sp_tokens_, m_.experts, h_);  // router
    router_softmax();
    permute_tokens();
    expert_all_to_all();
    expert_tp_collective(CollectiveOp::kAllGather);
    sort_by_local_expert();
    // Grouped GEMMs: each local expert's share of the rows.
    gemm(2.0 * rows * h_ * width * gated_, local * h_ * width * gated_ + rows * (h_ + width * gated_), per_expert,
         width * gated_, h_, local);
    memory_bound(KernelKind::kActivation, rows * width * (gated_ + 1.0), rows, width);
    cast(rows, width, false);
    gemm(2.0 * rows * width * h_, local * width * h_ + rows * (width + h_), per_expert, h_, width, local);
    sort_by_local_expert();
    expert_tp_collective(CollectiveOp::kReduceScatter);
    expert_all_to_all();
    unpermute_tokens();
    if (m_.shared_experts > 0) {
      const double shared = static_cast<double>(m_.shared_experts) * m_.moe_ffn_hidden;
      tp_enter();
      gemm(2.0 * tokens_ * h_ * shared * gated_ / t_, h_ * shared * gated_ / t_ + tokens_ * (h_ + shared * gated_ / t_), tokens_,
           shared * gated_ / t_, h_);
      memory_bound(KernelKind::kActivation, tokens_ * shared * (gated_ + 1.0) / t_, tokens_, shared / t_);
      cast(tokens_, shared / t_, false);
      gemm(2.0 * tokens_ * shared * h_ / t_, shared * h_ / t_ + tokens_ * (shared / t_ + h_), tokens_, h_, shared / t_);
      tp_leave();
    }
  }
  void layer_forward(int layer) {
    attention_forward();
    if (m_.is_moe_layer(layer)) {
      moe_forward();
    } else {
      dense_mlp_forward(m_.ffn_hidden);
    }
  }

  // Backward: every GEMM's input gradient and weight gradient (each the
  // forward's FLOPs), for `rows` rows of in_width inputs and out_width
  // outputs (batch groups of them); in FP8 the output gradient is cast
  // first (with its transpose, which the weight gradient reads).
  struct GemmShape {
    double rows, in_width, out_width, batch = 1.0;
  };
  void gemm_backward(double flops, double weights, double in, double out, GemmShape g) {
    cast(g.batch * g.rows, g.out_width, true);
    gemm(flops, weights + out + in, g.rows, g.in_width, g.out_width, g.batch);  // input gradient
    gemm(flops, in + out + weights, g.in_width, g.out_width, g.rows, g.batch);  // weight gradient
  }
  // A row-parallel GEMM's backward: its output gradient all-gathered
  // (sequence parallel), then both gradients; with --tp-comm-overlap the
  // input gradient runs shard by shard under the ring exchange
  // (Transformer Engine's proj_dgrad and fc2_dgrad), the weight gradient
  // after it on the whole gradient.
  void gathered_gemm_backward(double flops, double weights, double in, double out, GemmShape g) {
    if (!tp_overlap()) {
      tp_backward_enter();
      gemm_backward(flops, weights, in, out, g);
      return;
    }
    cast(g.rows, g.out_width, true);
    gathered_gemm(flops, weights, g.rows, g.in_width, g.out_width);      // input gradient
    gemm(flops, in + out + weights, g.in_width, g.out_width, g.rows);  // weight gradient
  }
  // A column-parallel GEMM at a block's entry, as Megatron-LM runs its
  // backward (LinearWithGradAccumulationAndAsyncCommunication): with
  // sequence parallelism its input is all-gathered again for the weight
  // gradient while the input gradient runs; the input gradient's
  // reduce-scatter (all-reduce without sequence parallelism) runs while the
  // weight gradient does.
  void column_backward(double flops, double weights, double in, double out, GemmShape g) {
    std::uint32_t gathered = WorkGraph::kNone;
    if (p_.sequence_parallel) gathered = collective(tp_, CollectiveOp::kAllGather, tokens_ * h_ * abe_, LlmComm::kTp, false);
    cast(g.rows, g.out_width, true);
    gemm(flops, weights + out + in, g.rows, g.in_width, g.out_width);  // input gradient
    const std::uint32_t reduced = collective(tp_, p_.sequence_parallel ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce,
                                             tokens_ * h_ * abe_, LlmComm::kTp, false);
    gate(gathered);
    gemm(flops, in + out + weights, g.in_width, g.out_width, g.rows);  // weight gradient
    gate(reduced);
  }
  void tp_backward_enter() {
    // The output gradient of a row-parallel GEMM: sequence parallel
    // gathers it (the mirror of the forward's reduce-scatter).
    if (p_.sequence_parallel) collective(tp_, CollectiveOp::kAllGather, tokens_ * h_ * abe_, LlmComm::kTp, true);
  }
  void layer_backward(int layer) {
    if (m_.is_moe_layer(layer)) {
      moe_backward();
    } else {
      const double f = m_.ffn_hidden;
      gathered_gemm_backward(2.0 * tokens_ * f * h_ / t_, f * h_ / t_, tokens_ * f / t_, tokens_ * h_, {tokens_, f / t_, h_});
      memory_bound(KernelKind::kActivation, 2.0 * tokens_ * f * (gated_ + 1.0) / t_, tokens_, f / t_);
      column_backward(2.0 * tokens_ * h_ * f * gated_ / t_, h_ * f * gated_ / t_, tokens_ * h_, tokens_ * f * gated_ / t_,
                      {tokens_, h_, f * gated_ / t_});
      norm(6.0);  // norm backward
    }
    gathered_gemm_backward(2.0 * tokens_ * q_ * h_ / t_, q_ * h_ / t_, tokens_ * q_ / t_, tokens_ * h_, {tokens_, q_ / t_, h_});
    attention_core(true);
    rope();
    column_backward(2.0 * tokens_ * h_ * (q_ + 2.0 * kv_) / t_, h_ * (q_ + 2.0 * kv_) / t_, tokens_ * h_,
                    tokens_ * (q_ + 2.0 * kv_) / t_, {tokens_, h_, (q_ + 2.0 * kv_) / t_});
    norm(6.0);
  }
  // The forward's mirror: the un-permutation's gradient (a gather into
  // expert order, scaled), the all-to-all, the expert-tp all-gather of the
  // output gradient, the experts' backward, the reduce-scatter of their
  // input gradient, the all-to-all back, the permutation's gradient (summed
  // into the tokens), the router's softmax and GEMM.
  void moe_backward() {
    const double width = m_.moe_ffn_hidden / etp_;
    const double rows = expert_rows(), local = local_experts(), per_expert = rows / local;
    if (m_.shared_experts > 0) {
      const double shared = static_cast<double>(m_.shared_experts) * m_.moe_ffn_hidden;
      tp_backward_enter();
      gemm_backward(2.0 * tokens_ * shared * h_ / t_, shared * h_ / t_, tokens_ * shared / t_, tokens_ * h_, {tokens_, shared / t_, h_});
      memory_bound(KernelKind::kActivation, 2.0 * tokens_ * shared * (gated_ + 1.0) / t_, tokens_, shared / t_);
      column_backward(2.0 * tokens_ * h_ * shared * gated_ / t_, h_ * shared * gated_ / t_, tokens_ * h_,
                      tokens_ * shared * gated_ / t_, {tokens_, h_, shared * gated_ / t_});
    }
    unpermute_tokens();
    expert_all_to_all();
    expert_tp_collective(CollectiveOp::kAllGather);
    sort_by_local_expert();
    gemm_backward(2.0 * rows * width * h_, local * width * h_, rows * width, rows * h_, {per_expert, width, h_, local});
    memory_bound(KernelKind::kActivation, 2.0 * rows * width * (gated_ + 1.0), rows, width);
    gemm_backward(2.0 * rows * h_ * width * gated_, local * h_ * width * gated_, rows * h_, rows * width * gated_,
                  {per_expert, h_, width * gated_, local});
    sort_by_local_expert();
    expert_tp_collective(CollectiveOp::kReduceScatter);
    expert_all_to_all();
    permute_tokens();
    router_softmax();
    gemm_backward(2.0 * sp_tokens_ * h_ * m_.experts, h_ * m_.experts, sp_tokens_ * h_, sp_tokens_ * m_.experts,
                  {sp_tokens_, h_, static_cast<double>(m_.experts)});
    norm(6.0);
  }

  // ---- parameters and gradients ----
  double dense_params(int layer) const {
    double p = h_ * (q_ + 2.0 * kv_) / t_ + q_ * h_ / t_;
    if (!m_.is_moe_layer(layer)) return p + (gated_ + 1.0) * h_ * m_.ffn_hidden / t_;
    return p + h_ * m_.experts + (gated_ + 1.0) * h_ * m_.moe_ffn_hidden * m_.shared_experts / t_;
  }
  double expert_params(int layer) const {
    if (!m_.is_moe_layer(layer)) return 0.0;
    return static_cast<double>(m_.experts) / p_.ep * (gated_ + 1.0) * h_ * m_.moe_ffn_hidden / etp_;
  }
  double embedding_params() const { return job_.padded_vocab() * h_ / t_; }
  bool first_chunk(int chunk) const { return stage_ == 0 && chunk == 0; }
  bool last_chunk(int chunk) const { return stage_ == p_.pp - 1 && chunk == p_.virtual_stages - 1; }
  int chunk_layers(int chunk) const { return split_.chunk_layers(stage_, chunk); }
  int layer_index(int chunk, int i) const { return split_.first_layer(stage_, chunk) + i; }
  // Slot of a layer's (or the embedding's, the head's) parameter gathers.
  std::size_t slot(int chunk, int i) const { return static_cast<std::size_t>(chunk_slot_[static_cast<std::size_t>(chunk)] + i); }
  std::size_t embedding_slot() const { return param_ready_.size() - 2; }
  std::size_t head_slot() const { return param_ready_.size() - 1; }

  // Gradients of a layer once its backward is done: every micro-batch with
  // ZeRO >= 2, else the last (Megatron's overlapped, bucketed reduction).
  void reduce_gradients(double dense, double expert, bool last_micro_batch) {
    if (!last_micro_batch && p_.zero < 2) return;
    if (p_.zero < 2 && !p_.overlap_grad_reduce) {
      deferred_.push_back({dense, expert});  // after the whole backward
      return;
    }
    issue_reductions(dense, expert);
  }
  void issue_reductions(double dense, double expert) {
    // DeepSpeed's 2021 ZeRO-3 all-reduced the fp16/bf16 gradients (DeepSpeed
    // issue 1173: no reduce-scatter on its timelines).
    const bool all_reduce = p_.zero == 0 || blocking_fetch();
    const CollectiveOp op = all_reduce ? CollectiveOp::kAllReduce : CollectiveOp::kReduceScatter;
    const double bytes = blocking_fetch() ? abe_ : kGradBytes;
    outstanding_.push_back(collective(dp_, op, dense * bytes, LlmComm::kDp, false));
    outstanding_.push_back(collective(edp_, op, expert * bytes, LlmComm::kDp, false));
  }
  bool blocking_fetch() const { return p_.zero == 3 && p_.zero3_fetch == Zero3Fetch::kBlocking; }
  // A layer's parameter tensors (elements on this rank before sharding), as
  // Megatron-LM's GPT holds them: dense ones (gathered over dp) and routed
  // experts' (over the expert data-parallel group).
  // A layer's parameter tensors in the order its forward uses them (norm,
  // QKV, projection, norm, the MLP or the router, shared experts and local
  // experts), each a rank's share; `expert`: on the expert data-parallel
  // group.
  struct LayerTensor {
    double elements;
    bool expert;
  };
  std::vector<LayerTensor> layer_tensors(int layer) const {
    std::vector<LayerTensor> v;
    const auto norm = [&] {
      for (int n = 0; n < (m_.layernorm ? 2 : 1); ++n) v.push_back({h_, false});
    };
    const auto linear = [&](double weight, double bias, bool expert = false) {
      v.push_back({weight, expert});
      if (m_.linear_bias && !expert) v.push_back({bias, false});
    };
    const auto mlp = [&](double width, bool expert = false) {
      const double split = expert ? etp_ : t_;
      linear(h_ * width * gated_ / split, width * gated_ / t_, expert);
      linear(width * h_ / split, h_, expert);
    };
    norm();
    linear(h_ * (q_ + 2.0 * kv_) / t_, (q_ + 2.0 * kv_) / t_);
    linear(q_ * h_ / t_, h_);
    norm();
    if (!m_.is_moe_layer(layer)) {
      mlp(m_.ffn_hidden);
      return v;
    }
    v.push_back({h_ * m_.experts, false});  // router
    if (m_.shared_experts > 0) mlp(static_cast<double>(m_.shared_experts) * m_.moe_ffn_hidden);
    for (int e = 0; e < m_.experts / p_.ep; ++e) mlp(m_.moe_ffn_hidden, true);
    return v;
  }
  // One tensor fetched as DeepSpeed's 2021 ZeRO-3 did (its
  // partition_parameters.py _allgather_param, DeepSpeed PR 1188): a zeroed
  // flat buffer (torch.zeros: a fill kernel), the device synchronised (the
  // kernels, the gathers and the gradient reductions in flight all finish),
  // the host's launch cost with a view per rank, the all-gather the next
  // kernel waits for, and PyTorch's list all_gather copying each rank's
  // part out of its own flat buffer: one copy per rank
  // (ProcessGroupNCCL::allgather, PyTorch 1.8-1.9).
  void blocking_gather(const std::optional<CollectiveSpec>& group, int ranks, double elements) {
    if (!group || elements <= 0.0) return;
    memory_bound(KernelKind::kCopy, elements, elements, 1.0);  // the zeroed buffer: written once
    std::vector<std::uint32_t> deps = gate_;
    for (std::size_t i = synced_; i < outstanding_.size(); ++i) {
      if (outstanding_[i] != WorkGraph::kNone) deps.push_back(outstanding_[i]);
    }
    synced_ = outstanding_.size();
    if (last_compute_ != WorkGraph::kNone) deps.push_back(last_compute_);
    Kernel host;
    host.time_ps = kBlockingFetchHostPs + (ranks - kBlockingFetchProfiledRanks) * kBlockingFetchViewPs;
    const std::uint32_t launched[1] = {node(WorkNodeKind::kCpu, kernel(host, std::nullopt), deps, LlmComm::kDp)};
    collective(group, CollectiveOp::kAllGather, elements * abe_, LlmComm::kDp, true, launched);
    const double part = elements / ranks;
    repeated(desc(KernelKind::kCopy, 0.0, 2.0 * part * abe_, part, 1.0), ranks);
  }
  // A tensor DeepSpeed partitions: one of at least
  // stage3_param_persistence_threshold elements (10^5 by default); smaller
  // ones (norms, biases) stay whole on every rank and are never gathered.
  static bool partitioned(const LayerTensor& t) { return t.elements >= kPersistenceElements; }
  void blocking_fetch_tensor(const LayerTensor& t) {
    if (!partitioned(t)) return;
    if (t.expert) {
      blocking_gather(edp_, edp_ranks_, t.elements);
    } else {
      blocking_gather(dp_, dp_ranks_, t.elements);
    }
  }
  void blocking_layer_params(int layer) {
    for (const LayerTensor& t : layer_tensors(layer)) blocking_fetch_tensor(t);
  }
  // After a layer's recomputed forward DeepSpeed keeps a tensor for its
  // backward only when the parameters its trace uses in between (the
  // layer's later tensors, forward and then backward) number fewer than
  // stage3_max_reuse_distance (10^9 by default); it releases the others
  // and gathers them again for the backward, last first.
  void blocking_regather_for_backward(int layer) {
    const std::vector<LayerTensor> v = layer_tensors(layer);
    double later = 0.0;
    std::vector<bool> again(v.size(), false);
    for (std::size_t i = v.size(); i-- > 0;) {
      again[i] = 2.0 * later >= kReuseDistanceElements;
      later += v[i].elements;
    }
    for (std::size_t i = v.size(); i-- > 0;) {
      if (again[i]) blocking_fetch_tensor(v[i]);
    }
  }
  // ZeRO-3: a layer's parameters gathered before each use, one layer ahead:
  // layer i's gather was issued when layer `i` - 1 started (the first one's
  // now), and layer `next`'s is issued as layer i starts.
  void layer_params(int chunk, int i, int next) {
    const int layer = layer_index(chunk, i);
    if (p_.zero < 3) {
      gather_for_use(slot(chunk, i), dense_params(layer), expert_params(layer));
      return;
    }
    if (blocking_fetch()) {
      blocking_layer_params(layer);
      return;
    }
    auto issue = [&](int j) -> std::array<std::uint32_t, 2> {
      const int l = layer_index(chunk, j);
      return {collective(dp_, CollectiveOp::kAllGather, dense_params(l) * abe_, LlmComm::kDp, false),
              collective(edp_, CollectiveOp::kAllGather, expert_params(l) * abe_, LlmComm::kDp, false)};
    };
    std::array<std::uint32_t, 2>& mine = param_ready_[slot(chunk, i)];
    if (mine[0] == WorkGraph::kNone && mine[1] == WorkGraph::kNone) mine = issue(i);
    if (next >= 0) param_ready_[slot(chunk, next)] = issue(next);
    for (std::uint32_t& n : mine) {
      gate(n);
      n = WorkGraph::kNone;
    }
  }
  void gather_for_use(std::size_t s, double dense, double expert) {
    if (p_.zero < 3) {
      // The previous step's gathers (ZeRO 1-2), once per step.
      for (std::uint32_t& n : param_ready_[s]) {
        gate(n);
        n = WorkGraph::kNone;
      }
      return;
    }
    if (blocking_fetch()) {
      blocking_gather(dp_, dp_ranks_, dense);
      blocking_gather(edp_, edp_ranks_, expert);
      return;
    }
    gate(collective(dp_, CollectiveOp::kAllGather, dense * abe_, LlmComm::kDp, false));
    gate(collective(edp_, CollectiveOp::kAllGather, expert * abe_, LlmComm::kDp, false));
  }

  // ---- pipeline passes ----
  std::int64_t pp_tag(const PipeOp& op) const {
    const std::int64_t v = p_.virtual_stages, m = p_.micro_batches();
    return ((static_cast<std::int64_t>(iter_) * 2 + (op.backward ? 1 : 0)) * v + op.chunk) * m + op.micro_batch;
  }
  double pp_bytes() const { return sp_tokens_ * h_ * abe_; }
  void receive_from(const ChunkPos& peer, const PipeOp& op) {
    if (!peer.valid()) return;
    gate(recv(job_.layout().in_stage(r_, peer.stage), pp_tag(op), pp_bytes(), LlmComm::kPp));
  }
  void send_to(const ChunkPos& peer, const PipeOp& op) {
    if (!peer.valid()) return;
    PipeOp as_peer = op;
    as_peer.chunk = peer.chunk;
    // The activation (or gradient) is ready once the kernels and the
    // blocking collectives that produce it are done (a forward ends in the
    // tensor-parallel reduction or the MoE combine).
    std::vector<std::uint32_t> deps = gate_;
    deps.push_back(last_compute_);
    send(job_.layout().in_stage(r_, peer.stage), pp_tag(as_peer), pp_bytes(), LlmComm::kPp, deps);
  }

  void forward(const PipeOp& op) {
    pass_ = LlmPass::kForward;
    chunk_ = op.chunk;
    micro_batch_ = op.micro_batch;
    layer_ = -1;
    receive_from(previous_chunk(p_.pp, p_.virtual_stages, stage_, op.chunk), op);
    if (first_chunk(op.chunk)) {
      gather_for_use(embedding_slot(), embedding_params(), 0.0);
      memory_bound(KernelKind::kEmbedding, 2.0 * tokens_ * h_, tokens_, h_);  // embedding lookup
      collective(tp_, p_.sequence_parallel ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce,
                 tokens_ * h_ * abe_, LlmComm::kTp, true);
    }
    const int n = chunk_layers(op.chunk);
    for (int i = 0; i < n; ++i) {
      const int layer = layer_index(op.chunk, i);
      layer_ = layer;
      layer_params(op.chunk, i, i + 1 < n ? i + 1 : -1);
      layer_forward(layer);
    }
    layer_ = -1;
    amax_reduction(op.chunk, true);
    if (last_chunk(op.chunk)) {
      gather_for_use(head_slot(), m_.tied_embeddings && p_.pp == 1 ? 0.0 : embedding_params(), 0.0);
      lm_head_forward();
    }
    // The PipeOp names the receiver's chunk in its tag: the forward of chunk
    // c on the next stage (or chunk c+1 on stage 0).
    PipeOp sent = op;
    const ChunkPos next = next_chunk(p_.pp, p_.virtual_stages, stage_, op.chunk);
    if (next.valid()) sent.chunk = next.chunk;
    send_to(next, sent);
  }
  // Transformer Engine's delayed scaling (FP8; the other recipes have no
  // amax history and reduce nothing here): where Megatron-Core's
  // fp8_autocast around the chunk's layers exits (forward) and where the
  // backward of its first FP8 GEMM ends (backward), the amaxes of the
  // region's FP8 tensors (3 per GEMM forward: input, weight, output; 2
  // backward: the gradients) are concatenated (a kernel), all-reduced (MAX)
  // over the stage's ranks, Megatron-Core's amax reduction group, with the
  // stream waiting for it (async_op=False), and the scales updated from
  // the amax histories (one fused kernel; NeMo's recipes keep 1024 steps).
  // The recomputed forward reuses the saved scales. Its wait counts as
  // data-parallel communication.
  void amax_reduction(int chunk, bool forward) {
    if (!fp8_ || recipe_ != Fp8Recipe::kDelayed) return;
    double gemms = 0.0;
    for (int i = 0; i < chunk_layers(chunk); ++i) {
      const int layer = layer_index(chunk, i);
      gemms += 2.0;  // QKV, output projection
      if (!m_.is_moe_layer(layer)) {
        gemms += 2.0;
      } else {
        gemms += 2.0 * (local_experts() + (m_.shared_experts > 0 ? 1.0 : 0.0));
      }
    }
    if (gemms == 0.0) return;
    const double tensors = gemms * (forward ? 3.0 : 2.0), amax_bytes = 4.0 * tensors;
    compute(desc(KernelKind::kCast, 0.0, 2.0 * amax_bytes, tensors, 1.0), 1.0);
    collective(amax_, CollectiveOp::kAllReduce, amax_bytes, LlmComm::kDp, true);
    compute(desc(KernelKind::kCast, 0.0, (kAmaxHistory + 3.0) * amax_bytes, tensors, kAmaxHistory), 1.0);
  }
  void lm_head_forward() {
    norm(4.0);  // final norm
    tp_enter();
    const double v = job_.padded_vocab();
    gemm(2.0 * tokens_ * h_ * v / t_, h_ * v / t_ + tokens_ * h_ + tokens_ * v / t_, tokens_, v / t_, h_);
    // Cross-entropy over the vocabulary slice, in fp32: read the logits,
    // write and read the softmax.
    compute(desc(KernelKind::kCrossEntropy, 0.0, 3.0 * tokens_ * v / t_ * 4.0, tokens_, v / t_), 1.0);
  }
  void lm_head_backward() {
    const double v = job_.padded_vocab();
    compute(desc(KernelKind::kCrossEntropy, 0.0, 2.0 * tokens_ * v / t_ * 4.0, tokens_, v / t_), 1.0);
    column_backward(2.0 * tokens_ * h_ * v / t_, h_ * v / t_, tokens_ * h_, tokens_ * v / t_, {tokens_, h_, v / t_});
    norm(6.0);
  }

  void backward(const PipeOp& op) {
    pass_ = LlmPass::kBackward;
    chunk_ = op.chunk;
    micro_batch_ = op.micro_batch;
    layer_ = -1;
    const bool last_mb = op.micro_batch == p_.micro_batches() - 1;
    receive_from(next_chunk(p_.pp, p_.virtual_stages, stage_, op.chunk), op);
    if (last_chunk(op.chunk)) {
      const double head = m_.tied_embeddings && p_.pp == 1 ? 0.0 : embedding_params();
      if (!p_.zero3_keeps_params()) gather_for_use(head_slot(), head, 0.0);
      lm_head_backward();
      if (!m_.tied_embeddings || p_.pp == 1) reduce_gradients(head, 0.0, last_mb);
    }
    for (int i = chunk_layers(op.chunk) - 1; i >= 0; --i) {
      const int layer = layer_index(op.chunk, i);
      layer_ = layer;
      if (!p_.zero3_keeps_params()) layer_params(op.chunk, i, i - 1);
      recompute(layer);
      pass_ = LlmPass::kBackward;
      if (blocking_fetch() && p_.recompute == Recompute::kFull) blocking_regather_for_backward(layer);
      layer_backward(layer);
      reduce_gradients(dense_params(layer), expert_params(layer), last_mb);
    }
    layer_ = -1;
    amax_reduction(op.chunk, false);
    if (first_chunk(op.chunk)) {
      // The mirror of the forward's reduce-scatter, then the scatter-add.
      if (p_.sequence_parallel) collective(tp_, CollectiveOp::kAllGather, tokens_ * h_ * abe_, LlmComm::kTp, true);
      memory_bound(KernelKind::kEmbedding, 2.0 * tokens_ * h_, tokens_, h_);  // embedding gradient (scatter-add)
      if (!m_.tied_embeddings || p_.pp == 1) reduce_gradients(embedding_params(), 0.0, last_mb);
    }
    if (last_mb && (first_chunk(op.chunk) || last_chunk(op.chunk)) && emb_) {
      // Tied embeddings across stages: the first and last stage sum their
      // gradients of the shared matrix, then each reduces it over dp.
      const std::uint32_t sum = collective(emb_, CollectiveOp::kAllReduce, embedding_params() * kGradBytes, LlmComm::kDp, false);
      const std::uint32_t deps[1] = {sum};
      outstanding_.push_back(sum);  // the step waits for it even without data parallelism
      const CollectiveOp op2 = p_.zero == 0 ? CollectiveOp::kAllReduce : CollectiveOp::kReduceScatter;
      outstanding_.push_back(collective(dp_, op2, embedding_params() * kGradBytes, LlmComm::kDp, false, deps));
    }
    PipeOp sent = op;
    const ChunkPos prev = previous_chunk(p_.pp, p_.virtual_stages, stage_, op.chunk);
    if (prev.valid()) sent.chunk = prev.chunk;
    send_to(prev, sent);
  }
  void recompute(int layer) {
    if (p_.recompute == Recompute::kNone) return;
    pass_ = LlmPass::kRecompute;
    if (p_.recompute == Recompute::kSelective) {
      attention_core(false);
    } else {
      layer_forward(layer);
    }
  }

  // Optimizer: Adam over the rank's shard (all its parameters without
  // ZeRO): reads fp32 gradients, master weights and both moments, writes
  // those three and the bf16 weights: 4 x 4 + 3 x 4 + 2 = 30 bytes per
  // parameter. Then ZeRO 1-2 gather the updated parameters, overlapped with
  // the next forward.
  void optimizer_step() {
    pass_ = LlmPass::kOptimizer;
    micro_batch_ = -1;
    layer_ = -1;
    double dense = 0.0, expert = 0.0;
    for (int c = 0; c < p_.virtual_stages; ++c) {
      for (int i = 0; i < chunk_layers(c); ++i) {
        dense += dense_params(layer_index(c, i));
        expert += expert_params(layer_index(c, i));
      }
    }
    if (stage_ == 0) dense += embedding_params();
    if (stage_ == p_.pp - 1 && (!m_.tied_embeddings || p_.pp > 1)) dense += embedding_params();
    const double dense_shard = p_.zero >= 1 ? dense / (static_cast<double>(p_.dp) * p_.cp) : dense;
    const double expert_shard = p_.zero >= 1 ? expert / edp_ranks_ : expert;
    for (const auto& [d, e] : deferred_) issue_reductions(d, e);
    deferred_.clear();
    for (std::uint32_t n : outstanding_) gate(n);
    outstanding_.clear();
    synced_ = 0;
    // In situ (compute/in_situ.h): the host's work of the step (the
    // gradient norm's and the loss's syncs, logging), once the gradients
    // are reduced; the update waits for it.
    if (const TimePs host = pricer_ != nullptr ? pricer_->step_fixed_ps() : 0; host > 0) {
      Kernel k;
      k.time_ps = host;
      std::vector<std::uint32_t> deps = std::move(gate_);
      gate_.clear();
      if (last_compute_ != WorkGraph::kNone) deps.push_back(last_compute_);
      gate(node(WorkNodeKind::kCpu, kernel(k, std::nullopt), deps, LlmComm::kNone));
    }
    const double shard = dense_shard + expert_shard;
    compute(desc(KernelKind::kOptimizer, 10.0 * shard, 30.0 * shard, shard, 1.0), 1.0);
    if (p_.zero == 0 || p_.zero == 3) {
      const std::uint32_t deps[1] = {last_compute_};
      out_.iteration_end.push_back(node(WorkNodeKind::kNop, 0, deps, LlmComm::kNone));
      return;
    }
    gather_parameters();
    // Without overlap the step ends once the gathers are done: the next
    // forward waits for all of them.
    std::vector<std::uint32_t> deps = {last_compute_};
    if (!p_.overlap_param_gather) {
      for (auto& ready : param_ready_) {
        for (std::uint32_t& n : ready) {
          if (n == WorkGraph::kNone) continue;
          deps.push_back(n);
          gate(n);
          n = WorkGraph::kNone;
        }
      }
    }
    out_.iteration_end.push_back(node(WorkNodeKind::kNop, 0, deps, LlmComm::kNone));
  }
  void gather_parameters() {
    for (int c = 0; c < p_.virtual_stages; ++c) {
      for (int i = 0; i < chunk_layers(c); ++i) {
        const int layer = layer_index(c, i);
        param_ready_[slot(c, i)] = {
            collective(dp_, CollectiveOp::kAllGather, dense_params(layer) * abe_, LlmComm::kDp, false),
            collective(edp_, CollectiveOp::kAllGather, expert_params(layer) * abe_, LlmComm::kDp, false)};
      }
    }
    if (stage_ == 0) {
      param_ready_[embedding_slot()][0] =
          collective(dp_, CollectiveOp::kAllGather, embedding_params() * abe_, LlmComm::kDp, false);
    }
    if (stage_ == p_.pp - 1 && (!m_.tied_embeddings || p_.pp > 1)) {
      param_ready_[head_slot()][0] = collective(dp_, CollectiveOp::kAllGather, embedding_params() * abe_, LlmComm::kDp, false);
    }
  }

  const LlmJob& job_;
  const TransformerShape& m_;
  const ParallelPlan& p_;
  const LlmEfficiency& e_;
  Rank r_;
  int stage_;
  LlmRankGraph out_;
  WorkGraph& g_;
  double bpe_ = 2.0, abe_ = 2.0, t_ = 1.0, etp_ = 1.0, h_ = 0.0, q_ = 0.0, kv_ = 0.0, tokens_ = 0.0, sp_tokens_ = 0.0, gated_ = 1.0, hd_ = 0.0;
  bool fp8_ = false;
  Fp8Recipe recipe_ = Fp8Recipe::kDelayed;
  const KernelPricer* pricer_ = nullptr;
  const LayerSplit& split_;
  std::vector<int> chunk_slot_;  // per chunk: its first layer's slot
  std::optional<CollectiveSpec> tp_, dp_, edp_, ep_, emb_, amax_;
  int dp_ranks_ = 1, edp_ranks_ = 1;  // the ranks of dp_ and edp_
  Rank cp_next_ = 0, cp_prev_ = 0;
  std::int64_t cp_tag_ = 0;
  Rank tp_next_ = 0;
  std::int64_t tp_tag_ = 0;
  int iter_ = 0;
  LlmPass pass_ = LlmPass::kForward;
  int chunk_ = 0;
  std::int32_t micro_batch_ = -1, layer_ = -1;
  std::uint32_t last_compute_ = WorkGraph::kNone;
  std::vector<std::uint32_t> gate_;
  std::vector<std::uint32_t> outstanding_;
  std::size_t synced_ = 0;  // blocking fetch: outstanding_[0, synced_) are done at the last device sync
  std::vector<std::pair<double, double>> deferred_;  // gradient reductions after the whole backward
  // Per layer (then the embedding, the head): the gathers of its dense and
  // expert parameters the next forward waits for.
  std::vector<std::array<std::uint32_t, 2>> param_ready_;
};

}  // namespace

std::string LlmJob::plan_text() const { return describe_plan(plan_, shape_.layers); }

std::optional<MemoryBreakdown> LlmJob::stage_memory(int stage) const {
  return memory_per_gpu(shape_, plan_, stage, options_.bytes_per_element, plan_.attention);
}

double LlmJob::model_state_bytes() const {
  const BytesPerParameter b = bytes_per_parameter(0, 1.0, options_.bytes_per_element);
  return shape_.parameters() * (b.weights + b.optimizer);
}

std::string LlmJob::model_state_text() const {
  const BytesPerParameter b = bytes_per_parameter(0, 1.0, options_.bytes_per_element);
  return fmt::format("the model state: {:.4g} parameters x {:g} B of weights and optimizer states", shape_.parameters(),
                     b.weights + b.optimizer);
}

LlmRankGraph LlmJob::build(Rank r, bool listed) const {
  Builder b(*this, topo_, r, listed);
  LlmRankGraph g = b.run();
  g.graph.source = shape_.name;
  return g;
}

}  // namespace acesim
