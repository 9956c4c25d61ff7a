#include "workload/trainer.h"

#include <algorithm>
#include <stdexcept>

namespace acesim {

Trainer::Trainer(Simulation& sim, const Topology& topo, CollectiveEngine& collectives, Endpoints& endpoint,
                 const Workload& workload, TrainOptions options)
    : sim_(sim),
      collectives_(collectives),
      endpoint_(endpoint),
      workload_(workload),
      options_(options),
      num_layers_(static_cast<int>(workload.layers.size())),
      sim_ranks_(collectives.simulated_ranks()) {
  if (collectives.representative() > 0) throw std::invalid_argument("symmetric training runs rank 0 as the representative");
  if (sim_ranks_ > topo.num_npus()) throw std::logic_error("more simulated ranks than NPUs");
  if (workload_.layers.empty()) throw std::invalid_argument("workload has no layers");
  if (workload_.iterations < 1) throw std::invalid_argument("workload needs at least one iteration");
  for (const Layer& l : workload_.layers) {
    if (l.forward.comm.wait_before_forward_layer >= num_layers_ || l.input_grad.comm.issue_after_backward_layer >= num_layers_) {
      throw std::invalid_argument("layer " + l.name + ": its collective refers to a layer that does not exist");
    }
    for (int j : l.recompute_forward) {
      if (j < 0 || j >= num_layers_) throw std::invalid_argument("layer " + l.name + ": recomputes a layer that does not exist");
    }
  }
  const auto n = static_cast<std::size_t>(sim_ranks_);
  const auto cells = n * static_cast<std::size_t>(num_layers_);
  ranks_.resize(n);
  gate_pending_.assign(cells, 0);
  gate_time_.assign(cells, 0);
  compute_intervals_.resize(n);
  comm_intervals_.resize(n);
  comm_since_.assign(n, 0);
  rank_iteration_end_.assign(n * static_cast<std::size_t>(workload_.iterations), 0);
  iteration_compute_.assign(n * static_cast<std::size_t>(workload_.iterations), 0);
  layers_.resize(static_cast<std::size_t>(num_layers_));
}

std::uint32_t Trainer::key(int iteration, int layer, int kind) const {
  return static_cast<std::uint32_t>((iteration * num_layers_ + layer) * 4 + kind);
}

bool Trainer::counted(int iteration) const { return iteration == workload_.iterations - 1; }

bool Trainer::gate_open(Rank r, int layer) const {
  const std::size_t i = static_cast<std::size_t>(r) * num_layers_ + layer;
  return gate_pending_[i] == 0 && gate_time_[i] <= sim_.now();
}

void Trainer::start() {
  for (Rank r = 0; r < sim_ranks_; ++r) advance(r);
}

void Trainer::run_kernel(Rank r, const Kernel& k) {
  RankState& s = ranks_[r];
  s.in_kernel = true;
  s.kernel_start = sim_.now();
  endpoint_.start_kernel(r, k, this, static_cast<std::uint64_t>(r));
}

void Trainer::finish_wait(Rank r, TimePs now) {
  RankState& s = ranks_[r];
  if (s.wait_since < 0) return;
  if (now > s.wait_since) {
    if (r == 0 && counted(s.iteration) && s.waiting_layer >= 0) layers_[s.waiting_layer].wait_ps += now - s.wait_since;
    if (traced(r)) spans_.push_back({r, s.iteration, s.waiting_layer, s.waiting_pass, Span::kWait, s.wait_since, now});
  }
  s.wait_since = -1;
  s.waiting_layer = -1;
}

void Trainer::issue(Rank r, int layer, int kind, const CommSpec& spec, bool& must_wait) {
  must_wait = false;
  if (!spec.op) return;
  RankState& s = ranks_[r];
  const PassKind pass = kind == kRecomputeKind ? PassKind::kForward : static_cast<PassKind>(kind);
  const std::uint32_t k = key(s.iteration, layer, kind);
  // Which forward this collective gates, if it does not block the rank.
  int gates = -1;
  if (pass == PassKind::kWeightGrad && !spec.blocking) gates = layer;
  if (kind == static_cast<int>(PassKind::kForward) && spec.wait_before_forward_layer >= 0) gates = spec.wait_before_forward_layer;
  if (pass == PassKind::kInputGrad && spec.issue_after_backward_layer >= 0) gates = layer;
  auto it = by_key_.find(k);
  CollectiveId id;
  if (it == by_key_.end()) {
    CollectiveRequest req;
    req.op = *spec.op;
    req.bytes = spec.bytes;
    req.dims = spec.dims;
    req.name = workload_.layers[layer].name + " " + std::string(kind == kRecomputeKind ? "recompute" : to_string(pass));
    id = collectives_.create(req, this);
    by_key_.emplace(k, id);
    key_of_.emplace(id, k);
    gate_of_.emplace(k, gates);
    record_of_.emplace(k, records_.size());
    records_.push_back({s.iteration, layer, pass, *spec.op, spec.bytes, spec.dims, -1, -1});
  } else {
    id = it->second;
  }
  if (r == 0) records_[record_of_[k]].issue_ps = sim_.now();
  if (r == 0 || traced(r)) issued_at_[(static_cast<std::uint64_t>(k) << 32) | static_cast<std::uint32_t>(r)] = sim_.now();
  if (s.outstanding++ == 0) comm_since_[r] = sim_.now();
  if (gates >= 0) {
    ++gate_pending_[static_cast<std::size_t>(r) * num_layers_ + gates];
  } else {
    // Everything that gates no later forward blocks the rank: activations
    // the next computation needs.
    must_wait = true;
    s.blocked = true;
    s.blocking_key = k;
    s.wait_since = sim_.now();
    s.waiting_layer = layer;
    s.waiting_pass = pass;
  }
  collectives_.arrive(id, r);
}

// Back-propagation reaches `layer`: recompute checkpointed forwards first.
void Trainer::enter_backward(Rank r, int layer) {
  RankState& s = ranks_[r];
  s.layer = layer;
  s.recompute_index = 0;
  s.step = workload_.layers[layer].recompute_forward.empty() ? Step::kWgCompute : Step::kRecompute;
}

void Trainer::advance(Rank r) {
  RankState& s = ranks_[r];
  const TimePs now = sim_.now();
  for (;;) {
    if (s.blocked || s.in_kernel) return;
    const Layer* layer = s.layer >= 0 && s.layer < num_layers_ ? &workload_.layers[s.layer] : nullptr;
    switch (s.step) {
      case Step::kFwdWait: {
        if (s.layer == num_layers_) {
          if (!workload_.forward_only) {
            enter_backward(r, num_layers_ - 1);
          } else if (s.iteration + 1 < workload_.iterations) {
            ++s.iteration;
            s.layer = 0;
          } else {
            s.step = Step::kDrain;
          }
          continue;
        }
        if (!gate_open(r, s.layer)) {
          if (s.wait_since < 0) {
            s.wait_since = now;
            s.waiting_layer = s.layer;
            s.waiting_pass = PassKind::kWeightGrad;
          }
          const std::size_t g = static_cast<std::size_t>(r) * num_layers_ + s.layer;
          if (gate_pending_[g] == 0) sim_.schedule_at(gate_time_[g], this, static_cast<std::uint64_t>(r), EventPriority::kStart);
          return;  // collective_done() or the event resumes
        }
        finish_wait(r, now);
        s.step = Step::kFwdCompute;
        if (endpoint_.isolated_seconds(layer->forward.compute) > 0.0) {
          run_kernel(r, layer->forward.compute);
          return;
        }
        s.step = Step::kFwdComm;
        continue;
      }
      case Step::kFwdComm: {
        bool wait = false;
        issue(r, s.layer, static_cast<int>(PassKind::kForward), layer->forward.comm, wait);
        s.step = Step::kFwdWait;
        ++s.layer;  // a blocking collective resumes the rank at the next layer
        if (wait) return;
        continue;
      }
      case Step::kRecompute: {
        const std::vector<int>& list = layer->recompute_forward;
        if (s.recompute_index >= static_cast<int>(list.size())) {
          s.step = Step::kWgCompute;
          continue;
        }
        const Layer& again = workload_.layers[list[s.recompute_index]];
        s.step = Step::kRecomputeComm;
        if (endpoint_.isolated_seconds(again.forward.compute) > 0.0) {
          s.step = Step::kRecompute;
          run_kernel(r, again.forward.compute);
          return;
        }
        continue;
      }
      case Step::kRecomputeComm: {
        const int j = layer->recompute_forward[s.recompute_index];
        CommSpec c = workload_.layers[j].forward.comm;
        c.wait_before_forward_layer = -1;  // recomputed activations are needed at once
        bool wait = false;
        ++s.recompute_index;
        s.step = Step::kRecompute;
        issue(r, j, kRecomputeKind, c, wait);
        if (wait) return;
        continue;
      }
      case Step::kWgCompute:
        s.step = Step::kWgComm;
        if (endpoint_.isolated_seconds(layer->weight_grad.compute) > 0.0) {
          s.step = Step::kWgCompute;
          run_kernel(r, layer->weight_grad.compute);
          return;
        }
        continue;
      case Step::kWgComm: {
        bool wait = false;
        s.step = Step::kIgCompute;
        issue(r, s.layer, static_cast<int>(PassKind::kWeightGrad), layer->weight_grad.comm, wait);
        if (wait) return;
        continue;
      }
      case Step::kIgCompute:
        s.step = Step::kIgComm;
        // The first layer's input gradient feeds nothing: not computed (its
        // communication, e.g. DLRM's embedding-gradient all-to-all, still runs).
        if (s.layer > 0 && endpoint_.isolated_seconds(layer->input_grad.compute) > 0.0) {
          s.step = Step::kIgCompute;
          run_kernel(r, layer->input_grad.compute);
          return;
        }
        continue;
      case Step::kIgComm: {
        const int this_layer = s.layer;
        bool wait = false;
        // This layer's own input-gradient collective, unless it is deferred
        // to start after another layer's backward.
        if (layer->input_grad.comm.issue_after_backward_layer < 0) {
          issue(r, this_layer, static_cast<int>(PassKind::kInputGrad), layer->input_grad.comm, wait);
        }
        // Collectives deferred to start after this layer's backward.
        for (int j = 0; j < num_layers_; ++j) {
          const CommSpec& c = workload_.layers[j].input_grad.comm;
          if (c.issue_after_backward_layer == this_layer) {
            bool unused = false;
            issue(r, j, static_cast<int>(PassKind::kInputGrad), c, unused);
          }
        }
        if (this_layer > 0) {
          enter_backward(r, this_layer - 1);
        } else if (s.iteration + 1 < workload_.iterations) {
          s.step = Step::kFwdWait;
          s.layer = 0;
          ++s.iteration;
        } else {
          s.step = Step::kDrain;
        }
        if (wait) return;
        continue;
      }
      case Step::kDrain: {
        if (s.outstanding > 0) return;  // collective_done() resumes
        TimePs last = now;
        for (int l = 0; l < num_layers_; ++l) last = std::max(last, gate_time_[static_cast<std::size_t>(r) * num_layers_ + l]);
        if (last > now) {
          sim_.schedule_at(last, this, static_cast<std::uint64_t>(r), EventPriority::kStart);
          return;
        }
        s.step = Step::kDone;
        ++ranks_done_;
        finish_ = std::max(finish_, now);
        if (ranks_done_ == sim_ranks_) {
          iteration_end_.assign(workload_.iterations, 0);
          for (Rank q = 0; q < sim_ranks_; ++q) {
            for (int i = 0; i < workload_.iterations; ++i) {
              iteration_end_[i] = std::max(iteration_end_[i], rank_iteration_end_[static_cast<std::size_t>(q) * workload_.iterations + i]);
            }
          }
        }
        return;
      }
      case Step::kFwdCompute:
      case Step::kDone:
        return;
    }
  }
}

void Trainer::activity_done(std::uint64_t tag) {
  const auto r = static_cast<Rank>(tag);
  RankState& s = ranks_[r];
  const TimePs now = sim_.now();
  s.in_kernel = false;
  compute_intervals_[r].push_back({s.kernel_start, now});
  iteration_compute_[static_cast<std::size_t>(r) * workload_.iterations + s.iteration] += now - s.kernel_start;
  mark_iteration(r, s.iteration, now);
  PassKind pass = PassKind::kForward;
  int layer = s.layer;
  switch (s.step) {
    case Step::kFwdCompute:
      s.step = Step::kFwdComm;
      break;
    case Step::kRecompute:
      layer = workload_.layers[s.layer].recompute_forward[s.recompute_index];
      s.step = Step::kRecomputeComm;
      break;
    case Step::kWgCompute:
      s.step = Step::kWgComm;
      pass = PassKind::kWeightGrad;
      break;
    case Step::kIgCompute:
      s.step = Step::kIgComm;
      pass = PassKind::kInputGrad;
      break;
    default:
      throw std::logic_error("trainer: kernel finished in an unexpected state");
  }
  if (r == 0 && counted(s.iteration)) layers_[layer].compute_ps[static_cast<int>(pass)] += now - s.kernel_start;
  if (traced(r)) spans_.push_back({r, s.iteration, layer, pass, Span::kCompute, s.kernel_start, now});
  advance(r);
}

void Trainer::collective_done(CollectiveId id, Rank r) {
  const std::uint32_t k = key_of_.at(id);
  const int kind = static_cast<int>(k % 4);
  const int layer = static_cast<int>((k / 4) % static_cast<std::uint32_t>(num_layers_));
  const int iteration = static_cast<int>(k / 4 / static_cast<std::uint32_t>(num_layers_));
  const PassKind pass = kind == kRecomputeKind ? PassKind::kForward : static_cast<PassKind>(kind);
  const TimePs now = sim_.now();
  RankState& s = ranks_[r];
  if (--s.outstanding == 0) comm_intervals_[r].push_back({comm_since_[r], now});
  const std::uint64_t ik = (static_cast<std::uint64_t>(k) << 32) | static_cast<std::uint32_t>(r);
  if (r == 0) {
    records_[record_of_[k]].done_ps = now;
    if (counted(iteration) && kind != kRecomputeKind) layers_[layer].comm_ps[kind] += now - issued_at_.at(ik);
  }
  if (traced(r)) spans_.push_back({r, iteration, layer, pass, Span::kCollective, issued_at_.at(ik), now});
  issued_at_.erase(ik);
  const TimePs resume = now + workload_.layers[layer].update_ps;
  mark_iteration(r, iteration, resume);
  const int gates = gate_of_.at(k);
  if (gates >= 0) {
    const std::size_t g = static_cast<std::size_t>(r) * num_layers_ + gates;
    --gate_pending_[g];
    gate_time_[g] = std::max(gate_time_[g], resume);
    if (!s.blocked && !s.in_kernel && gate_pending_[g] == 0 && s.step == Step::kFwdWait && s.layer == gates) {
      sim_.schedule_at(gate_time_[g], this, static_cast<std::uint64_t>(r), EventPriority::kStart);
    }
  } else if (s.blocked && s.blocking_key == k) {
    // The blocking wait ends once the update after it is done.
    s.blocked = false;
    s.resume_from_block = true;
    sim_.schedule_at(resume, this, static_cast<std::uint64_t>(r), EventPriority::kStart);
    return;
  }
  if (!s.blocked && !s.in_kernel && s.step == Step::kDrain && s.outstanding == 0) {
    sim_.schedule_at(resume, this, static_cast<std::uint64_t>(r), EventPriority::kStart);
  }
}

void Trainer::handle_event(std::uint64_t tag) {
  const auto r = static_cast<Rank>(tag);
  RankState& s = ranks_[r];
  if (s.resume_from_block) {
    s.resume_from_block = false;
    finish_wait(r, sim_.now());
  }
  advance(r);
}

void Trainer::mark_iteration(Rank r, int iteration, TimePs t) {
  TimePs& e = rank_iteration_end_[static_cast<std::size_t>(r) * workload_.iterations + iteration];
  e = std::max(e, t);
}

TimePs Trainer::compute_busy_ps(Rank r, TimePs from, TimePs to) const {
  TimePs t = 0;
  for (const Interval& i : compute_intervals_[r]) t += std::max<TimePs>(0, std::min(i.end, to) - std::max(i.begin, from));
  return t;
}

TimePs Trainer::comm_busy_ps(Rank r, TimePs from, TimePs to) const {
  TimePs t = 0;
  for (const Interval& i : comm_intervals_[r]) t += std::max<TimePs>(0, std::min(i.end, to) - std::max(i.begin, from));
  return t;
}

std::vector<std::string> Trainer::stuck_report() const {
  std::vector<std::string> lines;
  for (Rank r = 0; r < sim_ranks_ && lines.size() < 8; ++r) {
    const RankState& s = ranks_[r];
    if (s.step == Step::kDone) continue;
    lines.push_back("rank " + std::to_string(r) + " stuck in iteration " + std::to_string(s.iteration) + " at layer " +
                    std::to_string(s.layer) + (s.blocked ? " waiting for a blocking collective" : "") +
                    (s.outstanding > 0 ? " with " + std::to_string(s.outstanding) + " collectives outstanding" : ""));
  }
  for (const std::string& l : collectives_.stuck_report()) lines.push_back(l);
  return lines;
}

}  // namespace acesim
