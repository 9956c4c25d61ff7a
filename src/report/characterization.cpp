#include "report/characterization.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "config/units.h"
#include "topology/topology.h"

namespace acesim {

std::string format_study(const Study& s, const PlatformConfig& platform, const CollectiveRequestSpec& req,
                         std::uint64_t bytes) {
  std::string out = fmt::format("# acesim characterize {}: {} of {} ({} bytes) on {} NPUs\n", s.name, to_string(req.op),
                                format_bytes(bytes), bytes, Topology(platform.dims).num_npus());
  out += fmt::format("# platform: {} ({})\n", describe_platform(platform), platform.source);
  if (std::any_of(s.rows.begin(), s.rows.end(), [](const StudyRow& r) { return r.config.ends_with('*'); })) {
    out += "# sm channels: NCCL's, one compute unit each; *: the channels the collective runs with when not swept (NCCL's model's choice, or the platform's)\n";
  }
  if (s.name == "overlap") {
    out += fmt::format("# {:<16} {:>14} {:>14} {:>10} {:>14} {:>14} {:>10}\n", "config", "kernel(us)", "overlapped",
                       "slowdown", "coll(us)", "overlapped", "slowdown");
    for (const StudyRow& r : s.rows) {
      const OverlapResult& o = r.overlap;
      out += fmt::format("  {:<16} {:>14.3f} {:>14.3f} {:>9.1f}% {:>14.3f} {:>14.3f} {:>9.1f}%\n", r.config,
                         ps_to_us(o.kernel_alone_ps), ps_to_us(o.kernel_overlapped_ps), 100.0 * o.kernel_slowdown(),
                         ps_to_us(o.collective_alone_ps), ps_to_us(o.collective_overlapped_ps),
                         100.0 * o.collective_slowdown());
    }
    return out;
  }
  if (s.name == "traffic") {
    out += fmt::format("# {:<24} {:>14} {:>16} {:>16} {:>8}\n", "op executor", "time(us)", "hbm bytes/NPU",
                       "net bytes/NPU", "hbm/net");
    for (const StudyRow& r : s.rows) {
      out += fmt::format("  {:<24} {:>14.3f} {:>16.0f} {:>16.0f} {:>8.2f}\n", r.config, ps_to_us(r.result.time_ps),
                         r.result.hbm_bytes, r.result.network_bytes, r.result.hbm_per_network_byte());
    }
    return out;
  }
  out += fmt::format("# {:<16} {:>10} {:>14} {:>12} {:>12} {:>12} {:>8}\n", "config", s.x_label, "time(us)",
                     "algbw(GB/s)", "busbw(GB/s)", "net(GB/s)", "hbm/net");
  for (const StudyRow& r : s.rows) {
    out += fmt::format("  {:<16} {:>10g} {:>14.3f} {:>12.2f} {:>12.2f} {:>12.2f} {:>8.2f}\n", r.config, r.x,
                       ps_to_us(r.result.time_ps), r.result.algbw_GBps, r.result.busbw_GBps, r.result.network_GBps(),
                       r.result.hbm_per_network_byte());
  }
  return out;
}

nlohmann::json study_json(const Study& s) {
  nlohmann::json rows = nlohmann::json::array();
  for (const StudyRow& r : s.rows) {
    nlohmann::json j = {{"config", r.config},
                        {"x", r.x},
                        {"time_ns", ps_to_ns(r.result.time_ps)},
                        {"algbw_GBps", r.result.algbw_GBps},
                        {"busbw_GBps", r.result.busbw_GBps},
                        {"network_GBps", r.result.network_GBps()},
                        {"hbm_bytes", r.result.hbm_bytes},
                        {"network_bytes", r.result.network_bytes},
                        {"hbm_bytes_per_network_byte", r.result.hbm_per_network_byte()}};
    if (s.name == "overlap") {
      j["kernel_alone_ns"] = ps_to_ns(r.overlap.kernel_alone_ps);
      j["kernel_overlapped_ns"] = ps_to_ns(r.overlap.kernel_overlapped_ps);
      j["kernel_slowdown"] = r.overlap.kernel_slowdown();
      j["collective_alone_ns"] = ps_to_ns(r.overlap.collective_alone_ps);
      j["collective_overlapped_ns"] = ps_to_ns(r.overlap.collective_overlapped_ps);
      j["collective_slowdown"] = r.overlap.collective_slowdown();
    }
    rows.push_back(std::move(j));
  }
  return {{"study", s.name}, {"x", s.x_label}, {"rows", rows}};
}

}  // namespace acesim
