// Converts a training workload (ASTRA-sim 1.0 table, built-in model) to the
// equivalent Chakra traces, one iteration, for the tests that check both
// inputs give the same time. The graph is the training loop of
// src/workload/graph/training_lowering.h: forward layer by layer, each blocking collective
// gating what follows; backward from the last layer, the weight-gradient
// collective issued and not waited for, the input gradient (not for layer 0)
// and its blocking collective. Durations must be whole microseconds (the
// format's unit); update delays and DLRM's deferred collectives have no
// counterpart and are refused.
#pragma once

#include <stdexcept>
#include <string>

#include "chakra_writer.h"
#include "topology/topology.h"
#include "workload/workload.h"

namespace acesim::test::chakra {

inline wire::CollectiveCommType wire_type(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce: return wire::ALL_REDUCE;
    case CollectiveOp::kAllGather: return wire::ALL_GATHER;
    case CollectiveOp::kReduceScatter: return wire::REDUCE_SCATTER;
    case CollectiveOp::kAllToAll: return wire::ALL_TO_ALL;
    case CollectiveOp::kBroadcast: return wire::BROADCAST;
    case CollectiveOp::kReduce: return wire::REDUCE;
    case CollectiveOp::kGather: return wire::GATHER;
    case CollectiveOp::kScatter: return wire::SCATTER;
  }
  return wire::ALL_REDUCE;
}

inline TraceWriter workload_to_chakra(const Workload& w, const Topology& topo) {
  const int num_dims = topo.num_dims();
  TraceWriter t;
  uint64_t next = 0;
  std::vector<uint64_t> chain;  // what the next compute waits for
  auto micros = [](const Kernel& k, const std::string& what) -> uint64_t {
    if (k.time_ps < 0) throw std::invalid_argument(what + ": only kernels given as times convert");
    if (k.time_ps % 1'000'000 != 0) throw std::invalid_argument(what + ": not a whole number of microseconds");
    return static_cast<uint64_t>(k.time_ps / 1'000'000);
  };
  auto comp = [&](const std::string& name, const Kernel& k) {
    const uint64_t id = next++;
    t.comp(id, name, micros(k, name), chain);
    return id;
  };
  // Issues a collective after `after`; returns its id, or none.
  auto coll = [&](const std::string& name, const CommSpec& c, uint64_t after) -> std::optional<uint64_t> {
    if (!c.op || c.dims.empty()) return std::nullopt;
    if (c.wait_before_forward_layer >= 0 || c.issue_after_backward_layer >= 0) {
      throw std::invalid_argument(name + ": deferred collectives have no Chakra counterpart here");
    }
    std::vector<bool> involved(static_cast<std::size_t>(num_dims), false);
    for (int d : c.dims) involved[static_cast<std::size_t>(d)] = true;
    // Chakra's all-gather comm_size is each rank's input, acesim's the output.
    double bytes = c.bytes;
    if (*c.op == CollectiveOp::kAllGather) {
      for (int d : c.dims) bytes /= topo.dim(d).npus;
    }
    const uint64_t id = next++;
    t.coll(id, name, wire_type(*c.op), static_cast<int64_t>(bytes), {after}, involved);
    return id;
  };
  for (const Layer& l : w.layers) {
    if (l.update_ps != 0) throw std::invalid_argument(l.name + ": update delays have no Chakra counterpart");
    if (!l.recompute_forward.empty()) throw std::invalid_argument(l.name + ": recomputation is not converted");
  }
  for (const Layer& l : w.layers) {
    const uint64_t f = comp(l.name + ".fwd", l.forward.compute);
    chain = {f};
    if (const auto c = coll(l.name + ".fwd_comm", l.forward.comm, f); c && l.forward.comm.blocking) chain = {*c};
  }
  for (int i = static_cast<int>(w.layers.size()) - 1; i >= 0; --i) {
    const Layer& l = w.layers[static_cast<std::size_t>(i)];
    const uint64_t wg = comp(l.name + ".wg", l.weight_grad.compute);
    coll(l.name + ".wg_comm", l.weight_grad.comm, wg);  // not waited for
    chain = {wg};
    if (i > 0) chain = {comp(l.name + ".ig", l.input_grad.compute)};
    if (const auto c = coll(l.name + ".ig_comm", l.input_grad.comm, chain.front()); c && l.input_grad.comm.blocking) {
      chain = {*c};
    }
  }
  return t;
}

// Rounds every kernel given as a time to whole microseconds and drops
// update delays, so that the workload converts exactly.
inline void round_to_micros(Workload& w) {
  auto round = [](Kernel& k) {
    if (k.time_ps >= 0) k.time_ps = (k.time_ps + 500'000) / 1'000'000 * 1'000'000;
  };
  for (Layer& l : w.layers) {
    round(l.forward.compute);
    round(l.input_grad.compute);
    round(l.weight_grad.compute);
    l.update_ps = 0;
  }
}

}  // namespace acesim::test::chakra
