// PyTorch profiler (Kineto) traces: the Chrome-trace JSON that
// torch.profiler writes for one rank, `.json` or `.json.gz` (docs/formats.md,
// "PyTorch profiler traces"). This is the reader: it streams the file once
// (RapidJSON's SAX reader over zlib), keeps what a replay needs -- the GPU's
// kernels, copies and sets with their streams and measured times, the CUDA
// runtime and driver calls that launched them, the ProfilerStep#N
// iterations, the job's ranks and process groups, and each NCCL kernel's
// collective -- checks it, repairs what real traces get wrong but can be
// read (Repairs: events written twice, activities overlapping the work
// ahead on their stream, activities whose launch is not in the trace), and
// gives a plain model of it.
//
// Every problem is an InputError of one line naming the file, the event
// (its name and timestamp) where there is one, and what is wrong.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace acesim::kineto {

// Times are integer nanoseconds as the trace writes them (microseconds with
// three decimals), on the trace's own clock.
using Ns = std::int64_t;

struct ProcessGroup {
  std::string name;         // pg_name
  std::string description;  // pg_desc, e.g. "default_pg"
  std::vector<int> ranks;
};

// A ProfilerStep#N annotation: one training iteration on the CPU side.
struct Step {
  long long number = 0;
  Ns ts = 0, dur = 0;
};

// What a NCCL kernel's own arguments say of its collective (PyTorch 2.1+:
// "Collective name", "In msg nelems", ...); absent fields stay empty / -1.
struct Collective {
  std::string name;          // "allreduce", "broadcast", "allgather", ...
  long long in_elements = -1, out_elements = -1;
  int group_size = -1;
  std::string dtype;         // "Float", "BFloat16", ...
  std::string group_name;    // "Process Group Name"
  std::vector<int> group_ranks;  // "Process Group Ranks"
};

enum class GpuKind : std::uint8_t { kKernel, kMemcpy, kMemset };
std::string_view to_string(GpuKind k);

struct GpuActivity {
  GpuKind kind = GpuKind::kKernel;
  std::uint32_t name = 0;  // index into Trace::names
  int device = 0;
  long long stream = 0;
  Ns ts = 0, dur = 0;
  long long correlation = -1;  // the runtime call that launched it
  std::optional<Collective> collective;  // a NCCL kernel
  bool nccl = false;  // its name is a NCCL kernel's (ncclKernel_*, ncclDevKernel_*)
};

struct RuntimeCall {
  std::uint32_t name = 0;  // index into Trace::names: cudaLaunchKernel, cudaStreamSynchronize, ...
  Ns ts = 0, dur = 0;
  long long correlation = -1;
  long long tid = 0;
  bool driver = false;  // cuda_driver (cuLaunchKernel, ...) rather than cuda_runtime
};

// A "Stream Wait Event" cuda_sync activity (traces taken with
// enable_cuda_sync_events): `stream` waited, from the cudaStreamWaitEvent
// call `correlation` on, for what stream `on_stream` had been given when
// the cudaEventRecord call `record_correlation` recorded the event.
struct StreamWait {
  int device = 0;
  long long stream = 0, on_stream = 0;
  long long correlation = -1, record_correlation = -1;
  Ns ts = 0;
};

// What the reader repaired: irregularities real traces have, each read by a
// rule (docs/formats.md, "PyTorch profiler (Kineto) traces") and counted
// here so that the report can say what was repaired.
struct Repairs {
  // Events written twice (every field the reader keeps the same): the
  // copies are dropped.
  long long duplicate_activities = 0;  // GPU activities
  long long duplicate_calls = 0;       // cuda_runtime / cuda_driver calls
  long long duplicate_steps = 0;       // ProfilerStep annotations
  long long duplicate_waits = 0;       // cuda_sync Stream Wait Events
  // Activities that start on their stream before the one ahead of them
  // ends: kept, and replayed in stream order (after the one ahead).
  long long overlapping = 0;
  Ns largest_overlap = 0;  // how much earlier than that end the most overlapping one starts
  // GPU activities whose correlation names no runtime or driver call of the
  // trace (launched before the profiling window opened): kept, and replayed
  // from their traced start.
  long long unlaunched = 0;
  long long duplicates() const { return duplicate_activities + duplicate_calls + duplicate_steps + duplicate_waits; }
  bool any() const { return duplicates() + overlapping + unlaunched > 0; }
  Repairs& operator+=(const Repairs& o);
};

struct Trace {
  std::string file;
  int rank = -1;        // distributedInfo.rank; -1 when absent (a 1-GPU run)
  int world_size = -1;  // distributedInfo.world_size
  std::string backend;  // distributedInfo.backend, e.g. "nccl"
  std::string device_name;  // deviceProperties[0].name
  std::vector<ProcessGroup> groups;
  std::vector<Step> steps;             // in time order
  std::vector<GpuActivity> gpu;        // in time order (on each stream: stream order)
  std::vector<RuntimeCall> runtime;    // in time order
  std::vector<StreamWait> stream_waits;  // in time order; empty in traces without cuda_sync events
  // Stream Wait Events left out: the record unknown (-1, as PyTorch 2.11
  // writes them) or its call or record outside the trace.
  long long stream_waits_dropped = 0;
  Repairs repairs;
  std::vector<std::string> names;      // each distinct event name once
  const std::string& name_of(std::uint32_t i) const { return names[i]; }
};

// Input limits, checked as the file streams in.
inline constexpr std::uint64_t kMaxTraceBytes = 16ULL << 30;  // uncompressed JSON
inline constexpr std::size_t kMaxEvents = 50'000'000;
inline constexpr int kMaxRanks = 1 << 24;

// Reads one trace file (.json, or gzip-compressed .json.gz). Only a regular
// file (links followed) is read: a FIFO, a device or a directory is
// refused, never opened (a FIFO would block).
Trace read_trace_file(const std::string& path);
// Why `path` cannot be read as a trace file, for a message after "PATH: ":
// "" for a regular file; else what it is ("not a trace file: a FIFO",
// "not a trace file: a symbolic link that loops", ...) or why it cannot be
// looked at ("cannot open the trace file: Permission denied").
std::string why_not_a_trace_file(const std::string& path);
// Parses a trace's JSON text; `file` names it in errors.
Trace parse_trace(std::string_view json, const std::string& file);

// "123.456" (microseconds, as the trace writes them) as nanoseconds; also
// integers and exponents. nullopt for anything else.
std::optional<Ns> parse_us(std::string_view text);

}  // namespace acesim::kineto
