// The job a set of PyTorch profiler traces describes, laid out on a platform
// (docs/workloads.md, "Replaying a PyTorch profiler trace"):
//
//   ranks      the traces' world size (distributedInfo.world_size; 1 without
//              it); each trace is one rank's (distributedInfo.rank); with
//              one trace only, it stands for every rank
//   --dp N     the data-parallel group made N wide: the group whose pg_desc
//              or name is the data-parallel one (DATA_PARALLEL_GROUP, dp;
//              else the smallest that names data parallelism and no other
//              dimension), else the whole job; a group of one rank (no data
//              parallelism traced) grows inside the pipeline stages. Its ranks are an
//              arithmetic progression (stride s, size n), the job's groups
//              tile as Megatron-LM and torch's DeviceMesh lay them out, and a
//              rank is (r mod s, its place in the group, r div (s n)); the
//              new job has N in place of n, every other coordinate kept, so
//              a group maps member by member, the data-parallel group (and
//              the whole job) to its N-wide (whole) counterpart. Compute and
//              each collective's bytes stay as traced.
//   placement  job rank -> GPU: packed (in order, the default), spread (round
//              robin over the platform's nodes: its first dimension's GPUs
//              make a node) or a list of GPUs ("0-3,8-11"), one per rank
//
// Every problem is an InputError of one line.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/platform.h"
#include "topology/topology.h"
#include "workload/formats/kineto_trace.h"

namespace acesim {

struct KinetoJobOptions {
  long long dp = 0;       // --dp N; 0 keeps the traced job
  std::string placement;  // "", "packed", "spread" or a GPU list
};

class KinetoJob {
 public:
  // `traces`: one per traced rank, any order. Throws InputError for traces
  // of different jobs or steps, a rank traced twice, a --dp the groups do
  // not allow, a placement that does not fit, and a platform with fewer GPUs
  // than the job.
  KinetoJob(const std::vector<kineto::Trace>& traces, const PlatformConfig& platform, const KinetoJobOptions& options);

  long long traced_world() const { return traced_world_; }
  long long world() const { return world_; }  // after --dp
  long long npus() const { return static_cast<long long>(npus_); }
  bool one_for_all() const { return one_for_all_; }  // one trace stands for every rank
  // The job rank trace i replays, and its GPU.
  long long job_rank(std::size_t trace) const { return job_rank_[trace]; }
  Rank gpu(long long job_rank) const { return gpu_of_[static_cast<std::size_t>(job_rank)]; }
  // A group of trace ranks as the GPUs it runs on (ascending): after --dp
  // and the placement.
  // `name`: the group's pg_name, where the trace gives it.
  std::vector<Rank> group_gpus(const std::vector<int>& trace_ranks, const std::string& name = "") const;
  // The same group as job ranks (before the placement), ascending.
  std::vector<Rank> group_ranks(const std::vector<int>& trace_ranks, const std::string& name = "") const;
  // What the report says: the data-parallel group taken, the placement.
  const std::vector<std::string>& assumptions() const { return assumptions_; }
  const std::string& placement() const { return placement_; }

 private:
  long long map_rank(long long r) const;
  bool default_group(const std::string& name) const;  // PyTorch's default process group

  long long traced_world_ = 1, world_ = 1;
  std::size_t npus_ = 1;
  bool one_for_all_ = true;
  // --dp: the data-parallel group's stride and traced size, and its new size.
  long long dp_stride_ = 1, dp_size_ = 1, dp_new_ = 1;
  bool dp_changed_ = false;
  std::vector<long long> job_rank_;
  std::vector<Rank> gpu_of_;
  std::vector<std::string> assumptions_;
  std::string placement_ = "packed";
  std::vector<kineto::ProcessGroup> groups_;  // the first trace's
};

// "0-3,8,9": GPUs of a platform of `npus`, each once; `flag` names the
// option in errors.
std::vector<Rank> parse_gpu_list(const std::string& flag, const std::string& text, long long npus);

}  // namespace acesim
