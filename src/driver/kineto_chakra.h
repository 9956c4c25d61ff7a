// PyTorch profiler traces exported as Chakra execution traces, the job as
// `acesim run --kineto PATH` lays it out (docs/workloads.md, "Replaying a
// PyTorch profiler trace"): `--chakra-out PREFIX` writes PREFIX.<rank>.et
// for every rank of the job and PREFIX.groups.json (ASTRA-sim's
// communicator-group file), so that ASTRA-sim, or `acesim run --chakra
// PREFIX --chakra-groups PREFIX.groups.json`, runs the replayed job.
//
// Each rank's trace is its replay's graph (kineto_replay.h), node for node:
//   CPU time          COMP_NODE, is_cpu_op, duration_micros
//   compute stream    COMP_NODE named for its kernel, duration_micros
//   other streams     COMP_NODE (Chakra has one compute stream: they run
//                     on it, in series with the compute stream)
//   NCCL kernels      COMM_COLL_NODE (comm_size a rank's input, pg_name its
//                     group); at their measured duration, a COMP_NODE
//   ProfilerStep#N    METADATA_NODE on the CPU chain, where the step begins
//   launch latencies  dropped (a kernel follows the CPU point that launched it)
// Durations are whole microseconds: each resource's (CPU, GPU) are rounded
// so that their running sum stays within half a microsecond of the trace's.
// Ranks are the job's (after --dp), not the GPUs --placement puts them on.
// With one trace standing for every rank, another rank's group is the one
// of the same stride and size that holds it (the groups tile the job, as
// Megatron-LM and DeviceMesh lay them out); groups that do not tile are
// refused.
#pragma once

#include <string>
#include <vector>

#include "config/platform.h"
#include "driver/kineto_run.h"
#include "workload/formats/kineto_trace.h"
#include "workload/llm/llm_chakra.h"

namespace acesim {

// Throws InputError for a job of more than kMaxChakraExportRanks ranks,
// traces of some ranks only, groups that do not tile the job, and files
// that cannot be written.
ChakraExportSummary export_kineto_chakra(const std::vector<kineto::Trace>& traces, const PlatformConfig& platform,
                                         const KinetoRunOptions& options, const std::string& prefix);

}  // namespace acesim
