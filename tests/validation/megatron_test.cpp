// LLM training against Megatron-LM's published throughput on DGX A100
// (docs/validation.md, "LLM training: Megatron-LM on DGX A100"): the
// documented table stays what the study computes, each simulated row's
// error within its bound, and the 15% goal where it is met.
// The study simulates every rank of the 32- to 256-GPU rows (about half a
// minute, most of it the 256-GPU row).
#include <cmath>
#include <map>

#include <gtest/gtest.h>

#include "config/input_error.h"
#include "reproduce/megatron.h"
#include "scratch_dir.h"
#include "test_paths.h"

namespace acesim {
namespace {

const MegatronStudy& study() {
  static const MegatronStudy s = run_megatron(test::data_dir());
  return s;
}

std::string doc_tables() { return test::doc_tables("docs/validation.md", "megatron"); }

TEST(Megatron, DocumentedTablesAreWhatTheStudyComputes) {
  EXPECT_EQ(doc_tables(), megatron_tables(study()))
      << "docs/validation.md's Megatron-LM section is out of date: paste `acesim reproduce megatron`'s tables";
}

// Each row's bound is today's error (acesim / measured TFLOP/s per GPU - 1)
// plus 0.5 percentage points, rounded up: the published figure, not a goal.
// A change that moves a row further off fails here; one that brings it
// closer lowers its bound (and docs/validation.md says so).
TEST(Megatron, EachSimulatedRowStaysWithinItsBound) {
  const std::map<std::string, double> bound = {
      {"GPT 1.7B", 0.015},     // -1.0%
      {"GPT 3.6B", 0.029},     // -2.4%
      {"GPT 7.5B", 0.042},     // -3.7%
      {"GPT 18.4B", 0.024},    // -1.9%
      {"GPT 39.1B", 0.104},    // +9.9%
      {"GPT 76.1B", 0.130},    // +12.5%
      {"GPT 145.6B", 0.154},   // +14.9%
      {"GPT 310.1B", 0.169},   // +16.4%
      {"GPT 529.6B", 0.099},   // +9.4%
      {"GPT 1008.0B", 0.165},  // +16.0%
  };
  int simulated = 0;
  for (const MegatronRow& r : study().rows) {
    if (!r.simulated) continue;
    SCOPED_TRACE(r.model);
    ASSERT_TRUE(bound.count(r.model));
    EXPECT_LE(std::abs(r.error()), bound.at(r.model));
    ++simulated;
  }
  EXPECT_EQ(simulated, static_cast<int>(bound.size()));
}

// The goal, 15% of the published TFLOP/s per GPU. 2 of the 10 rows
// miss it today, both with acesim too fast and both pipelined over 16 and 64
// stages (docs/validation.md, section 4, says what is not modelled).
TEST(Megatron, GoalOfFifteenPercentWhereMet) {
  const std::map<std::string, double> known_misses = {
      {"GPT 310.1B", 0.169},
      {"GPT 1008.0B", 0.165},
  };
  for (const MegatronRow& r : study().rows) {
    if (!r.simulated) continue;
    SCOPED_TRACE(r.model);
    const auto miss = known_misses.find(r.model);
    EXPECT_LE(std::abs(r.error()), miss == known_misses.end() ? 0.15 : miss->second);
  }
}

// Table 1's plans as the settings give them: d = GPUs / (t p), and the
// interleaved schedule with 2 chunks only where the layers and micro-batches
// split (the 76.1B model's 60 layers over 4 stages do not split in 2 chunks
// each: 1F1B; the 529.6B model's 105 over 35 neither).
TEST(Megatron, PlansFollowTheTable) {
  const std::map<std::string, std::tuple<int, std::string, int>> plans = {
      {"GPT 1.7B", {32, "1f1b", 1}},          {"GPT 18.4B", {32, "1f1b", 1}},
      {"GPT 39.1B", {32, "interleaved", 2}},  {"GPT 76.1B", {32, "1f1b", 1}},
      {"GPT 145.6B", {24, "interleaved", 2}}, {"GPT 310.1B", {15, "interleaved", 2}},
      {"GPT 529.6B", {9, "1f1b", 1}},         {"GPT 1008.0B", {6, "interleaved", 2}},
  };
  ASSERT_EQ(study().rows.size(), 10u);
  for (const MegatronRow& r : study().rows) {
    const auto p = plans.find(r.model);
    if (p == plans.end()) continue;
    SCOPED_TRACE(r.model);
    EXPECT_EQ(r.dp, std::get<0>(p->second));
    EXPECT_EQ(r.schedule, std::get<1>(p->second));
    EXPECT_EQ(r.virtual_stages, std::get<2>(p->second));
  }
}

// Eq. 3 of the paper with full recomputation, 96 B s l h^2 (1 + s/(6h) +
// V/(16 l h)) over the GPUs and the iteration: the 1.7B row's TFLOP/s is
// that count over acesim's iteration time (V padded to 51,200, already a
// multiple of 128).
TEST(Megatron, ThroughputIsEquationThreeOverTheIteration) {
  const MegatronRow& r = study().rows.front();
  ASSERT_EQ(r.model, "GPT 1.7B");
  const double b = 512, s = 2048, l = 24, h = 2304, v = 51200;
  const double flops = 96.0 * b * s * l * h * h * (1.0 + s / (6.0 * h) + v / (16.0 * l * h));
  const double seconds = static_cast<double>(r.iteration_ps) * 1e-12;
  EXPECT_NEAR(r.acesim_tflops, flops / 32.0 / seconds / 1e12, 1e-6 * r.acesim_tflops);
}

TEST(Megatron, MissingDataIsAnInputError) {
  EXPECT_THROW(run_megatron("/nonexistent"), InputError);
}

class MegatronData : public test::ScratchDirTest {
 protected:
  std::string message(const std::string& row) {
    std::filesystem::create_directories(dir_ / "megatron" / "models");
    write("megatron/table1.csv",
          "model,params_billion,heads,hidden,layers,tp,pp,gpus,batch,tflops_per_gpu,model_file,simulate\n" + row + "\n");
    write("megatron/models/m.yaml", "layers: 2\nhidden: 256\nheads: 4\nseq: 128\nvocab: 1024\n");
    try {
      run_megatron(dir_.string());
    } catch (const InputError& e) {
      return e.what();
    }
    return "(no error)";
  }
};

TEST_F(MegatronData, AModelFileNotItsRowsShapeIsAnInputError) {
  const std::string m = message("tiny,0.1,4,256,3,1,1,8,8,100,m.yaml,yes");
  EXPECT_NE(m.find("m.yaml: layers 2, hidden 256, heads 4 are not its table row's (3, 256, 4)"), std::string::npos) << m;
}

TEST_F(MegatronData, BadRowsAreInputErrors) {
  EXPECT_NE(message("tiny,0.1,4,256,2,1,1,8,8,100,m.yaml,maybe").find("simulate must be yes or no"), std::string::npos);
  EXPECT_NE(message("tiny,0.1,4,256,2,4,1,12,8,100,m.yaml,no").find("12 GPUs are not whole nodes"), std::string::npos);
}

}  // namespace
}  // namespace acesim
