// ASTRA-sim 2.0 analytical inputs: network YAML + system JSON
// (formats summarised in docs/formats.md).
#include <algorithm>
#include <cctype>
#include <climits>

#include <nlohmann/json.hpp>

#include "algorithm/algorithm.h"
#include "config/input_error.h"
#include "config/limits.h"
#include "config/platform.h"
#include "config/yaml_reader.h"
#include "topology/topology_kinds.h"

namespace acesim {
namespace {

// Ordered: keys are read, and reported, in the order the file gives them.
using json = nlohmann::ordered_json;

using limits::kMaxDelayNs;

// ASTRA-sim's analytical backends read a network file's "GB/s" as 2^30 bytes
// per second (astra-network-analytical, bw_GBps_to_Bpns: "1 GB is 2^30 B"),
// so 50 there is 53.69 GB/s in acesim's decimal units.
constexpr double kAstraGBInBytes = 1073741824.0;

// "1 entry", "2 entries".
std::string count_of(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::vector<DimensionSpec> read_network(std::string_view network_text, const std::string& file) {
  using namespace yaml;
  const YAML::Node root = parse(network_text, file);
  check_map(root, file, "", {"topology", "npus_count", "bandwidth", "latency"});
  for (const char* k : {"topology", "npus_count", "bandwidth", "latency"}) require(root, k, file, "");
  const auto kinds = scalar_list(root["topology"], file, "topology", false);
  const auto npus = scalar_list(root["npus_count"], file, "npus_count", false);
  const auto bw = scalar_list(root["bandwidth"], file, "bandwidth", false);
  const auto lat = scalar_list(root["latency"], file, "latency", false);
  if (kinds.empty()) throw_input_error(file, line_of(root["topology"]), "topology", "no dimensions given");
  if (kinds.size() > 16) throw_input_error(file, line_of(root["topology"]), "topology", "at most 16 dimensions are supported");
  auto same_length = [&](const char* key, std::size_t n) {
    if (n != kinds.size()) {
      throw_input_error(file, line_of(root[key]), key,
                        count_of(n, "entry", "entries") + ", but topology lists " +
                            count_of(kinds.size(), "dimension", "dimensions"));
    }
  };
  same_length("npus_count", npus.size());
  same_length("bandwidth", bw.size());
  same_length("latency", lat.size());
  std::vector<DimensionSpec> dims;
  long long total = 1;
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    const std::string idx = "[" + std::to_string(i) + "]";
    DimensionSpec d;
    const TopologyKindEntry* k = topology_kind_registry().find(kinds[i]);
    if (k == nullptr || k->astra_name.empty()) {
      throw_input_error(file, line_of(root["topology"][i]), "topology" + idx,
                        "unknown topology '" + kinds[i] + "'" + suggestion(kinds[i], astra_topology_names()));
    }
    d.kind = DimKind(k->name);
    const long long n = integer(root["npus_count"][i], file, "npus_count" + idx);
    if (n < 1 || n > limits::kMaxNpusPerDimension) {
      throw_input_error(file, line_of(root["npus_count"][i]), "npus_count" + idx, "must be in 1..1048576, got " + npus[i]);
    }
    d.npus = static_cast<int>(n);
    total *= n;
    if (total > limits::kMaxNpus) {
      throw_input_error(file, line_of(root["npus_count"]), "npus_count", "more than 16777216 NPUs in total");
    }
    const double bandwidth = number(root["bandwidth"][i], file, "bandwidth" + idx);
    if (!(bandwidth >= limits::kMinBandwidthGBps && bandwidth <= limits::kMaxBandwidthGBps)) {
      throw_input_error(file, line_of(root["bandwidth"][i]), "bandwidth" + idx, "must be in 1e-6..1e9 GB/s, got " + bw[i]);
    }
    d.bandwidth_GBps = bandwidth * kAstraGBInBytes / 1e9;
    d.latency_ns = number(root["latency"][i], file, "latency" + idx);
    if (d.latency_ns < 0.0) throw_input_error(file, line_of(root["latency"][i]), "latency" + idx, "must be >= 0 ns, got " + lat[i]);
    if (d.latency_ns > kMaxDelayNs) {
      throw_input_error(file, line_of(root["latency"][i]), "latency" + idx, "must be at most 1e9 ns (1 s), got " + lat[i]);
    }
    dims.push_back(d);
  }
  return dims;
}

int json_line(const std::string& text, std::size_t byte) {
  byte = std::min(byte, text.size());
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(byte), '\n'));
}

// The line of `"key"` in the text, for messages about a key's value.
int key_line(const std::string& text, const std::string& key) {
  const std::size_t pos = text.find("\"" + key + "\"");
  return pos == std::string::npos ? 0 : json_line(text, pos);
}

double json_number(const json& v, const std::string& file, int line, const std::string& key) {
  if (!v.is_number()) throw_input_error(file, line, key, "expected a number, got " + v.dump());
  return v.get<double>();
}

long long json_integer(const json& v, const std::string& file, int line, const std::string& key, long long min) {
  if (!v.is_number_integer()) throw_input_error(file, line, key, "expected an integer, got " + v.dump());
  if (v.is_number_unsigned() && v.get<unsigned long long>() > static_cast<unsigned long long>(LLONG_MAX)) {
    throw_input_error(file, line, key, "too large: " + v.dump());
  }
  const long long x = v.get<long long>();
  if (x < min) throw_input_error(file, line, key, "must be >= " + std::to_string(min) + ", got " + std::to_string(x));
  return x;
}

void read_implementation(const json& v, CollectiveOp op, const std::vector<DimensionSpec>& dims, OpConfig& oc,
                         const std::string& file, int line, const std::string& key, const std::string& network_file) {
  std::vector<std::string> names;
  if (v.is_string()) {
    // ASTRA-sim 1.0 style: "ring_ring_direct".
    std::string s = v.get<std::string>();
    std::size_t start = 0;
    for (;;) {
      const std::size_t u = s.find('_', start);
      names.push_back(s.substr(start, u == std::string::npos ? std::string::npos : u - start));
      if (u == std::string::npos) break;
      start = u + 1;
    }
  } else if (v.is_array()) {
    for (const json& e : v) {
      if (!e.is_string()) throw_input_error(file, line, key, "expected algorithm names, got " + e.dump());
      names.push_back(e.get<std::string>());
    }
  } else {
    throw_input_error(file, line, key, "expected a list of algorithm names, got " + v.dump());
  }
  if (names.empty()) throw_input_error(file, line, key, "empty list");
  // ASTRA-sim's spellings of every registered algorithm, per dimension and
  // flat ("one" + name).
  std::vector<std::string> valid;
  for (const std::string prefix : {"", "one"}) {
    for (const CollectiveAlgorithm& a : algorithm_registry().entries()) {
      for (const std::string& s : a.astra_names) valid.push_back(prefix.empty() ? s : prefix + char(std::toupper(s[0])) + s.substr(1));
    }
  }
  auto parse_one = [&](const std::string& name, bool& flat) {
    std::string base = name;
    flat = name.size() > 3 && name.compare(0, 3, "one") == 0;
    if (flat) base = name.substr(3);
    Algorithm alg = astra_algorithm(base);
    if (alg == nullptr) alg = parse_algorithm(base).value_or(nullptr);
    if (alg == nullptr) throw_input_error(file, line, key, "unknown implementation '" + name + "'" + suggestion(name, valid));
    return alg;
  };
  bool flat0 = false;
  const Algorithm first = parse_one(names[0], flat0);
  if (flat0) {
    for (const std::string& n : names) {
      bool f = false;
      if (parse_one(n, f) != first || !f) {
        throw_input_error(file, line, key, "mixes '" + names[0] + "' with '" + n + "': a one* implementation spans all dimensions");
      }
    }
    if (names.size() > dims.size()) {
      throw_input_error(file, line, key,
                        count_of(names.size(), "entry", "entries") + ", but " + network_file + " has " +
                            count_of(dims.size(), "dimension", "dimensions"));
    }
    oc.plan = PlanKind::kFlat;
    oc.flat = first;
    if (auto why = operation_unsupported(op, oc.flat)) throw_input_error(file, line, key, *why);
    return;
  }
  if (names.size() != dims.size()) {
    throw_input_error(file, line, key,
                      count_of(names.size(), "entry", "entries") + ", but " + network_file + " has " +
                          count_of(dims.size(), "dimension", "dimensions"));
  }
  oc.per_dim.clear();
  for (const std::string& n : names) {
    bool f = false;
    oc.per_dim.push_back(parse_one(n, f));
    if (f) throw_input_error(file, line, key, "'" + n + "' spans all dimensions and cannot be mixed with per-dimension algorithms");
  }
}

}  // namespace

PlatformConfig load_astra_platform(const std::string& network_file, const std::string& system_file) {
  const std::string network_text = read_text_file(network_file);
  return parse_astra_platform(network_text, network_file, read_text_file(system_file), system_file);
}

PlatformConfig parse_astra_platform(std::string_view network_text, const std::string& network_file,
                                    const std::string& text, const std::string& system_file) {
  PlatformConfig pc;
  pc.source = network_file + " + " + system_file;
  pc.dims = read_network(network_text, network_file);
  const Topology topo(pc.dims);
  pc.collectives = default_collective_config(topo);
  // ASTRA-sim's analytical backends are congestion-unaware by default; we
  // keep acesim's congestion-aware fluid backend unless asked otherwise
  // (--backend analytical). With no sharing both give the same answer.

  json sys;
  try {
    // Refuse a key given twice in one object instead of keeping the last.
    std::vector<std::vector<std::string>> keys_seen;
    sys = json::parse(text, [&](int, json::parse_event_t event, json& parsed) {
      if (event == json::parse_event_t::object_start) keys_seen.emplace_back();
      if (event == json::parse_event_t::object_end && !keys_seen.empty()) keys_seen.pop_back();
      if (event == json::parse_event_t::key && !keys_seen.empty()) {
        const std::string key = parsed.get<std::string>();
        auto& seen = keys_seen.back();
        if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
          const std::string quoted = "\"" + key + "\"";
          const std::size_t first = text.find(quoted);
          const std::size_t second = first == std::string::npos ? first : text.find(quoted, first + 1);
          throw_input_error(system_file, second == std::string::npos ? 0 : json_line(text, second), key,
                            "given twice (first on line " + std::to_string(json_line(text, first)) + ")");
        }
        seen.push_back(key);
      }
      return true;
    });
  } catch (const json::parse_error& e) {
    std::string msg = e.what();
    const std::size_t cut = msg.find("parse error");
    if (cut != std::string::npos) msg = msg.substr(cut);
    throw_input_error(system_file, json_line(text, e.byte), "", "malformed JSON: " + msg);
  } catch (const json::exception& e) {
    // e.g. out_of_range for a number too large for a double:
    // "number overflow parsing '1e400'"; find the quoted text for the line.
    std::string msg = e.what();
    const std::size_t cut = msg.find("] ");
    if (cut != std::string::npos) msg = msg.substr(cut + 2);
    int line = 0;
    const std::size_t q1 = msg.find('\'');
    const std::size_t q2 = q1 == std::string::npos ? q1 : msg.find('\'', q1 + 1);
    if (q2 != std::string::npos && q2 > q1 + 1) {
      const std::size_t at = text.find(msg.substr(q1 + 1, q2 - q1 - 1));
      if (at != std::string::npos) line = json_line(text, at);
    }
    throw_input_error(system_file, line, "", "malformed JSON: " + msg);
  }
  if (!sys.is_object()) throw_input_error(system_file, 1, "", "expected a JSON object of system settings");

  const std::vector<std::string> known = {
      "scheduling-policy", "endpoint-delay", "active-chunks-per-dimension", "preferred-dataset-splits",
      "all-reduce-implementation", "all-gather-implementation", "reduce-scatter-implementation",
      "all-to-all-implementation", "collective-optimization", "local-mem-bw", "peak-perf", "boost-mode",
      "roofline-enabled", "track-local-mem", "local-mem-trace-filename", "intra-dimension-scheduling",
      "inter-dimension-scheduling", "local-reduction-delay", "model-shared-bus", "L", "o", "g", "G",
      "seprate-log", "replay-only"};
  CollectiveConfig& cc = pc.collectives;
  bool baseline_optimization = false;
  for (auto it = sys.begin(); it != sys.end(); ++it) {
    const std::string& key = it.key();
    const json& v = it.value();
    const int line = key_line(text, key);
    if (key == "scheduling-policy") {
      const auto p = v.is_string() ? parse_scheduling_policy(v.get<std::string>()) : std::nullopt;
      if (!p) throw_input_error(system_file, line, key, "expected \"LIFO\" or \"FIFO\", got " + v.dump());
      cc.policy = *p;
    } else if (key == "endpoint-delay") {
      // ASTRA-sim counts cycles of 1 ns.
      const double ns = json_number(v, system_file, line, key);
      if (ns < 0.0) throw_input_error(system_file, line, key, "must be >= 0");
      if (ns > kMaxDelayNs) throw_input_error(system_file, line, key, "must be at most 1e9 ns (1 s), got " + v.dump());
      cc.endpoint_delay_ps = ns_to_ps(ns);
    } else if (key == "active-chunks-per-dimension") {
      const long long a = json_integer(v, system_file, line, key, 1);
      if (a > limits::kMaxActiveChunks) throw_input_error(system_file, line, key, "must be <= 1000000, got " + std::to_string(a));
      cc.active_chunks_per_dim = static_cast<int>(a);
    } else if (key == "preferred-dataset-splits") {
      const long long c = json_integer(v, system_file, line, key, 1);
      if (c > limits::kMaxChunks) throw_input_error(system_file, line, key, "must be <= 1000000, got " + std::to_string(c));
      cc.chunks = static_cast<int>(c);
    } else if (key == "all-reduce-implementation") {
      read_implementation(v, CollectiveOp::kAllReduce, pc.dims, cc.op(CollectiveOp::kAllReduce), system_file, line, key, network_file);
    } else if (key == "reduce-scatter-implementation") {
      read_implementation(v, CollectiveOp::kReduceScatter, pc.dims, cc.op(CollectiveOp::kReduceScatter), system_file, line, key, network_file);
    } else if (key == "all-gather-implementation") {
      read_implementation(v, CollectiveOp::kAllGather, pc.dims, cc.op(CollectiveOp::kAllGather), system_file, line, key, network_file);
    } else if (key == "all-to-all-implementation") {
      read_implementation(v, CollectiveOp::kAllToAll, pc.dims, cc.op(CollectiveOp::kAllToAll), system_file, line, key, network_file);
    } else if (key == "collective-optimization") {
      const std::string s = v.is_string() ? v.get<std::string>() : std::string();
      if (s == "baseline") {
        baseline_optimization = true;
      } else if (s != "localBWAware") {
        throw_input_error(system_file, line, key, "expected \"baseline\" or \"localBWAware\", got " + v.dump());
      }
    } else if (key == "local-mem-bw") {
      pc.local_mem_bw_GBps = json_number(v, system_file, line, key);
      if (!(*pc.local_mem_bw_GBps > 0.0)) throw_input_error(system_file, line, key, "must be > 0 GB/s");
    } else if (key == "peak-perf") {
      pc.peak_perf_TFLOPS = json_number(v, system_file, line, key);
      if (!(*pc.peak_perf_TFLOPS > 0.0)) throw_input_error(system_file, line, key, "must be > 0 TFLOP/s");
    } else if (std::find(known.begin(), known.end(), key) != known.end()) {
      if (!(key == "boost-mode" && v == 0) && !(key == "roofline-enabled" && v == 0) && !(key == "track-local-mem" && v == 0)) {
        pc.warnings.push_back(system_file + ": " + key + " is not modelled by acesim and is ignored");
      }
    } else {
      throw_input_error(system_file, line, key, "unknown key" + suggestion(key, known));
    }
  }
  // ASTRA-sim inputs carry no NPU model: the documented default NPU, with the
  // system file's memory bandwidth and peak compute when it gives them.
  pc.npu = default_npu();
  pc.npu.executor = "ideal";
  if (pc.local_mem_bw_GBps) pc.npu.hbm_GBps = *pc.local_mem_bw_GBps;
  if (pc.peak_perf_TFLOPS) pc.npu.unit_TFLOPS = *pc.peak_perf_TFLOPS / pc.npu.compute_units;
  if (baseline_optimization && cc.op(CollectiveOp::kAllReduce).plan == PlanKind::kHierarchical) {
    cc.op(CollectiveOp::kAllReduce).plan = PlanKind::kPerDimension;
  }
  // A per-dimension algorithm that cannot run its operation (e.g.
  // doubleBinaryTree for an all-gather): name the key that chose it, at its
  // line. A group size it cannot serve (halvingDoubling on 6 NPUs) is
  // refused where a collective runs on such a group (plan_refusal).
  std::vector<int> all_dims;
  for (int d = 0; d < topo.num_dims(); ++d) all_dims.push_back(d);
  for (CollectiveOp op : kAllCollectiveOps) {
    for (const PhaseSpec& ph : build_plan(op, cc.op(op), topo, all_dims)) {
      if (auto why = operation_unsupported(ph.op, ph.algorithm)) {
        const std::string key = std::string(to_string(op)) + "-implementation";
        const std::string where = ph.dims.size() == 1 ? " (dimension " + std::to_string(ph.dims[0]) + ")" : "";
        throw_input_error(system_file, key_line(text, key), key, *why + where);
      }
    }
  }
  const std::string problem = validate(cc, topo);
  if (!problem.empty()) throw_input_error(system_file, 0, "", problem);
  return pc;
}

}  // namespace acesim
