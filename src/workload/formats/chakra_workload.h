// Chakra execution traces bound to a platform (docs/workloads.md, "Chakra
// execution traces"): communicator groups, whether the ranks run the same
// program, and each trace as a work graph (node for node, in file order).
// The protobuf reader itself is src/chakra.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "chakra/chakra_trace.h"
#include "topology/topology.h"
#include "workload/graph/work_graph.h"

namespace acesim {

// Communicator groups (ASTRA-sim's --comm-group-configuration JSON:
// {"name": [ranks...]}): any set of ranks. A group that is all the NPUs of
// some topology dimensions around its first rank is `whole`: a collective
// whose pg_name names it runs over those dimensions (and a symmetric run
// keeps it); any other group runs as its listed ranks, routed over the
// fabric, in a full simulation.
struct ChakraGroup {
  std::vector<Rank> ranks;  // sorted
  std::vector<int> dims;    // the dimensions along which its ranks differ
  bool whole = true;        // ranks are exactly the NPUs of `dims` around ranks[0]
  bool listed = false;      // whole, but run as its listed ranks (list_divergent_groups)
};
using ChakraGroups = std::map<std::string, ChakraGroup>;
// Throws InputError naming the file and group: bad JSON, ranks out of range
// or repeated.
ChakraGroups read_chakra_groups(const std::string& path, const Topology& topo);

// A collective over whole dimensions is one collective across every
// instance of those dimensions (the executor pairs the k-th collective each
// rank issues over them). That holds only when every rank issues the same
// collectives over them: when some rank's sequence (type, size and root, in
// file order) over whole groups of some dimensions differs from another's,
// as pipeline stages' do, the instances are not one program, and every
// whole group (of any dimensions) is marked `listed`: it runs as its listed
// ranks, a communicator of its own, as groups that are not whole do.
// Returns whether it marked any.
bool list_divergent_groups(const std::vector<chakra::Trace>& traces, ChakraGroups& groups);

// Every collective's pg_name is a group of `groups` that has its rank.
// Throws InputError naming the file and node.
void check_chakra_groups(const std::vector<chakra::Trace>& traces, const ChakraGroups& groups);

// Why a set of traces is not the same program on every rank (so one
// representative rank cannot stand for all), or "" when it is. Node ids may
// differ; what must match is each node's position, contents and the
// positions of its dependencies; with groups, pg_names whose groups span the
// same dimensions match. Sends and receives, rooted collectives and groups
// that are not whole dimensions are never symmetric.
std::string chakra_asymmetry(const std::vector<chakra::Trace>& traces, const ChakraGroups* groups = nullptr);

struct ChakraBinding {
  // Compute nodes with num_ops run as FLOPs (and tensor_size as HBM bytes)
  // through the NPU's roofline instead of taking their recorded duration.
  bool roofline = false;
  const ChakraGroups* groups = nullptr;  // when given, pg_name picks a collective's group
  Rank rank = 0;  // the trace's rank: where a comm_root must lie
};

// Node i of the graph is node i of the trace:
//   COMP_NODE (not is_cpu_op), MEM_LOAD_NODE, MEM_STORE_NODE: compute stream
//   COMP_NODE with is_cpu_op: CPU, a delay of its duration
//   COMM_COLL_NODE: a collective (a no-op when its group is one NPU or it
//                   moves nothing); COMM_SEND_NODE / COMM_RECV_NODE: messages
//   METADATA_NODE: a no-op
// Throws InputError for nodes the platform cannot run (dimensions it does
// not have, unsupported collective types), naming file and node; groups
// must have passed check_chakra_groups. The graph refers to `trace`.
WorkGraph chakra_graph(const chakra::Trace& trace, const Topology& topo, const ChakraBinding& binding);

}  // namespace acesim
