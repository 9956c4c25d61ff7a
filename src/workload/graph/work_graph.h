// The one workload representation: per rank, a dependency graph of compute,
// CPU, collective, send/receive and wait nodes (docs/workloads.md). Chakra
// traces map onto it node for node; built-in models and ASTRA-sim tables
// are lowered into it (training_lowering.h). GraphExecutor runs it.
//
// An edge says "the child may not start before the parent is done". Edges
// into a wait node also carry a delay: the wait is over no earlier than the
// parent's end plus that delay (an optimizer update after a gradient
// collective, say).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "collective/types.h"
#include "endpoint/endpoint.h"
#include "engine/time.h"
#include "topology/topology.h"

namespace acesim {

enum class WorkNodeKind : std::uint8_t {
  kCompute,     // a kernel on the rank's compute stream (through the NPU model)
  kCpu,         // a delay on the rank's CPU
  kCollective,  // handed to the collective engine when ready
  kSend,        // a point-to-point message to a peer
  kRecv,        // done when the matching message has arrived
  kWait,        // a point on the compute stream where it waits for communication
  kNop,         // takes no time (Chakra metadata, a collective with nothing to move)
  kDelay,       // a delay that holds no resource: done its kernel's time_ps after it is ready
                // (a launch's latency, communication of a measured duration)
};

// When a wait node lets the compute stream go on (GraphExecutor has the
// details). Every rule: the stream stops at the wait until all its
// communication is done and the latest end-plus-delay has passed.
enum class WaitRule : std::uint8_t {
  kGate,    // waking up is scheduled when the last communication is done
  kResume,  // a blocking collective: the stream sleeps until end + delay, and
            // any earlier wake-up of the stream (a gate just after it) ends the sleep
  kEnd,     // the rank's last node: wakes at the last communication's end + its delay, then checks again
};

struct CollectiveSpec {
  CollectiveOp op = CollectiveOp::kAllReduce;
  double bytes = 0.0;     // nccl-tests convention
  std::vector<int> dims;  // empty: all
  std::string name;
  std::vector<Rank> members;  // not empty: exactly these ranks (ascending), not dims
  long long root = 0;         // rooted operations: the root's position in its group
};

struct MessageSpec {
  Rank peer = 0;  // destination of a send, source of a receive
  std::int64_t tag = 0;
  double bytes = 0.0;
  // A put no receive node waits for: among ranks that run alike, what a
  // rank receives is the mirror of what it sends (a ring exchange), so its
  // send's end stands for both.
  bool mirrored = false;
};

struct GraphNode {
  WorkNodeKind kind = WorkNodeKind::kNop;
  WaitRule rule = WaitRule::kGate;
  std::uint32_t payload = 0;  // index of its kernel, collective or message; a wait's own index
  std::uint32_t after = 0;    // a wait: the compute-stream node it follows
};

struct GraphDep {
  std::uint32_t node;
  TimePs delay = 0;  // only into wait nodes
};

class WorkGraph {
 public:
  static constexpr std::uint32_t kNone = ~0u;

  // ---- building; finish() before running. Deps may name nodes added later
  // (the graph must have no cycle); a wait's, earlier ones. ----
  std::uint32_t add_kernel(const Kernel& k);  // payloads, shareable by many nodes
  // A collective equal to one added before gets that one's payload (a
  // training step issues the same few collectives thousands of times).
  std::uint32_t add_collective(CollectiveSpec c);
  std::uint32_t add_message(const MessageSpec& m);
  // kCompute / kCpu / kDelay: payload is a kernel; kCollective a collective; kSend /
  // kRecv a message; kNop none. Deps carry no delay.
  std::uint32_t add_node(WorkNodeKind kind, std::uint32_t payload, std::span<const std::uint32_t> deps);
  // A wait after compute-stream node `after`, on communication nodes `comm`.
  std::uint32_t add_wait(WaitRule rule, std::uint32_t after, std::span<const GraphDep> comm);
  void finish();
  // A job placed on some of a larger platform's NPUs: the ranks in
  // collectives' member lists and messages' peers mapped through `to`,
  // which must keep their order (member lists stay ascending). Every
  // collective must list its members. Throws std::logic_error otherwise.
  void relabel_ranks(const std::function<Rank(Rank)>& to);
  // Rank r's own copy of a graph whose collectives run over dimensions: each
  // such collective lists its members instead, r's group of those
  // dimensions on `topo` (ascending), so that relabel_ranks can place it.
  void list_groups(const Topology& topo, Rank r);

  // ---- reading ----
  std::uint32_t size() const { return static_cast<std::uint32_t>(nodes_.size()); }
  const GraphNode& node(std::uint32_t i) const { return nodes_[i]; }
  const Kernel& kernel(std::uint32_t payload) const { return kernels_[payload]; }
  const CollectiveSpec& collective(std::uint32_t payload) const { return collectives_[payload]; }
  std::uint32_t collectives() const { return static_cast<std::uint32_t>(collectives_.size()); }
  const MessageSpec& message(std::uint32_t payload) const { return messages_[payload]; }
  std::uint32_t waits() const { return waits_; }
  const std::vector<std::int32_t>& indegree() const { return indegree_; }
  std::uint32_t child_begin(std::uint32_t i) const { return child_begin_[i]; }
  std::uint32_t child_end(std::uint32_t i) const { return child_begin_[i + 1]; }
  std::uint32_t child(std::uint32_t e) const { return children_[e]; }
  TimePs child_delay(std::uint32_t e) const { return child_delay_[e]; }

  // Where the graph came from, for messages ("x.0.et", a workload's name).
  std::string source;
  // Optional: "x.0.et: node 7 (name)" for errors about node i.
  std::function<std::string(std::uint32_t)> where;
  // Optional: what node i (ready, not done) waits for, for stuck reports;
  // "" leaves it out.
  std::function<std::string(std::uint32_t)> pending_text;

 private:
  std::vector<GraphNode> nodes_;
  std::vector<Kernel> kernels_;
  std::vector<CollectiveSpec> collectives_;
  std::unordered_multimap<std::size_t, std::uint32_t> collective_index_;  // while building: hash -> payload
  std::vector<MessageSpec> messages_;
  std::uint32_t waits_ = 0;
  // While building: each node's parents.
  std::vector<std::uint32_t> dep_begin_{0};
  std::vector<GraphDep> deps_;
  // After finish(): children in CSR form, in order of child, then of the child's deps.
  std::vector<std::int32_t> indegree_;
  std::vector<std::uint32_t> child_begin_;
  std::vector<std::uint32_t> children_;
  std::vector<TimePs> child_delay_;
};

bool is_communication(WorkNodeKind k);

// Bitmask of a collective's dimensions (empty: all of the topology's).
std::uint32_t dims_mask(const std::vector<int>& dims, const Topology& topo);

}  // namespace acesim
