// Megatron-LM's parallel plan and rank layout (parallel_plan.h).
#include "workload/llm/parallel_plan.h"

#include <algorithm>
#include <array>
#include <functional>
#include <string>
#include <tuple>

#include <fmt/format.h>

#include "config/input_error.h"
#include "registry/registry.h"
#include "workload/models/models.h"

namespace acesim {
namespace {

constexpr std::array<std::pair<PipeSchedule, std::string_view>, 3> kSchedules = {
    {{PipeSchedule::k1F1B, "1f1b"}, {PipeSchedule::kInterleaved, "interleaved"}, {PipeSchedule::kGpipe, "gpipe"}}};
constexpr std::array<std::pair<Recompute, std::string_view>, 3> kRecompute = {
    {{Recompute::kNone, "none"}, {Recompute::kSelective, "selective"}, {Recompute::kFull, "full"}}};
constexpr std::array<std::pair<AttentionKernel, std::string_view>, 4> kAttention = {{{AttentionKernel::kFused, "fused"},
                                                                                    {AttentionKernel::kUnfused, "unfused"},
                                                                                    {AttentionKernel::kFa2, "fa2"},
                                                                                    {AttentionKernel::kCudnn, "cudnn"}}};
constexpr std::array<std::pair<Zero3Fetch, std::string_view>, 2> kZero3Fetch = {
    {{Zero3Fetch::kPrefetch, "prefetch"}, {Zero3Fetch::kBlocking, "blocking"}}};
constexpr std::array<std::pair<ReshardAfterForward, std::string_view>, 2> kReshard = {
    {{ReshardAfterForward::kAlways, "always"}, {ReshardAfterForward::kNever, "never"}}};

template <typename E, std::size_t N>
std::vector<std::string> names_of(const std::array<std::pair<E, std::string_view>, N>& table) {
  std::vector<std::string> out;
  for (const auto& e : table) out.emplace_back(e.second);
  return out;
}

template <typename E, std::size_t N>
E parse_of(const std::array<std::pair<E, std::string_view>, N>& table, const std::string& flag,
           const std::string& text, const char* what) {
  for (const auto& e : table) {
    if (e.second == text) return e.first;
  }
  throw InputError(flag + ": unknown " + what + " '" + text + "'" + suggestion(text, names_of(table)));
}

template <typename E, std::size_t N>
std::string_view name_of(const std::array<std::pair<E, std::string_view>, N>& table, E value) {
  for (const auto& e : table) {
    if (e.first == value) return e.second;
  }
  return "?";
}

std::string n(long long v) { return std::to_string(v); }

constexpr const char* kFirstFlag = "--decoder-first-pipeline-num-layers";
constexpr const char* kLastFlag = "--decoder-last-pipeline-num-layers";

// Megatron-Core's checks of an uneven split (TransformerConfig.__post_init__,
// "Uneven PP"), each refusal with its arithmetic.
void check_layer_split(const ParallelPlan& p, int layers, const std::function<void(const std::string&)>& bad) {
  const bool edges = p.first_stage_layers != 0 || p.last_stage_layers != 0;
  const bool counted = p.embedding_in_split || p.loss_in_split;
  if (!edges && !counted) {
    const long long chunks = static_cast<long long>(p.pp) * p.virtual_stages;
    if (layers % chunks != 0) {
      // An uneven split gives every stage a multiple of v layers: it can
      // help only when v divides the layers.
      const std::string hint =
          layers % p.virtual_stages == 0 ? std::string(" (or split unevenly: ") + kFirstFlag + ", " + kLastFlag + ")" : "";
      bad("layers (" + n(layers) + ") must be divisible by pp*virtual-stages = " + n(p.pp) + "*" + n(p.virtual_stages) +
          " = " + n(chunks) + hint);
    }
    return;
  }
  if (edges && counted) {
    bad(std::string(kFirstFlag) + "/" + kLastFlag +
        " cannot be combined with --account-for-embedding-in-pipeline-split/--account-for-loss-in-pipeline-split (as "
        "Megatron-Core refuses)");
  }
  if (p.pp < 2) bad("an uneven pipeline split needs --pp >= 2, got " + n(p.pp));
  const int v = p.virtual_stages;
  if (counted) {
    const int e = p.embedding_in_split ? 1 : 0, l = p.loss_in_split ? 1 : 0;
    const long long total = static_cast<long long>(layers) + e + l;
    const std::string sum = "layers (" + n(layers) + ")" + (e ? " + embedding 1" : "") + (l ? " + loss 1" : "") + " = " + n(total);
    if (total % p.pp != 0) bad(sum + " must be divisible by --pp " + n(p.pp));
    if ((total / p.pp) % v != 0) {
      bad(sum + " over --pp " + n(p.pp) + " = " + n(total / p.pp) + " per stage, which must be divisible by --virtual-stages " + n(v));
    }
    return;
  }
  int middle_stages = p.pp;
  long long middle = layers;
  std::string sum = "layers (" + n(layers) + ")";
  for (const auto& [given, flag, what] : {std::tuple{p.first_stage_layers, kFirstFlag, "first"},
                                          std::tuple{p.last_stage_layers, kLastFlag, "last"}}) {
    if (given == 0) continue;
    if (given < 0) bad(std::string(flag) + " must be >= 1, got " + n(given));
    if (given % v != 0) {
      bad(std::string(flag) + " " + n(given) + " must be divisible by --virtual-stages " + n(v) +
          " (each of the " + what + " stage's chunks holds an equal share)");
    }
    middle -= given;
    --middle_stages;
    sum += std::string(" - ") + what + " " + n(given);
  }
  sum += " = " + n(middle);
  if (middle < 0) bad(sum + ": the first and last stages take more layers than the model has");
  if (middle_stages == 0 && middle != 0) bad(sum + " layers left, but --pp " + n(p.pp) + " leaves no middle stage for them");
  if (middle_stages > 0 && middle == 0) {
    bad(sum + " layers left for " + n(middle_stages) + " middle stage(s): each needs at least one (Megatron-Core refuses empty ones)");
  }
  if (middle_stages > 0 && middle % middle_stages != 0) {
    bad(sum + " layers left do not split evenly over the " + n(middle_stages) + " middle stage(s)");
  }
  if (middle_stages > 0 && (middle / middle_stages) % v != 0) {
    bad(sum + " layers over " + n(middle_stages) + " middle stage(s) = " + n(middle / middle_stages) +
        " each, which must be divisible by --virtual-stages " + n(v));
  }
}

}  // namespace

std::string_view to_string(PipeSchedule s) { return name_of(kSchedules, s); }
std::string_view to_string(Recompute r) { return name_of(kRecompute, r); }
std::vector<std::string> pipe_schedule_names() { return names_of(kSchedules); }
std::vector<std::string> recompute_names() { return names_of(kRecompute); }
PipeSchedule parse_pipe_schedule(const std::string& flag, const std::string& text) {
  return parse_of(kSchedules, flag, text, "pipeline schedule");
}
Recompute parse_recompute(const std::string& flag, const std::string& text) {
  return parse_of(kRecompute, flag, text, "recomputation");
}
std::string_view to_string(AttentionKernel a) { return name_of(kAttention, a); }
std::vector<std::string> attention_kernel_names() { return names_of(kAttention); }
AttentionKernel parse_attention_kernel(const std::string& flag, const std::string& text) {
  return parse_of(kAttention, flag, text, "attention kernel");
}
std::string_view to_string(Zero3Fetch f) { return name_of(kZero3Fetch, f); }
std::vector<std::string> zero3_fetch_names() { return names_of(kZero3Fetch); }
Zero3Fetch parse_zero3_fetch(const std::string& flag, const std::string& text) {
  return parse_of(kZero3Fetch, flag, text, "ZeRO-3 parameter fetch");
}

std::string_view to_string(ReshardAfterForward r) { return name_of(kReshard, r); }
std::vector<std::string> reshard_after_forward_names() { return names_of(kReshard); }
ReshardAfterForward parse_reshard_after_forward(const std::string& flag, const std::string& text) {
  return parse_of(kReshard, flag, text, "reshard-after-forward choice");
}

void check_plan(const ParallelPlan& p, const TransformerShape& m, long long gpus) {
  const auto bad = [](const std::string& what) { throw InputError("parallel plan: " + what); };
  if (p.tp < 1 || p.pp < 1 || p.dp < 1 || p.ep < 1 || p.cp < 1) {
    bad("--tp, --pp, --dp, --ep and --cp must be >= 1 (got tp " + n(p.tp) + ", pp " + n(p.pp) + ", dp " + n(p.dp) +
        ", ep " + n(p.ep) + ", cp " + n(p.cp) + ")");
  }
  if (p.world() != gpus) {
    bad("tp*cp*dp*pp = " + n(p.tp) + "*" + n(p.cp) + "*" + n(p.dp) + "*" + n(p.pp) + " = " + n(p.world()) +
        ", but the platform has " + n(gpus) + " GPUs");
  }
  if (m.heads % p.tp != 0 || m.kv_heads % p.tp != 0) {
    bad("--tp " + n(p.tp) + " must divide the attention heads (" + n(m.heads) + ") and key/value heads (" +
        n(m.kv_heads) + ")");
  }
  if (m.ffn_hidden % p.tp != 0 || (m.moe_ffn_hidden > 0 && m.moe_ffn_hidden % p.tp != 0)) {
    bad("--tp " + n(p.tp) + " must divide ffn_hidden (" + n(m.ffn_hidden) + ")" +
        (m.moe_ffn_hidden > 0 ? " and moe_ffn_hidden (" + n(m.moe_ffn_hidden) + ")" : std::string()));
  }
  if (p.virtual_stages < 1) bad("--virtual-stages must be >= 1, got " + n(p.virtual_stages));
  if (p.virtual_stages > 1 && p.schedule != PipeSchedule::kInterleaved) {
    bad("--virtual-stages " + n(p.virtual_stages) + " needs --schedule interleaved");
  }
  if (p.schedule == PipeSchedule::kInterleaved && p.pp < 2) bad("--schedule interleaved needs --pp >= 2");
  check_layer_split(p, m.layers, bad);
  if (m.experts == 0 && p.ep > 1) bad("--ep " + n(p.ep) + " needs a mixture-of-experts model (this one has no experts)");
  if (m.experts > 0 && m.experts % p.ep != 0) bad("--ep " + n(p.ep) + " must divide the experts (" + n(m.experts) + ")");
  if (m.experts > 0 && p.tp > 1 && !p.sequence_parallel) {
    bad("--tp " + n(p.tp) + " with a mixture-of-experts model needs --sequence-parallel (as Megatron-Core requires)");
  }
  if (p.expert_tp < 0 || (p.expert_tp > 1 && p.expert_tp != p.tp)) {
    bad("--expert-tensor-parallel-size " + n(p.expert_tp) + " must be 1 or --tp " + n(p.tp) +
        " (acesim models whole experts or experts split as the dense MLP)");
  }
  if (p.expert_tp > 0 && m.experts == 0) {
    bad("--expert-tensor-parallel-size " + n(p.expert_tp) + " needs a mixture-of-experts model (this one has no experts)");
  }
  if (p.dp % p.ep != 0) bad("--ep " + n(p.ep) + " must divide --dp " + n(p.dp) + " (experts are split over data-parallel ranks)");
  if (m.seq % (2 * p.cp) != 0 && p.cp > 1) {
    bad("--cp " + n(p.cp) + ": the sequence (" + n(m.seq) + ") must split into 2*cp = " + n(2 * p.cp) +
        " equal chunks (causal load balancing)");
  }
  if (p.sequence_parallel && m.seq % (static_cast<long long>(p.tp) * p.cp) != 0) {
    bad("--sequence-parallel: tp*cp = " + n(static_cast<long long>(p.tp) * p.cp) + " must divide the sequence (" +
        n(m.seq) + ")");
  }
  if (p.cp > 1 && p.attention == AttentionKernel::kUnfused) {
    bad("--cp " + n(p.cp) + " needs --attention fused, fa2 or cudnn (context parallelism runs on fused attention)");
  }
  if (p.zero < 0 || p.zero > 3) bad("--zero must be 0, 1, 2 or 3, got " + n(p.zero));
  if (p.tp_comm_overlap && (p.tp < 2 || !p.sequence_parallel)) {
    bad("--tp-comm-overlap needs --tp >= 2 and --sequence-parallel (it overlaps sequence parallelism's all-gathers and "
        "reduce-scatters; got --tp " + n(p.tp) + (p.sequence_parallel ? "" : " without --sequence-parallel") + ")");
  }
  if (p.reshard_after_forward != ReshardAfterForward::kAlways &&
      (p.zero != 3 || p.zero3_fetch != Zero3Fetch::kPrefetch)) {
    bad("--reshard-after-forward " + std::string(to_string(p.reshard_after_forward)) +
        " applies to --zero 3 with --zero3-fetch prefetch (FSDP's; got --zero " + n(p.zero) +
        (p.zero == 3 ? ", --zero3-fetch " + std::string(to_string(p.zero3_fetch)) : std::string()) + ")");
  }
  if (p.zero3_fetch != Zero3Fetch::kPrefetch && p.zero != 3) {
    bad("--zero3-fetch " + std::string(to_string(p.zero3_fetch)) + " applies to --zero 3 (got --zero " + n(p.zero) + ")");
  }
  if (p.overlap_param_gather && (p.zero == 0 || p.zero == 3)) {
    bad("--overlap-param-gather applies to --zero 1 or 2 (ZeRO " + n(p.zero) + " gathers no parameters after the step)");
  }
  if (p.overlap_grad_reduce && p.zero >= 2) {
    bad("--overlap-grad-reduce applies to --zero 0 or 1 (ZeRO " + n(p.zero) + " reduces every micro-batch's gradients as they come)");
  }
  if (p.micro_batch < 1) bad("--micro-batch must be >= 1, got " + n(p.micro_batch));
  const long long per_step = static_cast<long long>(p.micro_batch) * p.dp;
  if (p.global_batch < 0 || (p.global_batch > 0 && p.global_batch % per_step != 0)) {
    bad("--global-batch " + n(p.global_batch) + " must be a positive multiple of micro-batch*dp = " +
        n(p.micro_batch) + "*" + n(p.dp) + " = " + n(per_step));
  }
  if (p.schedule == PipeSchedule::kInterleaved && p.micro_batches() % p.pp != 0) {
    bad("--schedule interleaved: the micro-batches per replica (" + n(p.micro_batches()) +
        ") must be a multiple of --pp " + n(p.pp));
  }
  if (p.micro_batches() > 100000) bad("micro-batches per replica (" + n(p.micro_batches()) + ") above 100000");
}

LayerSplit::LayerSplit(const ParallelPlan& p, int layers) : pp_(p.pp), v_(std::max(1, p.virtual_stages)) {
  const std::size_t chunks = static_cast<std::size_t>(pp_) * static_cast<std::size_t>(v_);
  count_.assign(chunks, 0);
  if (p.embedding_in_split || p.loss_in_split) {
    const int e = p.embedding_in_split ? 1 : 0, l = p.loss_in_split ? 1 : 0;
    const int each = (layers + e + l) / static_cast<int>(chunks);
    for (int& c : count_) c = each;
    count_.front() -= e;
    count_.back() -= l;
  } else {
    const int given = (p.first_stage_layers != 0 ? 1 : 0) + (p.last_stage_layers != 0 ? 1 : 0);
    const int middle = pp_ > given ? (layers - p.first_stage_layers - p.last_stage_layers) / (pp_ - given) : 0;
    for (int s = 0; s < pp_; ++s) {
      int stage = middle;
      if (s == 0 && p.first_stage_layers != 0) stage = p.first_stage_layers;
      if (s == pp_ - 1 && p.last_stage_layers != 0) stage = p.last_stage_layers;
      for (int c = 0; c < v_; ++c) count_[index(s, c)] = stage / v_;
    }
  }
  first_.assign(chunks, 0);
  for (std::size_t g = 1; g < chunks; ++g) first_[g] = first_[g - 1] + count_[g - 1];
}

int LayerSplit::stage_layers(int stage) const {
  int sum = 0;
  for (int c = 0; c < v_; ++c) sum += chunk_layers(stage, c);
  return sum;
}

int LayerSplit::most_stage_layers() const {
  int most = 0;
  for (int s = 0; s < pp_; ++s) most = std::max(most, stage_layers(s));
  return most;
}

std::string LayerSplit::text() const {
  std::string out;
  for (int s = 0; s < pp_;) {
    int run = 1;
    while (s + run < pp_ && stage_layers(s + run) == stage_layers(s)) ++run;
    out += (out.empty() ? "" : ", ") + std::to_string(stage_layers(s)) + (run > 1 ? " x" + std::to_string(run) : "");
    s += run;
  }
  return out;
}

RankLayout::RankLayout(const ParallelPlan& plan) : plan_(plan), world_(plan.world()) {}

RankCoord RankLayout::coord(Rank r) const {
  RankCoord c;
  c.tp = static_cast<int>(r % plan_.tp);
  r /= plan_.tp;
  c.cp = static_cast<int>(r % plan_.cp);
  r /= plan_.cp;
  c.ep = static_cast<int>(r % plan_.ep);
  r /= plan_.ep;
  const int dpo = plan_.dp / plan_.ep;
  c.dpo = static_cast<int>(r % dpo);
  r /= dpo;
  c.pp = static_cast<int>(r);
  return c;
}

Rank RankLayout::rank(const RankCoord& c) const {
  const long long dpo = plan_.dp / plan_.ep;
  return static_cast<Rank>(c.tp + plan_.tp * (c.cp + plan_.cp * (c.ep + plan_.ep * (c.dpo + dpo * c.pp))));
}

int RankLayout::data_index(Rank r) const {
  const RankCoord c = coord(r);
  return c.ep + plan_.ep * c.dpo;
}

std::vector<Rank> RankLayout::vary(Rank r, bool tp, bool cp, bool ep, bool dpo, bool pp) const {
  const RankCoord base = coord(r);
  const int dpo_size = plan_.dp / plan_.ep;
  std::vector<Rank> out;
  for (int p = 0; p < (pp ? plan_.pp : 1); ++p) {
    for (int o = 0; o < (dpo ? dpo_size : 1); ++o) {
      for (int e = 0; e < (ep ? plan_.ep : 1); ++e) {
        for (int c = 0; c < (cp ? plan_.cp : 1); ++c) {
          for (int t = 0; t < (tp ? plan_.tp : 1); ++t) {
            RankCoord x = base;
            if (tp) x.tp = t;
            if (cp) x.cp = c;
            if (ep) x.ep = e;
            if (dpo) x.dpo = o;
            if (pp) x.pp = p;
            out.push_back(rank(x));
          }
        }
      }
    }
  }
  return out;  // ascending: the outer loops vary the higher coordinates
}

std::vector<Rank> RankLayout::tp_group(Rank r) const { return vary(r, true, false, false, false, false); }
std::vector<Rank> RankLayout::cp_group(Rank r) const { return vary(r, false, true, false, false, false); }
std::vector<Rank> RankLayout::ep_group(Rank r) const { return vary(r, false, false, true, false, false); }
std::vector<Rank> RankLayout::dp_group(Rank r) const { return vary(r, false, true, true, true, false); }
std::vector<Rank> RankLayout::expert_dp_group(Rank r) const {
  return vary(r, plan_.etp() == 1, true, false, true, false);
}
std::vector<Rank> RankLayout::dpo_group(Rank r) const { return vary(r, false, false, false, true, false); }
std::vector<Rank> RankLayout::stage_group(Rank r) const { return vary(r, true, true, true, true, false); }
std::vector<Rank> RankLayout::pp_group(Rank r) const { return vary(r, false, false, false, false, true); }

Rank RankLayout::in_stage(Rank r, int stage) const {
  RankCoord c = coord(r);
  c.pp = stage;
  return rank(c);
}

std::string describe_plan(const ParallelPlan& p, int layers) {
  std::string s = fmt::format("tp {}, pp {}, dp {}", p.tp, p.pp, p.dp);
  if (p.ep > 1) s += fmt::format(", ep {}", p.ep);
  if (p.etp() != p.tp) s += fmt::format(", expert tp {}", p.etp());
  if (p.cp > 1) s += fmt::format(", cp {}", p.cp);
  if (p.sequence_parallel) s += ", sequence parallel";
  if (p.zero > 0) s += fmt::format(", ZeRO {}", p.zero);
  if (p.zero3_fetch == Zero3Fetch::kBlocking) s += " (blocking per-tensor parameter fetch)";
  if (p.zero3_keeps_params()) {
    s += " (parameters kept from forward to backward)";
  }
  if (p.pp > 1) {
    s += fmt::format(", {}", to_string(p.schedule));
    if (p.virtual_stages > 1) s += fmt::format(" x{}", p.virtual_stages);
  }
  if (p.uneven() && layers > 0) {
    s += fmt::format(", layers per stage {}", LayerSplit(p, layers).text());
    if (p.embedding_in_split || p.loss_in_split) {
      s += fmt::format(" (the {} counted as a layer)", p.embedding_in_split && p.loss_in_split ? "embedding and the loss"
                                                     : p.embedding_in_split                   ? "embedding"
                                                                                              : "loss");
    }
  }
  if (p.recompute != Recompute::kNone) s += fmt::format(", recompute {}", to_string(p.recompute));
  if (p.attention != AttentionKernel::kFused) s += fmt::format(", {} attention", to_string(p.attention));
  if (p.overlap_grad_reduce) s += ", overlapped gradient reduction";
  if (p.overlap_param_gather) s += ", overlapped parameter gather";
  if (p.tp_comm_overlap) s += ", tensor-parallel communication overlap";
  s += fmt::format(", {} micro-batch{} of {} per replica", p.micro_batches(), p.micro_batches() == 1 ? "" : "es",
                   p.micro_batch);
  return s;
}

}  // namespace acesim
