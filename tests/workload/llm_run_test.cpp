// LLM training runs (src/driver/llm_run.h) end to end on small platforms:
// symmetry is exact, runs are deterministic, the per-stage accounting adds
// up to the iteration, the pipeline bubble approaches 1F1B's closed form
// (p - 1) / (m + p - 1) when communication costs nothing, the interleaved
// schedule shrinks it; and through the CLI: plans over HBM refused unless
// --allow-oom, the JSON keys, stages.csv and the Perfetto trace.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "config/presets.h"
#include "driver/llm_run.h"
#include "support.h"
#include "workload/llm/llm_graph.h"
#include "workload/models/models.h"

namespace acesim {
namespace {

using test::dim;

TransformerShape small(int layers, int vocab = 32768) {
  TransformerShape m;
  m.name = "small";
  m.layers = layers;
  m.hidden = 1024;
  m.heads = 16;
  m.kv_heads = 16;
  m.ffn_hidden = 4096;
  m.seq = 1024;
  m.vocab = vocab;
  m.tied_embeddings = false;
  return m;
}

PlatformConfig hgx_h100(long long nodes) {
  PlatformConfig p = load_preset(*preset_registry().find("hgx-h100"));
  set_nodes(p, nodes, "--nodes");
  return p;
}

ParallelPlan plan(int tp, int pp, int dp, int global_batch) {
  ParallelPlan p;
  p.tp = tp;
  p.pp = pp;
  p.dp = dp;
  p.global_batch = global_batch;
  return p;
}

// Compute, bubble, exposed communication and the rest of the idle time
// tile each followed rank's measured iteration exactly.
void expect_stages_add_up(const LlmReport& r) {
  for (const LlmStageReport& s : r.stages) {
    TimePs sum = s.compute_ps + s.bubble_ps + s.other_idle_ps;
    for (TimePs e : s.exposed_ps) sum += e;
    EXPECT_EQ(sum, s.iteration_ps) << "stage " << s.stage;
    EXPECT_GT(s.compute_ps, 0) << "stage " << s.stage;
    // Every kernel of an LLM graph has a kind: the kinds add up to the
    // compute.
    ASSERT_EQ(s.compute_by_kind_ps.size(), static_cast<std::size_t>(kKernelKinds));
    TimePs kinds = 0;
    for (TimePs t : s.compute_by_kind_ps) kinds += t;
    EXPECT_EQ(kinds, s.compute_ps) << "stage " << s.stage;
    EXPECT_GT(s.compute_by_kind_ps[static_cast<std::size_t>(KernelKind::kGemm)], 0) << "stage " << s.stage;
  }
  ASSERT_EQ(r.compute_by_kind_ps.size(), static_cast<std::size_t>(kKernelKinds));
}

// A plan whose every group is whole topology dimensions runs one rank for
// all; simulating all of them gives the same iteration, to the picosecond.
void expect_symmetry_exact(const PlatformConfig& p, const ParallelPlan& pl) {
  const Topology topo(p.dims);
  const LlmJob job(small(4), pl, topo);
  const LlmReport sym = run_llm(p, job);
  LlmRunOptions o;
  o.full = true;
  const LlmReport full = run_llm(p, job, o);
  EXPECT_EQ(sym.simulation, "symmetric");
  EXPECT_EQ(sym.simulated_ranks, 1);
  EXPECT_EQ(full.simulated_ranks, topo.num_npus());
  ASSERT_GT(sym.iteration_ps, 0);
  EXPECT_EQ(sym.iteration_ps, full.iteration_ps);
  EXPECT_EQ(sym.iteration_end_ps, full.iteration_end_ps);
  for (int k = 0; k < kLlmCommKinds; ++k) EXPECT_EQ(sym.exposed_ps[k], full.exposed_ps[k]) << k;
  EXPECT_EQ(sym.compute_ps, full.compute_ps);
  EXPECT_EQ(sym.pipeline_bubble_ps, 0);
  expect_stages_add_up(sym);
  expect_stages_add_up(full);
  // TFLOP/s per GPU and MFU follow from the model FLOPs and the iteration.
  EXPECT_DOUBLE_EQ(sym.tflops_per_gpu, job.model_flops_per_gpu() / ps_to_seconds(sym.iteration_ps) / 1e12);
  EXPECT_DOUBLE_EQ(sym.mfu, sym.tflops_per_gpu * 1e12 / p.npu.peak_flops());
}

// MFU counts the model's FLOPs without recomputation (PaLM, arXiv
// 2204.02311 appendix B), HFU the ones run (Megatron-LM's eq. 3), both
// over the dense BF16 peak. With full recomputation every layer's forward
// runs twice: per sequence, with A = 24 s h^2 + 4 s^2 h a layer's forward
// and 2 s h V the logits, HFU / MFU = (4 l A + 6 s h V) / (3 l A + 6 s h V).
TEST(LlmRun, MfuLeavesRecomputationOutHfuCountsIt) {
  const PlatformConfig p = hgx_h100(1);
  const Topology topo(p.dims);
  ParallelPlan pl = plan(8, 1, 1, 2);
  pl.recompute = Recompute::kFull;
  const LlmJob job(small(4), pl, topo);
  const LlmReport r = run_llm(p, job);
  const double s = 1024, h = 1024, l = 4, V = 32768;
  const double A = 24 * s * h * h + 4 * s * s * h, logits = 2 * s * h * V;
  ASSERT_GT(r.iteration_ps, 0);
  EXPECT_LT(r.mfu, r.hfu);
  EXPECT_NEAR(r.hfu / r.mfu, (4 * l * A + 3 * logits) / (3 * l * A + 3 * logits), 1e-12);
  EXPECT_DOUBLE_EQ(r.hfu, r.tflops_per_gpu * 1e12 / p.npu.peak_flops());
  EXPECT_DOUBLE_EQ(r.mfu, job.model_flops_no_recompute_per_gpu() / ps_to_seconds(r.iteration_ps) / p.npu.peak_flops());
  EXPECT_DOUBLE_EQ(r.model_flops_no_recompute_per_gpu * 8 / 2, 3 * (l * A + logits));  // 2 sequences on 8 GPUs
  // Without recomputation the two are one.
  pl.recompute = Recompute::kNone;
  const LlmReport none = run_llm(p, LlmJob(small(4), pl, topo));
  EXPECT_DOUBLE_EQ(none.mfu, none.hfu);
}

TEST(LlmRun, SymmetricPlanEqualsTheFullSimulation) {
  // One HGX H100 node, tp 8 over its NVSwitch, NCCL's model.
  expect_symmetry_exact(hgx_h100(1), plan(8, 1, 1, 2));
  // tp 4 on a switch, dp 2 across a second one, ZeRO 1, the sm executor
  // (collectives share the SMs and HBM with the kernels).
  PlatformConfig grid = test::platform({dim(DimKind::kSwitch, 4, 370, 500), dim(DimKind::kSwitch, 2, 50, 2000)});
  grid.npu = hgx_h100(1).npu;
  ParallelPlan pl = plan(4, 1, 2, 4);
  pl.zero = 1;
  expect_symmetry_exact(grid, pl);
}

// One rank per pipeline stage (and its context-parallel ring), each group
// run whole: the same picoseconds as every rank, on HGX H100 nodes (NVSwitch
// and rails, NCCL's model) with the sm executor.
void expect_stages_exact(const PlatformConfig& p, const ParallelPlan& pl, long long simulated) {
  const Topology topo(p.dims);
  const LlmJob job(small(4), pl, topo);
  const LlmReport stages = run_llm(p, job);
  LlmRunOptions o;
  o.full = true;
  const LlmReport full = run_llm(p, job, o);
  EXPECT_EQ(stages.simulation, "one rank per pipeline stage, its groups whole");
  EXPECT_EQ(stages.simulated_ranks, simulated);
  EXPECT_EQ(full.simulation, "full (--full)");
  ASSERT_GT(stages.iteration_ps, 0);
  EXPECT_EQ(stages.iteration_end_ps, full.iteration_end_ps);
  EXPECT_EQ(stages.pipeline_bubble_ps, full.pipeline_bubble_ps);
  for (int k = 0; k < kLlmCommKinds; ++k) EXPECT_EQ(stages.exposed_ps[k], full.exposed_ps[k]) << k;
  EXPECT_EQ(stages.compute_ps, full.compute_ps);
  expect_stages_add_up(stages);
}

TEST(LlmRun, OneRankPerStageEqualsTheFullSimulation) {
  // tp 4 (two groups a node), pp 2, dp 2 over the rails, ZeRO 1 with both
  // overlaps: 16 GPUs, 2 simulated.
  ParallelPlan a = plan(4, 2, 2, 8);
  a.sequence_parallel = true;
  a.zero = 1;
  a.overlap_grad_reduce = true;
  a.overlap_param_gather = true;
  expect_stages_exact(hgx_h100(2), a, 2);
  // Context parallelism: each stage's cp ring is simulated (2 x 2 ranks).
  ParallelPlan c = plan(2, 2, 2, 8);
  c.cp = 2;
  c.sequence_parallel = true;
  expect_stages_exact(hgx_h100(2), c, 4);
  // One stage across nodes (NCCL's rings and trees over the rails): rank 0
  // and its groups whole.
  expect_stages_exact(hgx_h100(2), plan(8, 1, 2, 4), 1);
}

// --tp-comm-overlap: one rank per stage stands for its tensor-parallel
// group (its ring exchange's puts mirror the ones it receives), the same
// picoseconds as every rank; the overlap hides most of the
// tensor-parallel time the plain plan exposes and shortens the step.
TEST(LlmRun, TpCommOverlapRunsTheTensorGroupWholeAndHidesItsCollectives) {
  ParallelPlan o = plan(4, 2, 2, 8);
  o.sequence_parallel = true;
  o.tp_comm_overlap = true;
  expect_stages_exact(hgx_h100(2), o, 2);
  ParallelPlan one = plan(8, 1, 2, 4);
  one.sequence_parallel = true;
  one.tp_comm_overlap = true;
  expect_stages_exact(hgx_h100(2), one, 1);
  // At a 70B model's widths (hidden 8192, MLP 28672, 8k tokens), where
  // each shard is worth overlapping.
  const PlatformConfig p = hgx_h100(1);
  const Topology topo(p.dims);
  TransformerShape wide = small(2);
  wide.hidden = 8192;
  wide.heads = 64;
  wide.kv_heads = 8;
  wide.ffn_hidden = 28672;
  wide.seq = 8192;
  one.dp = 1;
  one.global_batch = 1;
  ParallelPlan plain = one;
  plain.tp_comm_overlap = false;
  const LlmReport with = run_llm(p, LlmJob(wide, one, topo));
  const LlmReport without = run_llm(p, LlmJob(wide, plain, topo));
  const auto tp = static_cast<std::size_t>(LlmComm::kTp);
  EXPECT_LT(with.exposed_ps[tp], without.exposed_ps[tp] / 2);
  EXPECT_LT(with.iteration_ps, without.iteration_ps);
  EXPECT_GT(with.compute_ps, without.compute_ps);  // chunked GEMMs, beside the reduce-scatters' SMs
}

// A pipeline of 4 stages, 2 layers each, on a switch so fast that messages
// take no time; the ideal executor (communication costs the compute
// nothing). A vocabulary of 128 keeps the LM head's stage as fast as the
// others (with 1024 the head's 8% more per micro-batch holds the stages
// before it up, m times an iteration).
PlatformConfig free_network(int npus) {
  PlatformConfig p = test::platform({dim(DimKind::kSwitch, npus, 1e6, 1)});
  p.npu = hgx_h100(1).npu;
  p.npu.executor = "ideal";
  return p;
}

LlmReport pipeline_run(PipeSchedule s, int v, int m) {
  const PlatformConfig p = free_network(4);
  const Topology topo(p.dims);
  ParallelPlan pl = plan(1, 4, 1, 16 * m);
  pl.micro_batch = 16;  // micro-batches long beside the optimizer step (1%)
  pl.schedule = s;
  pl.virtual_stages = v;
  return run_llm(p, LlmJob(small(8, 128), pl, topo));
}

double bubble_fraction(const LlmReport& r) {
  return static_cast<double>(r.pipeline_bubble_ps) / static_cast<double>(r.iteration_ps);
}

// 1F1B's bubble is (p - 1)(tf + tb) of an iteration of (m + p - 1)(tf + tb)
// (arXiv 2104.04473 §2.2.1), less the optimizer step's share; the
// interleaved schedule divides it by v (§2.2.2); GPipe takes as long as
// 1F1B.
TEST(LlmRun, PipelineBubbleIsTheClosedForm) {
  for (int m : {4, 8}) {
    SCOPED_TRACE("m " + std::to_string(m));
    const LlmReport one = pipeline_run(PipeSchedule::k1F1B, 1, m);
    expect_stages_add_up(one);
    ASSERT_EQ(one.stages.size(), 4u);
    const double expected = 3.0 / (m + 3.0);
    EXPECT_NEAR(bubble_fraction(one), expected, 0.05 * expected);  // measured: +0.6% (m 4), +3.7% (m 8)
    EXPECT_EQ(one.exposed_ps[static_cast<int>(LlmComm::kTp)], 0);
    // Waiting for a message that was already sent: none worth a microsecond.
    EXPECT_LT(one.exposed_ps[static_cast<int>(LlmComm::kPp)], 1000000);
    // Every stage waits (p - 1)(tf + tb), at the start, the end or both.
    for (const LlmStageReport& s : one.stages) {
      EXPECT_NEAR(static_cast<double>(s.bubble_ps) / static_cast<double>(one.pipeline_bubble_ps), 1.0, 0.1)
          << "stage " << s.stage;
    }
    const LlmReport inter = pipeline_run(PipeSchedule::kInterleaved, 2, m);
    expect_stages_add_up(inter);
    EXPECT_LT(inter.pipeline_bubble_ps, one.pipeline_bubble_ps);
    EXPECT_LT(inter.iteration_ps, one.iteration_ps);
    EXPECT_NEAR(static_cast<double>(inter.pipeline_bubble_ps) / static_cast<double>(one.pipeline_bubble_ps), 0.5, 0.1);
    const LlmReport gpipe = pipeline_run(PipeSchedule::kGpipe, 1, m);
    EXPECT_NEAR(static_cast<double>(gpipe.iteration_ps) / static_cast<double>(one.iteration_ps), 1.0, 0.005);
  }
}

// ---------------------------------------------------------------- CLI

class LlmRunCli : public test::CliTest {
 protected:
  std::string model_file() {
    return write("small.yaml",
                 "name: small\nlayers: 4\nhidden: 1024\nheads: 16\nkv_heads: 16\nffn_hidden: 4096\n"
                 "seq: 1024\nvocab: 32768\nactivation: gelu\ntied_embeddings: false\n");
  }
  std::vector<std::string> pipeline_args() {
    return {"run", "--platform", "hgx-h100", "--nodes", "1", "--model", model_file(), "--tp", "4", "--pp", "2",
            "--dp", "1", "--global-batch", "4", "--sequence-parallel"};
  }
};

TEST_F(LlmRunCli, RunsAreDeterministic) {
  std::vector<std::string> args = pipeline_args();
  args.push_back("--json");
  const test::CliRun a = expect_ok(args);
  const test::CliRun b = expect_ok(args);
  EXPECT_FALSE(a.out.empty());
  EXPECT_EQ(a.out, b.out);
}

// 2 layers of hidden 16384 (12 h^2 = 3.2 G parameters each) on one GPU
// each: 18 bytes a parameter is over 80 GB.
TEST_F(LlmRunCli, PlansOverHbmAreRefusedUnlessAllowed) {
  const std::string big = write("big.yaml",
                                "name: big\nlayers: 2\nhidden: 16384\nheads: 128\nffn_hidden: 65536\nseq: 1024\n"
                                "vocab: 32768\ntied_embeddings: false\n");
  const std::vector<std::string> args = {"run", "--platform", "hgx-h100", "--nodes", "1", "--model", big,
                                         "--tp", "1", "--dp", "8"};
  expect_bad_input(args, {"does not fit", "--allow-oom"});
  std::vector<std::string> allowed = args;
  allowed.push_back("--allow-oom");
  allowed.push_back("--json");
  const nlohmann::json j = parse_json(expect_ok(allowed).out);
  EXPECT_FALSE(j["memory"]["fits"].get<bool>());
  EXPECT_GT(j["memory_per_gpu_bytes"].get<double>(), 80e9);
  EXPECT_DOUBLE_EQ(j["memory"]["hbm_capacity_bytes"].get<double>(), 80e9);
  // Weights alone: 2 x 12 h^2 + 2 V h parameters at 2 bytes.
  const double params = 2 * 12.0 * 16384 * 16384 + 2.0 * 32768 * 16384;
  EXPECT_DOUBLE_EQ(j["memory"]["weights_bytes"].get<double>(), 2 * params);
  EXPECT_GT(j["iteration_time_ns"].get<double>(), 0.0);
}

// An attention kernel the GPU's compute model has no figures for is a
// usage error naming the flag: FlashAttention-2 on Blackwell, cuDNN's on
// Ampere.
TEST_F(LlmRunCli, AttentionKernelsWithoutFiguresAreRefused) {
  expect_bad_input({"run", "--platform", "hgx-a100", "--nodes", "1", "--model", "llama3-8b", "--tp", "8", "--global-batch", "8",
                    "--attention", "cudnn"},
                   {"--attention cudnn", "no cuDNN attention figures for ampere"});
  expect_bad_input({"run", "--platform", "hgx-b200", "--nodes", "1", "--model", "llama3-8b", "--tp", "8", "--global-batch", "8",
                    "--attention", "fa2"},
                   {"--attention fa2", "no FlashAttention-2 figures for blackwell"});
  expect_ok({"run", "--platform", "hgx-h100", "--nodes", "1", "--model", "llama3-8b", "--tp", "8", "--global-batch", "8",
             "--attention", "cudnn", "--iterations", "1"});
}

TEST_F(LlmRunCli, JsonHasEveryKey) {
  std::vector<std::string> args = pipeline_args();
  args.push_back("--json");
  const nlohmann::json j = parse_json(expect_ok(args).out);
  for (const char* k : {"model", "plan", "npus", "simulated_ranks", "iteration_time_ns", "tflops_per_gpu", "mfu", "hfu",
                        "model_flops_per_gpu", "model_flops_no_recompute_per_gpu", "compute_ns", "pipeline_bubble_ns", "exposed_comm_ns",
                        "memory_per_gpu_bytes", "memory", "stages", "micro_batches", "iteration_end_ns"}) {
    EXPECT_TRUE(j.contains(k)) << k;
  }
  for (const char* k : {"tp", "pp", "dp", "ep", "cp"}) EXPECT_TRUE(j["exposed_comm_ns"].contains(k)) << k;
  // Compute by kernel kind: every kind named, adding up to the compute.
  ASSERT_TRUE(j["compute_by_kernel_ns"].is_object());
  EXPECT_EQ(j["compute_by_kernel_ns"].size(), static_cast<std::size_t>(kKernelKinds));
  double kinds = 0.0;
  for (const auto& [kind, ns] : j["compute_by_kernel_ns"].items()) kinds += ns.get<double>();
  EXPECT_NEAR(kinds, j["compute_ns"].get<double>(), 1e-3 * kKernelKinds);
  EXPECT_GT(j["compute_by_kernel_ns"]["gemm"].get<double>(), j["compute_by_kernel_ns"]["norm"].get<double>());
  EXPECT_TRUE(j["stages"][0]["compute_by_kernel_ns"].is_object());
  for (const char* k : {"weights_bytes", "gradients_bytes", "optimizer_bytes", "activations_bytes",
                        "micro_batches_in_flight", "hbm_capacity_bytes", "fits"}) {
    EXPECT_TRUE(j["memory"].contains(k)) << k;
  }
  const nlohmann::json& m = j["memory"];
  EXPECT_DOUBLE_EQ(j["memory_per_gpu_bytes"].get<double>(),
                   m["weights_bytes"].get<double>() + m["gradients_bytes"].get<double>() +
                       m["optimizer_bytes"].get<double>() + m["activations_bytes"].get<double>());
  EXPECT_TRUE(m["fits"].get<bool>());
  EXPECT_EQ(j["npus"].get<long long>(), 8);
  EXPECT_EQ(j["simulated_ranks"].get<long long>(), 2);  // one per pipeline stage
  EXPECT_EQ(j["micro_batches"].get<int>(), 4);
  ASSERT_EQ(j["stages"].size(), 2u);
  EXPECT_EQ(j["stages"][1]["rank"].get<long long>(), 4);  // the first rank of stage 1: tp 4 ranks further
  EXPECT_GT(j["pipeline_bubble_ns"].get<double>(), 0.0);
  const double it = j["iteration_time_ns"].get<double>();
  EXPECT_NEAR(j["tflops_per_gpu"].get<double>(), j["model_flops_per_gpu"].get<double>() / (it * 1e-9) / 1e12, 1e-9);
  EXPECT_NEAR(j["mfu"].get<double>(), j["tflops_per_gpu"].get<double>() / (132 * 7.5), 1e-12);
  EXPECT_NEAR(j["hfu"].get<double>(), j["mfu"].get<double>(), 1e-12);  // nothing recomputed
  EXPECT_EQ(j["plan"].get<std::string>().find("tp 4, pp 2, dp 1"), 0u) << j["plan"];
}

TEST_F(LlmRunCli, CsvHasOneRowPerStageAndTheTraceOneProcessPerStage) {
  std::vector<std::string> args = pipeline_args();
  const std::string csv = (dir_ / "csv").string();
  const std::string trace = (dir_ / "trace.json").string();
  args.insert(args.end(), {"--csv", csv, "--trace", trace});
  expect_ok(args);
  std::istringstream rows(test::slurp(std::filesystem::path(csv) / "stages.csv"));
  std::vector<std::string> lines;
  for (std::string l; std::getline(rows, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 3u);  // header and 2 stages
  EXPECT_EQ(lines[0].rfind("stage,rank,iteration_time_ns,compute_ns,pipeline_bubble_ns,exposed_tp_ns", 0), 0u) << lines[0];
  EXPECT_EQ(lines[1].rfind("0,0,", 0), 0u) << lines[1];
  EXPECT_EQ(lines[2].rfind("1,4,", 0), 0u) << lines[2];
  // kernels.csv: every kind for every stage.
  std::istringstream kinds(test::slurp(std::filesystem::path(csv) / "kernels.csv"));
  std::vector<std::string> kl;
  for (std::string l; std::getline(kinds, l);) kl.push_back(l);
  ASSERT_EQ(kl.size(), 1u + 2u * kKernelKinds);
  EXPECT_EQ(kl[0], "stage,rank,kind,compute_ns");
  EXPECT_EQ(kl[1].rfind("0,0,gemm,", 0), 0u) << kl[1];
  EXPECT_EQ(kl[1 + kKernelKinds].rfind("1,4,gemm,", 0), 0u) << kl[1 + kKernelKinds];
  const nlohmann::json t = parse_json(test::slurp(trace));
  std::set<int> processes, with_compute;
  for (const nlohmann::json& e : t["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") processes.insert(e["pid"].get<int>());
    if (e["ph"] == "X") with_compute.insert(e["pid"].get<int>());
  }
  EXPECT_EQ(processes, (std::set<int>{0, 1}));
  EXPECT_EQ(with_compute, (std::set<int>{0, 1}));
}

}  // namespace
}  // namespace acesim
