// How an LLM's training is split over the GPUs, in Megatron-LM's vocabulary
// (docs/models.md, "Parallelism"), and where each rank sits.
//
// Ranks are laid out as Megatron-LM does: tensor-parallel ranks innermost,
// then context, expert, data, pipeline. The data-parallel degree dp counts
// the expert-parallel ranks too (ep divides dp): a dense layer's gradients
// are reduced over all dp replicas, an expert's over the dp / ep replicas
// that hold the same experts.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "engine/time.h"
#include "topology/topology.h"

namespace acesim {

struct TransformerShape;

enum class PipeSchedule { k1F1B, kInterleaved, kGpipe };
// How attention runs: fused (FlashAttention: scores never leave the chip;
// it keeps the output and fp32 softmax statistics; the architecture's own
// kernel: FlashAttention-2 on Ampere, -3 on Hopper, cuDNN's on Blackwell),
// fa2 (fused, by FlashAttention-2 whatever the GPU: Hopper runs its
// Ampere-generation kernel, as stacks did before FlashAttention-3), cudnn
// (fused, by cuDNN's fused attention: what Transformer Engine, and so
// Megatron-Core and NeMo, run on Hopper and later) or
// unfused (Megatron-LM before FlashAttention: score GEMMs, then softmax and
// dropout over the b x a x s x s scores in HBM, which it keeps for
// backward).
enum class AttentionKernel { kFused, kUnfused, kFa2, kCudnn };
std::string_view to_string(AttentionKernel a);
std::vector<std::string> attention_kernel_names();
AttentionKernel parse_attention_kernel(const std::string& flag, const std::string& text);
enum class Recompute { kNone, kSelective, kFull };
// How ZeRO-3 fetches a layer's parameters: prefetch (one all-gather per
// layer, issued a layer ahead so it runs under the compute: PyTorch FSDP,
// DeepSpeed since 2022, MaxText) or blocking (DeepSpeed ZeRO-3 as of 2021:
// one all-gather per parameter tensor, each after the device is
// synchronised, so no gather or gradient reduction runs under a kernel;
// gradients all-reduced in the training precision).
enum class Zero3Fetch { kPrefetch, kBlocking };
std::string_view to_string(Zero3Fetch f);
std::vector<std::string> zero3_fetch_names();
Zero3Fetch parse_zero3_fetch(const std::string& flag, const std::string& text);
// PyTorch FSDP2's reshard_after_forward, as torchtitan names its choices
// (--parallelism.fsdp_reshard_after_forward): always (free each layer's
// gathered parameters after its forward and gather them again for its
// backward; acesim's ZeRO 3 without the option) or never (keep them from
// the forward to the backward: no backward gathers, the stage's whole
// parameters held meanwhile). torchtitan's own default is never with
// pipeline parallelism, else always.
enum class ReshardAfterForward { kAlways, kNever };
std::string_view to_string(ReshardAfterForward r);
std::vector<std::string> reshard_after_forward_names();
ReshardAfterForward parse_reshard_after_forward(const std::string& flag, const std::string& text);
std::string_view to_string(PipeSchedule s);
std::string_view to_string(Recompute r);
std::vector<std::string> pipe_schedule_names();
std::vector<std::string> recompute_names();
// Throws InputError naming `flag` for an unknown name.
PipeSchedule parse_pipe_schedule(const std::string& flag, const std::string& text);
Recompute parse_recompute(const std::string& flag, const std::string& text);

struct ParallelPlan {
  int tp = 1;  // tensor parallel
  int pp = 1;  // pipeline stages
  int dp = 1;  // data-parallel replicas (expert-parallel ranks included)
  int ep = 1;  // expert parallel: experts split over ep of the dp replicas
  int cp = 1;  // context parallel: the sequence split over cp ranks
  // Expert tensor parallelism (Megatron's --expert-tensor-parallel-size):
  // each routed expert's matrices split over etp of the tensor-parallel
  // ranks; 0: tp, Megatron's default (the experts split as the dense MLP,
  // the dispatched tokens all-gathered over the tensor-parallel group
  // after the all-to-all and reduce-scattered before the one back); 1:
  // whole experts. acesim models 1 and tp.
  int expert_tp = 0;
  int etp() const { return expert_tp > 0 ? expert_tp : tp; }
  bool sequence_parallel = false;  // norms and dropout split over the tp ranks' sequence
  int zero = 0;  // 0 none; 1 optimizer states, 2 + gradients, 3 + parameters sharded over dp
  int micro_batch = 1;    // sequences per micro-batch
  int global_batch = 0;   // sequences per iteration over all replicas; 0: micro_batch x dp
  PipeSchedule schedule = PipeSchedule::k1F1B;
  int virtual_stages = 1;  // interleaved: model chunks per pipeline stage
  Recompute recompute = Recompute::kNone;
  AttentionKernel attention = AttentionKernel::kFused;
  Zero3Fetch zero3_fetch = Zero3Fetch::kPrefetch;  // with zero 3
  ReshardAfterForward reshard_after_forward = ReshardAfterForward::kAlways;  // with zero 3
  // ZeRO 3 (prefetching) that keeps each layer's gathered parameters from
  // its forward to its backward: no backward gathers, weights whole.
  bool zero3_keeps_params() const {
    return zero == 3 && zero3_fetch == Zero3Fetch::kPrefetch && reshard_after_forward == ReshardAfterForward::kNever;
  }
  // Megatron-LM's --overlap-grad-reduce: data-parallel gradient reductions
  // start as the last micro-batch's backward produces them (else after the
  // whole backward); --overlap-param-gather: ZeRO's parameter gathers run
  // under the next forward (else before it).
  bool overlap_grad_reduce = false;
  bool overlap_param_gather = false;
  // Megatron-Core's --tp-comm-overlap (Transformer Engine's userbuffers,
  // with sequence parallelism): each transformer layer's sequence-parallel
  // all-gathers run as a ring exchange under the column-parallel GEMM's
  // chunks, and the reduce-scatters after the row-parallel GEMMs in four
  // chunks pipelined with them.
  bool tp_comm_overlap = false;
  // Uneven pipeline stages, as Megatron-LM splits them (layer_split below):
  // --decoder-first-pipeline-num-layers and
  // --decoder-last-pipeline-num-layers (0: not given), or
  // --account-for-embedding-in-pipeline-split and
  // --account-for-loss-in-pipeline-split (the embedding, the loss counted
  // as a layer of the first, the last stage).
  int first_stage_layers = 0;
  int last_stage_layers = 0;
  bool embedding_in_split = false;
  bool loss_in_split = false;
  bool uneven() const { return first_stage_layers != 0 || last_stage_layers != 0 || embedding_in_split || loss_in_split; }

  long long world() const { return static_cast<long long>(tp) * cp * dp * pp; }
  int effective_global_batch() const { return global_batch > 0 ? global_batch : micro_batch * dp; }
  // Micro-batches per replica and iteration (gradient accumulation steps).
  int micro_batches() const { return effective_global_batch() / (micro_batch * dp); }
};

// Checks a plan against the model and the GPUs; throws InputError with one
// line naming the numbers (tp*cp*dp*pp != GPUs, heads % tp, layers %
// (pp * virtual stages), an uneven split that does not add up, experts %
// ep, ...).
void check_plan(const ParallelPlan& plan, const TransformerShape& shape, long long gpus);

// The transformer layers of each model chunk, as Megatron-Core assigns them
// (get_num_layers_to_build, get_transformer_layer_offset): chunk c of stage
// s is the g-th slice of the layers, g = c * pp + s, and slices follow each
// other. Even: layers / (pp * v) each. First/last given: the first stage
// holds first_stage_layers, the last last_stage_layers, every other stage
// an equal share of the rest; each stage's layers split evenly over its v
// chunks. Embedding/loss in the split: layers + 1 (+ 1) split evenly over
// the pp * v chunks, the embedding taking a layer's place in the first
// chunk and the loss in the last. The plan must have passed check_plan.
class LayerSplit {
 public:
  LayerSplit(const ParallelPlan& plan, int layers);
  int chunk_layers(int stage, int chunk) const { return count_[index(stage, chunk)]; }
  // The chunk's first layer (from 0).
  int first_layer(int stage, int chunk) const { return first_[index(stage, chunk)]; }
  int stage_layers(int stage) const;
  int most_stage_layers() const;
  // The layers per stage, runs of equals grouped: "7, 8 x14, 7".
  std::string text() const;

 private:
  std::size_t index(int stage, int chunk) const { return static_cast<std::size_t>(chunk * pp_ + stage); }
  int pp_ = 1, v_ = 1;
  std::vector<int> count_, first_;  // by g = chunk * pp + stage
};

// "tp 8, pp 8, dp 16, 1f1b, 64 micro-batches of 1" and the like; with
// `layers` (the model's) an uneven split says its layers per stage.
std::string describe_plan(const ParallelPlan& p, int layers = 0);

// A rank's coordinates: tensor, context, expert, data (outer: dp / ep), pipeline.
struct RankCoord {
  int tp = 0, cp = 0, ep = 0, dpo = 0, pp = 0;
};

class RankLayout {
 public:
  explicit RankLayout(const ParallelPlan& plan);

  long long world() const { return world_; }
  RankCoord coord(Rank r) const;
  Rank rank(const RankCoord& c) const;
  int stage(Rank r) const { return coord(r).pp; }
  int data_index(Rank r) const;  // 0 .. dp-1: ep + ep_size * dpo

  // Communicator groups of rank r, ascending: the ranks that differ from r
  // only in the named coordinates.
  std::vector<Rank> tp_group(Rank r) const;
  std::vector<Rank> cp_group(Rank r) const;
  std::vector<Rank> ep_group(Rank r) const;         // the experts' all-to-all
  std::vector<Rank> dp_group(Rank r) const;         // dense gradients (ep and dpo), cp-fused when cp > 1
  // Expert gradients: every cp and dpo rank holding the same experts (and,
  // with expert tensor parallelism 1, every tp rank: whole experts)
  // reduces them.
  std::vector<Rank> expert_dp_group(Rank r) const;
  // The data-parallel ranks with the same experts and tensor slice (dpo
  // varies only): SimAI's DP_EP group.
  std::vector<Rank> dpo_group(Rank r) const;
  // Every rank of r's pipeline stage (tp, cp, ep and dpo vary): Megatron-
  // Core's amax reduction group for FP8.
  std::vector<Rank> stage_group(Rank r) const;
  std::vector<Rank> pp_group(Rank r) const;         // the same rank of every stage
  // The same position in stage `stage`.
  Rank in_stage(Rank r, int stage) const;

 private:
  std::vector<Rank> vary(Rank r, bool tp, bool cp, bool ep, bool dpo, bool pp) const;

  ParallelPlan plan_;
  long long world_ = 0;
};

}  // namespace acesim
