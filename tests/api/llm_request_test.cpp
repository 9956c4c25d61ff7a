// The LLM plan's defaults and option errors (src/api/llm_request.h):
// tensor parallelism over the first dimension when it divides the model,
// data parallelism over what the GPUs leave.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "api/llm_request.h"
#include "config/input_error.h"
#include "support.h"

namespace acesim::api {
namespace {

using test::dim;

TransformerShape small() {
  TransformerShape m;
  m.name = "small";
  m.layers = 4;
  m.hidden = 1024;
  m.heads = 16;
  m.kv_heads = 16;
  m.ffn_hidden = 4096;
  m.seq = 1024;
  m.vocab = 32768;
  return m;
}

Topology nodes(int per_node, int n) {
  return Topology({dim(DimKind::kSwitch, per_node, 370, 500), dim(DimKind::kSwitch, n, 50, 2000)});
}

void expect_refused(const TrainingRequest::Llm& o, const TransformerShape& m, const Topology& topo,
                    std::initializer_list<std::string> parts) {
  try {
    (void)llm_plan(o, m, topo);
    ADD_FAILURE() << "accepted; expected: " << *parts.begin();
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    for (const std::string& p : parts) EXPECT_NE(what.find(p), std::string::npos) << what << "\nlacks: " << p;
  }
}

TEST(LlmRequest, PlanDefaults) {
  const Topology topo = nodes(8, 2);
  const ParallelPlan d = llm_plan({}, small(), topo);
  EXPECT_EQ(d.tp, 8);  // the node's 8 GPUs divide 16 heads and 4096
  EXPECT_EQ(d.pp, 1);
  EXPECT_EQ(d.dp, 2);
  EXPECT_EQ(d.ep, 1);
  EXPECT_EQ(d.cp, 1);
  EXPECT_EQ(d.zero, 0);
  EXPECT_EQ(d.micro_batch, 1);
  EXPECT_EQ(d.effective_global_batch(), 2);
  EXPECT_EQ(d.schedule, PipeSchedule::k1F1B);
  EXPECT_EQ(d.recompute, Recompute::kNone);
  EXPECT_FALSE(d.sequence_parallel);
  // 6 GPUs a node do not divide 16 heads: no tensor parallelism.
  const Topology six = nodes(6, 2);
  const ParallelPlan p6 = llm_plan({}, small(), six);
  EXPECT_EQ(p6.tp, 1);
  EXPECT_EQ(p6.dp, 12);
  // dp is what tp, pp and cp leave.
  TrainingRequest::Llm o;
  o.tp = 4;
  o.pp = 2;
  EXPECT_EQ(llm_plan(o, small(), topo).dp, 2);
  // Virtual stages choose the interleaved schedule.
  o.virtual_stages = 2;
  EXPECT_EQ(llm_plan(o, small(), topo).schedule, PipeSchedule::kInterleaved);
  // Mixture of experts with tp > 1 runs with sequence parallelism, as
  // Megatron-Core requires.
  TransformerShape moe = small();
  moe.experts = 8;
  moe.top_k = 2;
  moe.moe_ffn_hidden = 1024;
  EXPECT_TRUE(llm_plan({}, moe, topo).sequence_parallel);
}

TEST(LlmRequest, BadOptionsNameTheOption) {
  const Topology topo = nodes(8, 2);
  TrainingRequest::Llm o;
  o.tp = 3;
  expect_refused(o, small(), topo, {"--tp 3", "16 GPUs"});
  o.tp = 0;
  expect_refused(o, small(), topo, {"--tp", "got 0"});
  o = {};
  o.zero = 4;
  expect_refused(o, small(), topo, {"--zero", "0..3", "got 4"});
  o = {};
  o.schedule = "1fb1";
  expect_refused(o, small(), topo, {"--schedule", "unknown pipeline schedule", "1fb1"});
  o = {};
  o.recompute = "half";
  expect_refused(o, small(), topo, {"--recompute", "half", "none, selective, full"});
}

}  // namespace
}  // namespace acesim::api
