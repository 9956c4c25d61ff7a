#include "driver/training_run.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "collective/collective_engine.h"
#include "config/input_error.h"
#include "config/limits.h"
#include "platform/platform_instance.h"
#include "network/network.h"
#include "workload/graph/graph_executor.h"
#include "workload/graph/training_lowering.h"

namespace acesim {
namespace {

// Per-layer figures of rank 0 in the last (measured) iteration.
struct LayerStats {
  TimePs compute_ps[3] = {0, 0, 0};  // by PassKind, as run (slowed by contention)
  TimePs comm_ps[3] = {0, 0, 0};     // issue to done, by PassKind
  TimePs wait_ps = 0;                // compute stream idle because of this layer's communication
};

// Follows the executed graph: iteration ends (every rank), rank 0's compute
// per iteration and per-layer figures, and the spans of the traced ranks, in
// the order things happen.
class TrainingRecorder final : public GraphObserver {
 public:
  TrainingRecorder(const Workload& w, const TrainingGraph& g, int trace_ranks)
      : w_(w), g_(g), trace_ranks_(trace_ranks), layers_(w.layers.size()) {
    const auto n = static_cast<std::size_t>(w.iterations);
    iteration_end_.assign(n, 0);
    iteration_compute_.assign(n, 0);
  }

  void node_done(Rank r, std::uint32_t node, TimePs start, TimePs end) override {
    const TrainingStep& s = g_.steps[node];
    const bool counted = s.iteration == w_.iterations - 1;
    const bool traced = r < trace_ranks_;
    const PassKind pass = s.pass == TrainingStep::kRecompute ? PassKind::kForward : static_cast<PassKind>(s.pass);
    switch (g_.graph.node(node).kind) {
      case WorkNodeKind::kCompute:
        if (r == 0) iteration_compute_[static_cast<std::size_t>(s.iteration)] += end - start;
        mark(s.iteration, end);
        if (r == 0 && counted) layer(s.layer).compute_ps[s.pass] += end - start;
        if (traced) spans_.push_back({r, s.iteration, s.layer, pass, Span::kCompute, start, end});
        return;
      case WorkNodeKind::kCollective:
        if (r == 0 && counted && s.pass != TrainingStep::kRecompute) layer(s.layer).comm_ps[s.pass] += end - start;
        if (traced) spans_.push_back({r, s.iteration, s.layer, pass, Span::kCollective, start, end});
        // An iteration ends once its collectives' updates are done too.
        mark(s.iteration, end + w_.layers[static_cast<std::size_t>(s.layer)].update_ps);
        return;
      case WorkNodeKind::kWait:
        if (end <= start || s.layer < 0) return;
        if (r == 0 && counted) layer(s.layer).wait_ps += end - start;
        if (traced) spans_.push_back({r, s.iteration, s.layer, pass, Span::kWait, start, end});
        return;
      default: return;
    }
  }

  const std::vector<TimePs>& iteration_end() const { return iteration_end_; }
  TimePs iteration_compute(int iteration) const { return iteration_compute_[static_cast<std::size_t>(iteration)]; }
  const std::vector<LayerStats>& layers() const { return layers_; }
  std::vector<Span>& spans() { return spans_; }

 private:
  LayerStats& layer(int l) { return layers_[static_cast<std::size_t>(l)]; }
  void mark(int iteration, TimePs t) {
    TimePs& e = iteration_end_[static_cast<std::size_t>(iteration)];
    e = std::max(e, t);
  }

  const Workload& w_;
  const TrainingGraph& g_;
  int trace_ranks_;
  std::vector<LayerStats> layers_;
  std::vector<TimePs> iteration_end_;
  std::vector<TimePs> iteration_compute_;  // rank 0
  std::vector<Span> spans_;
};

}  // namespace

double check_training_size(const PlatformConfig& platform, const Workload& workload, bool symmetric, std::string_view remedy) {
  long long npus = 1;
  double slowest = std::numeric_limits<double>::infinity();
  for (const DimensionSpec& d : platform.dims) {
    npus *= d.npus;
    if (d.npus > 1) slowest = std::min(slowest, d.bandwidth_GBps * 1e9);
  }
  const WorkloadTotals t = totals(workload);
  double comm = 0.0;
  for (double b : t.comm_bytes) comm += b;
  const double compute_s = ps_to_seconds(t.forward_ps + t.input_grad_ps + t.weight_grad_ps) +
                           t.flops / platform.npu.peak_flops();
  const double estimate_s = workload.iterations * (compute_s + (std::isfinite(slowest) ? 4.0 * comm / slowest : 0.0));
  if (estimate_s > 1e6) {
    throw InputError("this run would simulate about " + std::to_string(static_cast<long long>(estimate_s)) +
                     " s, past what int64 picoseconds can count (106 days); use fewer iterations");
  }
  // Memory per simulated rank: its state, its graph (96 B per layer and
  // iteration), and per layer a collective in flight whose chunks each
  // rank counts per dimension (4 B each).
  const double ranks = symmetric ? 1.0 : static_cast<double>(npus);
  const auto layers = static_cast<double>(workload.layers.size());
  const double chunks = platform.collectives.chunks;
  const auto dims = static_cast<double>(platform.dims.size());
  const double per_rank = 2048.0 + 96.0 * layers * workload.iterations + 4.0 * layers * chunks * dims;
  if (ranks * per_rank > limits::kMaxGraphBytes) {
    throw InputError(fmt::format("simulating all {} ranks needs about {:.1f} GiB ({} ranks x (2048 B + 96 B x {} layers x {} "
                                 "iterations + 4 B x {} layers x {} chunks x {} dimensions)); the limit is 8 GiB: {}",
                                 npus, ranks * per_rank / (1ULL << 30), npus, layers, workload.iterations, layers, chunks, dims, remedy));
  }
  return ranks * per_rank;
}

namespace {

void fill_layers(TrainReport& rep, const Workload& workload, const std::vector<LayerStats>& ls) {
  for (std::size_t i = 0; i < workload.layers.size(); ++i) {
    LayerReport lr;
    const Layer& l = workload.layers[i];
    lr.name = l.name;
    const Pass* passes[3] = {&l.forward, &l.input_grad, &l.weight_grad};
    for (int p = 0; p < 3; ++p) {
      lr.compute_ps[p] = ls[i].compute_ps[p];
      lr.comm_ps[p] = ls[i].comm_ps[p];
      if (passes[p]->comm.op) {
        lr.comm_bytes[p] = passes[p]->comm.bytes;
        lr.comm_op[p] = std::string(to_string(*passes[p]->comm.op));
      }
    }
    lr.exposed_ps = ls[i].wait_ps;
    rep.layers.push_back(std::move(lr));
  }
}

// Every collective in the order it was created, with rank 0's times.
std::vector<CollectiveRecord> collective_records(const GraphExecutor& ex, const TrainingGraph& g) {
  std::vector<CollectiveRecord> out;
  const std::vector<NodeTiming>& rank0 = ex.timings(0);
  for (const auto& [rank, node] : ex.collectives_created()) {
    const TrainingStep& s = g.steps[node];
    const CollectiveSpec& c = g.graph.collective(g.graph.node(node).payload);
    const PassKind pass = s.pass == TrainingStep::kRecompute ? PassKind::kForward : static_cast<PassKind>(s.pass);
    out.push_back({s.iteration, s.layer, pass, c.op, c.bytes, c.dims, rank0[node].start, rank0[node].end});
  }
  return out;
}

TimePs busy_between(const std::vector<BusyInterval>& intervals, TimePs from, TimePs to) {
  TimePs t = 0;
  for (const BusyInterval& i : intervals) t += std::max<TimePs>(0, std::min(i.end, to) - std::max(i.begin, from));
  return t;
}

}  // namespace

double npu_link_capacity_Bps(const DimensionSpec& d) {
  const double link = d.bandwidth_GBps * 1e9 * d.links_per_neighbour;
  if (d.npus <= 1) return 0.0;
  return npu_links_out(d) * link;
}

std::optional<double> run_energy_J(const PlatformConfig& platform, const EndpointSummary& es, TimePs total_ps) {
  if (!platform.energy) return std::nullopt;
  return platform.energy->joules(ps_to_seconds(total_ps), Topology(platform.dims).num_npus(), platform.npu.compute_units,
                                 es.compute_unit_seconds + es.comm_unit_seconds, es.hbm_bytes_compute + es.hbm_bytes_comm,
                                 es.network_bytes_per_dim);
}

EndpointSummary summarize_endpoints(Endpoints& endpoint, const Topology& topo, const NpuConfig& npu,
                                    const GraphExecutor& ex, TimePs total_ps) {
  EndpointSummary es;
  const double seconds = ps_to_seconds(total_ps);
  const Rank simulated_ranks = ex.simulated_ranks();
  endpoint.check_traffic_balance(simulated_ranks);
  const NpuStatsMean mean = endpoint.mean_stats(simulated_ranks);
  es.network_bytes_per_dim = mean.sent_per_dim;
  es.hbm_bytes_compute = mean.hbm_bytes_compute;
  es.hbm_bytes_comm = mean.hbm_bytes_comm;
  es.comm_unit_seconds = mean.comm_unit_seconds;
  es.compute_unit_seconds = mean.compute_unit_seconds;
  for (int d = 0; d < topo.num_dims(); ++d) {
    const double cap = npu_link_capacity_Bps(topo.dim(d)) * seconds;
    es.network_utilization_per_dim.push_back(cap > 0.0 ? es.network_bytes_per_dim[d] / cap : 0.0);
    // Mean in-flight time over the same NPUs as the bytes: a ratio of means.
    double in_flight = 0.0;
    for (Rank r = 0; r < simulated_ranks; ++r) {
      in_flight += static_cast<double>(ex.comm_busy_per_dim_ps(r)[static_cast<std::size_t>(d)]);
    }
    in_flight /= static_cast<double>(std::max<Rank>(1, simulated_ranks));
    es.comm_in_flight_ps_per_dim.push_back(in_flight);
    const double cap_in_flight = npu_link_capacity_Bps(topo.dim(d)) * (in_flight / static_cast<double>(kPsPerSec));
    es.network_utilization_in_flight_per_dim.push_back(cap_in_flight > 0.0 ? es.network_bytes_per_dim[d] / cap_in_flight : 0.0);
  }
  const double hbm = npu.hbm_GBps * 1e9 * seconds;
  if (hbm > 0.0) {
    es.hbm_utilization_compute = es.hbm_bytes_compute / hbm;
    es.hbm_utilization_comm = es.hbm_bytes_comm / hbm;
  }
  return es;
}

TrainReport run_training(const PlatformConfig& platform, const Workload& workload, TrainOptions options) {
  std::string asymmetry = asymmetry_reason(platform);
  if (asymmetry.empty() && !options.stragglers.empty()) asymmetry = "stragglers";
  const bool symmetric = !options.full && asymmetry.empty();
  check_training_size(platform, workload, symmetric);
  options.progress.stage("building");
  PlatformInstance pi(platform, symmetric);
  for (const auto& [rank, factor] : options.stragglers) {
    if (rank < 0 || rank >= pi.topology.num_npus()) {
      throw std::invalid_argument("straggler rank " + std::to_string(rank) + " does not exist (0.." +
                                  std::to_string(pi.topology.num_npus() - 1) + ")");
    }
    pi.endpoints.set_compute_slowdown(rank, factor);
  }
  Simulation& sim = pi.sim;
  const Topology& topo = pi.topology;
  Endpoints& endpoint = pi.endpoints;
  // Every rank runs the same program: one graph, shared.
  const TrainingGraph g = lower_training(workload, [&](const Kernel& k) { return endpoint.isolated_seconds(k) > 0.0; });
  TrainingRecorder recorder(workload, g, options.trace_ranks);
  GraphRunOptions ro;
  ro.keep_ranks = 1;
  ro.observer = &recorder;
  GraphExecutor ex(sim, topo, *pi.network, pi.collectives, endpoint,
                   std::vector<const WorkGraph*>(static_cast<std::size_t>(pi.collectives.simulated_ranks()), &g.graph), ro);
  run_graphs(sim, ex, options.progress);
  options.progress.stage("summing up");
  endpoint.settle();

  TrainReport rep;
  rep.workload = workload.name;
  rep.parallelism = workload.parallelism;
  rep.platform = platform.source;
  rep.executor = platform.npu.executor;
  rep.npus = topo.num_npus();
  rep.simulated_ranks = ex.simulated_ranks();
  rep.simulation = symmetric ? "symmetric" : options.full ? "full (--full)" : "full: " + asymmetry;
  rep.iterations = workload.iterations;
  rep.events = sim.stats().events + sim.stats().completions;
  const std::vector<TimePs>& ends = recorder.iteration_end();
  rep.total_ps = ex.finish_ps();
  rep.iteration_end_ps = ends;
  rep.first_iteration_ps = ends.front();
  const TimePs from = workload.iterations > 1 ? ends[ends.size() - 2] : 0;
  const TimePs to = ends.back();
  rep.iteration_ps = to - from;
  // The measured iteration's own kernels (iterations overlap, so its window
  // can also hold some of the next iteration's compute).
  rep.compute_ps = recorder.iteration_compute(workload.iterations - 1);
  rep.exposed_comm_ps = std::max<TimePs>(0, rep.iteration_ps - rep.compute_ps);
  rep.comm_ps = busy_between(ex.comm_intervals(0), from, to);
  rep.overlap_ps = std::max<TimePs>(0, rep.comm_ps - rep.exposed_comm_ps);
  if (workload.model_flops_per_rank > 0.0 && rep.iteration_ps > 0) {
    rep.tflops_per_gpu = workload.model_flops_per_rank / ps_to_seconds(rep.iteration_ps) / 1e12;
    rep.mfu = rep.tflops_per_gpu / (platform.npu.compute_units * platform.npu.unit_TFLOPS);
  }

  const EndpointSummary es = summarize_endpoints(endpoint, topo, platform.npu, ex, rep.total_ps);
  rep.network_bytes_per_dim = es.network_bytes_per_dim;
  rep.network_utilization_per_dim = es.network_utilization_per_dim;
  rep.network_utilization_in_flight_per_dim = es.network_utilization_in_flight_per_dim;
  rep.comm_in_flight_ps_per_dim = es.comm_in_flight_ps_per_dim;
  rep.hbm_bytes_compute = es.hbm_bytes_compute;
  rep.hbm_bytes_comm = es.hbm_bytes_comm;
  rep.hbm_utilization_compute = es.hbm_utilization_compute;
  rep.hbm_utilization_comm = es.hbm_utilization_comm;
  rep.comm_unit_seconds = es.comm_unit_seconds;
  rep.energy_J = run_energy_J(platform, es, rep.total_ps);
  fill_layers(rep, workload, recorder.layers());
  rep.collectives = collective_records(ex, g);
  rep.spans = std::move(recorder.spans());
  return rep;
}

}  // namespace acesim
