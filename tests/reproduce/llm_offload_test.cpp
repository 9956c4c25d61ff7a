// acesim reproduce llm-offload (docs/llm-offload.md): the 64-GPU points of
// every workload (about a second), their numbers as the doc states them,
// and the doc's tables row for row what the study computes.
#include <cmath>
#include <map>
#include <sstream>

#include <gtest/gtest.h>

#include "cli_runner.h"
#include "config/input_error.h"
#include "reproduce/llm_offload.h"
#include "test_paths.h"

namespace acesim {
namespace {

const std::vector<OffloadPoint>& small() {
  static const std::vector<OffloadPoint> points = [] {
    OffloadOptions o;
    o.max_gpus = 64;
    o.jobs = 2;
    return run_llm_offload(o);
  }();
  return points;
}

const OffloadPoint& point(const std::string& workload) {
  for (const OffloadPoint& p : small()) {
    if (p.workload == workload) return p;
  }
  throw std::logic_error("no point " + workload);
}

std::string doc_tables() { return test::doc_tables("docs/llm-offload.md", "llm-offload"); }

double ms(TimePs t) { return static_cast<double>(t) / 1e9; }

TEST(LlmOffload, EveryWorkloadRunsAt64Gpus) {
  ASSERT_EQ(small().size(), 4u);
  for (const OffloadPoint& p : small()) {
    EXPECT_EQ(p.gpus, 64);
    ASSERT_EQ(p.runs.size(), 3u);
    EXPECT_EQ(p.runs[0].executor, "sm");
    EXPECT_EQ(p.runs[1].executor, "ace");
    EXPECT_EQ(p.runs[2].executor, "ideal");
  }
}

// The settings' rule: pp 8 (4 where 8 leaves one replica), m = 4 pp
// micro-batches per replica (8 without a pipeline), dp what the GPUs leave.
TEST(LlmOffload, PlansFollowTheRule) {
  const std::map<std::string, std::tuple<int, int, int, int, int>> plans = {
      // tp, pp, dp, ep, micro-batches
      {"llama3-70b-zero1", {8, 4, 2, 1, 16}},
      {"llama3-70b-zero3", {8, 4, 2, 1, 16}},
      {"mixtral-8x7b-ep8", {1, 4, 16, 8, 16}},
      {"llama3-8b-tp8", {8, 1, 8, 1, 8}},
  };
  for (const OffloadPoint& p : small()) {
    SCOPED_TRACE(p.workload);
    const auto& [tp, pp, dp, ep, m] = plans.at(p.workload);
    EXPECT_EQ(p.plan.tp, tp);
    EXPECT_EQ(p.plan.pp, pp);
    EXPECT_EQ(p.plan.dp, dp);
    EXPECT_EQ(p.plan.ep, ep);
    EXPECT_EQ(p.plan.micro_batches(), m);
    EXPECT_EQ(p.plan.world(), 64);
  }
  const std::vector<OffloadWorkload> all = llm_offload_workloads();
  EXPECT_EQ(offload_pp(all[0], 256), 8);
  EXPECT_EQ(offload_pp(all[0], 16384), 8);
}

// Taking the endpoint's cost of communication away never slows these
// points: ideal <= ace <= sm (to 0.1%).
TEST(LlmOffload, IdealNoSlowerThanAceNoSlowerThanSm) {
  for (const OffloadPoint& p : small()) {
    SCOPED_TRACE(p.workload);
    const double sm = ms(p.run("sm").iteration_ps), ace = ms(p.run("ace").iteration_ps),
                 ideal = ms(p.run("ideal").iteration_ps);
    EXPECT_LE(ideal, ace * 1.001);
    EXPECT_LE(ace, sm * 1.001);
  }
}

// The speedups docs/llm-offload.md states for 64 GPUs (sm's iteration over
// the executor's), to 0.002.
TEST(LlmOffload, SpeedupsAreTheDocumentedOnes) {
  const std::map<std::string, std::pair<double, double>> speedups = {
      {"llama3-70b-zero1", {1.022, 1.023}},
      {"llama3-70b-zero3", {1.101, 1.102}},
      {"mixtral-8x7b-ep8", {1.009, 1.014}},
      {"llama3-8b-tp8", {1.023, 1.023}},
  };
  for (const OffloadPoint& p : small()) {
    SCOPED_TRACE(p.workload);
    EXPECT_NEAR(p.speedup("ace"), speedups.at(p.workload).first, 0.002);
    EXPECT_NEAR(p.speedup("ideal"), speedups.at(p.workload).second, 0.002);
    EXPECT_DOUBLE_EQ(p.speedup("sm"), 1.0);
  }
}

// Where ACE's gain comes from: the compute kernels no longer share SMs and
// HBM with collectives. Under sm the dense models' compute takes 3.0% (ZeRO
// 1) to 14.6% (ZeRO 3) longer than with communication free; ace's is within
// 0.2% of ideal's.
TEST(LlmOffload, GainIsTheComputeContention) {
  const std::map<std::string, std::pair<double, double>> sm_over_ideal = {
      {"llama3-70b-zero1", {1.027, 1.034}},
      {"llama3-70b-zero3", {1.142, 1.149}},
      {"llama3-8b-tp8", {1.044, 1.051}},
  };
  for (const auto& [w, range] : sm_over_ideal) {
    SCOPED_TRACE(w);
    const OffloadPoint& p = point(w);
    const double sm = ms(p.run("sm").compute_ps), ace = ms(p.run("ace").compute_ps),
                 ideal = ms(p.run("ideal").compute_ps);
    EXPECT_GE(sm / ideal, range.first);
    EXPECT_LE(sm / ideal, range.second);
    EXPECT_NEAR(ace / ideal, 1.0, 0.002);
  }
}

// The breakdown accounts for the whole iteration: compute, bubble, exposed
// communication of each kind and other idle time add up to it (means over
// the stages, to 0.5%), and TFLOP/s per GPU times the iteration is the same
// model FLOPs for every executor.
TEST(LlmOffload, BreakdownAddsUpToTheIteration) {
  for (const OffloadPoint& p : small()) {
    for (const OffloadRun& r : p.runs) {
      SCOPED_TRACE(p.workload + " " + r.executor);
      TimePs sum = r.compute_ps + r.bubble_ps + r.other_idle_ps;
      for (int k = 0; k < kLlmCommKinds; ++k) sum += r.exposed_ps[k];
      EXPECT_NEAR(ms(sum), ms(r.iteration_ps), 0.005 * ms(r.iteration_ps));
      const double flops = r.tflops_per_gpu * ms(r.iteration_ps);
      const double sm_flops = p.run("sm").tflops_per_gpu * ms(p.run("sm").iteration_ps);
      EXPECT_NEAR(flops, sm_flops, 1e-9 * sm_flops);
    }
  }
}

// Every row the 64-GPU points give is a row of docs/llm-offload.md's tables
// (the doc holds the whole study's output between its markers).
TEST(LlmOffload, DocumentedTablesHoldTheseRows) {
  const std::string doc = doc_tables();
  ASSERT_NE(doc, "(markers missing)");
  std::stringstream rows(llm_offload_tables(small()));
  std::string line;
  int checked = 0;
  while (std::getline(rows, line)) {
    if (line.rfind("| ", 0) != 0 || line.rfind("| workload", 0) == 0) continue;
    EXPECT_NE(doc.find(line + "\n"), std::string::npos)
        << "docs/llm-offload.md is out of date: paste `acesim reproduce llm-offload`'s tables; missing row:\n"
        << line;
    ++checked;
  }
  EXPECT_EQ(checked, 4 + 12);
  // The whole study: 19 points, each a speedup row and three breakdown rows.
  int doc_rows = 0;
  std::stringstream all(doc);
  while (std::getline(all, line)) doc_rows += line.rfind("| llama3", 0) == 0 || line.rfind("| mixtral", 0) == 0;
  EXPECT_EQ(doc_rows, 19 * 4);
}

TEST(LlmOffload, UnknownWorkloadIsAnInputError) {
  OffloadOptions o;
  o.workloads = {"llama3-70b-zero2"};
  try {
    run_llm_offload(o);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown workload 'llama3-70b-zero2'"), std::string::npos) << e.what();
  }
}

class LlmOffloadCli : public test::CliTest {};

TEST_F(LlmOffloadCli, OneWorkloadEndToEnd) {
  const std::string out = (dir_ / "out").string();
  const auto r = run({"reproduce", "llm-offload", "--out", out, "--workloads", "llama3-8b-tp8", "--max-gpus", "64",
                      "--no-plots", "--no-progress"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("| llama3-8b-tp8 | 64 | tp 8, pp 1, dp 8 | 1.246 | 1.218 | 1.218 | 1.023 | 1.023 | 100% |"),
            std::string::npos)
      << r.out;
  const std::string csv = test::slurp(dir_ / "out" / "results.csv");
  EXPECT_EQ(csv.rfind("workload,gpus,tp,pp,dp,ep,zero,micro_batches,executor,iteration_time_ns,", 0), 0u);
  EXPECT_NE(csv.find("\nllama3-8b-tp8,64,8,1,8,1,1,8,ace,"), std::string::npos) << csv;
  int rows = 0;
  for (char c : csv) rows += c == '\n' ? 1 : 0;
  EXPECT_EQ(rows, 1 + 3);
  EXPECT_NE(test::slurp(dir_ / "out" / "report.md").find("--overlap-grad-reduce"), std::string::npos);
}

TEST_F(LlmOffloadCli, BadInput) {
  expect_bad_input({"reproduce", "llm-offload", "--workloads", "llama3-8b-tp8,gpt"}, {"--workloads", "'gpt'"});
  expect_bad_input({"reproduce", "llm-offload", "--max-gpus", "-1"}, {"--max-gpus"});
  expect_bad_input({"reproduce", "llm-offloa"}, {"unknown study 'llm-offloa'", "did you mean 'llm-offload'"});
}

}  // namespace
}  // namespace acesim
