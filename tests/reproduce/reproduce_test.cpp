// acesim reproduce ace-isca21: the grid's structure and a small run end to end.
#include <gtest/gtest.h>

#include <set>

#include "cli_runner.h"
#include "config/input_error.h"
#include "reproduce/ace_isca21.h"

namespace acesim {
namespace {

TEST(Reproduce, PlatformsHaveThePapersSizes) {
  const std::map<int, std::vector<int>> shape = {{16, {4, 2, 2}}, {32, {4, 4, 2}}, {64, {4, 4, 4}}, {128, {4, 8, 4}}};
  for (const auto& [n, dims] : shape) {
    const PlatformConfig p = repro_platform(n);
    ASSERT_EQ(p.dims.size(), 3u);
    long long total = 1;
    for (std::size_t d = 0; d < 3; ++d) {
      EXPECT_EQ(p.dims[d].npus, dims[d]);
      total *= p.dims[d].npus;
    }
    EXPECT_EQ(total, n);
    EXPECT_EQ(p.npu.executor, "ace");
    EXPECT_EQ(p.collectives.max_chunk_bytes, 1u << 20);
  }
  EXPECT_THROW(repro_platform(20), InputError);
}

TEST(Reproduce, ConfigurationsSplitUnitsAndHbm) {
  const auto configs = repro_configs(default_npu());
  std::set<std::string> names;
  for (const ReproConfig& c : configs) names.insert(c.name);
  EXPECT_EQ(names.size(), configs.size());
  for (const char* n : {"ideal", "ace", "no-overlap", "baseline-u4-fair", "baseline-u8-hbm25", "baseline-u32-hbm50"}) {
    EXPECT_TRUE(names.count(n)) << n;
  }
  EXPECT_EQ(configs.size(), 15u);
  for (const ReproConfig& c : configs) {
    if (c.name == "no-overlap") {
      EXPECT_TRUE(c.blocking_gradients);
      EXPECT_EQ(c.units, 80);
    }
  }
}

TEST(Reproduce, WorkloadsComeFromTheTablesAndTheZoo) {
  const Topology topo(repro_platform(16).dims);
  const WorkloadTotals r = totals(repro_workload("resnet50", topo));
  EXPECT_EQ(r.forward_ps, 380038LL * 1000);  // ASTRA-sim's table, cycles of 1 ns
  EXPECT_EQ(repro_workload("dlrm", topo).layers.size(), 8u);
  EXPECT_GT(totals(repro_workload("gnmt", topo)).flops, 0.0);
  EXPECT_THROW(repro_workload("bert", topo), InputError);
}

class ReproduceCli : public test::CliTest {};

TEST_F(ReproduceCli, SmallGridEndToEnd) {
  const std::string out = (dir_ / "out").string();
  const auto r = run({"reproduce", "ace-isca21", "--out", out, "--sizes", "16", "--workloads", "dlrm", "--jobs", "2",
                      "--no-plots"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("reproduce: grid 15/15 runs done"), std::string::npos) << r.err;
  const std::string csv = test::slurp(dir_ / "out" / "results.csv");
  EXPECT_EQ(csv.rfind("workload,npus,config,iteration_time_ns,compute_time_ns,exposed_comm_ns,network_utilization,"
                      "hbm_bytes_per_network_byte,",
                      0),
            0u);
  int rows = 0;
  for (char c : csv) rows += c == '\n' ? 1 : 0;
  EXPECT_EQ(rows, 1 + 15);
  EXPECT_NE(csv.find("\ndlrm,16,ace,"), std::string::npos);
  EXPECT_NE(csv.find("\ndlrm,16,no-overlap,"), std::string::npos);
  const std::string report = test::slurp(dir_ / "out" / "report.md");
  EXPECT_NE(report.find("| iteration-time speedup vs best baseline, DLRM | 1.13x | 1.19x |"), std::string::npos);
  EXPECT_NE(report.find("| HBM bytes per network byte, sm baseline / ACE | 3.5x |"), std::string::npos);
  // Both utilizations; the paper's 1.44x sits beside the in-flight one.
  EXPECT_NE(report.find("| effective network-bandwidth utilization (while communication is in flight), ACE / best "
                        "baseline | 1.44x | 2.67x |"),
            std::string::npos);
  EXPECT_NE(report.find("| network-bandwidth utilization over the whole run, ACE / best baseline | | |"), std::string::npos);
  EXPECT_NE(csv.find(",overlap_ns,network_utilization_in_flight\n"), std::string::npos);
  // Same input, same output, whatever the number of jobs.
  const std::string out1 = (dir_ / "out1").string();
  ASSERT_EQ(run({"reproduce", "ace-isca21", "--out", out1, "--sizes", "16", "--workloads", "dlrm", "--jobs", "1",
                 "--no-plots"}).status, 0);
  EXPECT_EQ(test::slurp(dir_ / "out1" / "results.csv"), csv);
}

TEST_F(ReproduceCli, BadInput) {
  expect_bad_input({"reproduce", "ace-isca2"}, {"unknown study 'ace-isca2'", "did you mean 'ace-isca21'"});
  expect_bad_input({"reproduce", "ace-isca21", "--sizes", "16,20"}, {"--sizes", "'20'"});
  expect_bad_input({"reproduce", "ace-isca21", "--workloads", "resnet50,bert"}, {"--workloads", "'bert'"});
  expect_bad_input({"reproduce", "ace-isca21", "--jobs", "0"}, {"--jobs", "1..1024"});
  expect_bad_input({"reproduce", "megatron", "--data", "/nonexistent"}, {"/nonexistent/megatron/table1.csv", "cannot open"});
}

}  // namespace
}  // namespace acesim
