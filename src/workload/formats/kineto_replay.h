// A PyTorch profiler trace (kineto_trace.h) as one rank's work graph: what
// the GPU did, launched when the CPU launched it (docs/workloads.md,
// "Replaying a PyTorch profiler trace").
//
// The CPU side is the trace's launch timeline: every CUDA runtime or driver
// call that launched GPU work or synchronised with it, on all of the rank's
// threads merged in time, is a point of a chain of delays (kDelay: the CPU's
// own time is the trace's, whatever the GPU does); a point after a
// synchronising call (cudaDeviceSynchronize, cudaStreamSynchronize,
// cudaEventSynchronize, cudaMemcpy) also waits for every GPU activity
// launched before it. The GPU side: each activity waits for its launch
// point plus its launch latency, and for the activity before it on its
// stream. An activity launched while what it waits for was still to end
// (by more than the trace's median latency) queued: it takes the median
// latency, and starts after what it waited for by the gap the trace shows
// (the GPU's few microseconds between queued kernels, or a wait the trace
// does not show); any other takes its own measured latency. What the
// reader repaired (kineto::Repairs) replays by rule: an activity that
// overlapped the work ahead on its stream runs after it, in stream order;
// one whose launch is not in the trace is launched at its traced start
// with no latency (a point of the CPU's chain of its own, on no thread).
// The busiest stream's kernels, copies and sets run on the rank's compute
// stream at their measured durations; other streams' beside it as delays. Across streams: a trace with cuda_sync "Stream Wait Event"
// activities (enable_cuda_sync_events) says for each cudaStreamWaitEvent
// which cudaEventRecord it waits on, and the waiting stream's next activity
// waits for the last one launched on the recorded stream before the record.
// Without them the waits are inferred as PyTorch's NCCL process group makes
// them: NCCL kernels wait for the compute-stream work launched before them
// (PyTorch records an event there and makes NCCL's stream wait for it);
// compute-stream work launched after a cudaStreamWaitEvent that follows a
// NCCL launch on its thread waits for that collective (work.wait()); and a
// step's first compute-stream activity waits for the NCCL kernels launched
// in the steps before (a step's collectives are awaited within it: DDP's
// gradient reduction before the optimizer). Every wait the measurement
// contradicts (the work started before the other ended) is left out. With
// `simulate_comm` a NCCL kernel whose arguments name its collective, size
// and group runs as that collective on the platform; any other NCCL kernel
// (older traces, unknown collectives) keeps its measured duration, and the
// replay says how many and why.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "workload/formats/kineto_trace.h"
#include "workload/graph/work_graph.h"

namespace acesim {

struct KinetoReplayOptions {
  bool simulate_comm = true;
  long long job_ranks = 1;  // ranks of the traced job; groups must lie within
  // The GPUs a group of the trace's ranks runs on, ascending (the job's
  // layout on the platform: driver/kineto_job.h); the ranks themselves when
  // empty.
  std::function<std::vector<Rank>(const std::vector<int>&, const std::string& group_name)> group_gpus;
  // The instant of the trace's clock the replay's time 0 stands for, at or
  // before kineto_replay_origin(trace); the CPU's chain begins with the time
  // between the two (several ranks' traces aligned: driver/kineto_run.h).
  // Unset: the origin itself.
  std::optional<kineto::Ns> start_ns;
};

// What each node of a replay stands for (the Chakra export needs it).
enum class KinetoNodeRole : std::uint8_t {
  kCpu,         // the CPU's own time up to a launch, synchronisation or step (a delay)
  kLaunch,      // a launch's latency (a delay)
  kCompute,     // a compute-stream kernel, copy or set at its measured duration
  kSideStream,  // an activity on another stream, at its measured duration (a delay)
  kComm,        // a NCCL kernel: a collective, or its measured duration (a delay)
  kEnd,         // the end of the run
};

struct KinetoReplay {
  WorkGraph graph;
  std::vector<KinetoNodeRole> roles;  // one per node of the graph
  // Chain nodes reached at each ProfilerStep's start, and one at the last
  // step's end: step k is replayed from anchor[k] to anchor[k + 1]. With no
  // ProfilerStep, the trace's first and last launch.
  std::vector<std::uint32_t> anchors;
  std::vector<kineto::Ns> anchor_measured_ns;  // where each anchor lies in the trace
  std::vector<long long> step_numbers;         // one per step (anchors - 1)
  // What the graph holds.
  long long kernels = 0, copies = 0, sets = 0;
  long long side_stream_activities = 0;  // on streams other than the busiest (as delays)
  long long collectives_simulated = 0;
  long long collectives_measured = 0;   // NCCL kernels at their measured duration
  std::map<std::string, long long> measured_why;  // reason -> count
  long long launches = 0, syncs = 0, compute_waits = 0;
  long long gaps = 0;          // queued activities that start after a gap behind what they waited for
  long long stream_waits = 0;  // activities that waited for an event recorded on another stream (cuda_sync)
  long long stream_waits_dropped = 0;  // the trace's Stream Wait Events that name no record in it
  long long step_waits = 0;    // waits of a step's first compute activity for the NCCL kernels before it
  kineto::Repairs repairs;     // what the reader repaired in the trace
  // Each GPU activity's node (trace order), and the instant of the trace's
  // clock that the replay's time 0 stands for (KinetoReplayOptions::start_ns).
  std::vector<std::uint32_t> activity_nodes;
  kineto::Ns origin_ns = 0;
  long long main_stream = 0;
  int streams = 0;
  kineto::Ns median_launch_latency = 0;
};

// Throws InputError (naming the trace and the event) for what cannot be
// replayed: a collective group with ranks outside the job.
KinetoReplay kineto_replay(const kineto::Trace& trace, const KinetoReplayOptions& options);
// Where a replay of the trace begins: its first launch, synchronisation,
// event wait or record, or step.
kineto::Ns kineto_replay_origin(const kineto::Trace& trace);

// A NCCL collective's name in a trace ("allreduce", "_allgather_base", ...)
// as an operation; nullopt for names acesim does not simulate.
std::optional<CollectiveOp> kineto_collective_op(std::string_view name);
// Bytes per element of a trace's dtype ("Float", "BFloat16", ...); 0 when unknown.
int kineto_dtype_bytes(std::string_view dtype);

}  // namespace acesim
