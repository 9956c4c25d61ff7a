// SimAI / AICB workload files (workload/formats/simai_workload.h and
// workload/llm/simai_job.h): the header and rows of the public samples, the
// micro-batch blocks AICB writes, the groups each collective runs on,
// pipeline schedules against their closed forms, the compute of a file run
// as given, and bad files refused with one line naming file, line and
// column (through the CLI: exit status 2).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_runner.h"
#include "config/input_error.h"
#include "config/presets.h"
#include "driver/llm_run.h"
#include "test_paths.h"
#include "workload/formats/simai_workload.h"
#include "workload/llm/simai_job.h"

namespace acesim {
namespace {

std::string sample(const std::string& name) { return test::data_dir() + "/simai/" + name; }

PlatformConfig hgx_h100(long long nodes) {
  PlatformConfig p = load_preset(*preset_registry().find("hgx-h100"));
  set_nodes(p, nodes, "nodes");
  return p;
}

TEST(SimaiWorkload, ReadsTheDenseSamplesHeaderAndMicroBatches) {
  const SimaiWorkload w = read_simai_workload(sample("gpt13b_tp8_pp2_ws64_gbs32_aicbgen.txt"));
  EXPECT_EQ(w.tp, 8);
  EXPECT_EQ(w.ep, 1);
  EXPECT_EQ(w.pp, 2);
  EXPECT_EQ(w.vpp, 20);
  EXPECT_EQ(w.ga, 8);
  EXPECT_EQ(w.all_gpus, 64);
  EXPECT_EQ(w.pp_comm_bytes, 20971520.0);  // 2 x mbs 1 x seq 2048 x hidden 5120
  ASSERT_EQ(w.rows.size(), 342u);
  // 7 rows of data-parallel and embedding collectives, 8 micro-batches of
  // embedding + 20 x (attention, MLP), then cross-entropy and optimizer.
  EXPECT_EQ(w.preamble, 7u);
  EXPECT_EQ(w.block, 41u);
  EXPECT_EQ(w.tail_begin(), 335u);
  EXPECT_EQ(w.rows[7].name, "embedding_layer");
  EXPECT_EQ(w.rows[w.tail_begin()].name, "cross_entropy1");
  const SimaiRow& attention = w.rows[8];
  EXPECT_EQ(attention.name, "attention_layer");
  EXPECT_EQ(attention.compute_ps[0], 1'820'000'000);  // 1,820,000 ns
  ASSERT_TRUE(attention.comm[0].op);
  EXPECT_EQ(*attention.comm[0].op, CollectiveOp::kAllReduce);
  EXPECT_EQ(attention.comm[0].group, SimaiGroup::kTp);
  EXPECT_EQ(attention.comm[0].bytes, 20971520.0);
  EXPECT_FALSE(attention.comm[1].op);  // AICB leaves the backward tensor-parallel collective out
  const SimaiRow& grads = w.rows[1];
  EXPECT_EQ(grads.name, "grad_param_comm");
  EXPECT_EQ(*grads.comm[2].op, CollectiveOp::kReduceScatter);
  EXPECT_EQ(grads.comm[2].group, SimaiGroup::kDp);
  EXPECT_EQ(grads.comm[2].bytes, 3010723840.0);
}

TEST(SimaiWorkload, ReadsTheMoeExampleGroups) {
  const SimaiWorkload w = read_simai_workload(sample("workload_analytical.txt"));
  EXPECT_EQ(w.tp, 2);
  EXPECT_EQ(w.ep, 16);
  EXPECT_EQ(w.pp, 12);
  EXPECT_EQ(w.ga, 24);
  EXPECT_EQ(w.all_gpus, 9216);
  EXPECT_EQ(w.pp_comm_bytes, 50331648.0);  // written "pp_comm 50331648"
  EXPECT_EQ(w.rows.size(), 1789u);
  EXPECT_EQ(w.preamble, 6u);
  EXPECT_EQ(w.block, 74u);  // embedding, 8 x (attention column, row, 7 MoE rows), final column
  EXPECT_EQ(w.rows.size() - w.tail_begin(), 7u);
  const SimaiRow& dispatch = w.rows[w.preamble + 5];
  EXPECT_EQ(dispatch.name, "mlp_moelayer");
  EXPECT_EQ(*dispatch.comm[0].op, CollectiveOp::kAllToAll);
  EXPECT_EQ(dispatch.comm[0].group, SimaiGroup::kEp);
  EXPECT_EQ(w.rows[4].comm[2].group, SimaiGroup::kDpEp);  // moe_grad_norm1: ALLGATHER_DP_EP

  // Megatron-LM's layout: tp innermost, expert parallelism inside data
  // parallelism, pipeline outermost.
  const Topology topo(hgx_h100(1152).dims);
  const SimaiJob job(w, topo);
  EXPECT_EQ(job.plan().dp, 384);
  EXPECT_EQ(job.group(0, SimaiGroup::kTp), (std::vector<Rank>{0, 1}));
  const std::vector<Rank> ep = job.group(0, SimaiGroup::kEp);
  ASSERT_EQ(ep.size(), 16u);
  EXPECT_EQ(ep[1], 2);
  EXPECT_EQ(ep.back(), 30);
  const std::vector<Rank> dp_ep = job.group(0, SimaiGroup::kDpEp);
  ASSERT_EQ(dp_ep.size(), 24u);
  EXPECT_EQ(dp_ep[1], 32);
  const std::vector<Rank> dp = job.group(0, SimaiGroup::kDp);
  ASSERT_EQ(dp.size(), 384u);
  EXPECT_EQ(dp.back(), 766);
  EXPECT_EQ(job.layout().in_stage(0, 1), 768);
}

// A file of one row per micro-batch (forward F = 1 µs, backward B = 1 + 1
// µs), no collectives, two stages: GPipe's iteration is (m + p - 1)(F + B)
// + 2 (p - 1) t for a message time t; 1F1B's with p = 2 is (m + 1)(F + B)
// + m t (every backward waits for its gradient's round trip).
std::string pipeline_file(int ga) {
  std::string f = "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 1 ep: 1 pp: 2 vpp: 1 ga: " + std::to_string(ga) +
                  " all_gpus: 8 checkpoints: 0 checkpoint_initiates: 0 pp_comm: 1\n" + std::to_string(ga) + "\n";
  for (int i = 0; i < ga; ++i) f += "layer\t-1\t1000\tNONE\t0\t1000\tNONE\t0\t1000\tNONE\t0\t100\n";
  return f;
}

LlmReport run_pipeline(int ga, PipeSchedule schedule) {
  PlatformConfig p = hgx_h100(1);
  p.npu.executor = "ideal";
  const Topology topo(p.dims);
  SimaiJobOptions o;
  o.schedule = schedule;
  const SimaiJob job(parse_simai_workload(pipeline_file(ga), "pipe.txt"), topo, o);
  return run_llm(p, job);
}

TEST(SimaiJob, PipelineSchedulesAreTheirClosedForms) {
  const TimePs f = 1'000'000, b = 2'000'000;
  for (int m : {2, 4, 8}) {
    SCOPED_TRACE(m);
    const LlmReport gpipe = run_pipeline(m, PipeSchedule::kGpipe);
    const TimePs t2 = gpipe.iteration_ps - (m + 1) * (f + b);  // 2 (p - 1) t
    EXPECT_GT(t2, 0);
    EXPECT_LT(t2, 4'000'000);  // two NVLink messages of one byte: about a microsecond each
    EXPECT_EQ(t2 % 2, 0);
    const LlmReport one_f_one_b = run_pipeline(m, PipeSchedule::k1F1B);
    EXPECT_EQ(one_f_one_b.iteration_ps, (m + 1) * (f + b) + m * (t2 / 2));
    EXPECT_EQ(one_f_one_b.compute_ps, m * (f + b));
    // Each stage's idle time is the bubble and the messages' time, nothing else.
    for (const LlmStageReport& s : one_f_one_b.stages) {
      EXPECT_EQ(s.compute_ps + s.bubble_ps + s.exposed_ps[static_cast<int>(LlmComm::kPp)], s.iteration_ps);
      EXPECT_EQ(s.other_idle_ps, 0);
    }
    EXPECT_FALSE(one_f_one_b.memory);
    EXPECT_EQ(one_f_one_b.model_flops_per_gpu, 0.0);
  }
}

// Rows without compute run their blocking collectives one after another,
// as SimAI does: k latency-bound all-reduces take k times one.
TEST(SimaiJob, BlockingCollectivesWithoutComputeRunOneAfterAnother) {
  PlatformConfig p = hgx_h100(1);
  p.npu.executor = "ideal";
  const Topology topo(p.dims);
  const auto iteration = [&](int rows) {
    std::string f = "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 all_gpus: 8\n" + std::to_string(rows) + "\n";
    for (int i = 0; i < rows; ++i) f += "r\t-1\t0\tALLREDUCE\t8\t0\tNONE\t0\t0\tNONE\t0\t100\n";
    return run_llm(p, SimaiJob(parse_simai_workload(f, "chain.txt"), topo)).iteration_ps;
  };
  const TimePs one = iteration(1);
  EXPECT_GT(one, 0);
  EXPECT_EQ(iteration(2), 2 * one);
  EXPECT_EQ(iteration(5), 5 * one);
}

TEST(SimaiJob, IdealComputeIsTheFilesComputeTimes) {
  // GPT-13B, pp 1: 4 micro-batches of (embedding + 40 x (attention, MLP))
  // with forward, input- and weight-gradient compute, and the preamble's
  // optimizer compute, every entry once: SimAI-Analytical's 2,125,065 µs.
  PlatformConfig p = hgx_h100(8);
  p.npu.executor = "ideal";
  const Topology topo(p.dims);
  const SimaiJob job(read_simai_workload(sample("gpt13b_tp8_pp1_ws64_gbs32_aicbgen.txt")), topo);
  // Entries of 1 ns (AICB's placeholder) are not run.
  TimePs given = 0, placeholders = 0;
  for (const SimaiRow& row : job.workload().rows) {
    for (TimePs t : row.compute_ps) (t > 1000 ? given : placeholders) += t;
  }
  EXPECT_EQ(placeholders, 24'000);  // 24 entries of 1 ns
  const LlmReport r = run_llm(p, job);
  EXPECT_EQ(r.compute_ps, given);
  EXPECT_EQ((given + placeholders) / 1'000'000, 2'125'065);  // in µs, as SimAI reports it
  EXPECT_EQ(r.pipeline_bubble_ps, 0);
  EXPECT_EQ(r.stages.size(), 1u);
  // Forward all-reduces block the compute; the data-parallel reduce-scatter
  // and all-gather at the end are exposed.
  EXPECT_GT(r.exposed_ps[static_cast<int>(LlmComm::kTp)], 0);
  EXPECT_GT(r.exposed_ps[static_cast<int>(LlmComm::kDp)], 0);
  EXPECT_EQ(r.compute_ps + r.exposed_ps[static_cast<int>(LlmComm::kTp)] + r.exposed_ps[static_cast<int>(LlmComm::kDp)] +
                r.other_idle_ps,
            r.stage_iteration_ps);
  // Deterministic: a second run is bit-identical.
  EXPECT_EQ(run_llm(p, job).iteration_ps, r.iteration_ps);
}

void expect_refused(const std::string& text, const std::string& where, const std::string& what) {
  SCOPED_TRACE(text.substr(0, 120));
  try {
    parse_simai_workload(text, "w.txt");
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind(where, 0), 0u) << m;
    EXPECT_NE(m.find(what), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

const std::string kHead = "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 8 pp_comm: 0\n";
const std::string kRow = "l\t-1\t10\tALLREDUCE\t64\t10\tNONE\t0\t10\tALLGATHER\t64\t100\n";

TEST(SimaiWorkload, RefusesBadFilesWithOneLineNamingTheSpot) {
  expect_refused("", "w.txt:1", "empty workload file");
  expect_refused("DATA\n1\n" + kRow, "w.txt:1:1", "starts with HYBRID_TRANSFORMER_FWD_IN_BCKWD");
  expect_refused("HYBRID_TRANSFORMER_FWD_IN_BCKWD ep: 2\n1\n" + kRow, "w.txt:1:1", "needs 'model_parallel_NPU_group: N'");
  expect_refused("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 epp: 2\n1\n" + kRow, "w.txt:1:", "unknown header key 'epp:'");
  expect_refused("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 0\n1\n" + kRow, "w.txt:1:", "model_parallel_NPU_group: must be in 1..");
  expect_refused("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 pp: 2\n1\n" + kRow, "w.txt:1:", "needs 'pp_comm: BYTES'");
  expect_refused("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 checkpoints: 1 3\n1\n" + kRow, "w.txt:1:",
                 "lists of recomputed layers are not run");
  expect_refused(kHead + "2\n" + kRow, "w.txt:", "declares 2 rows but has 1");
  expect_refused(kHead + "1\n" + kRow + kRow, "w.txt:4:1", "declares 1 rows but has more lines");
  expect_refused(kHead + "1\nl\t-1\t10\tALLREDUCE\t64\n", "w.txt:3", "expected 12 columns");
  expect_refused(kHead + "1\nl\t-1\t10\tALLREDUCEE\t64\t10\tNONE\t0\t10\tNONE\t0\t100\n", "w.txt:3:9",
                 "unknown collective 'ALLREDUCEE' (did you mean 'ALLREDUCE'?)");
  expect_refused(kHead + "1\nl\t-1\t10\tBROADCAST\t64\t10\tNONE\t0\t10\tNONE\t0\t100\n", "w.txt:3:9", "not a collective SimAI runs");
  expect_refused(kHead + "1\nl\t-1\t-5\tNONE\t0\t10\tNONE\t0\t10\tNONE\t0\t100\n", "w.txt:3:6", "forward compute time: must be in 0..");
  expect_refused(kHead + "1\nl\t-1\t10\tNONE\t0\t10\tNONE\tx\t10\tNONE\t0\t100\n", "w.txt:3:", "input-gradient communication size: expected an integer");
  // ga 2 but the rows do not repeat.
  expect_refused("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ga: 2\n2\n" + kRow +
                     "m\t-1\t10\tNONE\t0\t10\tNONE\t0\t10\tNONE\t0\t100\n",
                 "w.txt:2", "hold no 2 consecutive blocks");
}

// A header whose ga disagrees with the micro-batch blocks the rows hold:
// GPT-13B's sample has 4 blocks of 81 rows (embedding + 40 x (attention,
// MLP)). With ga 3 the fourth block used to run once, as rows after the
// micro-batches; it is refused now. (ga 2 stays indistinguishable from 2
// micro-batches of twice the rows, docs/workloads.md.)
TEST(SimaiWorkload, RefusesAGaTheBlocksDisagreeWith) {
  std::string text = read_text_file(sample("gpt13b_tp8_pp1_ws64_gbs32_aicbgen.txt"));
  const std::size_t at = text.find(" ga: 4 ");
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(parse_simai_workload(text, "w.txt").block, 81u);
  text.replace(at, 7, " ga: 3 ");
  expect_refused(text, "w.txt:2",
                 "ga 3 disagrees with the rows: after 3 blocks of 81 rows (from row 8) the rows go on as another block for 81 more");
  // Rows that repeat within one micro-batch, one row too many for ga 4.
  std::string rows;
  for (int i = 0; i < 9; ++i) rows += kRow;
  expect_refused("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ga: 4\n9\n" + rows, "w.txt:2",
                 "ga 4 disagrees with the rows: after 4 blocks of 2 rows (from row 1) the rows go on as another block for 1 more");
  // 8 such rows are 4 micro-batches of 2, as documented.
  rows.erase(0, kRow.size());
  EXPECT_EQ(parse_simai_workload("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ga: 4\n8\n" + rows, "w.txt").block, 2u);
}

TEST(SimaiWorkload, ReadsWhatAicbAndSimaiAccept) {
  // pp_comm as AICB writes it with sequence parallelism (a Python float),
  // read as SimAI does (its integer part); CRLF line ends.
  const SimaiWorkload w = parse_simai_workload(
      "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 pp: 2 pp_comm: 25165824.0\r\n1\r\n" + kRow, "w.txt");
  EXPECT_EQ(w.pp_comm_bytes, 25165824.0);
  EXPECT_EQ(parse_simai_workload("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 pp: 2 pp_comm 1000.75\n1\n" + kRow,
                                 "w.txt")
                .pp_comm_bytes,
            1000.0);
  expect_refused("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 pp: 2 pp_comm: 1e400\n1\n" + kRow, "w.txt:1:",
                 "pp_comm: expected a number of bytes");
  expect_refused("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 pp: 2 pp_comm: nan\n1\n" + kRow, "w.txt:1:",
                 "pp_comm: expected a number of bytes");
  expect_refused("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 model_parallel_NPU_group: 4\n1\n" + kRow,
                 "w.txt:1:", "model_parallel_NPU_group: is given twice");
  expect_refused("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 pp_comm: 5 pp_comm 5\n1\n" + kRow, "w.txt:1:",
                 "is given twice");
}

// The expert all-to-all's wait is exposed as ep even when a tensor-parallel
// collective follows it with no kernel between (AICB's 1 ns placeholder).
TEST(SimaiJob, ChainedCollectivesAreChargedEachTheirOwnKind) {
  PlatformConfig p = hgx_h100(4);
  p.npu.executor = "ideal";
  const Topology topo(p.dims);
  const std::string f =
      "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ep: 16 all_gpus: 32\n2\n"
      "a\t-1\t1000\tALLTOALL_EP\t100663296\t1000\tNONE\t0\t1000\tNONE\t0\t100\n"
      "b\t-1\t1\tALLREDUCE\t1048576\t1000\tNONE\t0\t1000\tNONE\t0\t100\n";
  const LlmReport r = run_llm(p, SimaiJob(parse_simai_workload(f, "chain.txt"), topo));
  const TimePs ep = r.exposed_ps[static_cast<int>(LlmComm::kEp)], tp = r.exposed_ps[static_cast<int>(LlmComm::kTp)];
  EXPECT_GT(ep, 1'000'000);  // 100 MB over 4 nodes' NICs: over a millisecond
  EXPECT_GT(tp, 0);
  EXPECT_LT(tp, ep / 20);  // a 1 MiB all-reduce on NVLink
  EXPECT_EQ(r.compute_ps + ep + tp + r.other_idle_ps, r.stage_iteration_ps);
}

// Backward: the weight-gradient collective is issued after the row's
// input-gradient collective is done and runs beside the rows below it; the
// iteration's end waits for it.
TEST(SimaiJob, WeightGradientCollectivesOverlapTheRowsBelow) {
  PlatformConfig p = hgx_h100(2);
  p.npu.executor = "ideal";
  const Topology topo(p.dims);
  const auto run = [&](const std::string& top_row) {
    const std::string f = "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 all_gpus: 16\n2\n"
                          "below\t-1\t1000\tNONE\t0\t5000000\tNONE\t0\t5000000\tNONE\t0\t100\n" +
                          top_row;
    LlmRunOptions o;
    o.trace_ranks = 1;
    return run_llm(p, SimaiJob(parse_simai_workload(f, "wg.txt"), topo), o);
  };
  // 1 GiB gradient all-reduce over the two nodes: tens of milliseconds.
  const LlmReport overlapped = run("top\t-1\t1000\tNONE\t0\t1000\tALLREDUCE\t1048576\t1000\tALLREDUCE\t1073741824\t100\n");
  const LlmReport without = run("top\t-1\t1000\tNONE\t0\t1000\tALLREDUCE\t1048576\t1000\tNONE\t0\t100\n");
  const LlmSpan* ig = nullptr;
  const LlmSpan* wg = nullptr;
  for (const LlmSpan& s : overlapped.spans) {
    if (s.tag.iteration != 1 || s.compute) continue;
    (s.tag.comm == LlmComm::kTp ? ig : wg) = &s;
  }
  ASSERT_NE(ig, nullptr);
  ASSERT_NE(wg, nullptr);
  EXPECT_GE(wg->begin, ig->end + 1'000'000);  // after the ig collective and the 1 µs weight-gradient kernel
  // The 10 ms of compute of the row below runs under it: against the file
  // without it, the iteration grows by the all-reduce less that compute.
  const TimePs ar = wg->end - wg->begin;
  EXPECT_GT(ar, 20'000'000'000);
  EXPECT_LT(overlapped.iteration_ps, without.iteration_ps + ar);
  EXPECT_GE(overlapped.iteration_ps, without.iteration_ps + ar - 10'000'000'000 - 10'000'000);
}

TEST(SimaiJob, RefusesPlansThePlatformCannotHold) {
  const Topology topo(hgx_h100(1).dims);  // 8 GPUs
  const auto refused = [&](const std::string& head, const std::string& what) {
    try {
      const SimaiJob job(parse_simai_workload(head + "1\n" + kRow, "w.txt"), topo);
      ADD_FAILURE() << "accepted " << head;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  refused("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 all_gpus: 16\n", "w.txt: all_gpus 16 but the platform has 8 GPUs");
  refused("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 3 all_gpus: 8\n", "3 * 1 = 3 does not divide the 8 GPUs");
  refused("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ep: 3 all_gpus: 8\n", "ep 3 does not divide dp");
}

class SimaiCli : public test::CliTest {};

TEST_F(SimaiCli, RunsASimaiFileByItsHeaderAndRefusesPlanOptions) {
  const std::string file = sample("gpt13b_tp8_pp2_ws64_gbs32_aicbgen.txt");
  const test::CliRun r = expect_ok({"run", "--workload", file, "--platform", "hgx-h100", "--nodes", "8", "--json"});
  const nlohmann::json j = parse_json(r.out);
  const nlohmann::json& run = j.contains("runs") ? j["runs"][0] : j;
  EXPECT_EQ(run["plan"], "tp 8, pp 2, dp 4, 1f1b, 8 micro-batches per replica (ga), 342 rows");
  EXPECT_EQ(run["stages"].size(), 2u);
  EXPECT_TRUE(run["memory_per_gpu_bytes"].is_null());
  EXPECT_TRUE(run["tflops_per_gpu"].is_null());
  EXPECT_GT(run["pipeline_bubble_ns"].get<double>(), 0.0);
  expect_bad_input({"run", "--workload", file, "--platform", "hgx-h100", "--nodes", "8", "--tp", "4"},
                   {"a SimAI file fixes its plan"});
  expect_bad_input({"run", "--workload", file, "--platform", "hgx-h100", "--nodes", "2"},
                   {"all_gpus 64 but the platform has 16 GPUs"});
  expect_bad_input({"run", "--workload", file, "--platform", "hgx-h100", "--nodes", "8", "--schedule", "interleaved"},
                   {"interleaved needs model chunks"});
  // The ASTRA-sim 1.0 reader, asked for by name, names the key it does not know.
  expect_bad_input({"run", "--workload", file, "--format", "astra-sim-1.0", "--platform", "hgx-h100", "--nodes", "8"},
                   {file + ":1:", "'ep:' is a SimAI/AICB header key"});
}

}  // namespace
}  // namespace acesim
