// Cluster files (docs/cluster.md): a platform, its node count and fabric,
// and jobs placed on its nodes; read, checked and run (driver/cluster_run.h).
#include <algorithm>
#include <cmath>
#include <random>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "api/api.h"
#include "api/llm_request.h"
#include "chakra/chakra_trace.h"
#include "compute/kernel_pricer.h"
#include "config/input_error.h"
#include "config/limits.h"
#include "config/presets.h"
#include "config/units.h"
#include "config/yaml_reader.h"
#include "driver/chakra_run.h"
#include "driver/llm_run.h"
#include "driver/training_run.h"
#include "engine/random.h"
#include "platform/platform_instance.h"
#include "topology/topology_kinds.h"
#include "workload/formats/chakra_workload.h"
#include "workload/formats/simai_workload.h"
#include "workload/graph/training_lowering.h"
#include "workload/llm/llm_graph.h"
#include "workload/llm/simai_job.h"
#include "workload/models/models.h"

namespace acesim::api {
namespace {

constexpr long long kMaxJobs = 1024;
constexpr long long kMaxIterations = 100000;

struct Reader {
  std::string file;
  std::string folder;
  std::vector<std::string>* named = nullptr;  // when set, every path beside() gave (read_cluster's `files`)

  [[noreturn]] void fail(const YAML::Node& n, const std::string& key, const std::string& problem) const {
    throw_input_error(file, yaml::line_of(n), key, problem);
  }
  long long integer(const YAML::Node& n, const std::string& key, long long lo, long long hi) const {
    const long long v = yaml::integer(n, file, key);
    if (v < lo || v > hi) fail(n, key, fmt::format("must be in {}..{}, got {}", lo, hi, v));
    return v;
  }
  double number(const YAML::Node& n, const std::string& key, double lo, double hi) const {
    const double v = yaml::number(n, file, key);
    if (v < lo || v > hi) fail(n, key, fmt::format("must be in {:g}..{:g}, got {}", lo, hi, yaml::scalar(n, file, key)));
    return v;
  }
  std::string scalar(const YAML::Node& n, const std::string& key) const { return yaml::scalar(n, file, key); }
  // A file named in the cluster file: as given when absolute, else relative to it.
  std::string beside(const std::string& name) const {
    std::string path = std::filesystem::path(name).is_absolute() ? name : (std::filesystem::path(folder) / name).string();
    if (named != nullptr) named->push_back(path);
    return path;
  }
  // Runs f; an error it throws that does not name this file yet is put at
  // `n`'s line under `key`.
  template <typename F>
  void located(const YAML::Node& n, const std::string& key, F&& f) const {
    try {
      f();
    } catch (const InputError& e) {
      const std::string what = e.what();
      if (what.rfind(file, 0) == 0) throw;
      fail(n, key, what);
    }
  }
};

// The node dimension as the cluster file's `fabric` says.
void apply_fabric(const Reader& rd, const YAML::Node& f, PlatformConfig& platform) {
  yaml::check_map(f, rd.file, "fabric", {"kind", "oversubscription", "leaf_size", "tiers", "pod_size", "switch_latency_ns"});
  yaml::require(f, "kind", rd.file, "fabric");
  const std::string kind = rd.scalar(f["kind"], "fabric.kind");
  const TopologyKindEntry* e = topology_kind_registry().find(kind);
  if (e == nullptr || (e->name != "fat-tree" && e->name != "rail")) {
    rd.fail(f["kind"], "fabric.kind", "must be fat-tree or rail, got '" + kind + "'");
  }
  DimensionSpec& d = platform.dims[static_cast<std::size_t>(platform.nodes_dim)];
  d.kind = DimKind(e->name);
  d.params.clear();
  for (auto it = f.begin(); it != f.end(); ++it) {
    const std::string key = it->first.Scalar();
    if (key == "kind") continue;
    const auto spec = std::find_if(e->params.begin(), e->params.end(), [&](const KindParamSpec& p) { return p.name == key; });
    if (spec == e->params.end()) rd.fail(it->first, "fabric." + key, "is not a parameter of " + e->name);
    const double v = rd.number(it->second, "fabric." + key, spec->min, spec->max);
    if (spec->integer && v != static_cast<double>(static_cast<long long>(v))) rd.fail(it->second, "fabric." + key, "must be a whole number");
    d.params.push_back({key, v});
  }
}

// "0, 2, 4-7" or a YAML list of numbers and "a-b" ranges.
std::vector<long long> node_list(const Reader& rd, const YAML::Node& n, const std::string& key, long long nodes) {
  std::vector<std::string> items;
  if (n.IsSequence()) {
    for (const YAML::Node& i : n) items.push_back(rd.scalar(i, key));
  } else {
    std::stringstream ss(rd.scalar(n, key));
    std::string item;
    while (std::getline(ss, item, ',')) items.push_back(item);
  }
  std::set<long long> out;
  for (std::string item : items) {
    item.erase(std::remove(item.begin(), item.end(), ' '), item.end());
    const std::size_t dash = item.find('-', 1);
    long long a = 0, b = 0;
    try {
      std::size_t used = 0;
      a = std::stoll(item, &used);
      if (dash == std::string::npos) {
        if (used != item.size()) throw std::invalid_argument(item);
        b = a;
      } else {
        if (used != dash) throw std::invalid_argument(item);
        const std::string rest = item.substr(dash + 1);
        b = std::stoll(rest, &used);
        if (used != rest.size()) throw std::invalid_argument(item);
      }
    } catch (const std::exception&) {
      rd.fail(n, key, "'" + item + "' is not a node or a range of nodes (e.g. 0-3)");
    }
    if (a < 0 || b >= nodes || a > b) rd.fail(n, key, fmt::format("'{}' is not a range of the cluster's nodes 0..{}", item, nodes - 1));
    for (long long i = a; i <= b; ++i) {
      if (!out.insert(i).second) rd.fail(n, key, fmt::format("node {} is given twice", i));
    }
  }
  if (out.empty()) rd.fail(n, key, "no nodes");
  return {out.begin(), out.end()};
}

std::string nodes_text(const std::vector<long long>& nodes) {
  std::string s;
  for (std::size_t i = 0; i < nodes.size();) {
    std::size_t j = i;
    while (j + 1 < nodes.size() && nodes[j + 1] == nodes[j] + 1) ++j;
    s += (s.empty() ? "" : ",") + (j == i ? std::to_string(nodes[i]) : fmt::format("{}-{}", nodes[i], nodes[j]));
    i = j + 1;
  }
  return s;
}

bool read_bool(const Reader& rd, const YAML::Node& n, const std::string& key) {
  const std::string v = rd.scalar(n, key);
  if (v != "true" && v != "false") rd.fail(n, key, "expected true or false, got '" + v + "'");
  return v == "true";
}

// A job of pipeline stages (an LLM plan, a SimAI file): rank r's graph over
// listed ranks, each iteration ending at its iteration_end node.
std::function<JobRankGraph(Rank)> staged_builder(std::shared_ptr<const StagedJob> staged, std::shared_ptr<const Topology> topo) {
  return [staged, topo](Rank r) {
    LlmRankGraph g = staged->build(r, true);
    JobRankGraph out{std::move(g.graph), {}, {}};
    out.iteration_of.assign(out.graph.size(), -1);
    for (std::size_t k = 0; k < g.iteration_end.size(); ++k) out.iteration_of[g.iteration_end[k]] = static_cast<int>(k);
    return out;
  };
}

// What the graphs of a job's ranks may hold, over all of them, and the
// limit `acesim run` keeps to.
double check_graph_memory(const Reader& rd, const YAML::Node& n, const std::string& key, const StagedJob& staged, long long ranks) {
  const double bytes = staged.estimated_bytes_per_rank() * static_cast<double>(ranks);
  if (bytes > limits::kMaxGraphBytes) {
    rd.fail(n, key, fmt::format("its {} ranks' graphs would hold about {:.3g} nodes ({:.4g} a rank: {}), about {:.1f} GiB; "
                                "the limit is 8 GiB: fewer micro-batches or iterations",
                                ranks, staged.estimated_nodes_per_rank() * static_cast<double>(ranks), staged.estimated_nodes_per_rank(),
                                staged.estimate_terms(), bytes / (1ULL << 30)));
  }
  return bytes;
}

// A collective loop's size, checked before anything is built: every rank
// executes the loop's graph (a compute, a collective and an end a
// iteration, StagedJob::kBytesPerNode each) and holds the collective in
// flight (4 B per chunk and dimension); the simulated time (its compute
// and about 4 x its bytes over the slowest link, as acesim run estimates a
// layer table) must fit what int64 picoseconds count.
double check_loop_size(const Reader& rd, const YAML::Node& j, const std::string& key, const ClusterSpec& spec, const ClusterJobSpec& job) {
  const ClusterJobSpec::Loop& loop = *job.loop;
  const auto ranks = static_cast<double>(job.nodes.size()) * static_cast<double>(spec.gpus_per_node);
  const double nodes_per_rank = static_cast<double>(job.iterations) * (loop.compute_ps > 0 ? 3.0 : 2.0);
  const double chunks = spec.platform.collectives.chunks;
  const auto dims = static_cast<double>(spec.platform.dims.size());
  const double per_rank = 2048.0 + StagedJob::kBytesPerNode * nodes_per_rank + 4.0 * chunks * dims;
  const double bytes = ranks * per_rank;
  const YAML::Node at = j["iterations"] ? j["iterations"] : j;
  const std::string at_key = j["iterations"] ? key + ".iterations" : key;
  if (bytes > limits::kMaxGraphBytes) {
    rd.fail(at, at_key, fmt::format("a loop of {} iterations on {} GPUs needs about {:.1f} GiB ({} ranks x (2048 B + {:g} B x {:g} nodes + "
                                    "4 B x {:g} chunks x {:g} dimensions)); the limit is 8 GiB: fewer iterations or nodes",
                                    job.iterations, ranks, bytes / (1ULL << 30), ranks, StagedJob::kBytesPerNode, nodes_per_rank, chunks,
                                    dims));
  }
  double slowest = std::numeric_limits<double>::infinity();
  for (const DimensionSpec& d : spec.platform.dims) {
    if (d.npus > 1) slowest = std::min(slowest, d.bandwidth_GBps * 1e9);
  }
  const double per_iteration_s = ps_to_seconds(loop.compute_ps) + (std::isfinite(slowest) ? 4.0 * loop.bytes / slowest : 0.0);
  const double estimate_s = ps_to_seconds(job.start_ps) + static_cast<double>(job.iterations) * per_iteration_s;
  if (estimate_s > 1e6) {
    rd.fail(at, at_key, fmt::format("this loop would simulate about {:.3g} s ({} iterations of about {:.3g} s), past what int64 "
                                    "picoseconds count (106 days): fewer iterations",
                                    estimate_s, job.iterations, per_iteration_s));
  }
  return bytes;
}

// An LLM job's plan and graphs builder on its own nodes.
void read_llm(const Reader& rd, const YAML::Node& l, const std::string& key, const PlatformConfig& platform, ClusterJobSpec& job) {
  yaml::check_map(l, rd.file, key,
                  {"model", "tp", "pp", "dp", "cp", "ep", "zero", "micro_batch", "global_batch", "virtual_stages", "sequence_parallel",
                   "schedule", "recompute", "attention", "iterations", "precision", "allow_oom", "calibration"});
  yaml::require(l, "model", rd.file, key);
  TrainingRequest req;
  req.model = rd.scalar(l["model"], key + ".model");
  TrainingRequest::Llm& o = req.llm;
  const auto opt_int = [&](const char* k, std::optional<int>& into, long long lo, long long hi) {
    if (l[k]) into = static_cast<int>(rd.integer(l[k], key + "." + k, lo, hi));
  };
  const int big = 1 << 20;
  opt_int("tp", o.tp, 1, big);
  opt_int("pp", o.pp, 1, big);
  opt_int("dp", o.dp, 1, big);
  opt_int("cp", o.cp, 1, big);
  opt_int("ep", o.ep, 1, big);
  opt_int("zero", o.zero, 0, 3);
  opt_int("micro_batch", o.micro_batch, 1, 1 << 16);
  opt_int("global_batch", o.global_batch, 1, 1 << 30);
  opt_int("virtual_stages", o.virtual_stages, 1, 1024);
  if (l["sequence_parallel"]) o.sequence_parallel = read_bool(rd, l["sequence_parallel"], key + ".sequence_parallel");
  if (l["schedule"]) o.schedule = rd.scalar(l["schedule"], key + ".schedule");
  if (l["recompute"]) o.recompute = rd.scalar(l["recompute"], key + ".recompute");
  if (l["attention"]) o.attention = rd.scalar(l["attention"], key + ".attention");
  const bool allow_oom = l["allow_oom"] && read_bool(rd, l["allow_oom"], key + ".allow_oom");
  LlmOptions lo;
  lo.iterations = l["iterations"] ? static_cast<int>(rd.integer(l["iterations"], key + ".iterations", 1, 100)) : 2;
  if (l["precision"]) {
    const std::string p = rd.scalar(l["precision"], key + ".precision");
    if (const std::string why = set_llm_precision(lo, p, platform.npu); !why.empty()) rd.fail(l["precision"], key + ".precision", why);
  }
  PlatformConfig own = platform;
  set_nodes(own, static_cast<long long>(job.nodes.size()), key);
  job.topology = std::make_shared<const Topology>(own.dims);
  // In situ with a calibration file beside the cluster file (or the shipped
  // one by its name), over the job's own GPUs.
  std::string calibration;
  if (l["calibration"]) {
    calibration = rd.scalar(l["calibration"], key + ".calibration");
    if (calibration.empty()) rd.fail(l["calibration"], key + ".calibration", "an empty file name");
    if (calibration != kPublishedRunsCalibration) calibration = rd.beside(calibration);
  }
  rd.located(l["calibration"] ? l["calibration"] : l, key + (l["calibration"] ? ".calibration" : ""), [&] {
    lo.pricer = make_kernel_pricer(platform.npu, nullptr,
                                   in_situ_setting(calibration, platform.npu, lo.bytes_per_element, job.topology->num_npus()));
  });
  rd.located(l, key, [&] {
    // A built-in LLM, or a model file relative to the cluster file.
    std::optional<TransformerShape> shape;
    if (const TransformerShape* s = find_transformer_shape(req.model)) {
      shape = *s;
    } else if (req.model.ends_with(".yaml") || req.model.ends_with(".yml")) {
      shape = read_transformer_file(rd.beside(req.model));
    } else {
      rd.fail(l["model"], key + ".model", "'" + req.model + "' is not a transformer model (a built-in LLM or a model file)");
    }
    auto llm = std::make_shared<const LlmJob>(*shape, llm_plan(o, *shape, *job.topology), *job.topology, lo);
    const std::optional<MemoryBreakdown> worst = worst_stage_memory(*llm);
    if (worst && !allow_oom && !fits_in_hbm(*worst, platform.npu.hbm_capacity_GB)) {
      rd.fail(l, key, "the plan does not fit in HBM: " + format_memory(*worst, platform.npu.hbm_capacity_GB) + "; " +
                          activations_why(*worst, llm->plan()) +
                          " (allow_oom: true runs it anyway; more tp/pp, zero, recompute or a smaller micro_batch need less)");
    }
    job.graph_bytes = check_graph_memory(rd, l, key, *llm, job.topology->num_npus());
    job.what = fmt::format("{} ({}{})", shape->name, llm->plan_text(), calibration.empty() ? "" : "; in situ: " + calibration);
    job.iterations = lo.iterations;
    job.build = staged_builder(std::move(llm), job.topology);
  });
}

// A SimAI/AICB workload file as a job on its own nodes (the file fixes its plan).
void read_simai(const Reader& rd, const YAML::Node& n, const std::string& key, const PlatformConfig& platform, ClusterJobSpec& job) {
  yaml::check_map(n, rd.file, key, {"file", "schedule", "iterations"});
  yaml::require(n, "file", rd.file, key);
  const std::filesystem::path f(rd.scalar(n["file"], key + ".file"));
  const std::string file = rd.beside(f.string());
  SimaiJobOptions so;
  if (n["iterations"]) so.iterations = static_cast<int>(rd.integer(n["iterations"], key + ".iterations", 1, 100));
  if (n["schedule"]) so.schedule = parse_pipe_schedule(key + ".schedule", rd.scalar(n["schedule"], key + ".schedule"));
  PlatformConfig own = platform;
  set_nodes(own, static_cast<long long>(job.nodes.size()), key);
  job.topology = std::make_shared<const Topology>(own.dims);
  rd.located(n, key, [&] {
    auto simai = std::make_shared<const SimaiJob>(read_simai_workload(file), *job.topology, so);
    job.graph_bytes = check_graph_memory(rd, n, key, *simai, job.topology->num_npus());
    job.what = fmt::format("SimAI {} ({})", f.filename().string(), simai->plan_text());
    job.iterations = so.iterations;
    job.build = staged_builder(std::move(simai), job.topology);
  });
}

// Rank r's copy of a graph every rank runs: its collectives over r's groups,
// each compute and collective node counted toward its iteration, a
// collective's with its layer's update.
JobRankGraph training_rank_graph(const Workload& w, const TrainingGraph& g, const Topology& topo, Rank r) {
  JobRankGraph out{g.graph, {}, {}};
  out.graph.list_groups(topo, r);
  out.iteration_of.assign(out.graph.size(), -1);
  out.tail_ps.assign(out.graph.size(), 0);
  for (std::uint32_t i = 0; i < out.graph.size(); ++i) {
    const TrainingStep& s = g.steps[i];
    const WorkNodeKind kind = out.graph.node(i).kind;
    if (kind != WorkNodeKind::kCompute && kind != WorkNodeKind::kCollective) continue;
    out.iteration_of[i] = s.iteration;
    if (kind == WorkNodeKind::kCollective) out.tail_ps[i] = w.layers[static_cast<std::size_t>(s.layer)].update_ps;
  }
  return out;
}

// A built-in model's layer table (ResNet-50, DLRM, ...) or a model file as a
// job on its own nodes, lowered as `acesim run --model` lowers it.
void read_model(const Reader& rd, const YAML::Node& n, const std::string& key, const PlatformConfig& platform, ClusterJobSpec& job) {
  yaml::check_map(n, rd.file, key, {"name", "batch", "precision", "iterations"});
  yaml::require(n, "name", rd.file, key);
  TrainingRequest req;
  req.model = rd.scalar(n["name"], key + ".name");
  if (req.model.ends_with(".yaml") || req.model.ends_with(".yml")) req.model = rd.beside(req.model);
  if (n["batch"]) req.batch = static_cast<int>(rd.integer(n["batch"], key + ".batch", 1, 1'000'000));
  if (n["precision"]) req.precision = rd.scalar(n["precision"], key + ".precision");
  req.iterations = n["iterations"] ? static_cast<int>(rd.integer(n["iterations"], key + ".iterations", 1, 100)) : 2;
  PlatformConfig own = platform;
  set_nodes(own, static_cast<long long>(job.nodes.size()), key);
  auto topo = std::make_shared<const Topology>(own.dims);
  job.topology = topo;
  rd.located(n, key, [&] {
    auto w = std::make_shared<const Workload>(load_workload(req, own, *topo));
    job.graph_bytes = check_training_size(own, *w, false, "fewer iterations or nodes");
    const PlatformInstance pi(own, true);
    auto g = std::make_shared<const TrainingGraph>(lower_training(*w, [&](const Kernel& k) { return pi.endpoints.isolated_seconds(k) > 0.0; }));
    job.what = fmt::format("{} ({})", w->name, w->parallelism);
    job.iterations = w->iterations;
    job.build = [w, g, topo](Rank r) { return training_rank_graph(*w, *g, *topo, r); };
  });
}

// Chakra traces PREFIX.<rank>.et, one per GPU of the job, as `acesim run
// --chakra` runs them: `iterations` passes over them, each ProfilerStep an
// iteration.
void read_chakra(const Reader& rd, const YAML::Node& n, const std::string& key, const PlatformConfig& platform, ClusterJobSpec& job) {
  yaml::check_map(n, rd.file, key, {"prefix", "iterations", "groups", "flops"});
  yaml::require(n, "prefix", rd.file, key);
  const std::string prefix = rd.beside(rd.scalar(n["prefix"], key + ".prefix"));
  const int passes = n["iterations"] ? static_cast<int>(rd.integer(n["iterations"], key + ".iterations", 1, 100)) : 1;
  const bool roofline = n["flops"] && read_bool(rd, n["flops"], key + ".flops");
  PlatformConfig own = platform;
  set_nodes(own, static_cast<long long>(job.nodes.size()), key);
  auto topo = std::make_shared<const Topology>(own.dims);
  job.topology = topo;
  rd.located(n, key, [&] {
    const Rank gpus = topo->num_npus();
    auto traces = std::make_shared<std::vector<chakra::Trace>>(chakra::read_traces(prefix, static_cast<int>(gpus)));
    check_chakra_traces(*traces, gpus);
    std::shared_ptr<ChakraGroups> groups;
    if (n["groups"]) {
      groups = std::make_shared<ChakraGroups>(read_chakra_groups(rd.beside(rd.scalar(n["groups"], key + ".groups")), *topo));
      check_chakra_groups(*traces, *groups);
      list_divergent_groups(*traces, *groups);
    }
    // Each node's iteration: its pass's ProfilerStep, as run_chakra labels them.
    auto labels = std::make_shared<std::vector<std::vector<int>>>();
    int iterations = 1;
    double nodes = 0.0;
    for (chakra::Trace& t : *traces) {
      chakra::Trace repeated = passes > 1 ? repeat_trace(t, passes) : chakra::Trace{};
      int its = 1;
      labels->push_back(chakra_pass_labels(t, passes, passes > 1 ? repeated.nodes.size() : t.nodes.size(), its));
      iterations = std::max(iterations, its);
      if (passes > 1) t = std::move(repeated);
      nodes += static_cast<double>(t.nodes.size());
    }
    if (StagedJob::kBytesPerNode * nodes > limits::kMaxGraphBytes) {
      rd.fail(n, key, fmt::format("its traces over {} passes hold {:.3g} nodes, about {:.1f} GiB as graphs; the limit is 8 GiB", passes,
                                  nodes, StagedJob::kBytesPerNode * nodes / (1ULL << 30)));
    }
    job.graph_bytes = StagedJob::kBytesPerNode * nodes;
    job.what = fmt::format("Chakra {}.<rank>.et, {} pass{}", std::filesystem::path(prefix).filename().string(), passes, passes > 1 ? "es" : "");
    job.iterations = iterations;
    job.build = [traces, groups, labels, topo, roofline](Rank r) {
      ChakraBinding b;
      b.roofline = roofline;
      b.groups = groups.get();
      b.rank = r;
      JobRankGraph out{chakra_graph((*traces)[static_cast<std::size_t>(r)], *topo, b), (*labels)[static_cast<std::size_t>(r)], {}};
      out.graph.list_groups(*topo, r);
      return out;
    };
    // Bound here once, so that a node the platform cannot run is refused at
    // this job's line (the run binds them again).
    for (Rank r = 0; r < gpus; ++r) (void)job.build(r);
  });
}

// The link of that name (as Topology::link_name gives it), else -1.
LinkId link_named(const Topology& topo, const std::string& name) {
  for (LinkId l = 0; l < topo.num_links(); ++l) {
    if (topo.link_name(l) == name) return l;
  }
  return -1;
}

// `degraded`: slow GPUs, NICs and links, each holding in every run.
void read_degraded(const Reader& rd, const YAML::Node& list, ClusterSpec& spec) {
  if (!list.IsSequence()) rd.fail(list, "degraded", "expected a list of {gpu, compute}, {gpu, nic}, {link, share} or {link, down: true}");
  const Topology topo(spec.platform.dims);
  const Rank gpus = topo.num_npus();
  // Each GPU's compute and each link is degraded by one item at most: two
  // would contradict each other (a NIC's item covers its GPU's scale-out
  // links, a link down both directions).
  std::map<Rank, std::size_t> compute_item;
  std::map<LinkId, std::size_t> link_item;
  const auto claim_link = [&](LinkId l, std::size_t i, const YAML::Node& n, const std::string& key) {
    const auto [it, added] = link_item.try_emplace(l, i);
    if (!added) rd.fail(n, key, fmt::format("link {} is degraded by degraded[{}] already: give each link one item", topo.link_name(l), it->second));
  };
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string key = fmt::format("degraded[{}]", i);
    const YAML::Node d = list[i];
    yaml::check_map(d, rd.file, key, {"gpu", "compute", "nic", "link", "share", "down"});
    if (d["gpu"]) {
      const auto gpu = static_cast<Rank>(rd.integer(d["gpu"], key + ".gpu", 0, gpus - 1));
      if (d["compute"].IsDefined() == d["nic"].IsDefined() || d["link"] || d["share"] || d["down"]) {
        rd.fail(d, key, "a GPU takes compute (how many times longer its kernels take) or nic (its NIC's share of its rate)");
      }
      if (d["compute"]) {
        const double f = rd.number(d["compute"], key + ".compute", 1.0, 1000.0);
        if (const auto [it, added] = compute_item.try_emplace(gpu, i); !added) {
          rd.fail(d["gpu"], key + ".gpu", fmt::format("GPU {}'s compute is degraded by degraded[{}] already: give each GPU one compute item", gpu, it->second));
        }
        spec.degraded.compute.emplace_back(gpu, f);
        spec.degraded.text.push_back(fmt::format("GPU {} computes {:g}x slower", gpu, f));
      } else {
        const double share = rd.number(d["nic"], key + ".nic", 0.0, 1.0);
        if (share <= 0.0) rd.fail(d["nic"], key + ".nic", "a NIC down stops its GPU's job; give a share above 0");
        std::size_t found = 0;
        for (LinkId l = 0; l < topo.num_links(); ++l) {
          const Link link = topo.link(l);
          if (link.dim == spec.platform.nodes_dim && (link.src_node == gpu || link.dst_node == gpu)) {
            claim_link(l, i, d["gpu"], key + ".gpu");
            spec.degraded.links.emplace_back(l, share);
            ++found;
          }
        }
        if (found == 0) rd.fail(d["gpu"], key + ".gpu", fmt::format("GPU {} has no scale-out link (one node?)", gpu));
        spec.degraded.text.push_back(fmt::format("GPU {}'s NIC at {:g} of its rate", gpu, share));
      }
      continue;
    }
    if (!d["link"] || d["share"].IsDefined() == d["down"].IsDefined() || d["compute"] || d["nic"]) {
      rd.fail(d, key, "give {gpu, compute}, {gpu, nic}, {link, share} or {link, down: true}");
    }
    const std::string name = rd.scalar(d["link"], key + ".link");
    const LinkId id = link_named(topo, name);
    if (id < 0) rd.fail(d["link"], key + ".link", "no link '" + name + "' (names as acesim cluster's links table prints them)");
    if (d["down"]) {
      if (rd.scalar(d["down"], key + ".down") != "true") rd.fail(d["down"], key + ".down", "must be true (a link that is up needs no item)");
      // A cable down takes both directions.
      const Link l = topo.link(id);
      const LinkId back = link_named(topo, fmt::format("dim{}:{}->{}", l.dim, topo.node_name(l.dst_node), topo.node_name(l.src_node)));
      for (LinkId x : {id, back}) {
        if (x < 0) continue;
        claim_link(x, i, d["link"], key + ".link");
        spec.degraded.down.push_back(x);
      }
      Topology check(spec.platform.dims);
      for (LinkId x : spec.degraded.down) check.set_link_down(x);
      const std::string why = check.unreachable();
      if (!why.empty()) rd.fail(d["down"], key + ".down", why + " (acesim needs every GPU to reach every other)");
      spec.degraded.text.push_back(fmt::format("link {} down, both ways; routes that crossed it rerouted", name));
      continue;
    }
    const double share = rd.number(d["share"], key + ".share", 0.0, 1.0);
    if (share <= 0.0) rd.fail(d["share"], key + ".share", "a share of 0 is a link down: give {link, down: true}");
    claim_link(id, i, d["link"], key + ".link");
    spec.degraded.links.emplace_back(id, share);
    spec.degraded.text.push_back(fmt::format("link {} at {:g} of its rate", name, share));
  }
}

// `variability`: every GPU's kernels take exp(cv z) times their time, z a
// standard normal drawn per GPU from the seed (a lognormal of median 1).
void read_variability(const Reader& rd, const YAML::Node& v, ClusterSpec& spec) {
  yaml::check_map(v, rd.file, "variability", {"compute_cv", "seed"});
  yaml::require(v, "compute_cv", rd.file, "variability");
  const double cv = rd.number(v["compute_cv"], "variability.compute_cv", 0.0, 1.0);
  const std::uint64_t seed = v["seed"] ? static_cast<std::uint64_t>(rd.integer(v["seed"], "variability.seed", 0, 1LL << 62)) : 1;
  const Rank gpus = Topology(spec.platform.dims).num_npus();
  std::mt19937_64 gen(splitmix64(seed));
  const auto unit = [&] { return unit_interval(gen()); };
  std::vector<double> factor(static_cast<std::size_t>(gpus), 1.0);
  for (const auto& [gpu, f] : spec.degraded.compute) factor[static_cast<std::size_t>(gpu)] = f;
  std::vector<std::pair<Rank, double>> all;
  for (Rank g = 0; g < gpus; ++g) {
    // Box-Muller, one normal per GPU.
    const double z = std::sqrt(-2.0 * std::log(unit())) * std::cos(2.0 * 3.14159265358979323846 * unit());
    all.emplace_back(g, factor[static_cast<std::size_t>(g)] * std::exp(cv * z));
  }
  spec.degraded.compute = std::move(all);
  spec.degraded.text.push_back(fmt::format("every GPU's kernels x exp({:g} z), z standard normal per GPU (seed {})", cv, seed));
}

}  // namespace

ClusterSpec read_cluster(const std::string& path, const std::string& text, std::vector<std::string>* files) {
  Reader rd{path, std::filesystem::path(path).parent_path().string(), files};
  const YAML::Node root = yaml::parse(text, path);
  yaml::check_map(root, path, "", {"platform", "nodes", "fabric", "seed", "jobs", "degraded", "variability"});
  for (const char* k : {"platform", "nodes", "jobs"}) yaml::require(root, k, path, "");
  ClusterSpec spec;
  spec.source = path;
  // The platform: a preset's name, or a file relative to the cluster file.
  const std::string name = rd.scalar(root["platform"], "platform");
  PlatformRequest pr;
  pr.file = name;
  if (preset_registry().find(name) == nullptr) pr.file = rd.beside(name);
  try {
    spec.platform = load_platform(pr);
  } catch (const InputError& e) {
    rd.fail(root["platform"], "platform", e.what());
  }
  if (spec.platform.nodes_dim < 0) rd.fail(root["platform"], "platform", spec.platform.source + " has no node dimension (nodes: true)");
  if (spec.platform.nodes_dim + 1 != static_cast<int>(spec.platform.dims.size())) {
    rd.fail(root["platform"], "platform", "the node dimension must be the platform's last");
  }
  spec.nodes = rd.integer(root["nodes"], "nodes", 1, 1 << 20);
  if (root["fabric"]) apply_fabric(rd, root["fabric"], spec.platform);
  try {
    set_nodes(spec.platform, spec.nodes, "nodes");
    (void)Topology(spec.platform.dims);
  } catch (const std::exception& e) {
    rd.fail(root["nodes"], "nodes", e.what());
  }
  spec.gpus_per_node = 1;
  for (int d = 0; d < spec.platform.nodes_dim; ++d) spec.gpus_per_node *= spec.platform.dims[static_cast<std::size_t>(d)].npus;
  const std::uint64_t seed = root["seed"] ? static_cast<std::uint64_t>(rd.integer(root["seed"], "seed", 0, 1LL << 62)) : 1;
  const YAML::Node jobs = root["jobs"];
  if (!jobs.IsSequence() || jobs.size() == 0) rd.fail(jobs, "jobs", "expected a list of jobs");
  if (static_cast<long long>(jobs.size()) > kMaxJobs) rd.fail(jobs, "jobs", fmt::format("at most {} jobs, got {}", kMaxJobs, jobs.size()));
  // Explicit placements first, then the others in file order on the nodes left.
  std::vector<bool> used(static_cast<std::size_t>(spec.nodes), false);
  std::vector<std::string> holder(static_cast<std::size_t>(spec.nodes));
  spec.jobs.resize(jobs.size());
  const auto listed_placement = [](const YAML::Node& j) {
    if (!j.IsMap() || !j["placement"]) return false;
    const YAML::Node p = j["placement"];
    if (p.IsSequence()) return true;
    return p.IsScalar() && !p.Scalar().empty() && std::isdigit(static_cast<unsigned char>(p.Scalar()[0])) != 0;
  };
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (listed_placement(jobs[i])) order.push_back(i);
  }
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (!listed_placement(jobs[i])) order.push_back(i);
  }
  std::set<std::string> names;
  for (std::size_t i : order) {
    const std::string key = fmt::format("jobs[{}]", i);
    const YAML::Node j = jobs[i];
    yaml::check_map(j, path, key, {"name", "nodes", "placement", "start_ms", "iterations", "collective", "llm", "simai", "model", "chakra"});
    ClusterJobSpec& job = spec.jobs[i];
    job.name = j["name"] ? rd.scalar(j["name"], key + ".name") : fmt::format("job{}", i);
    if (const std::string why = name_problem(job.name); !why.empty()) rd.fail(j["name"], key + ".name", why);
    if (!names.insert(job.name).second) rd.fail(j["name"], key + ".name", "'" + job.name + "' names another job too");
    const bool listed = listed_placement(j);
    const std::string how = j["placement"] && !listed ? rd.scalar(j["placement"], key + ".placement") : "";
    if (listed) {
      job.nodes = node_list(rd, j["placement"], key + ".placement", spec.nodes);
      if (j["nodes"] && rd.integer(j["nodes"], key + ".nodes", 1, spec.nodes) != static_cast<long long>(job.nodes.size())) {
        rd.fail(j["nodes"], key + ".nodes", fmt::format("says {} but the placement lists {}", j["nodes"].Scalar(), job.nodes.size()));
      }
      for (long long n : job.nodes) {
        if (used[static_cast<std::size_t>(n)]) {
          rd.fail(j["placement"], key + ".placement", fmt::format("node {} is job {}'s too", n, holder[static_cast<std::size_t>(n)]));
        }
      }
      job.placement = "listed";
    } else {
      yaml::require(j, "nodes", path, key);
      const long long want = rd.integer(j["nodes"], key + ".nodes", 1, spec.nodes);
      const std::string kind = how.empty() ? "packed" : how;
      if (kind != "packed" && kind != "spread" && kind != "random") {
        rd.fail(j["placement"], key + ".placement", "must be packed, spread, random or a list of nodes (e.g. 0-3,8), got '" + kind + "'" +
                                                        suggestion(kind, std::vector<std::string>{"packed", "spread", "random"}));
      }
      const long long free = std::count(used.begin(), used.end(), false);
      if (want > free) {
        rd.fail(j["nodes"], key + ".nodes", fmt::format("{} nodes asked, {} of the cluster's {} free", want, free, spec.nodes));
      }
      job.nodes = choose_nodes(kind, want, used, leaf_nodes(spec.platform), seed ^ splitmix64(i));
      job.placement = kind == "random" ? fmt::format("random (seed {})", seed) : kind;
    }
    for (long long n : job.nodes) {
      used[static_cast<std::size_t>(n)] = true;
      holder[static_cast<std::size_t>(n)] = job.name;
    }
    job.placement += ": nodes " + nodes_text(job.nodes);
    if (j["start_ms"]) job.start_ps = ns_to_ps(1e6 * rd.number(j["start_ms"], key + ".start_ms", 0.0, 1e9));
    const int workloads = (j["collective"] ? 1 : 0) + (j["llm"] ? 1 : 0) + (j["simai"] ? 1 : 0) + (j["model"] ? 1 : 0) + (j["chakra"] ? 1 : 0);
    if (workloads != 1) rd.fail(j, key, "give a job one workload: collective, llm, simai, model or chakra");
    const bool coll = static_cast<bool>(j["collective"]);
    if (coll) {
      const std::string ck = key + ".collective";
      const YAML::Node c = j["collective"];
      yaml::check_map(c, path, ck, {"op", "bytes", "compute_ms"});
      yaml::require(c, "bytes", path, ck);
      ClusterJobSpec::Loop loop;
      try {
        if (c["op"]) loop.op = parse_op(ck + ".op", rd.scalar(c["op"], ck + ".op"));
        loop.bytes = static_cast<double>(parse_size(ck + ".bytes", rd.scalar(c["bytes"], ck + ".bytes")));
      } catch (const InputError& e) {
        rd.fail(c, ck, e.what());
      }
      if (c["compute_ms"]) loop.compute_ps = ns_to_ps(1e6 * rd.number(c["compute_ms"], ck + ".compute_ms", 0.0, 1e9));
      job.iterations = j["iterations"] ? static_cast<int>(rd.integer(j["iterations"], key + ".iterations", 1, kMaxIterations)) : 10;
      job.what = fmt::format("{} of {} over {} GPUs{}", to_string(loop.op), format_bytes(static_cast<std::uint64_t>(loop.bytes)),
                             static_cast<long long>(job.nodes.size()) * spec.gpus_per_node,
                             loop.compute_ps > 0 ? fmt::format(" after {:g} ms of compute", ps_to_us(loop.compute_ps) / 1e3) : "");
      job.loop = loop;
      job.graph_bytes = check_loop_size(rd, j, key, spec, job);
    } else if (j["llm"]) {
      if (j["iterations"]) rd.fail(j["iterations"], key + ".iterations", "an llm job gives its iterations in llm.iterations");
      read_llm(rd, j["llm"], key + ".llm", spec.platform, job);
    } else {
      const char* kind = j["simai"] ? "simai" : j["model"] ? "model" : "chakra";
      if (j["iterations"]) rd.fail(j["iterations"], key + ".iterations", fmt::format("a {0} job gives its iterations in {0}.iterations", kind));
      const YAML::Node w = j[kind];
      const std::string wk = key + "." + kind;
      if (j["simai"]) {
        read_simai(rd, w, wk, spec.platform, job);
      } else if (j["model"]) {
        read_model(rd, w, wk, spec.platform, job);
      } else {
        read_chakra(rd, w, wk, spec.platform, job);
      }
    }
  }
  double bytes = 0.0;
  for (const ClusterJobSpec& job : spec.jobs) bytes += job.graph_bytes;
  if (bytes > limits::kMaxGraphBytes) {
    rd.fail(jobs, "jobs", fmt::format("the jobs' graphs would hold about {:.1f} GiB together; the limit is 8 GiB: fewer or smaller jobs, "
                                      "fewer iterations", bytes / (1ULL << 30)));
  }
  if (root["degraded"]) read_degraded(rd, root["degraded"], spec);
  if (root["variability"]) read_variability(rd, root["variability"], spec);
  return spec;
}

ClusterRun simulate_cluster(const ClusterRequest& request) {
  ClusterRun run;
  run.spec = read_cluster(request.file, read_text_file(request.file));
  ClusterRunOptions o;
  o.alone = request.alone;
  o.trace = request.trace;
  o.progress = Progress(request.progress);
  run.report = run_cluster(run.spec, o);
  return run;
}

}  // namespace acesim::api
