// LLM training jobs (llm_graph.h) exported as Chakra execution traces
// (docs/workloads.md, "Exporting LLM jobs"): `acesim run --model M --tp ...
// --chakra-out PREFIX` writes PREFIX.<rank>.et for every rank and
// PREFIX.groups.json (ASTRA-sim's communicator-group file), so that
// `acesim run --chakra PREFIX --chakra-groups PREFIX.groups.json
// --chakra-flops` runs the same job; ASTRA-sim can read them too.
//
// Each rank's trace is its full-simulation graph (LlmJob::build), node for
// node in graph order, dependencies as data_deps:
//   kernel      COMP_NODE, num_ops = flops / flops_efficiency, tensor_size =
//               hbm_bytes / hbm_efficiency (whole bytes), so that the
//               roofline at efficiency 1 gives the kernel's time;
//               duration_micros its time alone on `npu`, rounded up to µs
//   collective  COMM_COLL_NODE, comm_size in Chakra's convention (a rank's
//               input: an all-gather's output / group), pg_name its group
//   send / recv COMM_SEND_NODE / COMM_RECV_NODE, comm_src, comm_dst, comm_tag
//   nop         METADATA_NODE
// then one METADATA_NODE ProfilerStep#k per iteration k, which the first
// nodes of iteration k follow, so that a Chakra run splits the iterations as
// the LLM run does.
#pragma once

#include <string>

#include "endpoint/npu_config.h"
#include "topology/topology.h"
#include "workload/llm/llm_graph.h"

namespace acesim {

inline constexpr long long kMaxChakraExportRanks = 4096;

struct ChakraExportSummary {
  long long ranks = 0;
  long long groups = 0;
  long long nodes = 0;  // over all ranks
};

// Throws InputError (naming --chakra-out) for more than kMaxChakraExportRanks ranks.
void check_chakra_export_ranks(long long ranks);

// Throws InputError for more than kMaxChakraExportRanks ranks (before
// writing anything) and for files that cannot be written.
ChakraExportSummary export_llm_chakra(const LlmJob& job, const Topology& topo, const NpuConfig& npu,
                                      const std::string& prefix);

}  // namespace acesim
