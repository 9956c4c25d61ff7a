// Plans that would not end, and inputs that cannot be, refused up front
// with one line that gives the arithmetic or names the conflict: LLM plans
// whose graphs would not fit (context-parallel rings, --full on 65,536
// GPUs), collectives whose chunks would not fit, fp8 on a GPU without it,
// --proto ll128 for an all-to-all, a rank given twice to --straggler.
#include <gtest/gtest.h>

#include <string>

#include "cli_runner.h"

namespace acesim {
namespace {

class PlanLimits : public test::CliTest {};

// Llama 3 8B with tp 8 x cp 1024 on 8,192 GPUs built for minutes, past
// 12 GB: its ring attention makes 6,138 more nodes per layer and
// micro-batch than the old estimate counted, over the ring's 1,024 ranks,
// and each of those takes about 370 B (measured at cp 16, 32 and 64).
TEST_F(PlanLimits, ContextParallelRingsCountInTheMemoryEstimate) {
  expect_bad_input({"run", "--model", "llama3-8b", "--platform", "hgx-h100", "--nodes", "1024", "--tp", "8", "--cp", "1024"},
                   {"the simulation would hold about 4.06e+08 graph nodes (1024 ranks (one rank per stage with its "
                    "context-parallel ring) x 3.967e+05 per rank: 1 micro-batches x 32 layers per stage x 2 iterations x 6198 "
                    "nodes per layer, of which 2 attention passes x 3 (cp 1024 - 1) around the ring), about 150.1 GiB (64 B a "
                    "node, 400 B a ring node); the limit is 8 GiB: fewer micro-batches or iterations, a smaller --cp"});
  // --cp 256 too (9 GB at 60 s before): its ring nodes take 400 B each.
  expect_bad_input({"run", "--model", "llama3-8b", "--platform", "hgx-h100", "--nodes", "256", "--tp", "8", "--cp", "256"},
                   {"x 1590 nodes per layer", "about 9.4 GiB", "the limit is 8 GiB"});
}

// Every rank of 65,536 passed the old estimate (3840 nodes a rank, under
// its 3e8 nodes) and grew past 10 GB.
TEST_F(PlanLimits, FullRunsOnManyGpusCountEveryRank) {
  expect_bad_input({"run", "--model", "llama3-8b", "--platform", "hgx-h100", "--nodes", "8192", "--full"},
                   {"about 2.52e+08 graph nodes (65536 ranks (--full) x 3840 per rank: 1 micro-batches x 32 layers per stage "
                    "x 2 iterations x 60 nodes per layer), about 15.0 GiB (64 B a node); the limit is 8 GiB",
                    "or without --full"});
}

// 1024 TiB in chunks of at most 1 MiB on a platform simulated in full for
// a reason of its own: the message named --full, which was not given.
TEST_F(PlanLimits, ChunkMemoryRefusalNamesWhyTheRunIsFull) {
  const test::CliRun r = run({"collective", "--platform", "hgx-h100", "--nodes", "4", "--bytes", "1024TiB"});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("simulating all 32 ranks of this collective (full: NCCL collectives across nodes) with 1073741824 "
                       "chunks needs about 256.0 GiB (32 ranks x 4 B x 1073741824 chunks x 2 dimensions); the limit is 8 GiB: "
                       "a smaller size, fewer --chunks or a larger collectives.max_chunk_bytes"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("--full"), std::string::npos) << r.err;
  expect_bad_input({"collective", "--platform", "hgx-h100", "--nodes", "4", "--bytes", "1024TiB", "--full"},
                   {"(--full)", "leave out --full, or use fewer chunks"});
}

// 100,000 chunks through ACE's SRAM (the default platform) took about 30
// minutes: each dispatch went over every chunk waiting to enter. Now each
// collective's entering chunks wait behind their first, and the run takes
// about a second; the result is the one the old path gave on fewer chunks.
TEST_F(PlanLimits, ManyChunksThroughAceSramRunInLinearTime) {
  const test::CliRun few = expect_ok({"collective", "--chunks", "3000", "--bytes", "1GiB", "--json"});
  EXPECT_DOUBLE_EQ(parse_json(few.out)["results"][0]["time_ns"].get<double>(), 13210592.812)
      << "3000 chunks: the old path's time";
  const test::CliRun many = expect_ok({"collective", "--chunks", "100000", "--bytes", "1GiB", "--json"});
  EXPECT_GT(parse_json(many.out)["results"][0]["time_ns"].get<double>(), 13210592.812);
}

// hgx-a100 ran fp8 (one byte per value), 8% faster than bf16: A100 has no
// FP8 tensor cores. The presets say which GPUs have them (npu.fp8).
TEST_F(PlanLimits, Fp8NeedsAGpuWithFp8) {
  for (const char* model : {"llama3-8b", "gpt"}) {
    SCOPED_TRACE(model);
    expect_bad_input({"run", "--model", model, "--platform", "hgx-a100", "--nodes", "1", "--precision", "fp8"},
                     {"--precision: fp8 needs FP8 tensor cores, which this platform's GPU lacks (npu.fp8 is false"});
  }
  expect_ok({"run", "--model", "gpt", "--platform", "hgx-h100", "--nodes", "1", "--precision", "fp8", "--json"});
  // A platform file's workload at fp8 on an NPU without it: its line.
  const std::string yaml = write("fp8.yaml",
                                 "topology:\n  - {kind: switch, npus: 8, bandwidth_GBps: 100, latency_ns: 500}\n"
                                 "workload:\n  model: gpt\n  precision: fp8\n");
  expect_bad_input({"run", "--platform", yaml}, {"fp8.yaml:5", "workload.precision", "needs FP8 tensor cores"});
  expect_bad_input({"run", "--platform", write("bad.yaml", "topology:\n  - {kind: switch, npus: 8, bandwidth_GBps: 100, "
                                                             "latency_ns: 500}\nnpu:\n  fp8: maybe\n")},
                   {"bad.yaml:4", "npu.fp8", "maybe"});
}

// MXFP8 needs Blackwell's block-scaled tensor cores (npu.mxfp8); the FP8
// recipes are a transformer's (a layer table says so); a cluster job's
// precision is checked against its GPU as a run's is.
TEST_F(PlanLimits, Fp8RecipesNeedTheirTensorCoresAndATransformer) {
  expect_bad_input({"run", "--model", "llama3-8b", "--platform", "hgx-h100", "--nodes", "1", "--precision", "mxfp8"},
                   {"--precision: mxfp8 needs block-scaled FP8 tensor cores", "npu.mxfp8 is false"});
  expect_bad_input({"run", "--model", "resnet50", "--platform", "hgx-b200", "--nodes", "1", "--precision", "fp8-cs"},
                   {"--precision: fp8-cs is an FP8 recipe of transformer models", "fp8, fp16, bf16, fp32"});
  expect_bad_input({"run", "--model", "llama3-8b", "--platform", "hgx-b200", "--nodes", "1", "--precision", "mxfp4"},
                   {"--precision: unknown precision 'mxfp4'", "mxfp8"});
  for (const char* precision : {"fp8", "fp8-cs", "mxfp8"}) {
    expect_ok({"run", "--model", "llama3-8b", "--platform", "hgx-b200", "--nodes", "1", "--precision", precision, "--json"});
  }
}

// NCCL sends all-to-all point to point, with simple or ll: the header said
// ll128 while the rows ran simple.
TEST_F(PlanLimits, Ll128DoesNotApplyToAllToAll) {
  expect_bad_input({"collective", "--platform", "hgx-h100", "--nodes", "4", "--op", "all-to-all", "--proto", "ll128", "--bytes", "1MiB"},
                   {"--proto ll128: NCCL runs all-to-all as point-to-point sends, which use simple or ll, never ll128"});
  const test::CliRun r = expect_ok({"collective", "--platform", "hgx-h100", "--nodes", "4", "--op", "all-to-all", "--proto", "ll",
                                    "--bytes", "1MiB"});
  EXPECT_NE(r.out.find("protocol ll,"), std::string::npos) << r.out;
  // A platform that forces ll128: its all-to-all header says what applies.
  const std::string yaml = write("ll128.yaml",
                                 "topology:\n  - {kind: switch, npus: 8, bandwidth_GBps: 100, latency_ns: 500}\n"
                                 "  - {kind: switch, npus: 2, bandwidth_GBps: 50, latency_ns: 2000}\n"
                                 "collectives:\n  library: nccl\n  nccl: {protocol: ll128}\n");
  const test::CliRun a = expect_ok({"collective", "--platform", yaml, "--op", "all-to-all", "--bytes", "1MiB"});
  EXPECT_NE(a.out.find("(NCCL model: algorithm auto, protocol auto, channels default)"), std::string::npos) << a.out;
  const test::CliRun b = expect_ok({"collective", "--platform", yaml, "--op", "all-reduce", "--bytes", "1MiB"});
  EXPECT_NE(b.out.find("protocol ll128,"), std::string::npos) << b.out;
}

// Two factors for one rank: the second silently replaced (or compounded)
// the first. Refused, naming both.
TEST_F(PlanLimits, AStragglerRankIsGivenOnce) {
  expect_bad_input({"collective", "--straggler", "3=1.5", "--straggler", "3=2"},
                   {"--straggler: rank 3 is given twice ('3=1.5' and '3=2'); give each rank once"});
  expect_bad_input({"run", "--straggler", "1=2", "--straggler", "0=2", "--straggler", "1=3"}, {"rank 1 is given twice"});
}

}  // namespace
}  // namespace acesim
