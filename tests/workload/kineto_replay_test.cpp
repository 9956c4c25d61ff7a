// Replaying PyTorch profiler traces (workload/formats/kineto_replay.h,
// driver/kineto_run.h): with every duration as measured a replay gives
// back the trace's own steps and GPU timeline; with communication
// simulated, a GPU-bound step changes by exactly the collective's time.
#include "workload/formats/kineto_replay.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "api/api.h"
#include "cli_runner.h"
#include "config/input_error.h"
#include "driver/kineto_job.h"
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
  return run_kineto(p, {t}, o);
}

// HTA's traces and the H200 one with every duration as measured: each step
// as traced (to 0.01%), and every GPU activity starting where it did.
TEST(KinetoReplay, MeasuredDurationsGiveBackTheTrace) {
  struct Case {
    const char* file;
    long long nodes;
    std::size_t steps;
  };
  for (const Case& c : {Case{"a100x2_nccl2.17_allreduce.rank0.json.gz", 1, 3}, Case{"ws128_sampled.rank0.json.gz", 16, 2},
                        Case{"ws128_sampled.rank1.json.gz", 16, 2}, Case{"alexnet_1gpu.json.gz", 1, 1},
                        Case{"h200_gpt4l_1gpu.json.gz", 1, 3}}) {
    SCOPED_TRACE(c.file);
    const kineto::Trace t = hta(c.file);
    const KinetoReport r = replay(t, platform("hgx-a100", c.nodes), false);
    ASSERT_EQ(r.steps.size(), c.steps);
    for (const KinetoStepRecord& s : r.steps) EXPECT_LT(std::abs(s.error()), 1e-4) << s.number;
    EXPECT_EQ(r.activities, static_cast<long long>(t.gpu.size()));
    EXPECT_EQ(r.activities_on_time, r.activities);
    EXPECT_EQ(r.largest_start_gap_ps, 0);
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
// `rank`'s trace, its K1 `late_us` longer (everything after it that much later).
std::string gpu_bound_step(int rank = 0, int late_us = 0) {
  const auto launch = [](int corr, const char* ts, const char* name = "cudaLaunchKernel", std::string dur = "3.0") {
    return fmt::format(R"({{"ph": "X", "cat": "cuda_runtime", "name": "{}", "pid": 1, "tid": 1, "ts": {}, "dur": {}, "args": {{"correlation": {}}}}},)",
                       name, ts, dur, corr);
  };
  const int l = late_us;
  std::string s = fmt::format(R"({{"distributedInfo": {{"backend": "nccl", "rank": {}, "world_size": 2, "pg_config": [{{"pg_name": "0", "ranks": [0, 1]}}]}}, "traceEvents": [)", rank);
  s += fmt::format(R"({{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0.0, "dur": {}}},)", 1650 + l);
  s += launch(1, "0.0");
  s += fmt::format(R"({{"ph": "X", "cat": "kernel", "name": "K1", "pid": 0, "tid": 7, "ts": 5.0, "dur": {}, "args": {{"device": 0, "stream": 7, "correlation": 1}}}},)", 1000 + l);
  s += launch(2, "10.0", "cudaLaunchKernelExC");
  s += fmt::format(R"J({{"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", "pid": 0, "tid": 40, "ts": {}, "dur": 500.0, "args": {{"device": 0, "stream": 40, "correlation": 2, "Collective name": "allreduce", "In msg nelems": 1048576, "Out msg nelems": 1048576, "Group size": 2, "dtype": "Float", "Process Group Name": "0", "Process Group Ranks": "[0, 1]"}}}},)J", 1005 + l);
  s += launch(3, "20.0", "cudaStreamWaitEvent", "1.0");
  s += launch(4, "30.0");
  s += fmt::format(R"({{"ph": "X", "cat": "kernel", "name": "K2", "pid": 0, "tid": 7, "ts": {}, "dur": 100.0, "args": {{"device": 0, "stream": 7, "correlation": 4}}}},)", 1505 + l);
  s += launch(5, "40.0", "cudaDeviceSynchronize", std::to_string(1570 + l));
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

// A trace with cuda_sync events (enable_cuda_sync_events): the compute
// stream's K2, launched by another thread than the all-reduce's, waits on
// the event recorded on NCCL's stream after it. The wait is taken from the
// cuda_sync event, not inferred: with the all-reduce simulated, K2 starts
// as it ends and the step (K2, then the CPU's 95 us) is 200 us plus it.
TEST(KinetoReplay, CudaSyncEventsGiveTheWaitsExactly) {
  std::string s = R"({"distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 2}, "traceEvents": [)";
  s += R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0.0, "dur": 1200.0},)";
  s += R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 0.0, "dur": 1.0, "args": {"correlation": 1}},)";
  s += R"J({"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", "pid": 0, "tid": 40, "ts": 5.0, "dur": 1000.0, "args": {"device": 0, "stream": 40, "correlation": 1, "Collective name": "allreduce", "In msg nelems": 1048576, "Out msg nelems": 1048576, "Group size": 2, "dtype": "Float", "Process Group Ranks": "[0, 1]"}},)J";
  s += R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaEventRecord", "pid": 1, "tid": 1, "ts": 2.0, "dur": 1.0, "args": {"correlation": 2}},)";
  s += R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamWaitEvent", "pid": 1, "tid": 2, "ts": 4.0, "dur": 1.0, "args": {"correlation": 3}},)";
  s += R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2, "ts": 6.0, "dur": 1.0, "args": {"correlation": 4}},)";
  s += R"({"ph": "X", "cat": "kernel", "name": "K2", "pid": 0, "tid": 7, "ts": 1005.0, "dur": 100.0, "args": {"device": 0, "stream": 7, "correlation": 4}},)";
  s += R"({"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "pid": 0, "tid": 7, "ts": 1005.0, "dur": 0.0, "args": {"cuda_sync_kind": "Stream Wait Event", "stream": 7, "correlation": 3, "device": 0, "wait_on_stream": 40, "wait_on_cuda_event_record_corr_id": 2}},)";
  s += R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaDeviceSynchronize", "pid": 1, "tid": 1, "ts": 8.0, "dur": 1100.0, "args": {"correlation": 5}})";
  s += "]}";
  const kineto::Trace t = kineto::parse_trace(s, "synced.json");
  ASSERT_EQ(t.stream_waits.size(), 1u);
  const PlatformConfig p = platform("hgx-a100", 1);
  const KinetoReport measured = replay(t, p, false);
  EXPECT_EQ(measured.steps[0].replayed_ps, 1'200'000'000);
  EXPECT_EQ(measured.counts.stream_waits, 1);
  EXPECT_EQ(measured.activities_on_time, 2);
  const KinetoReport simulated = replay(t, p, true);
  EXPECT_EQ(simulated.counts.stream_waits, 1);
  EXPECT_EQ(simulated.counts.compute_waits, 0);  // nothing inferred
  EXPECT_GT(simulated.comm_replayed_ps, 6'000'000);
  EXPECT_EQ(simulated.steps[0].replayed_ps, 200'000'000 + simulated.comm_replayed_ps);  // 5 us launch latency, the all-reduce, K2's 100 us and 95 us
  // A wait whose event record is not in the trace (a profiling window that
  // opened after it) names nothing: it is left out, and counted.
  std::string outside = s;
  outside.replace(outside.find(R"("wait_on_cuda_event_record_corr_id": 2)"), 38, R"("wait_on_cuda_event_record_corr_id": 9)");
  const kineto::Trace o = kineto::parse_trace(outside, "synced.json");
  EXPECT_TRUE(o.stream_waits.empty());
  EXPECT_EQ(o.stream_waits_dropped, 1);
  EXPECT_EQ(replay(o, p, false).counts.stream_waits_dropped, 1);
}

// Without cuda_sync events the waits are inferred: in HTA's two-A100 DDP
// trace, 6 compute launches after a work.wait() on the all-reducing thread,
// and 14 waits of a step's first compute activity for the collectives of
// the steps before it (the measurement agrees with each: the trace replays
// as traced, MeasuredDurationsGiveBackTheTrace).
TEST(KinetoReplay, AStepWaitsForTheCollectivesBeforeIt) {
  const kineto::Trace t = hta("a100x2_nccl2.17_allreduce.rank0.json.gz");
  const KinetoReport r = replay(t, platform("hgx-a100", 1), true);
  EXPECT_EQ(r.counts.step_waits, 14);
  EXPECT_EQ(r.counts.compute_waits, 6);
  EXPECT_EQ(r.counts.stream_waits, 0);
}

// The irregularities of real traces, replayed by rule (kineto_replay.h).
// A copy that starts 33 us before the kernel ahead of it on its stream
// ends runs after it: K1 5-105 us, the copy traced at 72-122 runs 105-155,
// K2 (traced 1 us after the copy) 156-206, and the step, which waits for
// K2 at a synchronisation, is 33 us longer than traced.
TEST(KinetoReplay, AnActivityOverlappingTheOneAheadRunsAfterIt) {
  std::string s = R"({"distributedInfo": {"rank": 0, "world_size": 1}, "traceEvents": [)";
  s += R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0.0, "dur": 300.0},)";
  s += R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "tid": 1, "ts": 0.0, "dur": 3.0, "args": {"correlation": 1}},)";
  s += R"({"ph": "X", "cat": "kernel", "name": "K1", "ts": 5.0, "dur": 100.0, "args": {"device": 0, "stream": 7, "correlation": 1}},)";
  s += R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "tid": 1, "ts": 10.0, "dur": 3.0, "args": {"correlation": 2}},)";
  s += R"({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoD", "ts": 72.0, "dur": 50.0, "args": {"device": 0, "stream": 7, "correlation": 2}},)";
  s += R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "tid": 1, "ts": 20.0, "dur": 3.0, "args": {"correlation": 3}},)";
  s += R"({"ph": "X", "cat": "kernel", "name": "K2", "ts": 123.0, "dur": 50.0, "args": {"device": 0, "stream": 7, "correlation": 3}},)";
  s += R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaDeviceSynchronize", "tid": 1, "ts": 30.0, "dur": 150.0, "args": {"correlation": 4}})";
  s += "]}";
  const kineto::Trace t = kineto::parse_trace(s, "overlap.json");
  EXPECT_EQ(t.repairs.overlapping, 1);
  EXPECT_EQ(t.repairs.largest_overlap, 33'000);
  KinetoRunOptions o;
  o.simulate_comm = false;
  o.timeline_ranks = 1;
  const KinetoReport r = run_kineto(platform("hgx-a100", 1), {t}, o);
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_EQ(r.steps[0].measured_ps, 300'000'000);
  EXPECT_EQ(r.steps[0].replayed_ps, 333'000'000);
  ASSERT_EQ(r.timelines.size(), 1u);
  ASSERT_EQ(r.timelines[0].spans.size(), 3u);
  EXPECT_EQ(r.timelines[0].spans[1].replayed_start, 105'000'000);  // the copy, after K1
  EXPECT_EQ(r.timelines[0].spans[1].replayed_end, 155'000'000);
  EXPECT_EQ(r.timelines[0].spans[2].replayed_start, 156'000'000);  // K2, 1 us after it as traced
  EXPECT_EQ(r.activities_on_time, 1);
  EXPECT_EQ(r.largest_start_gap_ps, 33'000'000);
  EXPECT_EQ(r.counts.repairs.overlapping, 1);
}

// A kernel launched before the profiling window opened (its correlation
// names no call of the trace) starts where it did, and the kernel queued
// behind it too; it is no CPU launch.
TEST(KinetoReplay, AnActivityWhoseLaunchIsNotInTheTraceStartsWhereItDid) {
  std::string s = R"({"distributedInfo": {"rank": 0, "world_size": 1}, "traceEvents": [)";
  s += R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0.0, "dur": 100.0},)";
  s += R"({"ph": "X", "cat": "kernel", "name": "K0", "ts": 3.0, "dur": 10.0, "args": {"device": 0, "stream": 7, "correlation": 9}},)";
  s += R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "tid": 1, "ts": 1.0, "dur": 3.0, "args": {"correlation": 1}},)";
  s += R"({"ph": "X", "cat": "kernel", "name": "K1", "ts": 20.0, "dur": 30.0, "args": {"device": 0, "stream": 7, "correlation": 1}})";
  s += "]}";
  const kineto::Trace t = kineto::parse_trace(s, "early.json");
  EXPECT_EQ(t.repairs.unlaunched, 1);
  KinetoRunOptions o;
  o.simulate_comm = false;
  o.timeline_ranks = 1;
  const KinetoReport r = run_kineto(platform("hgx-a100", 1), {t}, o);
  EXPECT_EQ(r.steps[0].replayed_ps, 100'000'000);
  EXPECT_EQ(r.activities_on_time, 2);
  EXPECT_EQ(r.largest_start_gap_ps, 0);
  EXPECT_EQ(r.timelines[0].spans[0].replayed_start, 3'000'000);
  EXPECT_EQ(r.counts.launches, 1);
  EXPECT_EQ(r.counts.kernels, 2);
  EXPECT_EQ(r.counts.repairs.unlaunched, 1);
}

// A trace whose every event is written twice replays as the trace itself,
// communication measured and simulated.
TEST(KinetoReplay, EventsWrittenTwiceReplayAsOnce) {
  const std::string once = gpu_bound_step();
  const std::size_t open = once.find("\"traceEvents\": [") + 16, close = once.rfind(']');
  const std::string events = once.substr(open, close - open);
  const std::string twice = once.substr(0, close) + "," + events + "]}";
  const kineto::Trace t1 = kineto::parse_trace(once, "step.json");
  const kineto::Trace t2 = kineto::parse_trace(twice, "step.json");
  EXPECT_EQ(t2.repairs.duplicates(), 9);  // a step, 5 calls, 3 activities
  const PlatformConfig p = platform("hgx-a100", 1);
  for (const bool simulate : {false, true}) {
    const KinetoReport a = replay(t1, p, simulate), b = replay(t2, p, simulate);
    EXPECT_EQ(b.steps[0].replayed_ps, a.steps[0].replayed_ps);
    EXPECT_EQ(b.total_ps, a.total_ps);
    EXPECT_EQ(b.comm_replayed_ps, a.comm_replayed_ps);
    EXPECT_EQ(b.counts.launches, a.counts.launches);
    EXPECT_EQ(b.counts.repairs.duplicates(), 9);
  }
}

// HTA's rank 0 of the 128-rank job with its defects injected
// (tools/kineto-defects/derive.py) replays its steps as the clean trace
// does, every duration as traced; the copy moved 33 us early runs after the
// kernel ahead of it, and 19 activities queued behind it on the compute
// stream, and a SendRecv waiting for them, start 33 us late too.
TEST(KinetoReplay, ARealTraceWithDefectsInjectedReplaysItsSteps) {
  const PlatformConfig p = platform("hgx-a100", 16);
  const KinetoReport clean = replay(hta("ws128_sampled.rank0.json.gz"), p, false);
  const KinetoReport r = replay(hta("ws128_defects.rank0.json.gz"), p, false);
  ASSERT_EQ(r.steps.size(), 2u);
  for (std::size_t s = 0; s < 2; ++s) {
    EXPECT_EQ(r.steps[s].measured_ps, clean.steps[s].measured_ps);
    EXPECT_EQ(r.steps[s].replayed_ps, clean.steps[s].replayed_ps);
  }
  EXPECT_EQ(r.steps[0].replayed_ps, 607'361'000'000);
  EXPECT_EQ(r.activities, 1204);
  EXPECT_EQ(r.activities_on_time, 1184);
  EXPECT_EQ(r.largest_start_gap_ps, 33'000'000);
  EXPECT_EQ(r.counts.launches, 1199);
  EXPECT_EQ(r.counts.repairs.unlaunched, 5);
  EXPECT_EQ(r.counts.repairs.duplicates(), 6);
}

class KinetoCli : public test::CliTest {};

// What was repaired is in the report: a line of text, JSON's `repairs`
// (the job's, and each rank's) and ranks.csv.
TEST_F(KinetoCli, TheReportCountsWhatWasRepaired) {
  const std::string trace = test::data_dir() + "/kineto/ws128_defects.rank0.json.gz";
  const std::vector<std::string> args = {"run", "--kineto", trace, "--platform", "hgx-a100", "--nodes", "16"};
  const test::CliRun text = run(args);
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("# repaired: 6 events written twice, the copies dropped (3 GPU activities, 2 runtime calls, 1 ProfilerStep); "
                          "1 activity started before the work ahead on its stream ended (by up to 33.000 us), replayed after it; "
                          "5 GPU activities whose launch is not in the trace, replayed from their traced start\n"),
            std::string::npos)
      << text.out;
  std::vector<std::string> json = args;
  for (const std::string& a : {std::string("--json"), std::string("--csv"), (dir_ / "out").string()}) json.push_back(a);
  const test::CliRun r = run(json);
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = parse_json(r.out);
  EXPECT_EQ(j["repairs"]["duplicate_gpu_activities"], 3);
  EXPECT_EQ(j["repairs"]["duplicate_calls"], 2);
  EXPECT_EQ(j["repairs"]["duplicate_steps"], 1);
  EXPECT_EQ(j["repairs"]["duplicate_stream_waits"], 0);
  EXPECT_EQ(j["repairs"]["overlapping_activities"], 1);
  EXPECT_EQ(j["repairs"]["largest_overlap_ns"], 33000);
  EXPECT_EQ(j["repairs"]["activities_without_launch"], 5);
  EXPECT_EQ(j["ranks"][0]["repairs"], j["repairs"]);
  const auto rows = test::read_csv(dir_ / "out" / "ranks.csv");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].at("file"), trace);
  EXPECT_EQ(rows[0].at("duplicate_gpu_activities"), "3");
  EXPECT_EQ(rows[0].at("overlapping_activities"), "1");
  EXPECT_EQ(rows[0].at("largest_overlap_ns"), "33000");
  EXPECT_EQ(rows[0].at("activities_without_launch"), "5");
  // A clean trace says nothing of repairs, and counts none.
  const test::CliRun clean = run({"run", "--kineto", test::data_dir() + "/kineto/ws128_sampled.rank0.json.gz", "--platform", "hgx-a100",
                                  "--nodes", "16"});
  ASSERT_EQ(clean.status, 0) << clean.err;
  EXPECT_EQ(clean.out.find("repaired"), std::string::npos) << clean.out;
}

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
  expect_bad_input({"run", "--kineto", test::data_dir() + "/kineto"}, {"world_size", "different jobs"});
  expect_bad_input({"run", "--kineto", dir_.string()}, {"no trace in it"});
  expect_bad_input({"run", "--kineto", trace, "--platform", "hgx-a100", "--dp", "16"}, {"16 ranks (with --dp 16)", "8 GPUs"});
  expect_bad_input({"run", "--kineto", trace, "--platform", "hgx-a100", "--dp", "0"}, {"--dp", "at least 1"});
  expect_bad_input({"run", "--kineto", trace, "--platform", "hgx-a100", "--tp", "2"}, {"--tp"});
  expect_bad_input({"run", "--kineto", trace, "--platform", "hgx-a100", "--placement", "0,0"}, {"--placement", "GPU 0 is named twice"});
  expect_bad_input({"run", "--kineto", trace, "--platform", "hgx-a100", "--placement", "0-2"}, {"--placement", "3 GPUs listed for a job of 2"});
  expect_bad_input({"run", "--kineto", trace, "--platform", "hgx-a100", "--placement", "0,9"}, {"--placement", "GPU 9", "GPUs 0-7"});
  expect_bad_input({"run", "--kineto", trace, "--platform", "hgx-a100", "--placement", "far"}, {"--placement", "'far'"});
  expect_bad_input({"run", "--placement", "spread"}, {"--placement applies to --kineto"});
  expect_bad_input({"run", "--kineto", test::data_dir() + "/kineto/ws128_sampled.rank0.json.gz", "--platform", "hgx-a100"},
                   {"128 ranks", "8 GPUs"});
  expect_bad_input({"run", "--kineto", trace, "--iterations", "3"}, {"--iterations"});
  expect_bad_input({"run", "--kineto", (dir_ / "none.json").string()}, {"none.json: cannot open the trace file: No such file or directory"});
}

// A --kineto directory lists its traces: every .json / .json.gz entry must
// be a trace file, and an entry that cannot be looked at may be one; each
// is one line naming it, exit status 2 (a symbolic link that loops was an
// internal error, exit 1; a link to nothing, a FIFO or a subdirectory named
// as a trace was skipped, and the job replayed without that rank).
TEST_F(KinetoCli, ADirectoryEntryThatIsNoTraceFileIsRefusedNamingIt) {
  namespace fs = std::filesystem;
  const std::string rank0 = test::data_dir() + "/kineto/ws128_sampled.rank0.json.gz";
  const auto folder = [&](const std::string& name) {
    const fs::path d = dir_ / name;
    fs::create_directories(d);
    fs::copy_file(rank0, d / "ws128_sampled.rank0.json.gz");
    return d;
  };
  const auto refused = [&](const fs::path& d, const std::string& what) {
    expect_bad_input({"run", "--kineto", d.string(), "--platform", "hgx-a100", "--nodes", "16"}, {what});
  };
  const fs::path loop = folder("loop");
  fs::create_symlink("loop", loop / "loop");
  refused(loop, (loop / "loop").string() + ": not a trace file: a symbolic link that loops");
  const fs::path dangling = folder("dangling");
  fs::create_symlink("gone.json", dangling / "rank1.json");
  refused(dangling, (dangling / "rank1.json").string() + ": not a trace file: a symbolic link to 'gone.json', which does not exist");
  const fs::path fifo = folder("fifo");
  ASSERT_EQ(mkfifo((fifo / "rank1.json").c_str(), 0600), 0);
  refused(fifo, (fifo / "rank1.json").string() + ": not a trace file: a FIFO (named pipe)");
  const fs::path sub = folder("sub");
  fs::create_directories(sub / "rank1.json.gz");
  refused(sub, (sub / "rank1.json.gz").string() + ": not a trace file: a directory");
  // A file that cannot be read: /proc/self/mem fails every read at offset 0
  // (EIO), for root too.
  const fs::path unreadable = folder("unreadable");
  fs::create_symlink("/proc/self/mem", unreadable / "rank1.json");
  refused(unreadable, (unreadable / "rank1.json").string() + ": cannot read the trace file: Input/output error");
  if (geteuid() != 0) {  // root reads a file of mode 000
    const fs::path denied = folder("denied");
    fs::copy_file(rank0, denied / "rank1.json.gz");
    fs::permissions(denied / "rank1.json.gz", fs::perms::none);
    refused(denied, (denied / "rank1.json.gz").string() + ": cannot open the trace file: Permission denied");
  }
  // Entries not named as traces are left alone: a README, a subdirectory, a FIFO.
  const fs::path other = folder("other");
  std::ofstream(other / "README.md") << "rank 0\n";
  fs::create_directories(other / "plots");
  ASSERT_EQ(mkfifo((other / "pipe").c_str(), 0600), 0);
  const test::CliRun ok = expect_ok({"run", "--kineto", other.string(), "--platform", "hgx-a100", "--nodes", "16", "--json"});
  EXPECT_EQ(parse_json(ok.out)["ranks"].size(), 1u);
}

// A path named to --kineto that is no trace file is refused in one line
// without being opened: /dev/zero was read as empty JSON ("The document is
// empty"), a FIFO blocked forever.
TEST_F(KinetoCli, ANamedPathThatIsNoTraceFileIsRefused) {
  namespace fs = std::filesystem;
  const auto refused = [&](const std::string& path, const std::string& what) {
    expect_bad_input({"run", "--kineto", path, "--platform", "hgx-a100"}, {path + ": " + what});
  };
  refused("/dev/zero", "not a trace file: a character device");
  const fs::path fifo = dir_ / "pipe.json";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  refused(fifo.string(), "not a trace file: a FIFO (named pipe)");
  fs::create_symlink("loop.json", dir_ / "loop.json");
  refused((dir_ / "loop.json").string(), "not a trace file: a symbolic link that loops");
  fs::create_symlink("gone.json", dir_ / "link.json");
  refused((dir_ / "link.json").string(), "not a trace file: a symbolic link to 'gone.json', which does not exist");
  refused("/proc/self/mem", "cannot read the trace file: Input/output error");
}


// Two ranks, each its own trace: rank 1's K1 ran 200 us longer. With their
// all-reduce simulated, the collective waits for rank 1, and both ranks'
// steps come out 200 us longer than when rank 0's trace stands for both.
TEST(KinetoReplay, OneTracePerRankEachRunsItsOwn) {
  const PlatformConfig p = platform("hgx-a100", 1);
  const std::vector<kineto::Trace> both = {kineto::parse_trace(gpu_bound_step(0), "rank-0.json"),
                                           kineto::parse_trace(gpu_bound_step(1, 200), "rank-1.json")};
  KinetoRunOptions o;
  o.simulate_comm = false;
  const KinetoReport measured = run_kineto(p, both, o);
  ASSERT_EQ(measured.ranks.size(), 2u);
  EXPECT_EQ(measured.ranks[0].steps[0].replayed_ps, 1'650'000'000);
  EXPECT_EQ(measured.ranks[1].steps[0].replayed_ps, 1'850'000'000);
  EXPECT_EQ(measured.steps[0].replayed_ps, 1'850'000'000);  // the slower rank's
  EXPECT_EQ(measured.steps[0].measured_ps, 1'850'000'000);
  o.simulate_comm = true;
  const KinetoReport simulated = run_kineto(p, both, o);
  const KinetoReport alone = replay(both[0], p, true);
  EXPECT_EQ(simulated.collectives, 1u);
  EXPECT_EQ(simulated.ranks[0].steps[0].replayed_ps, alone.steps[0].replayed_ps + 200'000'000);
  EXPECT_EQ(simulated.ranks[1].steps[0].replayed_ps, alone.steps[0].replayed_ps + 200'000'000);
  // Traces of one rank twice, or of different steps, are refused.
  const auto refused = [&](const std::vector<kineto::Trace>& t, const std::string& what) {
    try {
      (void)run_kineto(p, t, o);
      ADD_FAILURE() << "accepted: " << what;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  refused({both[0], kineto::parse_trace(gpu_bound_step(0), "again.json")}, "again.json: rank 0 is traced twice (also in rank-0.json)");
  std::string other = gpu_bound_step(1);
  other.replace(other.find("ProfilerStep#1"), 14, "ProfilerStep#2");
  refused({both[0], kineto::parse_trace(other, "other.json")},
          "other.json: event 'ProfilerStep#2' at ts 0.000: rank-0.json has ProfilerStep#1 there: the ranks' traces hold different steps");
}

// `t` on a clock `shift` later, with a set on a side stream launched
// `early` before its first step (work traced before the step began).
kineto::Trace with_early_work(kineto::Trace t, kineto::Ns shift, kineto::Ns early) {
  for (kineto::Step& s : t.steps) s.ts += shift;
  for (kineto::GpuActivity& a : t.gpu) a.ts += shift;
  for (kineto::RuntimeCall& r : t.runtime) r.ts += shift;
  const auto name = static_cast<std::uint32_t>(t.names.size());
  t.names.push_back("cudaMemsetAsync");
  t.names.push_back("Memset (Device)");
  kineto::RuntimeCall c;
  c.name = name;
  c.ts = t.steps.front().ts - early;
  c.dur = 2'000;
  c.correlation = 99;
  c.tid = 1;
  kineto::GpuActivity a;
  a.kind = kineto::GpuKind::kMemset;
  a.name = name + 1;
  a.stream = 9;
  a.ts = c.ts + 5'000;
  a.dur = 1'000;
  a.correlation = 99;
  t.runtime.insert(t.runtime.begin(), c);
  t.gpu.insert(t.gpu.begin(), a);
  return t;
}

// Two ranks whose clocks differ by 7 s, rank 1's trace beginning 500 us
// before its step: their replays are aligned at their first ProfilerStep,
// rank 0's beginning 500 us later, so that the steps start together and
// the all-reduce finds both there: each rank's step is the one-trace
// replay's (1,184.676 us). Aligned at their first launches instead (before),
// rank 0 waited 500 us for rank 1 at the all-reduce (1,684.676 us).
TEST(KinetoReplay, RanksAreAlignedAtTheirFirstProfilerStep) {
  const PlatformConfig p = platform("hgx-a100", 1);
  const kineto::Trace r0 = kineto::parse_trace(gpu_bound_step(0), "rank-0.json");
  const kineto::Trace r1 = with_early_work(kineto::parse_trace(gpu_bound_step(1), "rank-1.json"), 7'000'000'000, 500'000);
  const KinetoClocks clocks = align_kineto_clocks({r0, r1});
  EXPECT_EQ(clocks.basis, "first ProfilerStep");
  EXPECT_EQ(clocks.aligned, (std::vector<kineto::Ns>{0, 7'000'000'000}));
  EXPECT_EQ(clocks.start, (std::vector<kineto::Ns>{-500'000, 6'999'500'000}));
  KinetoRunOptions o;
  const KinetoReport both = run_kineto(p, {r0, r1}, o);
  const KinetoReport alone = replay(r0, p, true);
  EXPECT_EQ(alone.steps[0].replayed_ps, 1'184'676'267);
  EXPECT_EQ(both.clock_alignment, "first ProfilerStep");
  EXPECT_EQ(both.ranks[0].clock_offset_ns, 0);
  EXPECT_EQ(both.ranks[1].clock_offset_ns, 7'000'000'000);
  EXPECT_EQ(both.ranks[0].steps[0].replayed_ps, alone.steps[0].replayed_ps);
  EXPECT_EQ(both.ranks[1].steps[0].replayed_ps, alone.steps[0].replayed_ps);
  EXPECT_EQ(both.total_ps, alone.total_ps + 500'000'000);
  // Durations as traced: every activity starts where it did, counted from
  // the aligned origin.
  o.simulate_comm = false;
  const KinetoReport measured = run_kineto(p, {r0, r1}, o);
  EXPECT_EQ(measured.activities, 7);
  EXPECT_EQ(measured.activities_on_time, 7);
  EXPECT_EQ(measured.largest_start_gap_ps, 0);
  // Without ProfilerSteps the first launches are aligned.
  kineto::Trace n0 = r0, n1 = r1;
  n0.steps.clear();
  n1.steps.clear();
  const KinetoClocks launches = align_kineto_clocks({n0, n1});
  EXPECT_EQ(launches.basis, "first launch");
  EXPECT_EQ(launches.aligned, (std::vector<kineto::Ns>{0, 6'999'500'000}));
  EXPECT_EQ(launches.start, launches.aligned);
  EXPECT_TRUE(align_kineto_clocks({r0}).start.empty());  // one trace: its own origin
}

// HTA's two sampled ranks, rank 1's clock 2.5 s off
// (tools/kineto-defects/derive.py): the replay is the same as with the
// clocks as traced, and the report gives the offset (0.192 ms as traced:
// rank 1 reached ProfilerStep#551 that much later on its clock).
TEST(KinetoReplay, ARankWhoseClockIsOffReplaysTheSame) {
  const PlatformConfig p = platform("hgx-a100", 16);
  const std::vector<kineto::Trace> traced = {hta("ws128_sampled.rank0.json.gz"), hta("ws128_sampled.rank1.json.gz")};
  const std::vector<kineto::Trace> skewed = {traced[0], hta("ws128_skewed.rank1.json.gz")};
  for (const bool simulate : {false, true}) {
    KinetoRunOptions o;
    o.simulate_comm = simulate;
    const KinetoReport a = run_kineto(p, traced, o), b = run_kineto(p, skewed, o);
    ASSERT_EQ(b.ranks.size(), 2u);
    EXPECT_EQ(a.ranks[1].clock_offset_ns, 192'000);
    EXPECT_EQ(b.ranks[1].clock_offset_ns, 2'500'192'000);
    for (std::size_t r = 0; r < 2; ++r) {
      for (std::size_t s = 0; s < 2; ++s) EXPECT_EQ(b.ranks[r].steps[s].replayed_ps, a.ranks[r].steps[s].replayed_ps);
    }
    EXPECT_EQ(b.steps[1].replayed_ps, 630'639'000'000);
    EXPECT_EQ(b.total_ps, a.total_ps);
    EXPECT_EQ(b.activities_on_time, a.activities_on_time);
    EXPECT_EQ(b.activities_on_time, b.activities);
  }
}

// --dp N: the all-reduce over the whole job (its data-parallel group) runs
// over N GPUs with the traced bytes; with --dp 1 it moves nothing and the
// step is the compute alone: K1, K2 and the CPU's 45 us tail.
TEST(KinetoReplay, DataParallelWidthIsAWhatIf) {
  const kineto::Trace t = kineto::parse_trace(gpu_bound_step(), "step.json");
  const PlatformConfig p = platform("hgx-a100", 1);
  KinetoRunOptions o;
  const KinetoReport two = run_kineto(p, {t}, o);
  o.job.dp = 1;
  const KinetoReport one = run_kineto(p, {t}, o);
  EXPECT_EQ(one.job_ranks, 1);
  EXPECT_EQ(one.steps[0].replayed_ps, 1'150'000'000);
  EXPECT_EQ(one.collectives, 0u);
  o.job.dp = 8;
  const KinetoReport eight = run_kineto(p, {t}, o);
  EXPECT_EQ(eight.job_ranks, 8);
  EXPECT_EQ(eight.traced_world, 2);
  ASSERT_EQ(eight.assumptions.size(), 1u);
  EXPECT_NE(eight.assumptions[0].find("--dp 8: the data-parallel group, the whole job"), std::string::npos) << eight.assumptions[0];
  EXPECT_GT(eight.comm_replayed_ps, two.comm_replayed_ps);
  EXPECT_EQ(eight.steps[0].replayed_ps - two.steps[0].replayed_ps, eight.comm_replayed_ps - two.comm_replayed_ps);
}

// The layout of a Megatron-LM job of 32 ranks (tp 4, dp 4, pp 2, tp
// fastest) traced on rank 5, with --dp: the data-parallel group widens, the
// tensor-parallel one stays, the pipeline group's far member moves.
TEST(KinetoReplay, DataParallelGroupsWidenAsMegatronLaysThemOut) {
  kineto::Trace t = kineto::parse_trace(gpu_bound_step(), "megatron.json");
  t.world_size = 32;
  t.rank = 5;
  t.groups = {{"1", "TENSOR_MODEL_PARALLEL_GROUP", {4, 5, 6, 7}},
              {"2", "DATA_PARALLEL_GROUP", {1, 5, 9, 13}},
              {"3", "PIPELINE_MODEL_PARALLEL_GROUP", {5, 21}}};
  const PlatformConfig p = platform("hgx-a100", 8);
  KinetoJobOptions o;
  o.dp = 8;
  const KinetoJob wide({t}, p, o);
  EXPECT_EQ(wide.world(), 64);
  EXPECT_EQ(wide.job_rank(0), 5);
  EXPECT_EQ(wide.group_ranks({1, 5, 9, 13}), (std::vector<Rank>{1, 5, 9, 13, 17, 21, 25, 29}));
  EXPECT_EQ(wide.group_ranks({4, 5, 6, 7}), (std::vector<Rank>{4, 5, 6, 7}));
  EXPECT_EQ(wide.group_ranks({5, 21}), (std::vector<Rank>{5, 37}));
  o.dp = 2;
  const KinetoJob narrow({t}, p, o);
  EXPECT_EQ(narrow.world(), 16);
  EXPECT_EQ(narrow.group_ranks({1, 5, 9, 13}), (std::vector<Rank>{1, 5}));
  EXPECT_EQ(narrow.group_ranks({5, 21}), (std::vector<Rank>{5, 13}));
  // A data-parallel group that is not a stride of the job cannot widen.
  t.groups[1].ranks = {1, 5, 9, 14};
  try {
    (void)KinetoJob({t}, p, o);
    ADD_FAILURE() << "an irregular group was widened";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--dp: the data-parallel group, process group '2' (DATA_PARALLEL_GROUP), has ranks [1, 5, 9, 14]"),
              std::string::npos)
        << e.what();
  }
}

// The data-parallel group is the one named so, not a product of it with
// another dimension; with none traced (a group of one), the new dimension
// goes inside the pipeline stages, and a group of every traced rank widens
// only when it is the default group.
TEST(KinetoReplay, TheDataParallelGroupIsTheOneNamedSo) {
  kineto::Trace t = kineto::parse_trace(gpu_bound_step(), "megatron.json");
  t.world_size = 8;  // tp 2, dp 2, pp 2
  t.rank = 0;
  t.groups = {{"1", "TENSOR_AND_DATA_PARALLEL_GROUP", {0, 1, 2, 3}}, {"2", "DATA_PARALLEL_GROUP", {0, 2}},
              {"3", "DATA_PARALLEL_GROUP_WITH_CP", {0, 2}}, {"4", "PIPELINE_MODEL_PARALLEL_GROUP", {0, 4}}};
  const PlatformConfig p = platform("hgx-a100", 4);
  KinetoJobOptions o;
  o.dp = 4;
  const KinetoJob job({t}, p, o);
  EXPECT_EQ(job.world(), 16);
  EXPECT_EQ(job.group_ranks({0, 2}), (std::vector<Rank>{0, 2, 4, 6}));
  EXPECT_EQ(job.group_ranks({0, 4}), (std::vector<Rank>{0, 8}));
  // Tensor parallelism over all 8 traced ranks, no data parallelism.
  t.groups = {{"0", "default_pg", {0, 1, 2, 3, 4, 5, 6, 7}}, {"1", "TENSOR_MODEL_PARALLEL_GROUP", {0, 1, 2, 3, 4, 5, 6, 7}},
              {"2", "DATA_PARALLEL_GROUP", {0}}};
  const KinetoJob tp({t}, p, o);
  EXPECT_EQ(tp.world(), 32);
  EXPECT_EQ(tp.group_ranks({0, 1, 2, 3, 4, 5, 6, 7}, "1"), (std::vector<Rank>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(tp.group_ranks({0, 1, 2, 3, 4, 5, 6, 7}, "0").size(), 32u);
  EXPECT_EQ(tp.group_ranks({0}), (std::vector<Rank>{0, 8, 16, 24}));
}

// A trace that names its rank but not the job's size is a one-rank job;
// several traces must name both.
TEST(KinetoReplay, ARankWithoutAWorldSize) {
  kineto::Trace t = kineto::parse_trace(gpu_bound_step(), "r5.json");
  t.world_size = -1;
  t.rank = 5;
  t.groups.clear();
  const PlatformConfig p = platform("hgx-a100", 1);
  KinetoRunOptions o;
  o.simulate_comm = false;
  const KinetoReport r = run_kineto(p, {t}, o);
  EXPECT_EQ(r.job_ranks, 1);
  EXPECT_EQ(r.ranks[0].gpu, 0);
  kineto::Trace u = t;
  u.file = "r6.json";
  u.rank = 6;
  try {
    (void)run_kineto(p, {t, u}, o);
    ADD_FAILURE() << "traces without world_size were accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("r5.json: no distributedInfo.rank and world_size"), std::string::npos) << e.what();
  }
}

// --placement: the two ranks on one node meet over NVLink; spread over two
// nodes (GPUs 0 and 8), over the NICs, and the step grows by the slower
// all-reduce alone.
TEST(KinetoReplay, PlacementPutsRanksOnGpus) {
  const kineto::Trace t = kineto::parse_trace(gpu_bound_step(), "step.json");
  const PlatformConfig p = platform("hgx-a100", 2);
  KinetoRunOptions o;
  const KinetoReport packed = run_kineto(p, {t}, o);
  o.job.placement = "spread";
  const KinetoReport spread = run_kineto(p, {t}, o);
  o.job.placement = "0, 8";
  const KinetoReport listed = run_kineto(p, {t}, o);
  EXPECT_EQ(spread.placement, "spread (rank j on node j mod 2, 8 GPUs a node)");
  EXPECT_EQ(spread.steps[0].replayed_ps, listed.steps[0].replayed_ps);
  EXPECT_GT(spread.steps[0].replayed_ps, packed.steps[0].replayed_ps + 50'000'000);
  EXPECT_EQ(spread.steps[0].replayed_ps - packed.steps[0].replayed_ps, spread.comm_replayed_ps - packed.comm_replayed_ps);
}

TEST_F(KinetoCli, ADirectoryOfRanksAPerfettoTraceAndChakra) {
  // HTA's two sampled ranks of a 128-rank job, as a directory.
  std::filesystem::create_directories(dir_ / "ws128");
  for (int r : {0, 1}) {
    const std::string f = fmt::format("ws128_sampled.rank{}.json.gz", r);
    std::filesystem::copy_file(test::data_dir() + "/kineto/" + f, dir_ / "ws128" / f);
  }
  const test::CliRun r = run({"run", "--kineto", (dir_ / "ws128").string(), "--platform", "hgx-a100", "--nodes", "16", "--json",
                              "--csv", (dir_ / "csv").string(), "--trace", (dir_ / "trace.json").string(), "--trace-npus", "2"});
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = parse_json(r.out);
  EXPECT_EQ(j["job_ranks"], 128);
  ASSERT_EQ(j["ranks"].size(), 2u);
  EXPECT_EQ(j["ranks"][1]["rank"], 1);
  EXPECT_EQ(j["one_trace_for_every_rank"], false);
  const auto rows = test::read_csv(dir_ / "csv" / "rank_steps.csv");
  EXPECT_EQ(rows.size(), 4u);  // 2 ranks x 2 steps
  EXPECT_EQ(j["clock_alignment"], "first ProfilerStep");
  EXPECT_EQ(j["ranks"][1]["clock_offset_ns"], 192'000);
  const auto ranks = test::read_csv(dir_ / "csv" / "ranks.csv");
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(ranks[1].at("clock_offset_ns"), "192000");
  const test::CliRun text = run({"run", "--kineto", (dir_ / "ws128").string(), "--platform", "hgx-a100", "--nodes", "16"});
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("# clocks: the ranks' replays aligned at their first ProfilerStep (#551); each clock against rank 0's: rank 1 +0.192 ms\n"),
            std::string::npos)
      << text.out;
  std::ifstream in(dir_ / "trace.json");
  const nlohmann::json trace = nlohmann::json::parse(in);
  long long measured = 0, replayed = 0;
  std::set<long long> pids;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (e["ph"] != "X" || e["cat"] == "step") continue;
    pids.insert(e["pid"].get<long long>());
    (e["pid"].get<long long>() % 2 == 1 ? measured : replayed) += 1;
  }
  EXPECT_EQ(pids.size(), 4u);  // two ranks, measured and replayed
  EXPECT_EQ(measured, j["activities"].get<long long>());
  EXPECT_EQ(replayed, measured);

  // The hand-made step as Chakra traces of a job made 8 wide, run back.
  std::ofstream(dir_ / "step.json") << gpu_bound_step();
  const std::string prefix = (dir_ / "et" / "step").string();
  std::filesystem::create_directories(dir_ / "et");
  const test::CliRun k = run({"run", "--kineto", (dir_ / "step.json").string(), "--platform", "hgx-a100", "--dp", "8", "--json",
                              "--chakra-out", prefix});
  ASSERT_EQ(k.status, 0) << k.err;
  for (int rank = 0; rank < 8; ++rank) EXPECT_TRUE(std::filesystem::exists(fmt::format("{}.{}.et", prefix, rank)));
  EXPECT_FALSE(std::filesystem::exists(prefix + ".8.et"));
  std::ifstream groups(prefix + ".groups.json");
  EXPECT_EQ(nlohmann::json::parse(groups), nlohmann::json::parse(R"({"pg_0": [0, 1, 2, 3, 4, 5, 6, 7]})"));
  // A file whose name says another rank than its trace is refused.
  std::filesystem::create_directories(dir_ / "misnamed");
  std::ofstream(dir_ / "misnamed" / "trace_rank-1.json") << gpu_bound_step(0);
  expect_bad_input({"run", "--kineto", (dir_ / "misnamed").string()}, {"trace_rank-1.json: the name says rank 1, but distributedInfo.rank is 0"});
  const test::CliRun c = run({"run", "--chakra", prefix, "--chakra-groups", prefix + ".groups.json", "--platform", "hgx-a100",
                              "--nodes", "1", "--json"});
  ASSERT_EQ(c.status, 0) << c.err;
  // Chakra keeps whole microseconds and no launch latency: the step within 1%.
  const double replayed_ns = parse_json(k.out)["iteration_times_ns"][0].get<double>();
  const double chakra_ns = parse_json(c.out)["iteration_times_ns"][0].get<double>();
  EXPECT_NEAR(chakra_ns / replayed_ns, 1.0, 0.01) << chakra_ns << " vs " << replayed_ns;
}

}  // namespace
}  // namespace acesim
