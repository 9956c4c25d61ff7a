// LLM jobs exported as Chakra traces (src/workload/llm/llm_chakra.h) run
// through the Chakra path as they run built in: the same end of the run and
// the same iteration ends, exactly when the kernels' HBM bytes are whole
// (tensor_size is whole bytes), within a picosecond per kernel otherwise.
// Also: the trace writer reads back, the group file, the binding of whole
// groups that pipeline stages use differently, and the CLI.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chakra/chakra_trace.h"
#include "chakra/trace_writer.h"
#include "cli_runner.h"
#include "config/input_error.h"
#include "config/presets.h"
#include "driver/chakra_run.h"
#include "driver/llm_run.h"
#include "workload/formats/chakra_workload.h"
#include "workload/llm/llm_chakra.h"
#include "workload/llm/llm_graph.h"

namespace acesim {
namespace {

TransformerShape small() {
  TransformerShape m;
  m.name = "small";
  m.layers = 8;
  m.hidden = 1024;
  m.heads = 16;
  m.kv_heads = 16;
  m.ffn_hidden = 4096;
  m.seq = 1024;
  m.vocab = 32768;
  m.tied_embeddings = false;
  return m;
}

PlatformConfig hgx_h100(long long nodes) {
  PlatformConfig p = load_preset(*preset_registry().find("hgx-h100"));
  set_nodes(p, nodes, "--nodes");
  return p;
}

struct Case {
  const char* name;
  int tp, pp, dp, zero, global_batch;
  bool sequence_parallel;
  bool blocking_fetch = false;  // ZeRO 3 as DeepSpeed ran it in 2021: host launches on the CPU
  bool tp_comm_overlap = false;  // ring-exchange puts, written with the receives the format pairs them with
};

ParallelPlan plan_of(const Case& c) {
  ParallelPlan p;
  p.tp = c.tp;
  p.pp = c.pp;
  p.dp = c.dp;
  p.zero = c.zero;
  p.global_batch = c.global_batch;
  p.sequence_parallel = c.sequence_parallel;
  if (c.blocking_fetch) p.zero3_fetch = Zero3Fetch::kBlocking;
  p.tp_comm_overlap = c.tp_comm_overlap;
  return p;
}

class LlmChakra : public test::ScratchDirTest, public ::testing::WithParamInterface<Case> {
 protected:
  struct Both {
    LlmReport llm;
    ChakraReport chakra;
    std::size_t kernels = 0;  // rank 0's
  };
  // The job run built in (every rank) and as its exported traces.
  Both run_both(const LlmOptions& options) {
    const PlatformConfig p = hgx_h100(2);
    const Topology topo(p.dims);
    const LlmJob job(small(), plan_of(GetParam()), topo, options);
    Both b;
    LlmRunOptions lo;
    lo.full = true;
    b.llm = run_llm(p, job, lo);
    const std::string prefix = (dir_ / "job").string();
    const ChakraExportSummary s = export_llm_chakra(job, topo, p.npu, prefix);
    EXPECT_EQ(s.ranks, 16);
    const std::vector<chakra::Trace> traces = chakra::read_traces(prefix, 16);
    for (const chakra::Node& n : traces[0].nodes) b.kernels += n.type == chakra::NodeType::kComp ? 1 : 0;
    const ChakraGroups groups = read_chakra_groups(prefix + ".groups.json", topo);
    ChakraRunOptions co;
    co.roofline = true;
    co.groups = &groups;
    b.chakra = run_chakra(p, traces, prefix, co);
    return b;
  }
};

TEST_P(LlmChakra, SameIterationsAsBuiltIn) {
  // HBM efficiency 1: every kernel's bytes are whole, so the traces carry
  // the kernels exactly and the runs agree to the picosecond.
  LlmOptions exact;
  exact.efficiency.hbm = 1.0;
  const Both e = run_both(exact);
  EXPECT_EQ(e.chakra.total_ps, e.llm.total_ps);
  EXPECT_EQ(e.chakra.iteration_end_ps, e.llm.iteration_end_ps);
  EXPECT_EQ(e.chakra.iteration_ps, e.llm.iteration_ps);
  EXPECT_EQ(e.chakra.messages, e.llm.messages);
  EXPECT_GT(e.llm.total_ps, 0);

  // The default efficiencies: tensor_size = hbm_bytes / 0.85 rounded to a
  // whole byte moves a memory-bound kernel by under a picosecond.
  const Both d = run_both(LlmOptions{});
  const auto slack = static_cast<TimePs>(d.kernels);
  EXPECT_NEAR(static_cast<double>(d.chakra.total_ps), static_cast<double>(d.llm.total_ps), static_cast<double>(slack));
  ASSERT_EQ(d.chakra.iteration_end_ps.size(), d.llm.iteration_end_ps.size());
  for (std::size_t k = 0; k < d.llm.iteration_end_ps.size(); ++k) {
    EXPECT_NEAR(static_cast<double>(d.chakra.iteration_end_ps[k]), static_cast<double>(d.llm.iteration_end_ps[k]),
                static_cast<double>(slack));
  }
}

INSTANTIATE_TEST_SUITE_P(Plans, LlmChakra,
                         ::testing::Values(Case{"tp4_pp2_dp2_sp_zero1", 4, 2, 2, 1, 8, true},
                                           Case{"tp8_pp2_sp", 8, 2, 1, 0, 4, true},
                                           Case{"tp8_dp2_zero1", 8, 1, 2, 1, 4, false},
                                           Case{"tp4_dp4", 4, 1, 4, 0, 4, false},
                                           Case{"tp2_dp8_zero3_blocking", 2, 1, 8, 3, 8, false, true},
                                           Case{"tp4_pp2_dp2_sp_tp_overlap", 4, 2, 2, 1, 8, true, false, true}),
                         [](const ::testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

// Pipeline stages issue different tensor-parallel collectives over the
// same dimension (the first stage's embedding, the last's head): the
// groups, whole nodes here, must run as listed ranks, or the executor would
// pair stage 0's k-th collective with stage 1's.
TEST(LlmChakraGroups, WholeGroupsOfStagesRunListed) {
  const PlatformConfig p = hgx_h100(2);
  const Topology topo(p.dims);
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "acesim_llm_chakra_groups";
  std::filesystem::create_directories(dir);
  const auto export_plan = [&](const Case& c) {
    const LlmJob job(small(), plan_of(c), topo);
    const std::string prefix = (dir / c.name).string();
    export_llm_chakra(job, topo, p.npu, prefix);
    return std::make_pair(chakra::read_traces(prefix, 16), read_chakra_groups(prefix + ".groups.json", topo));
  };
  auto [staged, sg] = export_plan({"staged", 8, 2, 1, 0, 4, true});
  ASSERT_EQ(sg.size(), 2u);  // one tensor-parallel group per node
  EXPECT_EQ(sg.at("tp_0").ranks, (std::vector<Rank>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_TRUE(sg.at("tp_0").whole);
  ChakraRunOptions o;
  o.roofline = true;
  o.groups = &sg;
  // Bound over dimension 0 as they are whole, the stages' k-th collectives
  // would be one collective, though stage 0's first is the embedding's
  // reduce-scatter and stage 1's the first layer's all-gather.
  ChakraGroups as_dims = sg;
  ChakraBinding b;
  b.roofline = true;
  b.groups = &as_dims;
  const auto first_collective = [&](const ChakraGroups& g) {
    b.groups = &g;
    const WorkGraph w = chakra_graph(staged[0], topo, b);
    for (std::uint32_t i = 0; i < w.size(); ++i) {
      if (w.node(i).kind == WorkNodeKind::kCollective) return w.collective(w.node(i).payload);
    }
    return CollectiveSpec{};
  };
  EXPECT_EQ(first_collective(as_dims).dims, (std::vector<int>{0}));
  EXPECT_TRUE(list_divergent_groups(staged, as_dims));
  EXPECT_TRUE(as_dims.at("tp_0").listed && as_dims.at("tp_1").listed);
  const CollectiveSpec listed = first_collective(as_dims);
  EXPECT_TRUE(listed.dims.empty());
  EXPECT_EQ(listed.members, sg.at("tp_0").ranks);
  EXPECT_EQ(listed.op, CollectiveOp::kReduceScatter);
  EXPECT_NE(chakra_asymmetry(staged, &as_dims), "");
  EXPECT_GT(run_chakra(p, staged, "staged", o).total_ps, 0);

  // One stage: every rank issues the same collectives; groups stay whole
  // dimensions (and the run symmetric where the platform allows).
  auto [flat, fg] = export_plan({"flat", 8, 1, 2, 1, 4, false});
  EXPECT_FALSE(list_divergent_groups(flat, fg));
  EXPECT_FALSE(fg.at("tp_0").listed);
  std::filesystem::remove_all(dir);
}

TEST(ChakraTraceWriter, ReadsBackWhatItWrites) {
  chakra::Trace t;
  t.file = "w.0.et";
  chakra::Node a;
  a.id = 7;
  a.name = "gemm";
  a.type = chakra::NodeType::kComp;
  a.duration_micros = 12;
  a.num_ops = 1.5e12;
  a.tensor_size = 3'000'000'001ULL;
  chakra::Node c;
  c.id = 3;
  c.name = "ag";
  c.type = chakra::NodeType::kCommColl;
  c.data_deps = {7};
  c.comm_type = chakra::CommType::kAllGather;
  c.comm_size = 1ULL << 40;
  c.pg_name = "tp_0";
  c.involved_dim = {true, false};
  chakra::Node s;
  s.id = 9;
  s.name = "send";
  s.type = chakra::NodeType::kCommSend;
  s.ctrl_deps = {3};
  s.comm_src = 0;
  s.comm_dst = 5;
  s.comm_tag = (std::int64_t{1} << 40) + 3;  // beyond 32 bits, as context-parallel tags are
  s.comm_size = 4096;
  chakra::Node m;
  m.id = 10;
  m.name = "ProfilerStep#1";
  m.type = chakra::NodeType::kMetadata;
  t.nodes = {a, c, s, m};
  const chakra::Trace back = chakra::parse_trace(chakra::trace_bytes(t), "w.0.et");
  EXPECT_EQ(back.version, "0.0.4");
  ASSERT_EQ(back.nodes.size(), 4u);
  EXPECT_EQ(back.nodes[0].num_ops, 1.5e12);
  EXPECT_EQ(back.nodes[0].tensor_size, 3'000'000'001ULL);
  EXPECT_EQ(back.nodes[0].duration_micros, 12u);
  EXPECT_FALSE(back.nodes[0].is_cpu_op);
  EXPECT_EQ(back.nodes[1].comm_type, chakra::CommType::kAllGather);
  EXPECT_EQ(back.nodes[1].comm_size, 1ULL << 40);
  EXPECT_EQ(back.nodes[1].pg_name, "tp_0");
  EXPECT_EQ(back.nodes[1].involved_dim, (std::vector<bool>{true, false}));
  EXPECT_EQ(back.nodes[1].data_deps, (std::vector<std::uint64_t>{7}));
  EXPECT_EQ(back.nodes[2].comm_tag, s.comm_tag);
  EXPECT_EQ(back.nodes[2].comm_dst, 5);
  EXPECT_EQ(back.nodes[2].ctrl_deps, (std::vector<std::uint64_t>{3}));
  EXPECT_EQ(back.nodes[3].type, chakra::NodeType::kMetadata);
  EXPECT_EQ(back.nodes[3].name, "ProfilerStep#1");
}

// A memory-bound kernel (num_ops 0, tensor_size given) runs through the
// roofline under --chakra-flops: its bytes over the HBM bandwidth.
TEST(ChakraRoofline, MemoryBoundKernel) {
  const PlatformConfig p = hgx_h100(1);
  chakra::Trace t;
  chakra::Node k;
  k.id = 0;
  k.name = "norm";
  k.type = chakra::NodeType::kComp;
  k.duration_micros = 999;
  k.num_ops = 0.0;
  k.tensor_size = 3'350'000'000ULL;  // a millisecond at 3350 GB/s
  t.nodes = {k};
  const std::vector<chakra::Trace> traces(8, t);
  ChakraRunOptions o;
  o.roofline = true;
  ASSERT_DOUBLE_EQ(p.npu.hbm_GBps, 3350.0);
  EXPECT_EQ(run_chakra(p, traces, "norm", o).total_ps, 1'000'000'000);
  o.roofline = false;
  EXPECT_EQ(run_chakra(p, traces, "norm", o).total_ps, 999'000'000);  // its recorded time
}

class LlmChakraCli : public test::CliTest {};

TEST_F(LlmChakraCli, ExportsAndRunsTheSameJob) {
  const std::string prefix = (dir_ / "l").string();
  const std::vector<std::string> plat = {"--platform", "hgx-h100", "--nodes", "2"};
  std::vector<std::string> a = {"run", "--model", "llama3-8b", "--tp", "4", "--pp", "2", "--sequence-parallel",
                                "--zero", "1", "--full", "--json", "--chakra-out", prefix};
  a.insert(a.begin() + 1, plat.begin(), plat.end());
  const nlohmann::json llm = parse_json(expect_ok(a).out);
  for (int r = 0; r < 16; ++r) EXPECT_TRUE(std::filesystem::exists(prefix + "." + std::to_string(r) + ".et")) << r;
  const nlohmann::json groups = nlohmann::json::parse(test::slurp(prefix + ".groups.json"));
  EXPECT_EQ(groups.at("tp_0"), nlohmann::json::parse("[0,1,2,3]"));
  EXPECT_EQ(groups.at("dp_0"), nlohmann::json::parse("[0,4]"));
  std::vector<std::string> c = {"run", "--chakra", prefix, "--chakra-groups", prefix + ".groups.json", "--chakra-flops",
                                "--json"};
  c.insert(c.begin() + 1, plat.begin(), plat.end());
  const nlohmann::json ch = parse_json(expect_ok(c).out);
  EXPECT_NEAR(ch.at("total_time_ns").get<double>(), llm.at("total_time_ns").get<double>(), 1e-3);
  EXPECT_EQ(ch.at("iterations"), 2);
}

TEST_F(LlmChakraCli, RefusesMoreThan4096Ranks) {
  expect_bad_input({"run", "--platform", "hgx-h100", "--nodes", "1024", "--model", "llama3-8b", "--chakra-out",
                    (dir_ / "x").string()},
                   {"--chakra-out", "8192 ranks", "4096"});
  EXPECT_FALSE(std::filesystem::exists(dir_ / "x.0.et"));
}

}  // namespace
}  // namespace acesim
