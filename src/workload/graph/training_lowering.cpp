#include "workload/graph/training_lowering.h"

#include <array>
#include <optional>
#include <utility>
#include <stdexcept>
#include <string>

namespace acesim {
namespace {

void check(const Workload& w) {
  const int layers = static_cast<int>(w.layers.size());
  if (w.layers.empty()) throw std::invalid_argument("workload has no layers");
  if (w.iterations < 1) throw std::invalid_argument("workload needs at least one iteration");
  for (const Layer& l : w.layers) {
    if (l.forward.comm.wait_before_forward_layer >= layers || l.input_grad.comm.issue_after_backward_layer >= layers) {
      throw std::invalid_argument("layer " + l.name + ": its collective refers to a layer that does not exist");
    }
    for (int j : l.recompute_forward) {
      if (j < 0 || j >= layers) throw std::invalid_argument("layer " + l.name + ": recomputes a layer that does not exist");
    }
  }
}

// Builds the graph in program order: `stream` is the last compute-stream
// node; a collective depends on it; a gating collective joins the deps of
// the next wait of the layer it gates.
class Lowering {
 public:
  Lowering(const Workload& w, const std::function<bool(const Kernel&)>& runs) : w_(w), runs_(runs) {
    const std::size_t layers = w.layers.size();
    gate_deps_.resize(layers);
    kernel_.resize(layers);
    coll_.resize(layers);
    for (std::size_t l = 0; l < layers; ++l) {
      const Layer& layer = w.layers[l];
      const Pass* passes[3] = {&layer.forward, &layer.input_grad, &layer.weight_grad};
      for (int p = 0; p < 3; ++p) kernel_[l][p] = out_.graph.add_kernel(passes[p]->compute);
      // Collectives per (layer, kind); kind 3: a recomputed forward's.
      for (int kind = 0; kind < 4; ++kind) {
        const CommSpec& c = kind == TrainingStep::kRecompute ? layer.forward.comm : passes[kind]->comm;
        CollectiveSpec s;
        s.op = c.op.value_or(CollectiveOp::kAllReduce);
        s.bytes = c.bytes;
        s.dims = c.dims;
        s.name = layer.name + " " + std::string(kind == TrainingStep::kRecompute ? "recompute" : to_string(static_cast<PassKind>(kind)));
        coll_[l][kind] = out_.graph.add_collective(std::move(s));
      }
    }
    out_.graph.source = w.name;
    stream_ = add(WorkNodeKind::kNop, 0, {}, {});
  }

  TrainingGraph run() {
    const int layers = static_cast<int>(w_.layers.size());
    for (int it = 0; it < w_.iterations; ++it) {
      for (int l = 0; l < layers; ++l) forward(it, l);
      if (w_.forward_only) continue;
      for (int l = layers - 1; l >= 0; --l) backward(it, l);
    }
    std::vector<GraphDep> rest;
    for (auto& deps : gate_deps_) rest.insert(rest.end(), deps.begin(), deps.end());
    wait(WaitRule::kEnd, rest, {w_.iterations - 1, -1, 0});
    out_.graph.finish();
    return std::move(out_);
  }

 private:
  std::uint32_t add(WorkNodeKind kind, std::uint32_t payload, std::vector<std::uint32_t> deps, TrainingStep step) {
    const std::uint32_t n = out_.graph.add_node(kind, payload, deps);
    out_.steps.push_back(step);
    return n;
  }
  void wait(WaitRule rule, const std::vector<GraphDep>& deps, TrainingStep step) {
    stream_ = out_.graph.add_wait(rule, stream_, deps);
    out_.steps.push_back(step);
  }
  void kernel(int it, int layer, PassKind pass) {
    const Layer& l = w_.layers[static_cast<std::size_t>(layer)];
    const Kernel& k = pass == PassKind::kForward ? l.forward.compute : pass == PassKind::kInputGrad ? l.input_grad.compute : l.weight_grad.compute;
    if (!runs_(k)) return;
    const auto p = static_cast<std::uint8_t>(pass);
    stream_ = add(WorkNodeKind::kCompute, kernel_[layer][p], {stream_}, {it, layer, p});
  }
  TimePs update(int layer) const { return w_.layers[static_cast<std::size_t>(layer)].update_ps; }
  // Issues layer `layer`'s collective of `kind`; returns it when it blocks
  // the stream. Everything that gates no later forward blocks: activations
  // the next computation needs.
  std::optional<std::uint32_t> issue(int it, int layer, int kind, const CommSpec& spec) {
    if (!spec.op) return std::nullopt;
    const PassKind pass = kind == TrainingStep::kRecompute ? PassKind::kForward : static_cast<PassKind>(kind);
    int gates = -1;
    if (pass == PassKind::kWeightGrad && !spec.blocking) gates = layer;
    if (kind == static_cast<int>(PassKind::kForward) && spec.wait_before_forward_layer >= 0) gates = spec.wait_before_forward_layer;
    if (pass == PassKind::kInputGrad && spec.issue_after_backward_layer >= 0) gates = layer;
    const std::uint32_t c = add(WorkNodeKind::kCollective, coll_[layer][kind], {stream_}, {it, layer, static_cast<std::uint8_t>(kind)});
    if (gates < 0) return c;
    gate_deps_[static_cast<std::size_t>(gates)].push_back({c, update(layer)});
    return std::nullopt;
  }
  // The stream holds until collective c is done plus its layer's update.
  void block(std::uint32_t c, int layer, int iteration, PassKind pass) {
    wait(WaitRule::kResume, {{c, update(layer)}}, {iteration, layer, static_cast<std::uint8_t>(pass)});
  }

  void forward(int it, int l) {
    std::vector<GraphDep>& gate = gate_deps_[static_cast<std::size_t>(l)];
    if (!gate.empty()) {
      wait(WaitRule::kGate, gate, {it, l, static_cast<std::uint8_t>(PassKind::kWeightGrad)});
      gate.clear();
    }
    kernel(it, l, PassKind::kForward);
    if (auto c = issue(it, l, static_cast<int>(PassKind::kForward), layer(l).forward.comm)) block(*c, l, it, PassKind::kForward);
  }

  void backward(int it, int l) {
    // Activation checkpointing: the forwards of these layers run again first.
    for (int j : layer(l).recompute_forward) {
      kernel(it, j, PassKind::kForward);
      CommSpec c = layer(j).forward.comm;
      c.wait_before_forward_layer = -1;  // recomputed activations are needed at once
      if (auto x = issue(it, j, TrainingStep::kRecompute, c)) block(*x, j, it, PassKind::kForward);
    }
    kernel(it, l, PassKind::kWeightGrad);
    if (auto c = issue(it, l, static_cast<int>(PassKind::kWeightGrad), layer(l).weight_grad.comm)) {
      block(*c, l, it, PassKind::kWeightGrad);
    }
    // The first layer's input gradient feeds nothing: not computed (its
    // communication, e.g. DLRM's embedding-gradient all-to-all, still runs).
    if (l > 0) kernel(it, l, PassKind::kInputGrad);
    std::optional<std::uint32_t> blocking;
    const int ig = static_cast<int>(PassKind::kInputGrad);
    if (layer(l).input_grad.comm.issue_after_backward_layer < 0) blocking = issue(it, l, ig, layer(l).input_grad.comm);
    // Collectives deferred to start after this layer's backward.
    for (int j = 0; j < static_cast<int>(w_.layers.size()); ++j) {
      if (layer(j).input_grad.comm.issue_after_backward_layer == l) issue(it, j, ig, layer(j).input_grad.comm);
    }
    // The stream resumes in the next iteration when this was layer 0: the
    // wait is reported there.
    if (blocking) block(*blocking, l, l == 0 && it + 1 < w_.iterations ? it + 1 : it, PassKind::kInputGrad);
  }

  const Layer& layer(int l) const { return w_.layers[static_cast<std::size_t>(l)]; }

  const Workload& w_;
  const std::function<bool(const Kernel&)>& runs_;
  TrainingGraph out_;
  std::uint32_t stream_ = 0;
  std::vector<std::vector<GraphDep>> gate_deps_;
  std::vector<std::array<std::uint32_t, 3>> kernel_;
  std::vector<std::array<std::uint32_t, 4>> coll_;
};

}  // namespace

TrainingGraph lower_training(const Workload& w, const std::function<bool(const Kernel&)>& runs) {
  check(w);
  return Lowering(w, runs).run();
}

}  // namespace acesim
