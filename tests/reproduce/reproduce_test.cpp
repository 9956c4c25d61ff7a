// acesim reproduce ace-isca21: the grid's structure and a small run end to end.
#include <gtest/gtest.h>

#include <fstream>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "config/input_error.h"
#include "reproduce/ace_isca21.h"
#include "test_data.h"

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
  expect_bad_input({"reproduce", "megatron", "--data", "/nonexistent"},
                   {"--data: '/nonexistent' is not a directory (the repository's tests/data)"});
}

// Issue 42 F14: every study's options. An option a study does not take
// (it would be ignored) is refused naming the studies that take it; a value
// out of range or malformed is refused before anything runs.
TEST_F(ReproduceCli, EveryStudyRefusesTheOptionsItDoesNotTake) {
  // What each study takes besides --out and --no-progress, in the order
  // messages name them.
  const std::vector<std::pair<std::string, std::set<std::string>>> takes{
      {"ace-isca21", {"jobs", "sizes", "workloads", "no-sensitivity", "no-plots", "progress"}},
      {"astra-sim-2.0", {"data"}},
      {"nccl-tests", {"data"}},
      {"megatron", {"data"}},
      {"megatron-h100", {"data"}},
      {"llm-runs", {"data", "runs", "calibration", "jobs"}},
      {"llm-offload", {"jobs", "workloads", "max-gpus", "no-plots", "progress"}},
      {"offload", {"no-plots"}},
      {"simai", {"data"}},
      {"kineto", {"data"}},
      {"placement", {}},
  };
  const std::vector<std::string> flags{"no-sensitivity", "no-plots", "progress"};
  for (const std::string option : {"data", "runs", "calibration", "jobs", "sizes", "workloads", "max-gpus", "no-sensitivity", "no-plots", "progress"}) {
    std::string by;
    for (const auto& [study, options] : takes) {
      if (options.count(option)) by += (by.empty() ? "" : ", ") + study;
    }
    for (const auto& [study, options] : takes) {
      if (options.count(option)) continue;
      std::vector<std::string> args{"reproduce", study, "--" + option};
      if (std::find(flags.begin(), flags.end(), option) == flags.end()) args.push_back(option == "max-gpus" ? "-1" : "0");
      expect_bad_input(args, {"acesim: error: --" + option + " applies to " + by + ", not to " + study});
    }
  }
  // The order of the studies in those messages is the table's.
  expect_bad_input({"reproduce", "offload", "--jobs", "0"}, {"acesim: error: --jobs applies to ace-isca21, llm-runs, llm-offload, not to offload"});
  expect_bad_input({"reproduce", "ace-isca21", "--max-gpus", "-1"},
                   {"acesim: error: --max-gpus applies to llm-offload, not to ace-isca21"});
  expect_bad_input({"reproduce", "offload", "--data", "/nonexistent"},
                   {"acesim: error: --data applies to astra-sim-2.0, nccl-tests, megatron, megatron-h100, llm-runs, simai, kineto, "
                    "not to offload"});
}

TEST_F(ReproduceCli, OutOfRangeAndMalformedValuesAreRefusedBeforeAnythingRuns) {
  const auto bad = [&](std::vector<std::string> args, const std::string& message) {
    args.insert(args.begin(), "reproduce");
    args.push_back("--out");
    args.push_back((dir_ / "never").string());
    expect_bad_input(args, {"acesim: error: " + message});
    EXPECT_FALSE(std::filesystem::exists(dir_ / "never"));
  };
  bad({"llm-offload", "--max-gpus", "0"}, "--max-gpus: must be at least 1, got 0");
  bad({"llm-offload", "--max-gpus", "-1"}, "--max-gpus: must be at least 1, got -1");
  bad({"llm-offload", "--max-gpus", "32"}, "--max-gpus: 32 leaves out every size (the smallest is 64 GPUs)");
  bad({"llm-offload", "--workloads", "llama3-8b-tp8", "--max-gpus", "63"},
      "--max-gpus: 63 leaves out every size of llama3-8b-tp8 (from 64 GPUs)");
  bad({"llm-offload", "--workloads", "llama3-8b-tp"}, "--workloads: unknown workload 'llama3-8b-tp' (did you mean 'llama3-8b-tp8'?)");
  bad({"llm-offload", "--workloads", "llama3-8b-tp8,llama3-8b-tp8"}, "--workloads: 'llama3-8b-tp8' is given twice");
  bad({"llm-offload", "--jobs", "0"}, "--jobs: must be in 1..1024, got 0");
  bad({"llm-offload", "--jobs", "1025"}, "--jobs: must be in 1..1024, got 1025");
  bad({"ace-isca21", "--jobs", "-3"}, "--jobs: must be in 1..1024, got -3");
  bad({"ace-isca21", "--sizes", "16,16"}, "--sizes: '16' is given twice");
  bad({"ace-isca21", "--sizes", "16,"}, "--sizes: '16,' is not a comma-separated list");
  bad({"ace-isca21", "--sizes", ",16"}, "--sizes: empty item in ',16'");
  bad({"ace-isca21", "--sizes", "1e2"}, "--sizes: '1e2' is not one of 16, 32, 64, 128");
  bad({"ace-isca21", "--sizes", ""}, "--sizes: '' is not a comma-separated list");
  bad({"ace-isca21", "--workloads", "dlrm,resnet50,dlrm"}, "--workloads: 'dlrm' is given twice");
  bad({"ace-isca21", "--workloads", "resnet"}, "--workloads: unknown workload 'resnet' (did you mean 'resnet50'?)");
  bad({"megatron", "--data", (dir_ / "none").string()}, "--data: '" + (dir_ / "none").string() + "' is not a directory (the repository's tests/data)");
  bad({"llm-runs", "--data", test::data_dir(), "--runs", "a,,b"}, "--runs: empty item in 'a,,b'");
  bad({"llm-runs", "--data", test::data_dir(), "--runs", "nosuch"}, "--runs: " + test::data_dir() + "/llm-runs/runs.csv: no row 'nosuch'");
  // A calibration is checked against every row's GPU before any runs.
  const std::string hopper = (dir_ / "hopper.yaml").string();
  std::ofstream(hopper) << "calibration: 1\nsource: test\nparameters:\n  - arch: hopper\n    tensor: 1.1\n";
  bad({"llm-runs", "--data", test::data_dir(), "--runs", "nemo-llama31-8b-fp8-8,zero3-gpt3-175b-384", "--calibration", hopper},
      "--calibration " + hopper + ": no entry for zero3-gpt3-175b-384's architecture 'ampere' (" + test::data_dir() +
          "/llm-runs/runs.csv:");
  // A hostile value is quoted by its first 80 bytes (issue 42 F13).
  bad({"ace-isca21", "--workloads", std::string(100000, 'x')}, "--workloads: unknown workload '" + std::string(80, 'x') + "...' (valid: ");
  bad({"reproduce-nothing"}, "unknown study 'reproduce-nothing'");
}

TEST_F(ReproduceCli, PublishedRunsPricedInSituSayByWhichCalibration) {
  const std::string cal = (dir_ / "cal.yaml").string();
  std::ofstream(cal) << "calibration: 1\nsource: test\nparameters:\n  - tensor: 1.1\n    step_fixed_ms: 20\n";
  const std::string out = (dir_ / "runs").string();
  const auto plain = expect_ok({"reproduce", "llm-runs", "--data", test::data_dir(), "--runs", "nemo-llama31-8b-fp8-8", "--out", out});
  const auto in_situ =
      expect_ok({"reproduce", "llm-runs", "--data", test::data_dir(), "--runs", "nemo-llama31-8b-fp8-8", "--out", out, "--calibration", cal});
  EXPECT_EQ(plain.out.find("In situ:"), std::string::npos);
  EXPECT_EQ(in_situ.out.rfind("In situ: every row priced with the calibration " + cal, 0), 0u) << in_situ.out;
  // Isolated 8.917 s (docs/validation.md section 7); in situ its kernels take longer and the step 20 ms more.
  EXPECT_NE(plain.out.find("| 9.670 | 8.917 | +8.4% |"), std::string::npos) << plain.out;
  EXPECT_EQ(in_situ.out.find("| 9.670 | 8.917 |"), std::string::npos) << in_situ.out;
}

TEST_F(ReproduceCli, AGridWithoutTheSensitivityStudiesSaysSo) {
  const auto r = expect_ok({"reproduce", "ace-isca21", "--out", (dir_ / "out").string(), "--sizes", "16", "--workloads", "dlrm",
                            "--jobs", "2", "--no-plots", "--no-progress"});
  EXPECT_EQ(r.out, "wrote " + (dir_ / "out").string() + "/results.csv and " + (dir_ / "out").string() +
                       "/report.md (no sensitivity studies: they vary resnet50 at 64 NPUs)\n");
  EXPECT_FALSE(std::filesystem::exists(dir_ / "out" / "sensitivity.csv"));
}

}  // namespace
}  // namespace acesim
