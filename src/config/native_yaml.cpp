// acesim's native platform YAML (schema in docs/formats.md).
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "algorithm/algorithm.h"
#include "collective/nccl_model.h"
#include "config/input_error.h"
#include "config/kernel_constants.h"
#include "config/limits.h"
#include "config/units.h"
#include "config/platform.h"
#include "config/yaml_reader.h"
#include "endpoint/executor_registry.h"
#include "topology/topology_kinds.h"

namespace acesim {
namespace {

using limits::kMaxDelayNs;

// The kind's own keys that the dimension gives, each in its declared range.
std::vector<KindParam> read_kind_params(const YAML::Node& node, const TopologyKindEntry& kind, const std::string& file,
                                        const std::string& path) {
  std::vector<KindParam> out;
  for (const KindParamSpec& ps : kind.params) {
    const YAML::Node v = node[ps.name];
    if (!v) continue;
    const std::string at = path + "." + ps.name;
    const double x = ps.integer ? static_cast<double>(yaml::integer(v, file, at)) : yaml::number(v, file, at);
    if (!(x >= ps.min && x <= ps.max)) {
      std::ostringstream ss;
      ss << "must be " << (ps.integer ? "an integer " : "") << "in " << ps.min << ".." << ps.max << ", got " << v.Scalar();
      throw_input_error(file, yaml::line_of(v), at, ss.str());
    }
    out.push_back({ps.name, x});
  }
  return out;
}

DimensionSpec read_dimension(const YAML::Node& node, const std::string& file, const std::string& path) {
  using namespace yaml;
  // The kind decides which keys are allowed: read it first.
  if (!node.IsMap()) throw_input_error(file, line_of(node), path, "expected a map of keys");
  require(node, "kind", file, path);
  DimensionSpec d;
  const std::string kind = scalar(node["kind"], file, path + ".kind");
  const TopologyKindRegistry& kinds = topology_kind_registry();
  const TopologyKindEntry* k = kinds.find(kind);
  if (!k) throw_input_error(file, line_of(node["kind"]), path + ".kind", "unknown kind '" + kind + "'" + suggestion(kind, kinds.names()));
  std::vector<std::string> keys = {"kind", "npus", "bandwidth_GBps", "latency_ns", "links_per_neighbour", "nodes", "nvls", "nvls_efficiency",
                                   "sharp"};
  for (const KindParamSpec& ps : k->params) keys.push_back(ps.name);
  check_map(node, file, path, keys);
  for (const char* key : {"npus", "bandwidth_GBps", "latency_ns"}) require(node, key, file, path);
  d.kind = DimKind(k->name);
  d.params = read_kind_params(node, *k, file, path);
  const long long npus = integer(node["npus"], file, path + ".npus");
  if (npus < 1 || npus > limits::kMaxNpusPerDimension) {
    throw_input_error(file, line_of(node["npus"]), path + ".npus",
                      "must be an integer in 1..1048576, got " + node["npus"].Scalar());
  }
  d.npus = static_cast<int>(npus);
  d.bandwidth_GBps = number(node["bandwidth_GBps"], file, path + ".bandwidth_GBps");
  if (!(d.bandwidth_GBps >= limits::kMinBandwidthGBps && d.bandwidth_GBps <= limits::kMaxBandwidthGBps)) {
    throw_input_error(file, line_of(node["bandwidth_GBps"]), path + ".bandwidth_GBps",
                      "must be in 1e-6..1e9 GB/s, got " + node["bandwidth_GBps"].Scalar());
  }
  d.latency_ns = number(node["latency_ns"], file, path + ".latency_ns");
  if (d.latency_ns < 0.0) {
    throw_input_error(file, line_of(node["latency_ns"]), path + ".latency_ns", "must be >= 0, got " + node["latency_ns"].Scalar());
  }
  if (d.latency_ns > kMaxDelayNs) {
    throw_input_error(file, line_of(node["latency_ns"]), path + ".latency_ns", "must be at most 1e9 (1 s), got " + node["latency_ns"].Scalar());
  }
  if (node["links_per_neighbour"]) {
    const long long links = integer(node["links_per_neighbour"], file, path + ".links_per_neighbour");
    if (links < 1 || links > limits::kMaxLinksPerNeighbour) {
      throw_input_error(file, line_of(node["links_per_neighbour"]), path + ".links_per_neighbour",
                        "must be an integer in 1..1024, got " + std::to_string(links));
    }
    d.links_per_neighbour = static_cast<int>(links);
  }
  if (node["nvls"]) {
    const std::string v = scalar(node["nvls"], file, path + ".nvls");
    if (v != "true" && v != "false") throw_input_error(file, line_of(node["nvls"]), path + ".nvls", "must be true or false, got " + v);
    d.nvls = v == "true";
    if (d.nvls && d.kind != DimKind::kSwitch) {
      throw_input_error(file, line_of(node["nvls"]), path + ".nvls", "in-switch reduction needs kind switch, got " + kind);
    }
  }
  if (node["nvls_efficiency"]) {
    const YAML::Node e = node["nvls_efficiency"];
    d.nvls_efficiency = number(e, file, path + ".nvls_efficiency");
    if (!(d.nvls_efficiency > 0.0 && d.nvls_efficiency <= 1.0)) {
      throw_input_error(file, line_of(e), path + ".nvls_efficiency", "must be in (0, 1], got " + e.Scalar());
    }
    if (!d.nvls) throw_input_error(file, line_of(e), path + ".nvls_efficiency", "needs nvls: true");
  }
  if (node["sharp"]) {
    const std::string v = scalar(node["sharp"], file, path + ".sharp");
    if (v != "true" && v != "false") throw_input_error(file, line_of(node["sharp"]), path + ".sharp", "must be true or false, got " + v);
    d.sharp = v == "true";
    if (d.sharp && d.kind != DimKind::kSwitch && d.kind != DimKind("rail")) {
      throw_input_error(file, line_of(node["sharp"]), path + ".sharp",
                        "in-network reduction is modelled on kind switch or rail (one switch per rail), got " + kind);
    }
  }
  return d;
}

// `collectives.library` and `collectives.nccl` (docs/formats.md).
void read_nccl(const YAML::Node& c, const std::string& file, const std::vector<DimensionSpec>& dims, NcclSettings& n) {
  using namespace yaml;
  if (c["library"]) {
    const std::string lib = scalar(c["library"], file, "collectives.library");
    if (lib != "nccl" && lib != "acesim") {
      throw_input_error(file, line_of(c["library"]), "collectives.library", "unknown library '" + lib + "' (acesim, nccl)");
    }
    n.enabled = lib == "nccl";
  }
  if (!c["nccl"]) return;
  const YAML::Node m = c["nccl"];
  check_map(m, file, "collectives.nccl", {"algorithm", "protocol", "channels", "gpu_arch"});
  if (!n.enabled) throw_input_error(file, line_of(m), "collectives.nccl", "needs collectives.library: nccl");
  if (m["algorithm"]) {
    const std::string a = scalar(m["algorithm"], file, "collectives.nccl.algorithm");
    if (normalize_name(a) != "auto") {
      n.algo = parse_nccl_algo(a);
      if (!n.algo) throw_input_error(file, line_of(m["algorithm"]), "collectives.nccl.algorithm", "unknown algorithm '" + a + "'" + suggestion(a, nccl_algo_names()));
    }
  }
  if (m["protocol"]) {
    const std::string p = scalar(m["protocol"], file, "collectives.nccl.protocol");
    if (normalize_name(p) != "auto") {
      n.proto = parse_nccl_proto(p);
      if (!n.proto) throw_input_error(file, line_of(m["protocol"]), "collectives.nccl.protocol", "unknown protocol '" + p + "'" + suggestion(p, nccl_proto_names()));
    }
  }
  if (m["gpu_arch"]) {
    const std::string a = scalar(m["gpu_arch"], file, "collectives.nccl.gpu_arch");
    const auto arch = parse_nccl_arch(a);
    if (!arch) throw_input_error(file, line_of(m["gpu_arch"]), "collectives.nccl.gpu_arch", "unknown GPU architecture '" + a + "'" + suggestion(a, nccl_arch_names()));
    n.arch = *arch;
  }
  if (m["channels"]) {
    const long long v = integer(m["channels"], file, "collectives.nccl.channels");
    if (v < 1 || v > 64) throw_input_error(file, line_of(m["channels"]), "collectives.nccl.channels", "must be an integer in 1..64 (NCCL's MAXCHANNELS), got " + std::to_string(v));
    n.channels = static_cast<int>(v);
  }
  if (n.enabled) {
    try {
      (void)nccl_view(dims);
    } catch (const std::invalid_argument& e) {
      throw_input_error(file, line_of(c["library"]), "collectives.library", e.what());
    }
  }
}

Algorithm read_algorithm(const YAML::Node& node, const std::string& name, const std::string& file,
                         const std::string& path) {
  const auto alg = parse_algorithm(name);
  if (!alg) {
    const auto names = algorithm_names();
    throw_input_error(file, yaml::line_of(node), path, "unknown algorithm '" + name + "'" + suggestion(name, names));
  }
  return *alg;
}

void read_op(const YAML::Node& node, CollectiveOp op, const std::vector<DimensionSpec>& dims, OpConfig& oc,
             const std::string& file, const std::string& path) {
  using namespace yaml;
  check_map(node, file, path, {"plan", "algorithm"});
  if (node["plan"]) {
    const std::string p = scalar(node["plan"], file, path + ".plan");
    const auto plan = parse_plan(p);
    if (!plan) {
      const auto names = plan_names();
      throw_input_error(file, line_of(node["plan"]), path + ".plan", "unknown plan '" + p + "'" + suggestion(p, names));
    }
    oc.plan = *plan;
  }
  if (!node["algorithm"]) return;
  const YAML::Node an = node["algorithm"];
  const std::string apath = path + ".algorithm";
  const auto names = scalar_list(an, file, apath, true);
  if (oc.plan == PlanKind::kFlat) {
    if (names.size() != 1) throw_input_error(file, line_of(an), apath, "a flat plan takes one algorithm, not a list");
    oc.flat = read_algorithm(an, names[0], file, apath);
    if (auto why = operation_unsupported(op, oc.flat)) throw_input_error(file, line_of(an), apath, *why);
    return;
  }
  if (an.IsSequence() && names.size() != dims.size()) {
    throw_input_error(file, line_of(an), apath,
                      std::to_string(names.size()) + " algorithms for a topology of " + std::to_string(dims.size()) +
                          " dimensions (give one per dimension, or a single name for all)");
  }
  oc.per_dim.clear();
  for (std::size_t d = 0; d < dims.size(); ++d) {
    oc.per_dim.push_back(read_algorithm(an, names.size() == 1 ? names[0] : names[d], file, apath));
  }
  // Every phase the plan runs over the whole topology must name an
  // algorithm that runs its operation (double-binary-tree runs all-reduce
  // only). A group size it cannot serve (halving-doubling on 6 NPUs) is
  // refused where a collective runs on such a group (plan_refusal).
  const Topology topo(dims);
  std::vector<int> all;
  for (std::size_t d = 0; d < dims.size(); ++d) all.push_back(static_cast<int>(d));
  for (const PhaseSpec& ph : build_plan(op, oc, topo, all)) {
    if (auto why = operation_unsupported(ph.op, ph.algorithm)) {
      const std::string at = names.size() == 1 ? apath : apath + "[" + std::to_string(ph.dims[0]) + "]";
      throw_input_error(file, line_of(an), at, *why);
    }
  }
}

double positive_number(const YAML::Node& node, const std::string& file, const std::string& path, double max) {
  const double v = yaml::number(node, file, path);
  if (!(v > 0.0 && v <= max)) {
    std::ostringstream ss;
    ss << "must be > 0 and <= " << max << ", got " << node.Scalar();
    throw_input_error(file, yaml::line_of(node), path, ss.str());
  }
  return v;
}

bool boolean(const YAML::Node& node, const std::string& file, const std::string& path) {
  const std::string v = yaml::scalar(node, file, path);
  if (v == "true" || v == "yes" || v == "on") return true;
  if (v == "false" || v == "no" || v == "off") return false;
  throw_input_error(file, yaml::line_of(node), path, "expected true or false, got '" + v + "'");
}

void read_npu(const YAML::Node& node, NpuConfig& npu, const std::string& file) {
  using namespace yaml;
  check_map(node, file, "npu",
            {"compute_units", "unit_TFLOPS", "hbm_GBps", "hbm_capacity_GB", "hbm_sharing", "hbm_comm_share", "timed_kernel_hbm_fraction",
             "fixed_kernel_times", "fp8", "mxfp8", "arch", "gpu", "clock_MHz"});
  if (node["compute_units"]) {
    const long long u = integer(node["compute_units"], file, "npu.compute_units");
    if (u < 1 || u > 1'000'000) {
      throw_input_error(file, line_of(node["compute_units"]), "npu.compute_units", "must be an integer in 1..1000000, got " + std::to_string(u));
    }
    npu.compute_units = static_cast<int>(u);
  }
  if (node["unit_TFLOPS"]) npu.unit_TFLOPS = positive_number(node["unit_TFLOPS"], file, "npu.unit_TFLOPS", 1e6);
  if (node["hbm_GBps"]) npu.hbm_GBps = positive_number(node["hbm_GBps"], file, "npu.hbm_GBps", limits::kMaxBandwidthGBps);
  if (node["hbm_capacity_GB"]) {
    npu.hbm_capacity_GB = number(node["hbm_capacity_GB"], file, "npu.hbm_capacity_GB");
    if (!(npu.hbm_capacity_GB >= 0.0 && npu.hbm_capacity_GB <= 1e9)) {
      throw_input_error(file, line_of(node["hbm_capacity_GB"]), "npu.hbm_capacity_GB",
                        "must be a number in 0..1e9 GB (0: unknown), got " + node["hbm_capacity_GB"].Scalar());
    }
  }
  if (node["hbm_sharing"]) {
    const std::string v = scalar(node["hbm_sharing"], file, "npu.hbm_sharing");
    const auto h = parse_hbm_sharing(v);
    const auto names = hbm_sharing_names();
    if (!h) throw_input_error(file, line_of(node["hbm_sharing"]), "npu.hbm_sharing", "unknown policy '" + v + "'" + suggestion(v, names));
    npu.hbm_sharing = *h;
  }
  if (node["hbm_comm_share"]) {
    npu.hbm_comm_share = number(node["hbm_comm_share"], file, "npu.hbm_comm_share");
    if (!(npu.hbm_comm_share > 0.0 && npu.hbm_comm_share < 1.0)) {
      throw_input_error(file, line_of(node["hbm_comm_share"]), "npu.hbm_comm_share", "must be between 0 and 1 (exclusive), got " + node["hbm_comm_share"].Scalar());
    }
    if (npu.hbm_sharing != HbmSharing::kStatic) {
      throw_input_error(file, line_of(node["hbm_comm_share"]), "npu.hbm_comm_share", "only applies with hbm_sharing: static");
    }
  }
  if (node["timed_kernel_hbm_fraction"]) {
    npu.timed_kernel_hbm_fraction = number(node["timed_kernel_hbm_fraction"], file, "npu.timed_kernel_hbm_fraction");
    if (!(npu.timed_kernel_hbm_fraction >= 0.0 && npu.timed_kernel_hbm_fraction <= 1.0)) {
      throw_input_error(file, line_of(node["timed_kernel_hbm_fraction"]), "npu.timed_kernel_hbm_fraction",
                        "must be in 0..1, got " + node["timed_kernel_hbm_fraction"].Scalar());
    }
  }
  if (node["fixed_kernel_times"]) npu.fixed_kernel_times = boolean(node["fixed_kernel_times"], file, "npu.fixed_kernel_times");
  if (node["fp8"]) npu.fp8 = boolean(node["fp8"], file, "npu.fp8");
  if (node["mxfp8"]) npu.mxfp8 = boolean(node["mxfp8"], file, "npu.mxfp8");
  if (node["arch"]) {
    const std::string v = scalar(node["arch"], file, "npu.arch");
    if (find_arch(v) == nullptr) {
      throw_input_error(file, line_of(node["arch"]), "npu.arch", "no compute model for '" + v + "'" + suggestion(v, arch_names()));
    }
    npu.arch = v;
  }
  if (node["gpu"]) npu.gpu = scalar(node["gpu"], file, "npu.gpu");
  if (node["clock_MHz"]) {
    const YAML::Node c = node["clock_MHz"];
    check_map(c, file, "npu.clock_MHz", {"peak", "sustained"});
    require(c, "peak", file, "npu.clock_MHz");
    require(c, "sustained", file, "npu.clock_MHz");
    npu.peak_clock_MHz = positive_number(c["peak"], file, "npu.clock_MHz.peak", 1e5);
    npu.sustained_clock_MHz = positive_number(c["sustained"], file, "npu.clock_MHz.sustained", 1e5);
    if (npu.sustained_clock_MHz > npu.peak_clock_MHz) {
      throw_input_error(file, line_of(c["sustained"]), "npu.clock_MHz.sustained",
                        "must not exceed the peak's clock (" + c["peak"].Scalar() + " MHz), got " + c["sustained"].Scalar());
    }
  }
}

void read_communication(const YAML::Node& node, NpuConfig& npu, const std::string& file) {
  using namespace yaml;
  check_map(node, file, "communication", {"executor", "sm", "ace", "dma"});
  if (node["executor"]) {
    const std::string v = scalar(node["executor"], file, "communication.executor");
    const ExecutorEntry* e = executor_registry().find(v);
    if (e == nullptr) throw_input_error(file, line_of(node["executor"]), "communication.executor", executor_registry().unknown(v));
    npu.executor = e->name;
  }
  if (node["sm"]) {
    const YAML::Node sm = node["sm"];
    check_map(sm, file, "communication.sm", {"units", "copy_GBps_per_unit", "reduce_GBps_per_unit", "hbm_bytes_per_byte_sent"});
    if (sm["units"]) {
      const long long u = integer(sm["units"], file, "communication.sm.units");
      if (u < 1 || u > npu.compute_units) {
        throw_input_error(file, line_of(sm["units"]), "communication.sm.units",
                          "must be in 1..npu.compute_units (" + std::to_string(npu.compute_units) + "), got " + std::to_string(u));
      }
      npu.sm.units = static_cast<int>(u);
    }
    if (sm["copy_GBps_per_unit"]) {
      npu.sm.copy_GBps_per_unit = positive_number(sm["copy_GBps_per_unit"], file, "communication.sm.copy_GBps_per_unit", limits::kMaxBandwidthGBps);
    }
    if (sm["reduce_GBps_per_unit"]) {
      npu.sm.reduce_GBps_per_unit = positive_number(sm["reduce_GBps_per_unit"], file, "communication.sm.reduce_GBps_per_unit", limits::kMaxBandwidthGBps);
    }
    if (sm["hbm_bytes_per_byte_sent"]) {
      const YAML::Node h = sm["hbm_bytes_per_byte_sent"];
      const std::string base = "communication.sm.hbm_bytes_per_byte_sent";
      check_map(h, file, base, {"reduce-scatter", "all-gather", "all-to-all"});
      auto read = [&](const char* key, double& out) {
        if (!h[key]) return;
        out = number(h[key], file, base + "." + key);
        if (!(out >= 0.0 && out <= 1000.0)) {
          throw_input_error(file, line_of(h[key]), base + "." + key, "must be in 0..1000, got " + h[key].Scalar());
        }
      };
      read("reduce-scatter", npu.sm.hbm_per_byte_reduce);
      read("all-gather", npu.sm.hbm_per_byte_gather);
      read("all-to-all", npu.sm.hbm_per_byte_alltoall);
    }
  }
  if (node["ace"]) {
    const YAML::Node ace = node["ace"];
    check_map(ace, file, "communication.ace", {"sram", "alu_GBps", "dma_GBps"});
    if (ace["sram"]) {
      std::string err;
      const std::string text = scalar(ace["sram"], file, "communication.ace.sram");
      const auto v = parse_bytes(text, &err);
      if (!v) throw_input_error(file, line_of(ace["sram"]), "communication.ace.sram", err);
      if (*v == 0 || *v > (1ULL << 40)) {
        throw_input_error(file, line_of(ace["sram"]), "communication.ace.sram", "must be > 0 and at most 1 TiB, got '" + text + "'");
      }
      npu.ace.sram_bytes = *v;
    }
    if (ace["alu_GBps"]) npu.ace.alu_GBps = positive_number(ace["alu_GBps"], file, "communication.ace.alu_GBps", limits::kMaxBandwidthGBps);
    if (ace["dma_GBps"]) npu.ace.dma_GBps = positive_number(ace["dma_GBps"], file, "communication.ace.dma_GBps", limits::kMaxBandwidthGBps);
  }
  if (node["dma"]) {
    const YAML::Node dma = node["dma"];
    check_map(dma, file, "communication.dma", {"engines", "GBps_per_engine", "latency_ns", "host_issue_ns"});
    for (const char* key : {"engines", "GBps_per_engine", "latency_ns"}) {
      if (!dma[key]) throw_input_error(file, line_of(dma), std::string("communication.dma.") + key, "missing: a platform's copy engines need engines, GBps_per_engine and latency_ns");
    }
    const long long engines = integer(dma["engines"], file, "communication.dma.engines");
    if (engines < 1 || engines > 1024) {
      throw_input_error(file, line_of(dma["engines"]), "communication.dma.engines", "must be in 1..1024, got " + std::to_string(engines));
    }
    npu.dma.engines = static_cast<int>(engines);
    npu.dma.GBps_per_engine = positive_number(dma["GBps_per_engine"], file, "communication.dma.GBps_per_engine", limits::kMaxBandwidthGBps);
    const double latency = number(dma["latency_ns"], file, "communication.dma.latency_ns");
    if (!(latency >= 0.0 && latency <= kMaxDelayNs)) {
      throw_input_error(file, line_of(dma["latency_ns"]), "communication.dma.latency_ns",
                        "must be >= 0 and at most 1e9 (1 s), got " + dma["latency_ns"].Scalar());
    }
    npu.dma.latency_ps = ns_to_ps(latency);
    if (dma["host_issue_ns"]) {
      const double issue = number(dma["host_issue_ns"], file, "communication.dma.host_issue_ns");
      if (!(issue >= 0.0 && issue <= kMaxDelayNs)) {
        throw_input_error(file, line_of(dma["host_issue_ns"]), "communication.dma.host_issue_ns",
                          "must be >= 0 and at most 1e9 (1 s), got " + dma["host_issue_ns"].Scalar());
      }
      npu.dma.host_issue_ps = ns_to_ps(issue);
    }
  }
  if (npu.executor == "dma" && npu.dma.engines == 0) {
    throw_input_error(file, line_of(node["executor"]), "communication.executor",
                      "dma needs the platform's copy engines: give communication.dma (engines, GBps_per_engine, latency_ns)");
  }
}

std::vector<int> dim_list(const YAML::Node& node, const std::string& file, const std::string& path, int num_dims) {
  std::vector<int> out;
  const auto items = yaml::scalar_list(node, file, path, true);
  for (std::size_t i = 0; i < items.size(); ++i) {
    char* end = nullptr;
    const long d = std::strtol(items[i].c_str(), &end, 10);
    if (items[i].empty() || *end != '\0' || d < 0 || d >= num_dims) {
      throw_input_error(file, yaml::line_of(node), path, "'" + items[i] + "' is not a dimension of the topology (0.." +
                                                             std::to_string(num_dims - 1) + ")");
    }
    if (std::find(out.begin(), out.end(), static_cast<int>(d)) != out.end()) {
      throw_input_error(file, yaml::line_of(node), path, "dimension " + items[i] + " listed twice");
    }
    out.push_back(static_cast<int>(d));
  }
  return out;
}

void read_workload(const YAML::Node& node, WorkloadConfig& w, int num_dims, const std::string& file, const std::string& folder) {
  using namespace yaml;
  check_map(node, file, "workload", {"model", "file", "batch_per_npu", "precision", "iterations", "data_dims", "model_dims"});
  w.given = true;
  if (node["model"] && node["file"]) throw_input_error(file, line_of(node["file"]), "workload.file", "give either model or file, not both");
  if (!node["model"] && !node["file"]) throw_input_error(file, line_of(node), "workload", "needs model (a built-in model) or file (an ASTRA-sim 1.0 workload)");
  if (node["model"]) w.model = scalar(node["model"], file, "workload.model");
  if (node["file"]) {
    w.file = scalar(node["file"], file, "workload.file");
    // Relative to the platform file's folder.
    const std::filesystem::path p(w.file);
    if (p.is_relative()) w.file = (std::filesystem::path(folder) / p).string();
  }
  if (node["batch_per_npu"]) {
    const long long b = integer(node["batch_per_npu"], file, "workload.batch_per_npu");
    if (b < 1 || b > 1'000'000) throw_input_error(file, line_of(node["batch_per_npu"]), "workload.batch_per_npu", "must be in 1..1000000, got " + std::to_string(b));
    w.batch_per_npu = static_cast<int>(b);
  }
  if (node["precision"]) {
    const std::string p = scalar(node["precision"], file, "workload.precision");
    const auto bytes = parse_precision(p);
    if (!bytes) {
      const auto names = precision_names();
      throw_input_error(file, line_of(node["precision"]), "workload.precision", "unknown precision '" + p + "'" + suggestion(p, names));
    }
    w.bytes_per_element = *bytes;
  }
  if (node["iterations"]) {
    const long long it = integer(node["iterations"], file, "workload.iterations");
    if (it < 1 || it > 10'000) throw_input_error(file, line_of(node["iterations"]), "workload.iterations", "must be in 1..10000, got " + std::to_string(it));
    w.iterations = static_cast<int>(it);
  }
  if (node["data_dims"]) w.data_dims = dim_list(node["data_dims"], file, "workload.data_dims", num_dims);
  if (node["model_dims"]) w.model_dims = dim_list(node["model_dims"], file, "workload.model_dims", num_dims);
}

// `energy:`: every key required, each a number >= 0 (an idle or a link
// figure may be 0, a GPU of none), link_pJ_per_bit one per dimension.
EnergyModel read_energy(const YAML::Node& node, std::size_t dims, const std::string& file) {
  using namespace yaml;
  check_map(node, file, "energy", {"idle_W", "active_W", "hbm_pJ_per_bit", "link_pJ_per_bit"});
  for (const char* key : {"idle_W", "active_W", "hbm_pJ_per_bit", "link_pJ_per_bit"}) {
    if (!node[key]) throw_input_error(file, line_of(node), std::string("energy.") + key, "missing: an energy model needs idle_W, active_W, hbm_pJ_per_bit and link_pJ_per_bit");
  }
  auto non_negative = [&](const YAML::Node& n, const std::string& path, double max) {
    const double v = number(n, file, path);
    if (!(v >= 0.0 && v <= max)) {
      throw_input_error(file, line_of(n), path, "must be >= 0 and <= " + fmt::format("{:g}", max) + ", got " + n.Scalar());
    }
    return v;
  };
  EnergyModel e;
  e.idle_W = non_negative(node["idle_W"], "energy.idle_W", 1e5);
  e.active_W = non_negative(node["active_W"], "energy.active_W", 1e5);
  e.hbm_pJ_per_bit = non_negative(node["hbm_pJ_per_bit"], "energy.hbm_pJ_per_bit", 1e4);
  const YAML::Node links = node["link_pJ_per_bit"];
  if (!links.IsSequence() || links.size() != dims) {
    throw_input_error(file, line_of(links), "energy.link_pJ_per_bit",
                      fmt::format("expected a list of {} numbers, one per topology dimension", dims));
  }
  for (std::size_t d = 0; d < dims; ++d) {
    e.link_pJ_per_bit.push_back(non_negative(links[d], fmt::format("energy.link_pJ_per_bit[{}]", d), 1e4));
  }
  return e;
}

}  // namespace

double EnergyModel::joules(double seconds, long long npus, int compute_units, double unit_seconds, double hbm_bytes,
                           const std::vector<double>& sent_per_dim) const {
  constexpr double kJoulesPerPicojoule = 1e-12;
  // Units held by communication are taken from compute: together at most
  // all of them, all the time.
  unit_seconds = std::min(unit_seconds, static_cast<double>(compute_units) * seconds);
  double per_npu = idle_W * seconds + active_W * unit_seconds / compute_units +
                   8.0 * hbm_bytes * hbm_pJ_per_bit * kJoulesPerPicojoule;
  for (std::size_t d = 0; d < sent_per_dim.size() && d < link_pJ_per_bit.size(); ++d) {
    per_npu += 8.0 * sent_per_dim[d] * link_pJ_per_bit[d] * kJoulesPerPicojoule;
  }
  return per_npu * static_cast<double>(npus);
}

PlatformConfig parse_platform_yaml(std::string_view text, const std::string& file) {
  return parse_platform_yaml(text, file, std::filesystem::path(file).parent_path().string());
}

PlatformConfig parse_platform_yaml(std::string_view text, const std::string& file, const std::string& folder) {
  using namespace yaml;
  const YAML::Node root = parse(text, file);
  check_map(root, file, "", {"topology", "network", "collectives", "npu", "communication", "workload", "energy"});
  require(root, "topology", file, "");
  PlatformConfig pc;
  pc.source = file;
  const YAML::Node topo = root["topology"];
  if (!topo.IsSequence() || topo.size() == 0) {
    throw_input_error(file, line_of(topo), "topology", "expected a non-empty list of dimensions");
  }
  if (topo.size() > static_cast<std::size_t>(limits::kMaxDimensions)) throw_input_error(file, line_of(topo), "topology", "at most 16 dimensions are supported");
  long long total = 1;
  for (std::size_t i = 0; i < topo.size(); ++i) {
    const std::string at = "topology[" + std::to_string(i) + "]";
    pc.dims.push_back(read_dimension(topo[i], file, at));
    if (i == 0 && pc.dims.back().sharp) {
      throw_input_error(file, line_of(topo[i]["sharp"]), at + ".sharp",
                        "SHARP reduces in the scale-out's switches (a later dimension); the node's switch uses nvls");
    }
    if (topo[i]["nodes"] && boolean(topo[i]["nodes"], file, at + ".nodes")) {
      if (pc.nodes_dim >= 0) {
        throw_input_error(file, line_of(topo[i]["nodes"]), at + ".nodes",
                          "topology[" + std::to_string(pc.nodes_dim) + "] counts the nodes already (one dimension may)");
      }
      pc.nodes_dim = static_cast<int>(i);
    }
    total *= pc.dims.back().npus;
    if (total > limits::kMaxNpus) {
      throw_input_error(file, line_of(topo[i]), "topology", "more than 16777216 NPUs in total");
    }
  }
  const Topology t(pc.dims);
  pc.collectives = default_collective_config(t);
  pc.npu = default_npu();
  // npu first: communication.sm.units is checked against npu.compute_units.
  if (root["npu"]) read_npu(root["npu"], pc.npu, file);
  if (root["communication"]) read_communication(root["communication"], pc.npu, file);
  // A given communication.sm.units was checked above; the default (8) was not.
  if (pc.npu.sm.units > pc.npu.compute_units) {
    throw_input_error(file, line_of(root["npu"]["compute_units"]), "npu.compute_units",
                      "is " + std::to_string(pc.npu.compute_units) + ", fewer than the default communication.sm.units (" +
                          std::to_string(pc.npu.sm.units) + "); set communication.sm.units too");
  }
  if (root["workload"]) {
    read_workload(root["workload"], pc.workload, static_cast<int>(pc.dims.size()), file, folder);
    if (const std::string why = precision_unsupported(pc.npu, pc.workload.bytes_per_element); !why.empty()) {
      throw_input_error(file, line_of(root["workload"]["precision"]), "workload.precision", why);
    }
  }

  if (root["energy"]) pc.energy = read_energy(root["energy"], pc.dims.size(), file);

  if (root["network"]) {
    const YAML::Node n = root["network"];
    check_map(n, file, "network", {"backend", "granularity"});
    if (n["backend"]) {
      const std::string b = scalar(n["backend"], file, "network.backend");
      const NetworkBackendType* kind = backend_registry().find(b);
      if (kind == nullptr) throw_input_error(file, line_of(n["backend"]), "network.backend", "unknown backend '" + b + "'" + suggestion(b, backend_registry().names()));
      pc.network.backend = kind->name;
    }
    if (n["granularity"]) {
      const std::string g = scalar(n["granularity"], file, "network.granularity");
      const auto gran = parse_granularity(g);
      if (!gran) throw_input_error(file, line_of(n["granularity"]), "network.granularity", "unknown granularity '" + g + "'" + suggestion(g, granularity_names()));
      pc.network.granularity = *gran;
    }
  }

  if (root["collectives"]) {
    const YAML::Node c = root["collectives"];
    check_map(c, file, "collectives",
              {"chunks", "max_chunk_bytes", "active_chunks_per_dimension", "scheduling", "endpoint_delay_ns", "all-reduce",
               "reduce-scatter", "all-gather", "all-to-all", "library", "nccl"});
    CollectiveConfig& cc = pc.collectives;
    read_nccl(c, file, pc.dims, cc.nccl);
    if (c["chunks"]) {
      const long long v = integer(c["chunks"], file, "collectives.chunks");
      if (v < 1 || v > limits::kMaxChunks) throw_input_error(file, line_of(c["chunks"]), "collectives.chunks", "must be an integer in 1..1000000, got " + std::to_string(v));
      cc.chunks = static_cast<int>(v);
    }
    if (c["max_chunk_bytes"]) {
      std::string err;
      const std::string size = scalar(c["max_chunk_bytes"], file, "collectives.max_chunk_bytes");
      const auto v = parse_bytes(size, &err);
      if (!v) throw_input_error(file, line_of(c["max_chunk_bytes"]), "collectives.max_chunk_bytes", err);
      if (*v == 0) throw_input_error(file, line_of(c["max_chunk_bytes"]), "collectives.max_chunk_bytes", "must be > 0");
      cc.max_chunk_bytes = *v;
    }
    if (c["active_chunks_per_dimension"]) {
      const long long v = integer(c["active_chunks_per_dimension"], file, "collectives.active_chunks_per_dimension");
      if (v < 1 || v > limits::kMaxActiveChunks) {
        throw_input_error(file, line_of(c["active_chunks_per_dimension"]), "collectives.active_chunks_per_dimension",
                          "must be an integer in 1..1000000, got " + std::to_string(v));
      }
      cc.active_chunks_per_dim = static_cast<int>(v);
    }
    if (c["scheduling"]) {
      const std::string s = scalar(c["scheduling"], file, "collectives.scheduling");
      const auto p = parse_scheduling_policy(s);
      const std::vector<std::string> names = {"lifo", "fifo"};
      if (!p) throw_input_error(file, line_of(c["scheduling"]), "collectives.scheduling", "unknown policy '" + s + "'" + suggestion(s, names));
      cc.policy = *p;
    }
    if (c["endpoint_delay_ns"]) {
      const double v = number(c["endpoint_delay_ns"], file, "collectives.endpoint_delay_ns");
      if (v < 0.0) throw_input_error(file, line_of(c["endpoint_delay_ns"]), "collectives.endpoint_delay_ns", "must be >= 0");
      if (v > kMaxDelayNs) {
        throw_input_error(file, line_of(c["endpoint_delay_ns"]), "collectives.endpoint_delay_ns",
                          "must be at most 1e9 (1 s), got " + c["endpoint_delay_ns"].Scalar());
      }
      cc.endpoint_delay_ps = ns_to_ps(v);
    }
    for (CollectiveOp op : kAllCollectiveOps) {
      const std::string key(to_string(op));
      if (c[key]) read_op(c[key], op, pc.dims, cc.op(op), file, "collectives." + key);
    }
  }
  const std::string problem = validate(pc.collectives, t);
  if (!problem.empty()) throw_input_error(file, 0, "collectives", problem);
  return pc;
}

PlatformConfig load_platform_file(const std::string& path) { return parse_platform_yaml(read_text_file(path), path); }

}  // namespace acesim
