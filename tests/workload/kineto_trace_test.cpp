// The PyTorch profiler (Kineto) trace reader: real traces of HTA's test
// data (tests/data/kineto/README.md) and every refusal of bad input.
#include "workload/formats/kineto_trace.h"

#include <zlib.h>

#include <algorithm>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "config/input_error.h"
#include "scratch_dir.h"
#include "test_paths.h"

namespace acesim::kineto {
namespace {

std::string data(const std::string& name) { return test::data_dir() + "/kineto/" + name; }

TEST(KinetoTime, MicrosecondsAsNanoseconds) {
  EXPECT_EQ(parse_us("123.456"), 123456);
  EXPECT_EQ(parse_us("0.5"), 500);
  EXPECT_EQ(parse_us("7"), 7000);
  EXPECT_EQ(parse_us("1.2345"), 1235);  // to the nearest nanosecond
  EXPECT_EQ(parse_us("1.2344"), 1234);
  EXPECT_EQ(parse_us("-3.5"), -3500);
  EXPECT_EQ(parse_us("1e3"), 1000000);
  EXPECT_EQ(parse_us("4458676416788.066"), 4458676416788066LL);
  EXPECT_EQ(parse_us("1682725898079484"), 1682725898079484000LL);  // epoch microseconds
  for (const char* bad : {"", "abc", "1.2.3", "1.", ".5", "--1", "1x", "9000000000000000", "1e300"}) {
    EXPECT_FALSE(parse_us(bad).has_value()) << bad;
  }
}

// Two A100s, NCCL 2.17: 3 steps, a compute stream and NCCL's, 21 NCCL
// kernels whose arguments name their collective.
TEST(KinetoTrace, ReadsTwoA100sWithNcclCollectives) {
  const Trace t = read_trace_file(data("a100x2_nccl2.17_allreduce.rank0.json.gz"));
  EXPECT_EQ(t.rank, 0);
  EXPECT_EQ(t.world_size, 2);
  EXPECT_EQ(t.backend, "nccl");
  EXPECT_EQ(t.device_name, "NVIDIA A100-PG509-200");
  ASSERT_EQ(t.groups.size(), 1u);
  EXPECT_EQ(t.groups[0].name, "0");
  EXPECT_EQ(t.groups[0].description, "default_pg");
  EXPECT_EQ(t.groups[0].ranks, (std::vector<int>{0, 1}));
  ASSERT_EQ(t.steps.size(), 3u);
  EXPECT_EQ(t.steps[0].number, 4);
  EXPECT_EQ(t.steps[0].ts, 4458676416788066LL);
  EXPECT_EQ(t.steps[0].dur, 222442191);
  EXPECT_EQ(t.steps[2].number, 6);
  EXPECT_EQ(t.steps[2].dur, 224936243);
  EXPECT_EQ(t.gpu.size(), 3774u);  // 2,700 kernels, 960 copies, 114 sets
  std::set<long long> streams;
  std::size_t nccl = 0, with_collective = 0, kernels = 0, copies = 0;
  for (const GpuActivity& a : t.gpu) {
    streams.insert(a.stream);
    nccl += a.nccl ? 1 : 0;
    with_collective += a.collective ? 1 : 0;
    kernels += a.kind == GpuKind::kKernel ? 1 : 0;
    copies += a.kind == GpuKind::kMemcpy ? 1 : 0;
  }
  EXPECT_EQ(streams, (std::set<long long>{7, 40}));
  EXPECT_EQ(kernels, 2700u);
  EXPECT_EQ(copies, 960u);
  EXPECT_EQ(nccl, 21u);
  EXPECT_EQ(with_collective, 21u);
  const auto first = std::find_if(t.gpu.begin(), t.gpu.end(), [](const GpuActivity& a) { return a.collective.has_value(); });
  ASSERT_NE(first, t.gpu.end());
  EXPECT_EQ(first->stream, 40);
  EXPECT_TRUE(t.name_of(first->name).starts_with("ncclKernel_"));
  EXPECT_EQ(t.runtime.size(), 8740u);
  EXPECT_TRUE(std::is_sorted(t.gpu.begin(), t.gpu.end(), [](const auto& a, const auto& b) { return a.ts < b.ts; }));
}

TEST(KinetoTrace, CollectiveArgumentsAreKept) {
  const Trace t = read_trace_file(data("a100x2_nccl2.17_allreduce.rank0.json.gz"));
  // The all-reduce at ts 4458677009853.422 us: 6,637,568 floats over ranks 0 and 1.
  const auto it = std::find_if(t.gpu.begin(), t.gpu.end(), [](const GpuActivity& a) { return a.ts == 4458677009853422LL; });
  ASSERT_NE(it, t.gpu.end());
  ASSERT_TRUE(it->collective.has_value());
  const Collective& c = *it->collective;
  EXPECT_EQ(c.name, "allreduce");
  EXPECT_EQ(c.in_elements, 6637568);
  EXPECT_EQ(c.out_elements, 6637568);
  EXPECT_EQ(c.group_size, 2);
  EXPECT_EQ(c.dtype, "Float");
  EXPECT_EQ(c.group_name, "0");
  EXPECT_EQ(c.group_ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(it->dur, 2636669);
}

// World size 128, rank 1 of a sampled trace: epoch-microsecond timestamps,
// SendRecv kernels without collective arguments; one GPU without
// distributed information beyond its rank.
TEST(KinetoTrace, ReadsSampledAndSingleGpuTraces) {
  const Trace s = read_trace_file(data("ws128_sampled.rank1.json.gz"));
  EXPECT_EQ(s.rank, 1);
  EXPECT_EQ(s.world_size, 128);
  ASSERT_EQ(s.steps.size(), 2u);
  EXPECT_EQ(s.steps[0].number, 551);
  EXPECT_EQ(s.steps[0].ts, 1682725898079484000LL);
  EXPECT_EQ(s.steps[0].dur, 607904000);
  EXPECT_EQ(s.gpu.size(), 1154u);
  const Trace a = read_trace_file(data("alexnet_1gpu.json.gz"));
  EXPECT_EQ(a.rank, 0);
  EXPECT_EQ(a.world_size, -1);
  EXPECT_TRUE(a.steps.empty());
  EXPECT_EQ(a.gpu.size(), 98u);
}

class KinetoBadInput : public test::ScratchDirTest {
 protected:
  // A trace whose traceEvents are `events` (JSON objects, comma-separated).
  static std::string trace(const std::string& events) {
    return R"({"schemaVersion": 1, "distributedInfo": {"rank": 0, "world_size": 2}, "traceEvents": [)" + events + "]}";
  }
  static std::string launch(int corr, const char* ts = "1.0") {
    return std::string(R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": )") + ts +
           R"(, "dur": 2.0, "args": {"correlation": )" + std::to_string(corr) + "}}";
  }
  static std::string kernel(int corr, const char* ts, const char* dur, const char* name = "k") {
    return std::string(R"({"ph": "X", "cat": "kernel", "name": ")") + name + R"(", "pid": 0, "tid": 7, "ts": )" + ts +
           R"(, "dur": )" + dur + R"(, "args": {"device": 0, "stream": 7, "correlation": )" + std::to_string(corr) + "}}";
  }
  void expect_refused(const std::string& text, std::initializer_list<const char*> parts) {
    try {
      (void)parse_trace(text, "t.json");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
      EXPECT_TRUE(what.starts_with("t.json: ")) << what;
      for (const char* p : parts) EXPECT_NE(what.find(p), std::string::npos) << what << " lacks " << p;
    }
  }
};

TEST_F(KinetoBadInput, AGoodTraceParses) {
  const Trace t = parse_trace(trace(launch(1) + "," + kernel(1, "5.0", "3.0") + "," + launch(2, "6.0") + "," +
                                    kernel(2, "8.0", "1.5")),
                              "t.json");
  ASSERT_EQ(t.gpu.size(), 2u);
  EXPECT_EQ(t.gpu[1].ts, 8000);
  EXPECT_EQ(t.gpu[1].dur, 1500);
}

TEST_F(KinetoBadInput, EachProblemIsOneLineNamingTheEvent) {
  expect_refused("{\"traceEvents\": [", {"bad JSON", "byte"});
  expect_refused("[1, 2]", {"not a JSON object"});
  expect_refused(trace(launch(1)), {"no GPU activity"});
  expect_refused(trace(launch(1) + "," + kernel(1, "5.0", "-3.0", "gemm")), {"event 'gemm' at ts 5.0", "negative duration -3.0"});
  expect_refused(trace(launch(1) + "," + kernel(1, "\"five\"", "3.0", "k")), {"'ts' is 'five'"});
  expect_refused(trace(R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "args": {"stream": 7, "correlation": 1}})"),
                 {"event 'k' at ts 1", "no args.device"});
  expect_refused(R"({"distributedInfo": {"rank": 3, "world_size": 2}, "traceEvents": [)" + launch(1) + "," +
                     kernel(1, "5.0", "3.0") + "]}",
                 {"rank 3", "world_size 2"});
  expect_refused(R"({"distributedInfo": {"rank": "x"}, "traceEvents": []})", {"distributedInfo.rank"});
  expect_refused("{\"traceEvents\": " + std::string(100, '[') + std::string(100, ']') + "}", {"nested deeper than 64 levels"});
  expect_refused(trace(launch(1) + "," + kernel(1, "5.0", "3.0") + "," + launch(2, "90000000000.0") + "," +
                       kernel(2, "90000000005.0", "1.0")),
                 {"more than a day"});
  expect_refused(trace(launch(1) + "," + kernel(1, "5.0", "3.0") + "," +
                       R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "ts": 1, "dur": 1},)"
                       R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 3, "dur": 1})"),
                 {"ProfilerStep#1", "after ProfilerStep#2"});
  // A name with a control character (JSON's \u0000) would cut a text report short.
  expect_refused(trace(launch(1) + "," + kernel(1, "5.0", "3.0", "ge\\u0000mm")),
                 {"event at ts 5.0: its name 'ge\\x00mm' holds a control character (U+0000) at byte 2"});
}

// What real clusters' traces get wrong is read by a rule and counted
// (Repairs): an activity that starts before the work ahead of it on its
// stream ends is kept, in stream order; one whose launch is not in the
// trace is kept; an event written twice is dropped once.
using KinetoRepairs = KinetoBadInput;

TEST_F(KinetoRepairs, AnActivityOverlappingTheOneAheadOnItsStreamIsKept) {
  // b starts 1 us before a ends; c lies inside b; d starts after c ends but before b does.
  const Trace t = parse_trace(trace(launch(1) + "," + kernel(1, "5.0", "3.0", "a") + "," + launch(2) + "," + kernel(2, "7.0", "10.0", "b") +
                                    "," + launch(3) + "," + kernel(3, "8.0", "1.0", "c") + "," + launch(4) + "," +
                                    kernel(4, "12.5", "1.0", "d")),
                              "t.json");
  ASSERT_EQ(t.gpu.size(), 4u);
  EXPECT_EQ(t.name_of(t.gpu[1].name), "b");  // stream order is start order
  EXPECT_EQ(t.repairs.overlapping, 3);
  EXPECT_EQ(t.repairs.largest_overlap, 9000);  // c: b ends at 17.0
  EXPECT_EQ(t.repairs.duplicates() + t.repairs.unlaunched, 0);
}

TEST_F(KinetoRepairs, AnActivityWhoseLaunchIsNotInTheTraceIsKept) {
  const Trace t = parse_trace(trace(launch(1) + "," + kernel(9, "2.0", "1.0", "early") + "," + kernel(1, "5.0", "3.0", "k") + "," +
                                    kernel(9, "3.0", "1.0", "early2")),
                              "t.json");
  ASSERT_EQ(t.gpu.size(), 3u);
  EXPECT_EQ(t.repairs.unlaunched, 2);
  EXPECT_FALSE(t.repairs.overlapping);
}

TEST_F(KinetoRepairs, EventsWrittenTwiceAreDroppedOnce) {
  const std::string step = R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0.5, "dur": 20})";
  const std::string wait = R"({"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "ts": 5, "dur": 0, "args": {"cuda_sync_kind": "Stream Wait Event", "stream": 7, "correlation": 2, "device": 0, "wait_on_stream": 40, "wait_on_cuda_event_record_corr_id": 1}})";
  const std::string events = step + "," + launch(1) + "," + kernel(1, "5.0", "3.0", "a") + "," + launch(2, "4.0") + "," + wait + "," +
                             kernel(2, "8.0", "1.0", "b");
  const Trace once = parse_trace(trace(events), "t.json");
  EXPECT_FALSE(once.repairs.any());
  // Every event twice, the copies at the end, as a trace written twice over.
  const Trace twice = parse_trace(trace(events + "," + events), "t.json");
  EXPECT_EQ(twice.repairs.duplicate_activities, 2);
  EXPECT_EQ(twice.repairs.duplicate_calls, 2);
  EXPECT_EQ(twice.repairs.duplicate_steps, 1);
  EXPECT_EQ(twice.repairs.duplicate_waits, 1);
  EXPECT_EQ(twice.repairs.duplicates(), 6);
  EXPECT_EQ(twice.repairs.overlapping, 0);  // not overlapping itself
  EXPECT_EQ(twice.gpu.size(), once.gpu.size());
  EXPECT_EQ(twice.runtime.size(), once.runtime.size());
  EXPECT_EQ(twice.steps.size(), 1u);
  EXPECT_EQ(twice.stream_waits.size(), 1u);
  // Not the same event: another stream, duration or correlation, a step of another number.
  const Trace apart = parse_trace(trace(launch(1) + "," + kernel(1, "5.0", "3.0", "a") + "," +
                                        R"({"ph": "X", "cat": "kernel", "name": "a", "ts": 5.0, "dur": 3.0, "args": {"device": 0, "stream": 8, "correlation": 1}})"),
                                  "t.json");
  EXPECT_EQ(apart.gpu.size(), 2u);
  EXPECT_EQ(apart.repairs.duplicates(), 0);
  // Two steps of one number at different times are still refused.
  expect_refused(trace(launch(1) + "," + kernel(1, "5.0", "3.0") + "," + step + "," +
                       R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 3, "dur": 1})"),
                 {"ProfilerStep#1 at ts 3.000 comes after ProfilerStep#1"});
}

// HTA's rank 0 of the 128-rank job with defects injected
// (tools/kineto-defects/derive.py): 3 kernels, 2 launches and a step
// written twice, the launches of its first 5 activities left out, a copy
// moved to start 33 us before the kernel ahead of it ends.
TEST(KinetoTrace, ARealTraceWithDefectsInjectedIsRepaired) {
  const Trace clean = read_trace_file(data("ws128_sampled.rank0.json.gz"));
  const Trace t = read_trace_file(data("ws128_defects.rank0.json.gz"));
  EXPECT_EQ(t.repairs.duplicate_activities, 3);
  EXPECT_EQ(t.repairs.duplicate_calls, 2);
  EXPECT_EQ(t.repairs.duplicate_steps, 1);
  EXPECT_EQ(t.repairs.duplicate_waits, 0);
  EXPECT_EQ(t.repairs.overlapping, 1);
  EXPECT_EQ(t.repairs.largest_overlap, 33000);
  EXPECT_EQ(t.repairs.unlaunched, 5);
  EXPECT_FALSE(clean.repairs.any());
  EXPECT_EQ(t.gpu.size(), clean.gpu.size());
  EXPECT_EQ(t.runtime.size(), clean.runtime.size() - 5);
  ASSERT_EQ(t.steps.size(), 2u);
  EXPECT_EQ(t.steps[1].dur, clean.steps[1].dur);
}

TEST_F(KinetoBadInput, FilesPlainGzipTruncatedOrMissing) {
  const std::string text = trace(launch(1) + "," + kernel(1, "5.0", "3.0"));
  EXPECT_EQ(read_trace_file(write("plain.json", text)).gpu.size(), 1u);
  const std::string gz = (dir_ / "t.json.gz").string();
  {
    gzFile f = gzopen(gz.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
    gzclose(f);
  }
  EXPECT_EQ(read_trace_file(gz).gpu.size(), 1u);
  std::string bytes;
  {
    std::ifstream in(gz, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::string cut = write("cut.json.gz", bytes.substr(0, bytes.size() / 2));
  try {
    (void)read_trace_file(cut);
    ADD_FAILURE() << "a truncated gzip file was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cut.json.gz: "), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)read_trace_file((dir_ / "missing.json").string()), InputError);
}

}  // namespace
}  // namespace acesim::kineto
