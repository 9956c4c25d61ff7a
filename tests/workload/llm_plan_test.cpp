// Megatron-LM's parallel plan (src/workload/llm/parallel_plan.h): the rank
// layout's coordinates and communicator groups member by member, the plan
// checks' one-line errors with their numbers, and the pipeline schedules
// (src/workload/llm/pipeline_schedule.h) against hand-written orders and a
// unit-time pipeline whose makespan has a closed form.
#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "config/input_error.h"
#include "workload/llm/parallel_plan.h"
#include "workload/llm/pipeline_schedule.h"
#include "workload/models/models.h"

namespace acesim {
namespace {

// ---------------------------------------------------------------- layout

// tp 2, cp 2, ep 2, dp 4 (dp / ep = 2 outer replicas), pp 2: 32 ranks.
// Megatron's order, tensor innermost: rank = tp + 2 (cp + 2 (ep + 2 (dpo +
// 2 pp))), strides tp 1, cp 2, ep 4, dpo 8, pp 16.
ParallelPlan layout_plan() {
  ParallelPlan p;
  p.tp = 2;
  p.cp = 2;
  p.ep = 2;
  p.dp = 4;
  p.pp = 2;
  return p;
}

TEST(LlmLayout, CoordinatesFollowMegatronsOrder) {
  const RankLayout l(layout_plan());
  ASSERT_EQ(l.world(), 32);
  for (Rank r = 0; r < 32; ++r) {
    const RankCoord c = l.coord(r);
    EXPECT_EQ(c.tp, r % 2) << r;
    EXPECT_EQ(c.cp, (r / 2) % 2) << r;
    EXPECT_EQ(c.ep, (r / 4) % 2) << r;
    EXPECT_EQ(c.dpo, (r / 8) % 2) << r;
    EXPECT_EQ(c.pp, r / 16) << r;
    EXPECT_EQ(l.rank(c), r);
    EXPECT_EQ(l.stage(r), r / 16);
    EXPECT_EQ(l.data_index(r), c.ep + 2 * c.dpo) << r;
  }
}

TEST(LlmLayout, GroupsAreTheExactMembers) {
  const RankLayout l(layout_plan());
  using V = std::vector<Rank>;
  // Rank 13: tp 1, cp 0, ep 1, dpo 1, pp 0.
  EXPECT_EQ(l.tp_group(13), (V{12, 13}));
  EXPECT_EQ(l.cp_group(13), (V{13, 15}));
  EXPECT_EQ(l.ep_group(13), (V{9, 13}));
  EXPECT_EQ(l.dp_group(13), (V{1, 3, 5, 7, 9, 11, 13, 15}));  // cp, ep and dpo vary
  // Experts split over the tp ranks (Megatron's default): cp and dpo vary;
  // whole experts (expert tp 1): tp too; ep 1 fixed.
  EXPECT_EQ(l.expert_dp_group(13), (V{5, 7, 13, 15}));
  ParallelPlan whole = layout_plan();
  whole.expert_tp = 1;
  EXPECT_EQ(RankLayout(whole).expert_dp_group(13), (V{4, 5, 6, 7, 12, 13, 14, 15}));
  EXPECT_EQ(l.pp_group(13), (V{13, 29}));
  EXPECT_EQ(l.in_stage(13, 1), 29);
  EXPECT_EQ(l.in_stage(29, 0), 13);
  EXPECT_EQ(l.data_index(13), 3);
  // Rank 22: tp 0, cp 1, ep 1, dpo 0, pp 1.
  EXPECT_EQ(l.tp_group(22), (V{22, 23}));
  EXPECT_EQ(l.cp_group(22), (V{20, 22}));
  EXPECT_EQ(l.ep_group(22), (V{18, 22}));
  EXPECT_EQ(l.dp_group(22), (V{16, 18, 20, 22, 24, 26, 28, 30}));
  EXPECT_EQ(l.expert_dp_group(22), (V{20, 22, 28, 30}));
  EXPECT_EQ(RankLayout(whole).expert_dp_group(22), (V{20, 21, 22, 23, 28, 29, 30, 31}));
  EXPECT_EQ(l.pp_group(22), (V{6, 22}));
  EXPECT_EQ(l.in_stage(22, 0), 6);
}

// Each kind of group partitions the ranks into world / size groups of its
// size, and every member names the same group.
TEST(LlmLayout, EveryKindOfGroupPartitionsTheRanks) {
  using Fn = std::vector<Rank> (RankLayout::*)(Rank) const;
  ParallelPlan whole = layout_plan();
  whole.expert_tp = 1;
  const std::vector<std::tuple<const char*, ParallelPlan, Fn, std::size_t>> kinds = {
      {"tp", layout_plan(), &RankLayout::tp_group, 2},  {"cp", layout_plan(), &RankLayout::cp_group, 2},
      {"ep", layout_plan(), &RankLayout::ep_group, 2},  {"dp", layout_plan(), &RankLayout::dp_group, 8},
      {"edp", layout_plan(), &RankLayout::expert_dp_group, 4}, {"edp of whole experts", whole, &RankLayout::expert_dp_group, 8},
      {"pp", layout_plan(), &RankLayout::pp_group, 2}, {"stage", layout_plan(), &RankLayout::stage_group, 16}};
  for (const auto& [name, plan, fn, size] : kinds) {
    const RankLayout l(plan);
    std::set<std::vector<Rank>> groups;
    for (Rank r = 0; r < 32; ++r) {
      const std::vector<Rank> g = (l.*fn)(r);
      ASSERT_EQ(g.size(), size) << name << " of " << r;
      EXPECT_TRUE(std::is_sorted(g.begin(), g.end())) << name;
      EXPECT_NE(std::find(g.begin(), g.end(), r), g.end()) << name << " of " << r;
      for (Rank x : g) EXPECT_EQ((l.*fn)(x), g) << name;
      groups.insert(g);
    }
    EXPECT_EQ(groups.size(), 32 / size) << name;
  }
}

// Without expert or context parallelism the groups are Megatron's familiar
// ones: tp 4, dp 2, pp 2 on 16 ranks.
TEST(LlmLayout, DenseGroupsAreMegatrons) {
  ParallelPlan p;
  p.tp = 4;
  p.dp = 2;
  p.pp = 2;
  const RankLayout l(p);
  using V = std::vector<Rank>;
  EXPECT_EQ(l.tp_group(5), (V{4, 5, 6, 7}));
  EXPECT_EQ(l.dp_group(5), (V{1, 5}));
  EXPECT_EQ(l.pp_group(5), (V{5, 13}));
  EXPECT_EQ(l.cp_group(5), (V{5}));
  EXPECT_EQ(l.ep_group(5), (V{5}));
  EXPECT_EQ(l.expert_dp_group(5), (V{1, 5}));  // experts split as the dense MLP: cp x dpo, dpo = dp
}

// ---------------------------------------------------------------- checks

TransformerShape small_dense() {
  TransformerShape m;
  m.name = "small";
  m.layers = 4;
  m.hidden = 1024;
  m.heads = 16;
  m.kv_heads = 4;
  m.ffn_hidden = 4096;
  m.seq = 1024;
  m.vocab = 32000;
  return m;
}

TransformerShape small_moe() {
  TransformerShape m = small_dense();
  m.experts = 8;
  m.top_k = 2;
  m.moe_ffn_hidden = 1024;
  return m;
}

// check_plan's error: one line, starting "parallel plan: ", holding every part.
void expect_refused(const ParallelPlan& p, const TransformerShape& m, long long gpus,
                    std::initializer_list<std::string> parts) {
  try {
    check_plan(p, m, gpus);
    ADD_FAILURE() << "accepted; expected: " << *parts.begin();
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    EXPECT_EQ(what.rfind("parallel plan: ", 0), 0u) << what;
    for (const std::string& part : parts) EXPECT_NE(what.find(part), std::string::npos) << what << "\nlacks: " << part;
  }
}

ParallelPlan plan(int tp, int pp, int dp) {
  ParallelPlan p;
  p.tp = tp;
  p.pp = pp;
  p.dp = dp;
  return p;
}

TEST(LlmPlanChecks, AGoodPlanPasses) {
  ParallelPlan p = plan(2, 2, 2);
  p.schedule = PipeSchedule::kInterleaved;
  p.virtual_stages = 2;
  p.global_batch = 8;  // 4 micro-batches per replica, a multiple of pp
  p.sequence_parallel = true;
  EXPECT_NO_THROW(check_plan(p, small_dense(), 8));
  EXPECT_EQ(p.micro_batches(), 4);
  ParallelPlan moe = plan(2, 1, 4);
  moe.ep = 4;
  moe.cp = 1;
  moe.sequence_parallel = true;
  EXPECT_NO_THROW(check_plan(moe, small_moe(), 8));
}

// The overlap flags apply where Megatron-LM's do something.
TEST(LlmPlanChecks, OverlapFlagsOnlyWhereTheyApply) {
  const TransformerShape dense = small_dense();
  ParallelPlan p = plan(2, 1, 4);
  p.overlap_param_gather = true;
  expect_refused(p, dense, 8, {"--overlap-param-gather", "--zero 1 or 2", "ZeRO 0"});
  p.zero = 3;
  expect_refused(p, dense, 8, {"--overlap-param-gather", "ZeRO 3"});
  p.zero = 1;
  EXPECT_NO_THROW(check_plan(p, dense, 8));
  p.overlap_param_gather = false;
  p.overlap_grad_reduce = true;
  p.zero = 2;
  expect_refused(p, dense, 8, {"--overlap-grad-reduce", "--zero 0 or 1", "ZeRO 2"});
  p.zero = 0;
  EXPECT_NO_THROW(check_plan(p, dense, 8));
  // --tp-comm-overlap overlaps sequence parallelism's collectives.
  p.zero = 0;
  p.tp_comm_overlap = true;
  expect_refused(p, dense, 8, {"--tp-comm-overlap needs --tp >= 2 and --sequence-parallel", "without --sequence-parallel"});
  p.sequence_parallel = true;
  EXPECT_NO_THROW(check_plan(p, dense, 8));
  p.tp_comm_overlap = false;
  p.sequence_parallel = false;
  // FSDP's reshard choice needs ZeRO 3 with the prefetching fetch.
  p.reshard_after_forward = ReshardAfterForward::kNever;
  expect_refused(p, dense, 8, {"--reshard-after-forward never applies to --zero 3 with --zero3-fetch prefetch", "got --zero 0"});
  p.reshard_after_forward = ReshardAfterForward::kAlways;
  // A blocking ZeRO-3 fetch needs ZeRO 3.
  p.overlap_grad_reduce = false;
  p.zero3_fetch = Zero3Fetch::kBlocking;
  expect_refused(p, dense, 8, {"--zero3-fetch blocking applies to --zero 3", "got --zero 0"});
  p.zero = 3;
  EXPECT_NO_THROW(check_plan(p, dense, 8));
  EXPECT_EQ(parse_zero3_fetch("--zero3-fetch", "blocking"), Zero3Fetch::kBlocking);
  try {
    parse_zero3_fetch("--zero3-fetch", "eager");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--zero3-fetch: unknown ZeRO-3 parameter fetch 'eager'"), std::string::npos) << e.what();
  }
}

TEST(LlmPlanChecks, EveryErrorNamesTheNumbers) {
  const TransformerShape dense = small_dense();
  const TransformerShape moe = small_moe();
  expect_refused(plan(2, 1, 3), dense, 8, {"tp*cp*dp*pp = 2*1*3*1 = 6", "8 GPUs"});
  {
    ParallelPlan p = plan(2, 1, 2);
    p.cp = 2;
    expect_refused(p, dense, 4, {"tp*cp*dp*pp = 2*2*2*1 = 8", "4 GPUs"});
  }
  expect_refused(plan(8, 1, 1), dense, 8, {"--tp 8", "heads (16)", "key/value heads (4)"});  // kv 4 % 8
  {
    TransformerShape m = dense;
    m.heads = 12;
    m.kv_heads = 12;
    expect_refused(plan(8, 1, 1), m, 8, {"--tp 8", "heads (12)"});
  }
  {
    TransformerShape m = dense;
    m.ffn_hidden = 4098;
    expect_refused(plan(4, 1, 1), m, 4, {"--tp 4", "ffn_hidden (4098)"});
  }
  expect_refused(plan(1, 3, 1), dense, 3, {"layers (4)", "pp*virtual-stages = 3*1 = 3"});
  {
    ParallelPlan p = plan(1, 2, 1);
    p.schedule = PipeSchedule::kInterleaved;
    p.virtual_stages = 4;
    p.global_batch = 2;
    expect_refused(p, dense, 2, {"layers (4)", "pp*virtual-stages = 2*4 = 8"});
  }
  {
    ParallelPlan p = plan(1, 1, 3);
    p.ep = 3;
    expect_refused(p, moe, 3, {"--ep 3", "experts (8)"});
  }
  {
    ParallelPlan p = plan(1, 1, 2);
    p.ep = 4;
    expect_refused(p, moe, 2, {"--ep 4", "--dp 2"});
  }
  {
    ParallelPlan p = plan(1, 1, 2);
    p.ep = 2;
    expect_refused(p, dense, 2, {"--ep 2", "no experts"});
  }
  {
    ParallelPlan p = plan(4, 1, 2);
    p.sequence_parallel = true;
    p.expert_tp = 2;
    expect_refused(p, moe, 8, {"--expert-tensor-parallel-size 2", "1 or --tp 4"});
    p.expert_tp = 1;
    expect_refused(p, dense, 8, {"--expert-tensor-parallel-size 1", "no experts"});
  }
  {
    ParallelPlan p = plan(1, 1, 1);
    p.schedule = PipeSchedule::kInterleaved;
    expect_refused(p, dense, 1, {"interleaved", "--pp >= 2"});
  }
  {
    ParallelPlan p = plan(1, 2, 1);
    p.schedule = PipeSchedule::kInterleaved;
    p.virtual_stages = 2;
    p.global_batch = 3;
    expect_refused(p, dense, 2, {"interleaved", "micro-batches per replica (3)", "--pp 2"});
  }
  {
    ParallelPlan p = plan(1, 2, 1);
    p.virtual_stages = 2;  // 1f1b
    expect_refused(p, dense, 2, {"--virtual-stages 2", "--schedule interleaved"});
    p.schedule = PipeSchedule::kGpipe;
    expect_refused(p, dense, 2, {"--virtual-stages 2", "--schedule interleaved"});
  }
  {
    ParallelPlan p = plan(1, 1, 2);
    p.micro_batch = 2;
    p.global_batch = 6;
    expect_refused(p, dense, 2, {"--global-batch 6", "micro-batch*dp = 2*2 = 4"});
  }
  expect_refused(plan(2, 1, 1), moe, 2, {"--tp 2", "mixture-of-experts", "--sequence-parallel"});
  {
    ParallelPlan p = plan(1, 1, 1);
    p.cp = 3;
    expect_refused(p, dense, 3, {"--cp 3", "sequence (1024)", "2*cp = 6"});
  }
  {
    TransformerShape m = dense;
    m.seq = 1020;
    ParallelPlan p = plan(8, 1, 1);
    m.kv_heads = 16;
    p.sequence_parallel = true;
    expect_refused(p, m, 8, {"--sequence-parallel", "tp*cp = 8", "sequence (1020)"});
  }
  {
    ParallelPlan p = plan(1, 1, 1);
    p.zero = 4;
    expect_refused(p, dense, 1, {"--zero", "got 4"});
  }
  {
    ParallelPlan p = plan(1, 1, 1);
    p.micro_batch = 0;
    expect_refused(p, dense, 1, {"--micro-batch", "got 0"});
  }
  expect_refused(plan(0, 1, 1), dense, 1, {">= 1", "tp 0"});
}

// ---------------------------------------------------------------- uneven stages

std::vector<int> stage_layers(const LayerSplit& s, int pp) {
  std::vector<int> out;
  for (int st = 0; st < pp; ++st) out.push_back(s.stage_layers(st));
  return out;
}

// Llama 3 405B as Meta trained it (arXiv 2407.21783 section 3.3.2): 126
// layers on 16 stages, one fewer on the first and the last: 7, 14 x 8, 7.
TEST(LlmLayerSplit, Llama3_405bOnSixteenStages) {
  TransformerShape m = small_dense();
  m.layers = 126;
  ParallelPlan p = plan(1, 16, 1);
  p.first_stage_layers = 7;
  p.last_stage_layers = 7;
  EXPECT_NO_THROW(check_plan(p, m, 16));
  const LayerSplit s(p, m.layers);
  std::vector<int> want(16, 8);
  want.front() = want.back() = 7;
  EXPECT_EQ(stage_layers(s, 16), want);
  for (int st = 0; st < 16; ++st) EXPECT_EQ(s.first_layer(st, 0), st == 0 ? 0 : 7 + 8 * (st - 1)) << st;
  EXPECT_EQ(s.most_stage_layers(), 8);
  EXPECT_EQ(s.text(), "7, 8 x14, 7");
  EXPECT_EQ(describe_plan(p, m.layers), "tp 1, pp 16, dp 1, 1f1b, layers per stage 7, 8 x14, 7, 1 micro-batch of 1 per replica");
}

// BLOOM-176B (arXiv 2211.05100 section 3.4.1): 70 layers on 12 stages with
// the embedding and the loss each counted as a layer: (70 + 2) / 12 = 6 per
// stage, 5 layers on the first and the last; the same split as giving 5 and 5.
TEST(LlmLayerSplit, BloomCountsTheEmbeddingAndTheLossAsLayers) {
  TransformerShape m = small_dense();
  m.layers = 70;
  ParallelPlan p = plan(1, 12, 1);
  p.embedding_in_split = true;
  p.loss_in_split = true;
  EXPECT_NO_THROW(check_plan(p, m, 12));
  std::vector<int> want(12, 6);
  want.front() = want.back() = 5;
  EXPECT_EQ(stage_layers(LayerSplit(p, m.layers), 12), want);
  ParallelPlan given = plan(1, 12, 1);
  given.first_stage_layers = 5;
  given.last_stage_layers = 5;
  EXPECT_EQ(stage_layers(LayerSplit(given, m.layers), 12), want);
  EXPECT_NE(describe_plan(p, m.layers).find("layers per stage 5, 6 x10, 5 (the embedding and the loss counted as a layer)"),
            std::string::npos);
  // Only the embedding: (70 + 1) / 12 does not divide.
  p.loss_in_split = false;
  expect_refused(p, m, 12, {"layers (70) + embedding 1 = 71", "--pp 12"});
}

// The interleaved schedule splits each stage's layers over its chunks, in
// Megatron-Core's order (get_transformer_layer_offset): chunk c of every
// stage, then chunk c + 1.
TEST(LlmLayerSplit, InterleavedChunksFollowMegatronCoresOffsets) {
  TransformerShape m = small_dense();
  m.layers = 20;
  ParallelPlan p = plan(1, 4, 1);
  p.schedule = PipeSchedule::kInterleaved;
  p.virtual_stages = 2;
  p.global_batch = 4;
  p.first_stage_layers = 4;
  p.last_stage_layers = 4;  // middle: (20 - 8) / 2 = 6 per stage, 3 per chunk
  EXPECT_NO_THROW(check_plan(p, m, 4));
  const LayerSplit s(p, m.layers);
  // Megatron-Core: offset = c * (4/2 + 12/2 + 4/2) + [stage > 0] (4/2 + (stage - 1) * 3).
  const int first[4][2] = {{0, 10}, {2, 12}, {5, 15}, {8, 18}};
  const int count[4] = {2, 3, 3, 2};
  for (int st = 0; st < 4; ++st) {
    for (int c = 0; c < 2; ++c) {
      EXPECT_EQ(s.first_layer(st, c), first[st][c]) << st << "," << c;
      EXPECT_EQ(s.chunk_layers(st, c), count[st]) << st << "," << c;
    }
  }
  // The embedding and the loss in the split: (14 + 2) / (2 * 2) = 4 per
  // chunk, one fewer in the first chunk of stage 0 and the last of the last;
  // Megatron-Core's offsets c * 8 + stage * 4 - 1 after the first chunk.
  ParallelPlan q = plan(1, 2, 1);
  q.schedule = PipeSchedule::kInterleaved;
  q.virtual_stages = 2;
  q.global_batch = 2;
  q.embedding_in_split = true;
  q.loss_in_split = true;
  m.layers = 14;
  EXPECT_NO_THROW(check_plan(q, m, 2));
  const LayerSplit t(q, m.layers);
  EXPECT_EQ(t.first_layer(0, 0), 0);
  EXPECT_EQ(t.chunk_layers(0, 0), 3);
  EXPECT_EQ(t.first_layer(1, 0), 3);
  EXPECT_EQ(t.first_layer(0, 1), 7);
  EXPECT_EQ(t.first_layer(1, 1), 11);
  EXPECT_EQ(t.chunk_layers(1, 1), 3);
}

TEST(LlmPlanChecks, UnevenSplitsRefusedWithTheirArithmetic) {
  TransformerShape m = small_dense();
  m.layers = 126;
  const auto uneven = [](int pp, int first, int last) {
    ParallelPlan p = plan(1, pp, 1);
    p.first_stage_layers = first;
    p.last_stage_layers = last;
    return p;
  };
  expect_refused(uneven(16, 7, 6), m, 16, {"layers (126) - first 7 - last 6 = 113", "14 middle stage(s)"});
  expect_refused(uneven(16, 70, 70), m, 16, {"layers (126) - first 70 - last 70 = -14", "more layers than the model has"});
  expect_refused(uneven(16, 63, 63), m, 16, {"= 0 layers left for 14 middle stage(s)", "at least one"});
  expect_refused(uneven(2, 7, 7), m, 2, {"= 112 layers left", "--pp 2 leaves no middle stage"});
  expect_refused(uneven(16, -1, 0), m, 16, {"--decoder-first-pipeline-num-layers must be >= 1, got -1"});
  expect_refused(uneven(1, 126, 0), m, 1, {"uneven pipeline split needs --pp >= 2"});
  // Only the first given: the last stage is a middle one. 126 - 6 = 120 over 15.
  EXPECT_NO_THROW(check_plan(uneven(16, 6, 0), m, 16));
  EXPECT_EQ(LayerSplit(uneven(16, 6, 0), m.layers).text(), "6, 8 x15");
  {
    ParallelPlan p = uneven(16, 7, 7);
    p.loss_in_split = true;
    expect_refused(p, m, 16, {"cannot be combined", "--account-for-loss-in-pipeline-split"});
  }
  {
    // Interleaved: every stage's layers must split over its chunks.
    ParallelPlan p = uneven(16, 7, 7);
    p.schedule = PipeSchedule::kInterleaved;
    p.virtual_stages = 2;
    p.global_batch = 16;
    expect_refused(p, m, 16, {"--decoder-first-pipeline-num-layers 7", "--virtual-stages 2"});
    p = uneven(16, 6, 8);  // middle 112 / 14 = 8 each, divisible by 2
    p.schedule = PipeSchedule::kInterleaved;
    p.virtual_stages = 2;
    p.global_batch = 16;
    EXPECT_NO_THROW(check_plan(p, m, 16));
    p.virtual_stages = 4;
    expect_refused(p, m, 16, {"--decoder-first-pipeline-num-layers 6", "--virtual-stages 4"});
    p.virtual_stages = 2;
    p.first_stage_layers = 8;
    p.last_stage_layers = 8;
    m.layers = 114;  // middle (114 - 16) / 14 = 7 per stage: not 2 chunks' worth
    expect_refused(p, m, 16, {"layers (114) - first 8 - last 8 = 98", "= 7 each", "--virtual-stages 2"});
    m.layers = 126;
  }
  {
    ParallelPlan p = plan(1, 16, 1);
    p.embedding_in_split = true;
    p.loss_in_split = true;
    p.schedule = PipeSchedule::kInterleaved;
    p.virtual_stages = 3;
    p.global_batch = 16;
    expect_refused(p, m, 16, {"layers (126) + embedding 1 + loss 1 = 128", "8 per stage", "--virtual-stages 3"});
  }
  // Even plans say how to split unevenly where that can help: where v
  // divides the layers (every stage's count must divide into v chunks).
  expect_refused(plan(1, 16, 1), m, 16, {"layers (126)", "pp*virtual-stages = 16*1 = 16", "--decoder-first-pipeline-num-layers"});
  {
    ParallelPlan p = plan(1, 2, 1);
    p.schedule = PipeSchedule::kInterleaved;
    p.virtual_stages = 3;
    p.global_batch = 2;
    m.layers = 32;  // no split of 32 gives each stage a multiple of 3
    try {
      check_plan(p, m, 2);
      ADD_FAILURE() << "accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()), "parallel plan: layers (32) must be divisible by pp*virtual-stages = 2*3 = 6");
    }
  }
}

// ---------------------------------------------------------------- schedules

struct Op {
  int chunk, mb;
  bool bwd;
  bool operator==(const Op&) const = default;
};
std::vector<Op> ops(const std::vector<PipeOp>& order) {
  std::vector<Op> out;
  for (const PipeOp& o : order) out.push_back({o.chunk, o.micro_batch, o.backward});
  return out;
}
void PrintTo(const Op& o, std::ostream* os) { *os << (o.bwd ? "B(" : "F(") << o.chunk << "," << o.mb << ")"; }
Op F(int c, int mb) { return {c, mb, false}; }
Op B(int c, int mb) { return {c, mb, true}; }
std::string show(const std::vector<Op>& v) {
  std::string s;
  for (const Op& o : v) s += (o.bwd ? " B(" : " F(") + std::to_string(o.chunk) + "," + std::to_string(o.mb) + ")";
  return s;
}

TEST(LlmPipelineOrder, GpipeRunsEveryForwardThenEveryBackward) {
  for (int stage = 0; stage < 4; ++stage) {
    EXPECT_EQ(ops(pipeline_order(PipeSchedule::kGpipe, 4, stage, 3, 1)),
              (std::vector<Op>{F(0, 0), F(0, 1), F(0, 2), B(0, 0), B(0, 1), B(0, 2)}));
  }
}

// PipeDream-Flush (arXiv 2104.04473 §2.2.1; Megatron-Core's
// forward_backward_pipelining_without_interleaving): stage i warms up with
// min(pp - i - 1, m) forwards, alternates one forward and one backward, and
// drains the remaining backwards.
TEST(LlmPipelineOrder, OneFOneBWarmsUpAlternatesAndDrains) {
  const auto order = [](int stage, int m) { return ops(pipeline_order(PipeSchedule::k1F1B, 4, stage, m, 1)); };
  EXPECT_EQ(order(0, 6), (std::vector<Op>{F(0, 0), F(0, 1), F(0, 2), F(0, 3), B(0, 0), F(0, 4), B(0, 1), F(0, 5),
                                          B(0, 2), B(0, 3), B(0, 4), B(0, 5)}));
  EXPECT_EQ(order(2, 6), (std::vector<Op>{F(0, 0), F(0, 1), B(0, 0), F(0, 2), B(0, 1), F(0, 3), B(0, 2), F(0, 4),
                                          B(0, 3), F(0, 5), B(0, 4), B(0, 5)}));
  EXPECT_EQ(order(3, 3), (std::vector<Op>{F(0, 0), B(0, 0), F(0, 1), B(0, 1), F(0, 2), B(0, 2)}));
  // Fewer micro-batches than the warm-up: every forward, then every backward.
  EXPECT_EQ(order(0, 2), (std::vector<Op>{F(0, 0), F(0, 1), B(0, 0), B(0, 1)}));
}

// BUG (disabled until fixed): with one stage, Megatron-Core runs
// forward_backward_no_pipelining, each micro-batch's forward then its
// backward, and the memory model counts one micro-batch in flight
// (micro_batches_in_flight: "each micro-batch's backward runs before the
// next forward"); pipeline_order gives gpipe's order instead (every
// forward first: m micro-batches in flight). Fix in pipeline_order:
// `if (schedule == PipeSchedule::kGpipe && pp > 1)` for the gpipe branch and
// `if (schedule != PipeSchedule::kInterleaved) v = 1;`: the 1F1B branch then
// warms up with min(pp - 1, m) = 0 forwards.
TEST(LlmPipelineOrder, OneStageRunsEachBackwardBeforeTheNextForward) {
  for (PipeSchedule s : {PipeSchedule::k1F1B, PipeSchedule::kGpipe}) {
    EXPECT_EQ(ops(pipeline_order(s, 1, 0, 3, 1)),
              (std::vector<Op>{F(0, 0), B(0, 0), F(0, 1), B(0, 1), F(0, 2), B(0, 2)}))
        << to_string(s);
  }
}

// Megatron-Core's forward_backward_pipelining_with_interleaving
// (megatron/core/pipeline_parallel/schedules.py), by hand:
//   warm-up = (pp - rank - 1) * 2 + (v - 1) * pp, capped at m * v (all of
//     them when m == pp);
//   virtual micro-batch k runs model chunk (k mod (pp v)) div pp, reversed
//     (v - 1 - chunk) for backward (get_model_chunk_id), on micro-batch
//     (k div (pp v)) pp + k mod pp (get_microbatch_id_in_model_chunk);
//   then forward k / backward k - warm-up pairs, then the remaining backwards.
TEST(LlmPipelineOrder, InterleavedIsMegatronCoresOrder) {
  const auto order = [](int pp, int stage, int m) { return ops(pipeline_order(PipeSchedule::kInterleaved, pp, stage, m, 2)); };
  // pp 2, v 2, m 4. Stage 0: warm-up 1 * 2 + 1 * 2 = 4.
  const std::vector<Op> s0 = {F(0, 0), F(0, 1), F(1, 0), F(1, 1),                    // warm-up
                              F(0, 2), B(1, 0), F(0, 3), B(1, 1), F(1, 2), B(0, 0), F(1, 3), B(0, 1),  // steady
                              B(1, 2), B(1, 3), B(0, 2), B(0, 3)};                   // cool-down
  EXPECT_EQ(order(2, 0, 4), s0) << show(order(2, 0, 4));
  // Stage 1: warm-up 0 * 2 + 1 * 2 = 2.
  const std::vector<Op> s1 = {F(0, 0), F(0, 1),
                              F(1, 0), B(1, 0), F(1, 1), B(1, 1), F(0, 2), B(0, 0), F(0, 3), B(0, 1),
                              F(1, 2), B(1, 2), F(1, 3), B(1, 3),
                              B(0, 2), B(0, 3)};
  EXPECT_EQ(order(2, 1, 4), s1) << show(order(2, 1, 4));
  // pp 4, v 2, m 8. Stage 0: warm-up 3 * 2 + 1 * 4 = 10.
  const std::vector<Op> p0 = {F(0, 0), F(0, 1), F(0, 2), F(0, 3), F(1, 0), F(1, 1), F(1, 2), F(1, 3), F(0, 4), F(0, 5),
                              F(0, 6), B(1, 0), F(0, 7), B(1, 1), F(1, 4), B(1, 2), F(1, 5), B(1, 3), F(1, 6), B(0, 0),
                              F(1, 7), B(0, 1),
                              B(0, 2), B(0, 3), B(1, 4), B(1, 5), B(1, 6), B(1, 7), B(0, 4), B(0, 5), B(0, 6), B(0, 7)};
  EXPECT_EQ(order(4, 0, 8), p0) << show(order(4, 0, 8));
  // Stage 3: warm-up 0 * 2 + 1 * 4 = 4.
  const std::vector<Op> p3 = {F(0, 0), F(0, 1), F(0, 2), F(0, 3),
                              F(1, 0), B(1, 0), F(1, 1), B(1, 1), F(1, 2), B(1, 2), F(1, 3), B(1, 3),
                              F(0, 4), B(0, 0), F(0, 5), B(0, 1), F(0, 6), B(0, 2), F(0, 7), B(0, 3),
                              F(1, 4), B(1, 4), F(1, 5), B(1, 5), F(1, 6), B(1, 6), F(1, 7), B(1, 7),
                              B(0, 4), B(0, 5), B(0, 6), B(0, 7)};
  EXPECT_EQ(order(4, 3, 8), p3) << show(order(4, 3, 8));
  // m == pp: Megatron-Core warms up with everything.
  const std::vector<Op> all = {F(0, 0), F(0, 1), F(1, 0), F(1, 1), B(1, 0), B(1, 1), B(0, 0), B(0, 1)};
  EXPECT_EQ(order(2, 1, 2), all) << show(order(2, 1, 2));
}

// Every (chunk, micro-batch) runs forward once and backward once, the
// backward after its forward; 1F1B keeps at most pp - stage micro-batches
// in flight (what bounds its activation memory).
TEST(LlmPipelineOrder, EveryPassRunsOnceBackwardAfterForward) {
  for (PipeSchedule s : {PipeSchedule::kGpipe, PipeSchedule::k1F1B, PipeSchedule::kInterleaved}) {
    for (int pp : {1, 2, 3, 4, 8}) {
      for (int v : {1, 2, 3}) {
        if (v > 1 && s != PipeSchedule::kInterleaved) continue;
        if (s == PipeSchedule::kInterleaved && pp < 2) continue;
        for (int m : {1, 2, 3, 4, 8, 12, 16}) {
          if (s == PipeSchedule::kInterleaved && m % pp != 0) continue;
          for (int stage = 0; stage < pp; ++stage) {
            SCOPED_TRACE(std::string(to_string(s)) + " pp " + std::to_string(pp) + " v " + std::to_string(v) + " m " +
                         std::to_string(m) + " stage " + std::to_string(stage));
            const std::vector<PipeOp> order = pipeline_order(s, pp, stage, m, v);
            const int vv = s == PipeSchedule::kInterleaved ? v : 1;
            ASSERT_EQ(order.size(), static_cast<std::size_t>(2 * m * vv));
            std::map<std::pair<int, int>, int> fwd, bwd;
            int in_flight = 0, peak = 0;
            for (std::size_t i = 0; i < order.size(); ++i) {
              const PipeOp& o = order[i];
              ASSERT_GE(o.chunk, 0);
              ASSERT_LT(o.chunk, vv);
              ASSERT_GE(o.micro_batch, 0);
              ASSERT_LT(o.micro_batch, m);
              const auto key = std::make_pair(o.chunk, o.micro_batch);
              if (o.backward) {
                EXPECT_EQ(bwd.count(key), 0u);
                EXPECT_EQ(fwd.count(key), 1u) << "backward before forward";
                bwd[key] = static_cast<int>(i);
                --in_flight;
              } else {
                EXPECT_EQ(fwd.count(key), 0u);
                fwd[key] = static_cast<int>(i);
                peak = std::max(peak, ++in_flight);
              }
            }
            EXPECT_EQ(fwd.size(), static_cast<std::size_t>(m * vv));
            EXPECT_EQ(bwd.size(), static_cast<std::size_t>(m * vv));
            // (One stage: OneStageRunsEachBackwardBeforeTheNextForward.)
            if (s == PipeSchedule::k1F1B && pp > 1) {
              EXPECT_EQ(peak, std::min(pp - stage, m));
            }
            if (s == PipeSchedule::kGpipe && pp > 1) {
              EXPECT_EQ(peak, m);
            }
          }
        }
      }
    }
  }
}

TEST(LlmPipelineOrder, ChunksChainStageByStageThenChunkByChunk) {
  // pp 4, v 2: slice g = chunk * 4 + stage.
  const auto eq = [](ChunkPos a, int stage, int chunk) { return a.stage == stage && a.chunk == chunk; };
  EXPECT_FALSE(previous_chunk(4, 2, 0, 0).valid());
  EXPECT_TRUE(eq(next_chunk(4, 2, 0, 0), 1, 0));
  EXPECT_TRUE(eq(next_chunk(4, 2, 3, 0), 0, 1));  // the last stage's first chunk feeds stage 0's second
  EXPECT_TRUE(eq(previous_chunk(4, 2, 0, 1), 3, 0));
  EXPECT_TRUE(eq(previous_chunk(4, 2, 2, 1), 1, 1));
  EXPECT_FALSE(next_chunk(4, 2, 3, 1).valid());
  EXPECT_TRUE(eq(previous_chunk(4, 2, 3, 1), 2, 1));
  // Without virtual stages: the stage before and after.
  EXPECT_TRUE(eq(next_chunk(4, 1, 1, 0), 2, 0));
  EXPECT_TRUE(eq(previous_chunk(4, 1, 1, 0), 0, 0));
  EXPECT_FALSE(next_chunk(4, 1, 3, 0).valid());
  for (int stage = 0; stage < 4; ++stage) {
    for (int chunk = 0; chunk < 2; ++chunk) {
      const ChunkPos n = next_chunk(4, 2, stage, chunk);
      if (!n.valid()) continue;
      EXPECT_TRUE(eq(previous_chunk(4, 2, n.stage, n.chunk), stage, chunk));
    }
  }
}

// Every stage runs its order on unit-time passes (a chunk's forward tf,
// backward tb), each waiting for its input from the neighbouring chunk;
// returns the makespan, or -1 when the stages deadlock.
double pipeline_makespan(PipeSchedule s, int pp, int m, int v, double tf, double tb) {
  std::vector<std::vector<PipeOp>> orders;
  for (int st = 0; st < pp; ++st) orders.push_back(pipeline_order(s, pp, st, m, v));
  std::map<std::tuple<int, int, int, bool>, double> done;  // (stage, chunk, mb, backward) -> end
  std::vector<std::size_t> next(static_cast<std::size_t>(pp), 0);
  std::vector<double> free(static_cast<std::size_t>(pp), 0.0);
  for (bool progress = true; progress;) {
    progress = false;
    for (int st = 0; st < pp; ++st) {
      auto& i = next[static_cast<std::size_t>(st)];
      while (i < orders[static_cast<std::size_t>(st)].size()) {
        const PipeOp& o = orders[static_cast<std::size_t>(st)][i];
        const ChunkPos dep = o.backward ? next_chunk(pp, v, st, o.chunk) : previous_chunk(pp, v, st, o.chunk);
        double ready = free[static_cast<std::size_t>(st)];
        if (dep.valid()) {
          const auto it = done.find({dep.stage, dep.chunk, o.micro_batch, o.backward});
          if (it == done.end()) break;
          ready = std::max(ready, it->second);
        }
        const double end = ready + (o.backward ? tb : tf);
        done[{st, o.chunk, o.micro_batch, o.backward}] = end;
        free[static_cast<std::size_t>(st)] = end;
        ++i;
        progress = true;
      }
    }
  }
  for (int st = 0; st < pp; ++st) {
    if (next[static_cast<std::size_t>(st)] != orders[static_cast<std::size_t>(st)].size()) return -1.0;
  }
  return *std::max_element(free.begin(), free.end());
}

// With no communication time, 1F1B and GPipe take (m + p - 1)(tf + tb)
// (arXiv 2104.04473 §2.2.1: bubble (p - 1)(tf + tb)); the interleaved
// schedule's bubble shrinks to (p - 1)(tf + tb) / v (§2.2.2).
TEST(LlmPipelineOrder, UnitTimePipelinesTakeTheClosedForm) {
  const double tf = 1.0, tb = 2.0;
  for (int pp : {2, 4, 8}) {
    for (int m : {pp, 2 * pp, 4 * pp}) {
      SCOPED_TRACE("pp " + std::to_string(pp) + " m " + std::to_string(m));
      EXPECT_DOUBLE_EQ(pipeline_makespan(PipeSchedule::k1F1B, pp, m, 1, tf, tb), (m + pp - 1) * (tf + tb));
      EXPECT_DOUBLE_EQ(pipeline_makespan(PipeSchedule::kGpipe, pp, m, 1, tf, tb), (m + pp - 1) * (tf + tb));
      for (int v : {2, 4}) {
        // Each chunk does 1/v of the stage's work.
        const double t = pipeline_makespan(PipeSchedule::kInterleaved, pp, m, v, tf / v, tb / v);
        EXPECT_DOUBLE_EQ(t, m * (tf + tb) + (pp - 1) * (tf + tb) / v) << "v " << v;
      }
    }
  }
}

}  // namespace
}  // namespace acesim
