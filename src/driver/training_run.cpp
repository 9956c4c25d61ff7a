#include "driver/training_run.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "collective/collective_engine.h"
#include "config/input_error.h"
#include "platform/platform_instance.h"
#include "network/network.h"
#include "report/collective_sweep.h"

namespace acesim {

double npu_link_capacity_Bps(const DimensionSpec& d) {
  const double link = d.bandwidth_GBps * 1e9 * d.links_per_neighbour;
  if (d.npus <= 1) return 0.0;
  switch (d.kind) {
    case DimKind::kRing: return 2.0 * link;
    case DimKind::kFullyConnected: return (d.npus - 1) * link;
    case DimKind::kSwitch: return link;
  }
  return link;
}

EndpointSummary summarize_endpoints(Endpoint& endpoint, const Topology& topo, const NpuConfig& npu,
                                    Rank simulated_ranks, TimePs total_ps) {
  EndpointSummary es;
  const double seconds = ps_to_seconds(total_ps);
  endpoint.check_traffic_balance(simulated_ranks);
  const NpuStatsMean mean = endpoint.mean_stats(simulated_ranks);
  es.network_bytes_per_dim = mean.sent_per_dim;
  es.hbm_bytes_compute = mean.hbm_bytes_compute;
  es.hbm_bytes_comm = mean.hbm_bytes_comm;
  es.comm_unit_seconds = mean.comm_unit_seconds;
  for (int d = 0; d < topo.num_dims(); ++d) {
    const double cap = npu_link_capacity_Bps(topo.dim(d)) * seconds;
    es.network_utilization_per_dim.push_back(cap > 0.0 ? es.network_bytes_per_dim[d] / cap : 0.0);
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
  {
    // Refuse up front what would overflow simulated time or exhaust memory.
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
    const double ranks = symmetric ? 1.0 : static_cast<double>(npus);
    const double memory = ranks * (2048.0 + 96.0 * static_cast<double>(workload.layers.size()) * workload.iterations);
    if (memory > 8.0 * (1ULL << 30)) {
      throw InputError("simulating all " + std::to_string(npus) + " ranks needs about " +
                       std::to_string(static_cast<long long>(memory / (1ULL << 30))) +
                       " GiB; leave out --full and stragglers, or use a smaller platform");
    }
  }
  PlatformInstance pi(platform, symmetric);
  for (const auto& [rank, factor] : options.stragglers) {
    if (rank < 0 || rank >= pi.topology.num_npus()) {
      throw std::invalid_argument("straggler rank " + std::to_string(rank) + " does not exist (0.." +
                                  std::to_string(pi.topology.num_npus() - 1) + ")");
    }
    pi.endpoint.set_compute_slowdown(rank, factor);
  }
  Simulation& sim = pi.sim;
  const Topology& topo = pi.topology;
  Endpoint& endpoint = pi.endpoint;
  CollectiveEngine& collectives = pi.collectives;
  Trainer trainer(sim, topo, collectives, endpoint, workload, options);
  trainer.start();
  run_or_report_stuck(sim, [&] { return trainer.finished(); }, [&] { return trainer.stuck_report(); });
  endpoint.settle();

  TrainReport rep;
  rep.workload = workload.name;
  rep.parallelism = workload.parallelism;
  rep.platform = platform.source;
  rep.executor = platform.npu.executor;
  rep.npus = topo.num_npus();
  rep.simulated_ranks = trainer.simulated_ranks();
  rep.simulation = symmetric ? "symmetric" : options.full ? "full (--full)" : "full: " + asymmetry;
  rep.iterations = workload.iterations;
  rep.events = sim.stats().events + sim.stats().completions;
  const std::vector<TimePs>& ends = trainer.iteration_end_ps();
  rep.total_ps = trainer.finish_ps();
  rep.first_iteration_ps = ends.front();
  const TimePs from = workload.iterations > 1 ? ends[ends.size() - 2] : 0;
  const TimePs to = ends.back();
  rep.iteration_ps = to - from;
  // The measured iteration's own kernels (iterations overlap, so its window
  // can also hold some of the next iteration's compute).
  rep.compute_ps = trainer.iteration_compute_ps(0, workload.iterations - 1);
  rep.exposed_comm_ps = std::max<TimePs>(0, rep.iteration_ps - rep.compute_ps);
  rep.comm_ps = trainer.comm_busy_ps(0, from, to);
  rep.overlap_ps = std::max<TimePs>(0, rep.comm_ps - rep.exposed_comm_ps);

  const EndpointSummary es = summarize_endpoints(endpoint, topo, platform.npu, trainer.simulated_ranks(), rep.total_ps);
  rep.network_bytes_per_dim = es.network_bytes_per_dim;
  rep.network_utilization_per_dim = es.network_utilization_per_dim;
  rep.hbm_bytes_compute = es.hbm_bytes_compute;
  rep.hbm_bytes_comm = es.hbm_bytes_comm;
  rep.hbm_utilization_compute = es.hbm_utilization_compute;
  rep.hbm_utilization_comm = es.hbm_utilization_comm;
  rep.comm_unit_seconds = es.comm_unit_seconds;

  const std::vector<LayerStats>& ls = trainer.layer_stats();
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
  rep.collectives = trainer.collectives();
  rep.spans = trainer.spans();
  return rep;
}

}  // namespace acesim
