// acesim reproduce llm-runs: published LLM training runs of several stacks
// (docs/validation.md, section 7), and the file's checks.
#include "reproduce/llm_runs.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include <gtest/gtest.h>

#include "config/input_error.h"
#include "scratch_dir.h"
#include "test_paths.h"

namespace acesim {
namespace {

const LlmRunsStudy& study() {
  static const LlmRunsStudy s = run_llm_runs(test::data_dir());
  return s;
}

// The tables docs/validation.md shows are what the study computes.
TEST(LlmRuns, DocumentedTablesAreWhatTheStudyComputes) {
  EXPECT_EQ(test::doc_tables("docs/validation.md", "llm-runs"), llm_runs_tables(study()))
      << "docs/validation.md's section 7 is out of date: paste `acesim reproduce llm-runs`'s tables";
}

// At least 20 runs from at least four stacks, on A100 and H100, dense and
// MoE, BF16 and FP8 (the bar for the validation set).
TEST(LlmRuns, TheSetCoversStacksGpusAndPrecisions) {
  std::map<std::string, int> stacks, platforms, precisions;
  for (const LlmRunRow& r : study().rows) {
    ++stacks[r.stack];
    ++platforms[r.platform];
    ++precisions[r.precision];
  }
  EXPECT_GE(study().rows.size(), 20u);
  EXPECT_GE(stacks.size(), 4u);
  EXPECT_GT(platforms["hgx-a100"], 0);
  EXPECT_GT(platforms["hgx-h100"], 0);
  EXPECT_GT(precisions["bf16"], 0);
  EXPECT_GT(precisions["fp8"], 0);
}

class LlmRunsFile : public test::ScratchDirTest {
 protected:
  std::string data(const std::string& rows) {
    std::filesystem::create_directories(dir_ / "llm-runs");
    std::ofstream(dir_ / "llm-runs" / "runs.csv")
        << "# source: a test\n"
           "id,stack,platform,gpus,model,seq,tp,pp,cp,ep,vp,mbs,gbs,sp,recompute,zero,overlap,precision,attention,first,last,account,"
           "step_s,published,where\n"
        << rows;
    return dir_.string();
  }
  void expect_refused(const std::string& rows, const std::string& part) {
    try {
      run_llm_runs(data(rows));
      ADD_FAILURE() << "no error for " << rows;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  }
};

TEST_F(LlmRunsFile, BadRowsAreRefusedWithLineAndColumn) {
  const std::string ok = "a,megatron-core,hgx-h100,8,llama3-8b,,1,1,1,1,1,1,8,no,none,1,yes,bf16,fused,,,no,1.5,x,y\n";
  expect_refused("a,megatron-core,hgx-h900,8,llama3-8b,,1,1,1,1,1,1,8,no,none,1,yes,bf16,fused,,,no,1.5,x,y\n",
                 "runs.csv:3: column 3 (platform): no preset 'hgx-h900'");
  expect_refused("a,megatron-core,hgx-h100,12,llama3-8b,,1,1,1,1,1,1,8,no,none,1,yes,bf16,fused,,,no,1.5,x,y\n",
                 "runs.csv:3: column 4 (gpus): 12 GPUs are not whole nodes of 8");
  expect_refused("a,megatron-core,hgx-h100,8,llama3-8b,,3,1,1,1,1,1,8,no,none,1,yes,bf16,fused,,,no,1.5,x,y\n",
                 "column 4 (gpus): 8 GPUs do not split into tp 3");
  expect_refused("a,megatron-core,hgx-h100,8,llama3-8b,,1,1,1,1,1,1,8,maybe,none,1,yes,bf16,fused,,,no,1.5,x,y\n",
                 "column 14 (sp): yes or no, got 'maybe'");
  expect_refused("a,megatron-core,hgx-h100,8,llama3-8b,,1,1,1,1,1,1,8,no,none,1,yes,bf16,fused,,,no,-2,x,y\n",
                 "column 23 (step_s): must be a time in seconds > 0");
  expect_refused(ok + ok, "runs.csv:4: column 1 (id): 'a' is given twice");
  expect_refused("a,megatron-core,hgx-h100,8,llama9,,1,1,1,1,1,1,8,no,none,1,yes,bf16,fused,,,no,1.5,x,y\n",
                 "model 'llama9' is neither a built-in transformer nor a model file");
  expect_refused("a,megatron-core,hgx-a100,8,llama3-8b,,1,1,1,1,1,1,8,no,none,1,yes,fp8,fused,,,no,1.5,x,y\n", "FP8");
  try {
    run_llm_runs(data(ok), "b");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no row 'b'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace acesim
