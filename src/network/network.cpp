#include "network/network.h"

#include <algorithm>
#include <cmath>

namespace acesim {

void register_analytical_backend(BackendRegistry& registry);
void register_fluid_backend(BackendRegistry& registry);

void register_builtin_backends(BackendRegistry& registry) {
  register_analytical_backend(registry);
  register_fluid_backend(registry);
}

BackendRegistry& backend_registry() {
  static BackendRegistry registry("network backend", register_builtin_backends);
  return registry;
}

std::unique_ptr<NetworkBackend> make_network(const NetworkConfig& cfg, Simulation& sim, const Topology& topo) {
  return backend_registry().get(cfg.backend).make(sim, topo, cfg);
}

std::string_view to_string(Granularity g) { return g == Granularity::kPhase ? "phase" : "step"; }

std::optional<Granularity> parse_granularity(std::string_view s) {
  const std::string n = normalize_name(s);
  for (Granularity g : {Granularity::kPhase, Granularity::kStep}) {
    if (n == to_string(g)) return g;
  }
  return std::nullopt;
}

std::vector<std::string> granularity_names() { return {"phase", "step"}; }
void NetworkBackend::account(const TransferShape& shape, double bytes) {
  if (bytes_per_dim_.size() < shape.bytes_per_dim.size()) bytes_per_dim_.resize(shape.bytes_per_dim.size(), 0.0);
  for (std::size_t d = 0; d < shape.bytes_per_dim.size(); ++d) bytes_per_dim_[d] += shape.bytes_per_dim[d] * bytes;
  if (tenant_link_bytes_.empty() || shape.link_traffic.empty()) return;
  const int tenant = tenant_of_rank_[static_cast<std::size_t>(shape.link_traffic.front().rank)];
  if (tenant < 0) return;
  std::vector<double>& per_link = tenant_link_bytes_[static_cast<std::size_t>(tenant)];
  for (const ShapeStep& st : shape.steps) {
    for (const LinkLoad& l : st.loads) per_link[static_cast<std::size_t>(l.link)] += l.bytes_per_byte * st.scale_sum * bytes;
  }
}

void NetworkBackend::set_tenants(std::vector<int> tenant_of_rank, int tenants, LinkId links) {
  tenant_of_rank_ = std::move(tenant_of_rank);
  tenant_link_bytes_.assign(static_cast<std::size_t>(tenants), std::vector<double>(static_cast<std::size_t>(links), 0.0));
}

void NetworkBackend::append_endpoint_usage(const EndpointLoad* endpoint, double work, std::vector<Usage>& out) {
  if (endpoint == nullptr || !(work > 0.0)) return;
  for (const EndpointDemand& d : endpoint->demands) {
    if (d.amount > 0.0) out.push_back({d.resource, d.amount / work});
  }
}

TimePs analytical_duration(const TransferShape& shape, double bytes, TimePs per_step_overhead_ps) {
  const double ps_per_s = static_cast<double>(kPsPerSec);
  double total_ps = 0.0;
  for (const ShapeStep& st : shape.steps) {
    total_ps += static_cast<double>(st.repeat) * static_cast<double>(per_step_overhead_ps);
    if (st.frontier.empty()) continue;
    if (st.frontier.size() == 1) {
      total_ps += static_cast<double>(st.repeat) * static_cast<double>(st.frontier[0].first) +
                  st.scale_sum * bytes * st.frontier[0].second * ps_per_s;
      continue;
    }
    for (int k = 0; k < st.repeat; ++k) {
      const double scaled = bytes * (st.scale_first + st.scale_step * k);
      double worst = 0.0;
      for (const auto& [lat, spb] : st.frontier) {
        worst = std::max(worst, static_cast<double>(lat) + scaled * spb * ps_per_s);
      }
      total_ps += worst;
    }
  }
  return static_cast<TimePs>(std::ceil(total_ps));
}

}  // namespace acesim
