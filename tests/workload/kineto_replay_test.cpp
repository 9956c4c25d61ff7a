// Replaying PyTorch profiler traces (workload/formats/kineto_replay.h,
// driver/kineto_run.h): with every duration as measured a replay gives
// back the trace's own steps and GPU timeline; with communication
// simulated, a GPU-bound step changes by exactly the collective's time.
#include "workload/formats/kineto_replay.h"

#include <cmath>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "api/api.h"
#include "cli_runner.h"
#include "config/input_error.h"
#include "driver/kineto_run.h"
#include "test_paths.h"

namespace acesim {
namespace {

PlatformConfig platform(const std::string& name, long long nodes) {
  api::PlatformRequest r;
  r.file = name;
  r.nodes = nodes;
  return api::load_platform(r);
}

kineto::Trace hta(const std::string& name) { return kineto::read_trace_file(test::data_dir() + "/kineto/" + name); }

KinetoReport replay(const kineto::Trace& t, const PlatformConfig& p, bool simulate) {
  KinetoRunOptions o;
  o.simulate_comm = simulate;
  return run_kineto(p, t, o);
}

// HTA's traces with every duration as measured: each step as traced (to
// 0.01%), and every GPU activity starting where it did (within 1 us) but a
// handful of 3,774 (within 2 us).
TEST(KinetoReplay, MeasuredDurationsGiveBackTheTrace) {
  struct Case {
    const char* file;
    long long nodes;
    std::size_t steps;
    long long late;  // activities more than 1 us off
  };
  for (const Case& c : {Case{"a100x2_nccl2.17_allreduce.rank0.json.gz", 1, 3, 3}, Case{"ws128_sampled.rank0.json.gz", 16, 2, 0},
                        Case{"ws128_sampled.rank1.json.gz", 16, 2, 0}, Case{"alexnet_1gpu.json.gz", 1, 1, 0}}) {
    SCOPED_TRACE(c.file);
    const kineto::Trace t = hta(c.file);
    const KinetoReport r = replay(t, platform("hgx-a100", c.nodes), false);
    ASSERT_EQ(r.steps.size(), c.steps);
    for (const KinetoStepRecord& s : r.steps) EXPECT_LT(std::abs(s.error()), 1e-4) << s.number;
    EXPECT_EQ(r.activities, static_cast<long long>(t.gpu.size()));
    EXPECT_EQ(r.activities - r.activities_on_time, c.late);
    EXPECT_LE(r.largest_start_gap_ps, 2'000'000);
  }
  // The a100 trace's steps as traced: ProfilerStep#4 .. #6, 219.8-224.9 ms.
  const KinetoReport r = replay(hta("a100x2_nccl2.17_allreduce.rank0.json.gz"), platform("hgx-a100", 1), false);
  EXPECT_EQ(r.steps[0].number, 4);
  EXPECT_EQ(r.steps[1].measured_ps, 219'786'430'000);  // #6's start - #5's start, in the trace
  EXPECT_EQ(r.job_ranks, 2);
  EXPECT_EQ(r.counts.collectives_measured, 21);
  EXPECT_EQ(r.counts.kernels, 2679);
  EXPECT_EQ(r.counts.copies, 960);
  EXPECT_EQ(r.counts.sets, 114);
}

// Its NCCL kernels name their collectives: all 21 run on the platform. Its
// steps are the CPU's (3,774 launches of kernels of a few microseconds),
// so they do not move; the older sampled trace's SendRecv kernels name
// nothing and keep their measured durations, which the replay counts.
TEST(KinetoReplay, CollectivesRunOnThePlatformWhereTheTraceNamesThem) {
  const KinetoReport a = replay(hta("a100x2_nccl2.17_allreduce.rank0.json.gz"), platform("hgx-a100", 1), true);
  EXPECT_EQ(a.counts.collectives_simulated, 21);
  EXPECT_EQ(a.counts.collectives_measured, 0);
  EXPECT_EQ(a.collectives, 21u);
  for (const KinetoStepRecord& s : a.steps) EXPECT_LT(std::abs(s.error()), 1e-4) << s.number;
  const KinetoReport w = replay(hta("ws128_sampled.rank0.json.gz"), platform("hgx-a100", 16), true);
  EXPECT_EQ(w.counts.collectives_simulated, 0);
  EXPECT_EQ(w.counts.collectives_measured, 10);
  ASSERT_EQ(w.counts.measured_why.size(), 1u);
  EXPECT_NE(w.counts.measured_why.begin()->first.find("do not name its collective"), std::string::npos);
}

// A GPU-bound step of two ranks, by hand (us): kernel K1 launched at 0 runs
// 5-1005; an all-reduce of 2^20 floats over both ranks, launched at 10,
// runs 1005-1505 (after K1, as NCCL's stream waits for the compute stream);
// a wait on its event at 20; K2 launched at 30 runs 1505-1605 (after the
// all-reduce); a device synchronisation at 40 returns at 1610; the step
// (ProfilerStep#1) spans 0-1650. Replayed with the all-reduce's measured
// 500 us the step is 1,650 us; simulated, 1,150 us plus the all-reduce's
// time on the platform, 4 MiB between two GPUs of one NVLink switch.
std::string gpu_bound_step() {
  const auto launch = [](int corr, const char* ts, const char* name = "cudaLaunchKernel", const char* dur = "3.0") {
    return fmt::format(R"({{"ph": "X", "cat": "cuda_runtime", "name": "{}", "pid": 1, "tid": 1, "ts": {}, "dur": {}, "args": {{"correlation": {}}}}},)",
                       name, ts, dur, corr);
  };
  std::string s = R"({"distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 2, "pg_config": [{"pg_name": "0", "ranks": [0, 1]}]}, "traceEvents": [)";
  s += R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0.0, "dur": 1650.0},)";
  s += launch(1, "0.0");
  s += R"({"ph": "X", "cat": "kernel", "name": "K1", "pid": 0, "tid": 7, "ts": 5.0, "dur": 1000.0, "args": {"device": 0, "stream": 7, "correlation": 1}},)";
  s += launch(2, "10.0", "cudaLaunchKernelExC");
  s += R"J({"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", "pid": 0, "tid": 40, "ts": 1005.0, "dur": 500.0, "args": {"device": 0, "stream": 40, "correlation": 2, "Collective name": "allreduce", "In msg nelems": 1048576, "Out msg nelems": 1048576, "Group size": 2, "dtype": "Float", "Process Group Name": "0", "Process Group Ranks": "[0, 1]"}},)J";
  s += launch(3, "20.0", "cudaStreamWaitEvent", "1.0");
  s += launch(4, "30.0");
  s += R"({"ph": "X", "cat": "kernel", "name": "K2", "pid": 0, "tid": 7, "ts": 1505.0, "dur": 100.0, "args": {"device": 0, "stream": 7, "correlation": 4}},)";
  s += launch(5, "40.0", "cudaDeviceSynchronize", "1570.0");
  s.pop_back();  // the last comma
  s += "]}";
  return s;
}

TEST(KinetoReplay, AGpuBoundStepByHand) {
  const kineto::Trace t = kineto::parse_trace(gpu_bound_step(), "step.json");
  const PlatformConfig p = platform("hgx-a100", 1);
  const KinetoReport measured = replay(t, p, false);
  ASSERT_EQ(measured.steps.size(), 1u);
  EXPECT_EQ(measured.steps[0].measured_ps, 1'650'000'000);
  EXPECT_EQ(measured.steps[0].replayed_ps, 1'650'000'000);
  EXPECT_EQ(measured.counts.compute_waits, 1);
  EXPECT_EQ(measured.counts.syncs, 1);
  EXPECT_EQ(measured.activities_on_time, 3);
  const KinetoReport simulated = replay(t, p, true);
  ASSERT_EQ(simulated.counts.collectives_simulated, 1);
  const TimePs all_reduce = simulated.steps[0].replayed_ps - 1'150'000'000;
  EXPECT_EQ(simulated.comm_measured_ps, 500'000'000);
  EXPECT_EQ(simulated.comm_replayed_ps, all_reduce);  // issued as K1 ends, K2 starts as it ends
  // NVLink between two A100s (240 GB/s): 4 MiB takes tens of microseconds.
  EXPECT_GT(all_reduce, 15'000'000);
  EXPECT_LT(all_reduce, 100'000'000);
  // A slower fabric between the two ranks (two nodes over 25 GB/s NICs)
  // makes the step longer by the collective alone.
  api::PlatformRequest two;
  two.file = "hgx-a100";
  two.nodes = 2;
  PlatformConfig apart = api::load_platform(two);
  apart.dims[0].npus = 1;  // one GPU per node: the ranks meet over the rail
  const KinetoReport far = replay(t, apart, true);
  EXPECT_GT(far.steps[0].replayed_ps, simulated.steps[0].replayed_ps + 50'000'000);
}

TEST(KinetoReplay, GroupsOutsideTheJobAreRefused) {
  std::string s = gpu_bound_step();
  s.replace(s.find(R"("Process Group Ranks": "[0, 1]")"), 31, R"("Process Group Ranks": "[0, 5]")");
  const kineto::Trace t = kineto::parse_trace(s, "step.json");
  try {
    (void)replay(t, platform("hgx-a100", 1), true);
    ADD_FAILURE() << "a group beyond the job was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("step.json: event 'ncclKernel_AllReduce"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("rank 5, but the job has 2 ranks"), std::string::npos) << e.what();
  }
}

class KinetoCli : public test::CliTest {};

TEST_F(KinetoCli, ReplaysATraceAsJsonAndCsv) {
  const std::string trace = test::data_dir() + "/kineto/a100x2_nccl2.17_allreduce.rank0.json.gz";
  const test::CliRun r = run({"run", "--kineto", trace, "--platform", "hgx-a100", "--nodes", "1", "--json", "--csv", (dir_ / "out").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = parse_json(r.out);
  EXPECT_EQ(j["job_ranks"], 2);
  EXPECT_EQ(j["communication"], "simulated");
  EXPECT_EQ(j["collectives"]["simulated"], 21);
  ASSERT_EQ(j["iteration_times_ns"].size(), 3u);
  EXPECT_EQ(j["steps"][0]["step"], 4);
  EXPECT_EQ(j["steps"][0]["measured_ns"], 222'503'285);
  const auto rows = test::read_csv(dir_ / "out" / "steps.csv");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[2].at("step"), "6");
  const test::CliRun text = run({"run", "--kineto", trace, "--platform", "hgx-a100", "--nodes", "1", "--kineto-comm", "measured"});
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("21 NCCL kernels: 0 simulated as collectives on the platform, 21 at their measured duration"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("        mean        222.409        222.409    +0.00%"), std::string::npos) << text.out;
}

TEST_F(KinetoCli, BadInput) {
  const std::string trace = test::data_dir() + "/kineto/a100x2_nccl2.17_allreduce.rank0.json.gz";
  expect_bad_input({"run", "--kineto", trace, "--model", "llama3-8b"}, {"--kineto cannot be combined"});
  expect_bad_input({"run", "--kineto", trace, "--platform", "hgx-a100", "--kineto-comm", "fast"}, {"--kineto-comm", "'fast'"});
  expect_bad_input({"run", "--kineto-comm", "measured"}, {"--kineto-comm applies to --kineto"});
  expect_bad_input({"run", "--kineto", test::data_dir() + "/kineto"}, {"a directory"});
  expect_bad_input({"run", "--kineto", test::data_dir() + "/kineto/ws128_sampled.rank0.json.gz", "--platform", "hgx-a100"},
                   {"128 ranks", "8 GPUs"});
  expect_bad_input({"run", "--kineto", trace, "--iterations", "3"}, {"--iterations"});
  expect_bad_input({"run", "--kineto", (dir_ / "none.json").string()}, {"none.json", "cannot open"});
}

}  // namespace
}  // namespace acesim
