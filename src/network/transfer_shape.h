// A TransferShape is one phase's pattern laid onto the topology: for each run
// of identical steps, the load every link carries per byte of phase data, the
// longest route latency, and the (latency, seconds-per-byte) pairs of its
// messages. Both network backends read it; it does not depend on the data
// size, so one shape serves every chunk of every collective on that group.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "algorithm/algorithm.h"
#include "topology/topology.h"

namespace acesim {

struct LinkLoad {
  LinkId link;
  double bytes_per_byte;  // bytes on this link per byte of phase data (one step)
};

struct ShapeStep {
  int repeat = 1;
  double scale_first = 1.0;
  double scale_step = 0.0;
  double scale_sum = 1.0;
  TimePs max_latency_ps = 0;  // longest route latency among the step's messages
  // Pareto frontier of the messages' (route latency, seconds per phase byte
  // at the route's slowest link): the congestion-unaware step time is
  // max over these of latency + bytes x seconds_per_byte.
  std::vector<std::pair<TimePs, double>> frontier;
  std::vector<LinkLoad> loads;       // sorted by link id
  double max_seconds_per_byte = 0.0;  // max over links of load / bandwidth
  double scale(int k) const { return scale_first + scale_step * k; }
};

// Bytes one NPU puts on / takes off the links of one dimension, per byte of
// phase data, over all steps (forwarded bytes included).
struct NpuLinkTraffic {
  Rank rank;
  int dim;
  double sent;
  double received;
};

// A message of a step as sent on the topology: what a backend that models
// messages individually moves (route: Topology::route(src, dst)).
struct ShapeMessage {
  Rank src;
  Rank dst;
  double fraction;  // of the phase's data size, before the step's scale
};

struct TransferShape {
  std::vector<ShapeStep> steps;
  // Per entry of `steps`, its messages; only for a backend that wants them
  // (NetworkBackend::wants_messages), empty otherwise.
  std::vector<std::vector<ShapeMessage>> step_messages;
  // Per member (position in the group): bytes its messages start with and
  // end at, per byte of phase data, over all steps. What the endpoint's
  // memory and engines handle; routes' forwarding is not included.
  std::vector<double> originated;
  std::vector<double> terminated;
  std::vector<NpuLinkTraffic> link_traffic;  // sorted by rank, then dimension
  long long total_steps = 0;
  std::vector<double> bytes_per_dim;  // link bytes per phase byte, per dimension, all steps
  mutable int backend_slot = -1;  // the network backend's own per-shape cache entry
};

TransferShape build_shape(const Topology& topo, const Pattern& pattern, std::span<const Rank> members,
                          bool with_messages = false);

// Shapes built once per (op, algorithm, group) and shared.
class ShapeCache {
 public:
  // `with_messages`: shapes keep their steps' messages (a backend wants them).
  explicit ShapeCache(const Topology& topo, bool with_messages = false) : topo_(topo), with_messages_(with_messages) {}
  // `key` must identify op, algorithm and group uniquely.
  const TransferShape& get(std::uint64_t key, CollectiveOp op, Algorithm alg, std::span<const Rank> members);
  std::size_t size() const { return shapes_.size(); }

 private:
  const Topology& topo_;
  bool with_messages_;
  std::unordered_map<std::uint64_t, std::unique_ptr<TransferShape>> shapes_;
};

}  // namespace acesim
