#include "report/collective_sweep.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "collective/nccl_model.h"
#include "collective/plan.h"
#include "config/units.h"
#include "endpoint/executor_registry.h"

namespace acesim {

std::string describe_platform(const PlatformConfig& p) {
  long long n = 1;
  std::string dims;
  for (std::size_t d = 0; d < p.dims.size(); ++d) {
    const DimensionSpec& s = p.dims[d];
    n *= s.npus;
    dims += fmt::format("{}{} {} x{} {:g} GB/s {:g} ns", d ? ", " : "", to_string(s.kind), s.npus,
                        s.links_per_neighbour, s.bandwidth_GBps, s.latency_ns);
    for (const KindParam& kp : s.params) dims += fmt::format(" {} {:g}", kp.name, kp.value);
  }
  std::string executor = describe_executor(p.npu);
  // NCCL's kernels hold one unit per channel; the setting serves the rest.
  if (p.collectives.nccl.enabled && p.npu.executor == "sm") executor += ", NCCL's: one per channel";
  std::string chunking = fmt::format("{} chunks", p.collectives.chunks);
  if (p.collectives.max_chunk_bytes > 0) chunking += fmt::format(" of at most {}", format_bytes(p.collectives.max_chunk_bytes));
  chunking += fmt::format(", {} active per dimension, {}", p.collectives.active_chunks_per_dim, to_string(p.collectives.policy));
  // With NCCL's collectives the chunking serves only the operations the
  // NCCL model does not run.
  if (p.collectives.nccl.enabled) {
    chunking = fmt::format("NCCL's collectives ({} tables); other operations: {}", to_string(p.collectives.nccl.arch), chunking);
  }
  return fmt::format("{} NPUs [{}]; backend {}; executor {}; HBM {:g} GB/s; {}", n, dims, p.network.backend, executor,
                     p.npu.hbm_GBps, chunking);
}

namespace {

// "scatter (direct) + all-gather (ring)": the phases a rooted operation runs.
std::string rooted_phases_text(const PlatformConfig& platform, const CollectiveRequestSpec& req) {
  const Topology topo(platform.dims);
  std::vector<int> dims = req.dims;
  if (dims.empty()) {
    for (int d = 0; d < topo.num_dims(); ++d) dims.push_back(d);
  }
  std::string text;
  for (const PhaseSpec& ph : build_rooted_plan(req.op, platform.collectives, topo, dims)) {
    text += fmt::format("{}{} ({})", text.empty() ? "" : " + ", to_string(ph.op), to_string(ph.algorithm));
  }
  return text.empty() ? "nothing to move" : text;
}

}  // namespace

std::string format_table(const PlatformConfig& platform, const CollectiveRequestSpec& req,
                         const std::vector<CollectiveResult>& results) {
  std::string out;
  const Rank npus = Topology(platform.dims).num_npus();
  if (is_rooted(req.op)) {
    out += fmt::format("# acesim collective: {} on {} NPUs (root {}: {})\n", to_string(req.op), npus, req.root,
                       rooted_phases_text(platform, req));
  } else {
    const OpConfig& oc = platform.collectives.op(req.op);
    std::string algs;
    if (oc.plan == PlanKind::kFlat) {
      algs = std::string(to_string(oc.flat));
    } else {
      for (std::size_t d = 0; d < oc.per_dim.size(); ++d) algs += (d ? "," : "") + std::string(to_string(oc.per_dim[d]));
    }
    if (platform.collectives.nccl.enabled && nccl_models(req.op)) {
      // What applies to the operation (a platform's LL128 does not to all-to-all).
      const NcclSettings n = nccl_applied(platform.collectives.nccl, req.op);
      out += fmt::format("# acesim collective: {} on {} NPUs (NCCL model: algorithm {}, protocol {}, channels {})\n",
                         to_string(req.op), npus, n.algo ? to_string(*n.algo) : "auto", n.proto ? to_string(*n.proto) : "auto",
                         n.channels > 0 ? std::to_string(n.channels) : "default");
    } else {
      out += fmt::format("# acesim collective: {} on {} NPUs ({} plan: {})\n", to_string(req.op), npus, to_string(oc.plan), algs);
    }
  }
  out += fmt::format("# platform: {} ({})\n", describe_platform(platform), platform.source);
  if (!results.empty()) {
    out += fmt::format("# simulated {} of {} ranks: {}\n", results[0].simulated_ranks, npus, results[0].simulation);
  }
  if (!req.dims.empty()) {
    std::string d;
    for (std::size_t i = 0; i < req.dims.size(); ++i) d += (i ? "," : "") + std::to_string(req.dims[i]);
    out += fmt::format("# over dimensions {}\n", d);
  }
  // NCCL's model names what it ran in three more columns.
  const bool nccl = platform.collectives.nccl.enabled;
  out += fmt::format("# {:>14} {:>6} {:>14} {:>12} {:>12} {:>12} {:>8}", "size(B)", "ranks", "time(us)",
                     "algbw(GB/s)", "busbw(GB/s)", "net(GB/s)", "hbm/net");
  // The platform's energy model, where it has one: joules for every NPU.
  const bool energy = platform.energy.has_value();
  if (energy) out += fmt::format(" {:>12}", "energy(J)");
  out += nccl ? fmt::format(" {:>9} {:>8} {:>8}\n", "algorithm", "protocol", "channels") : "\n";
  for (const CollectiveResult& r : results) {
    out += fmt::format("  {:>14} {:>6} {:>14.3f} {:>12.2f} {:>12.2f} {:>12.2f} {:>8.2f}", r.bytes, r.ranks,
                       ps_to_us(r.time_ps), r.algbw_GBps, r.busbw_GBps, r.network_GBps(), r.hbm_per_network_byte());
    if (energy) out += fmt::format(" {:>12.6g}", r.energy_J.value_or(0.0));
    if (!nccl) {
      out += "\n";
    } else if (r.algorithm.empty()) {
      out += fmt::format(" {:>9} {:>8} {:>8}\n", "plan", "-", "-");
    } else {
      out += fmt::format(" {:>9} {:>8} {:>8}\n", r.algorithm, r.protocol, r.channels);
    }
  }
  return out;
}

nlohmann::json to_json(const PlatformConfig& platform, const std::vector<CollectiveResult>& results) {
  nlohmann::json arr = nlohmann::json::array();
  for (const CollectiveResult& r : results) {
    arr.push_back({{"op", std::string(to_string(r.op))},
                   {"bytes", r.bytes},
                   {"ranks", r.ranks},
                   {"time_ns", ps_to_ns(r.time_ps)},
                   {"algbw_GBps", r.algbw_GBps},
                   {"busbw_GBps", r.busbw_GBps},
                   {"link_bytes_per_dim", r.link_bytes_per_dim},
                   {"executor", r.executor},
                   {"chunks", r.chunks},
                   {"hbm_bytes", r.hbm_bytes},
                   {"network_bytes", r.network_bytes},
                   {"network_bytes_per_dim", r.network_bytes_per_dim},
                   {"network_bytes_received_per_dim", r.network_bytes_received_per_dim},
                   {"network_GBps", r.network_GBps()},
                   {"hbm_bytes_per_network_byte", r.hbm_per_network_byte()},
                   {"comm_unit_seconds", r.comm_unit_seconds},
                   {"simulated_ranks", r.simulated_ranks},
                   {"events", r.events},
                   {"simulation", r.simulation},
                   {"energy_J", r.energy_J ? nlohmann::json(*r.energy_J) : nlohmann::json(nullptr)}});
    if (platform.collectives.nccl.enabled) {
      arr.back()["algorithm"] = r.algorithm.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.algorithm);
      arr.back()["protocol"] = r.protocol.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.protocol);
      arr.back()["channels"] = r.channels;
    }
  }
  return {{"platform", platform.source},
          {"backend", platform.network.backend},
          {"executor", platform.npu.executor},
          {"results", arr}};
}

}  // namespace acesim
