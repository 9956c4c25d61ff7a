// Platforms and values as users give them (api/api.h).
#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "api/api.h"
#include "collective/nccl_model.h"
#include "collective/plan.h"
#include "config/input_error.h"
#include "config/limits.h"
#include "config/presets.h"
#include "config/units.h"
#include "endpoint/executor_registry.h"
#include "registry/registry.h"

namespace acesim::api {

CollectiveOp parse_op(const std::string& flag, const std::string& text) {
  const auto op = parse_collective_op(text);
  if (!op) throw InputError(flag + ": unknown operation '" + text + "'" + suggestion(text, collective_op_names()));
  return *op;
}

std::uint64_t parse_size(const std::string& flag, const std::string& text) {
  std::string err;
  const auto v = parse_bytes(text, &err);
  if (!v) throw InputError(flag + ": " + err);
  if (*v > limits::kMaxCollectiveBytes) {
    throw InputError(flag + ": '" + text + "' is larger than the 1 PiB a collective may move");
  }
  return *v;
}

std::vector<int> parse_dims(const std::string& flag, const std::string& text, int num_dims) {
  if (text.empty()) throw InputError(flag + ": empty list (give dimensions like 0,2, or leave " + flag + " out for all)");
  std::vector<int> dims;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    char* end = nullptr;
    const long d = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || d < 0 || d >= num_dims) {
      throw InputError(flag + ": '" + item + "' is not a dimension of this platform (0.." + std::to_string(num_dims - 1) + ")");
    }
    if (std::find(dims.begin(), dims.end(), static_cast<int>(d)) != dims.end()) {
      throw InputError(flag + ": dimension " + item + " is given twice");
    }
    dims.push_back(static_cast<int>(d));
  }
  if (text.back() == ',') throw InputError(flag + ": '' is not a dimension of this platform");
  return dims;
}

std::vector<std::pair<Rank, double>> parse_stragglers(const std::vector<std::string>& items, Rank npus) {
  std::vector<std::pair<Rank, double>> out;
  for (const std::string& s : items) {
    const std::size_t eq = s.find('=');
    const std::string rank_text = eq == std::string::npos ? std::string() : s.substr(0, eq);
    const std::string factor_text = eq == std::string::npos ? std::string() : s.substr(eq + 1);
    char* end1 = nullptr;
    char* end2 = nullptr;
    const long rank = std::strtol(rank_text.c_str(), &end1, 10);
    const double factor = std::strtod(factor_text.c_str(), &end2);
    if (rank_text.empty() || factor_text.empty() || *end1 != '\0' || *end2 != '\0') {
      throw InputError("--straggler: '" + s + "' is not RANK=FACTOR (e.g. 3=1.5)");
    }
    if (rank < 0 || rank >= npus) {
      throw InputError("--straggler: rank " + std::to_string(rank) + " does not exist (0.." + std::to_string(npus - 1) + ")");
    }
    if (!(factor > 0.0 && factor <= 1000.0)) throw InputError("--straggler: factor must be in (0, 1000], got '" + factor_text + "'");
    // Two factors for one rank: neither is what the other meant.
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (out[i].first == rank) {
        throw InputError("--straggler: rank " + std::to_string(rank) + " is given twice ('" + items[i] + "' and '" + s +
                         "'); give each rank once");
      }
    }
    out.emplace_back(static_cast<Rank>(rank), factor);
  }
  return out;
}

namespace {

PlatformConfig read_platform(const PlatformRequest& o) {
  if (o.text) {
    if (o.astra()) throw InputError(o.text->source + ": an acesim platform cannot be combined with --network/--system");
    return o.text->parsed != nullptr ? *o.text->parsed : parse_platform_yaml(o.text->yaml, o.text->source, o.text->folder);
  }
  if (!o.file.empty() && (!o.astra_network.empty() || !o.astra_system.empty())) {
    throw InputError("--platform cannot be combined with --network/--system");
  }
  if (o.astra_network.empty() != o.astra_system.empty()) {
    throw InputError(o.astra_network.empty() ? "--system needs --network (ASTRA-sim inputs come as a pair)"
                                             : "--network needs --system (ASTRA-sim inputs come as a pair)");
  }
  if (!o.file.empty()) {
    // A file that exists wins; otherwise a preset of that name (a folder of
    // that name, such as the checkout's ace-isca21/, is no platform file).
    std::error_code ec;
    if (!std::filesystem::is_regular_file(o.file, ec)) {
      if (const PlatformPreset* preset = preset_registry().find(o.file)) return load_preset(*preset);
      // A bare name is meant as a preset: say which exist.
      if (o.file.find('/') == std::string::npos && o.file.find('.') == std::string::npos) {
        throw InputError("--platform: no file '" + o.file + "' and " + preset_registry().unknown(o.file));
      }
    }
    return load_platform_file(o.file);
  }
  if (!o.astra_network.empty()) return load_astra_platform(o.astra_network, o.astra_system);
  return default_platform();
}

}  // namespace

constexpr std::string_view kNcclChunksWarning = "--chunks: this platform runs";

PlatformConfig load_platform(const PlatformRequest& o) {
  PlatformConfig platform = read_platform(o);
  if (!o.backend.empty()) {
    const NetworkBackendType* b = backend_registry().find(o.backend);
    if (b == nullptr) throw InputError("--backend: " + backend_registry().unknown(o.backend));
    platform.network.backend = b->name;
  }
  if (!o.granularity.empty()) {
    const auto g = parse_granularity(o.granularity);
    if (!g) throw InputError("--granularity: unknown granularity '" + o.granularity + "'" + suggestion(o.granularity, granularity_names()));
    if (platform.network.backend != "fluid") {
      throw InputError("--granularity applies to the fluid backend; this run's is " + platform.network.backend +
                       " (add --backend fluid, or leave --granularity out)");
    }
    platform.network.granularity = *g;
  }
  if (!o.executor.empty()) {
    const ExecutorEntry* e = executor_registry().find(o.executor);
    if (e == nullptr) throw InputError("--executor: " + executor_registry().unknown(o.executor));
    platform.npu.executor = e->name;
  }
  platform.check = o.check;
  if (o.gpus_per_node) set_gpus_per_node(platform, *o.gpus_per_node, "--gpus-per-node");
  if (o.nodes) set_nodes(platform, *o.nodes, "--nodes");
  if (o.chunks) {
    if (*o.chunks < 1 || *o.chunks > limits::kMaxChunks) {
      throw InputError("--chunks: must be an integer in 1..1000000, got " + std::to_string(*o.chunks));
    }
    platform.collectives.chunks = *o.chunks;
    platform.collectives.max_chunk_bytes = 0;
    if (platform.collectives.nccl.enabled) {
      platform.warnings.push_back(std::string(kNcclChunksWarning) +
                                  " all-reduce, all-gather, reduce-scatter and all-to-all as NCCL does, chunked by its protocol and "
                                  "channels; the chunks apply to its other operations only");
    }
  }
  return platform;
}

namespace {

// --library, --algo, --proto, --channels onto the platform's NCCL settings
// (an algorithm that cannot serve the collective's group: check_runnable).
void apply_nccl_options(const CollectiveRequest& o, CollectiveOp op, PlatformConfig& platform) {
  NcclSettings& n = platform.collectives.nccl;
  if (o.library) {
    if (normalize_name(*o.library) != "nccl" && normalize_name(*o.library) != "acesim") {
      throw InputError("--library: unknown library '" + *o.library + "' (acesim, nccl)");
    }
    n.enabled = normalize_name(*o.library) == "nccl";
  }
  const char* given = o.algo ? "--algo" : o.proto ? "--proto" : o.channels ? "--channels" : nullptr;
  if (given != nullptr && !n.enabled) {
    throw InputError(std::string(given) + ": the NCCL model is off for this platform; add --library nccl "
                     "(or `collectives: {library: nccl}` to the platform file)");
  }
  if (o.algo && normalize_name(*o.algo) != "auto") {
    n.algo = parse_nccl_algo(*o.algo);
    if (!n.algo) throw InputError("--algo: unknown algorithm '" + *o.algo + "'" + suggestion(*o.algo, nccl_algo_names()));
  }
  if (o.proto && normalize_name(*o.proto) != "auto") {
    n.proto = parse_nccl_proto(*o.proto);
    if (!n.proto) throw InputError("--proto: unknown protocol '" + *o.proto + "'" + suggestion(*o.proto, nccl_proto_names()));
    if (op == CollectiveOp::kAllToAll && !nccl_applied(n, op).proto) {
      throw InputError("--proto " + *o.proto + ": NCCL runs all-to-all as point-to-point sends, which use simple or ll, "
                       "never ll128; use --proto simple, ll or auto");
    }
  }
  if (o.channels) {
    if (*o.channels < 1 || *o.channels > 64) {
      throw InputError("--channels: must be an integer in 1..64 (NCCL's MAXCHANNELS), got " + std::to_string(*o.channels));
    }
    n.channels = *o.channels;
  }
  if (!n.enabled) return;
  if (given != nullptr && !nccl_models(op)) {
    throw InputError(std::string(given) + ": NCCL's model runs all-reduce, all-gather, reduce-scatter and all-to-all; " +
                     std::string(to_string(op)) + " keeps acesim's plans, which take no NCCL algorithm, protocol or channels");
  }
  if (o.platform.chunks && nccl_models(op)) {
    throw InputError("--chunks: NCCL's model runs " + std::string(to_string(op)) +
                     " in its protocol's own chunks; --chunks applies to acesim's plans (--library acesim)");
  }
  try {
    (void)nccl_view(platform.dims);
  } catch (const std::invalid_argument& e) {
    throw InputError(std::string("--library nccl: ") + e.what());
  }
}

// The collective timed, on its group, against the algorithm that would run
// it (plan_refusal: the one check of an algorithm against a group size).
void check_runnable(const CollectiveRequest& o, const CollectiveRun& run) {
  const Topology topo(run.platform.dims);
  std::vector<int> dims = run.spec.dims;
  if (dims.empty()) {
    for (int d = 0; d < topo.num_dims(); ++d) dims.push_back(d);
  }
  const CollectiveConfig& cc = run.platform.collectives;
  // The platform's own forced algorithm does not apply to all-to-all
  // (nccl_applied); one given on the command line must serve it.
  if (o.algo && cc.nccl.enabled && cc.nccl.algo && run.spec.op == CollectiveOp::kAllToAll) {
    if (auto why = nccl_unsupported(nccl_view(topo, dims), run.spec.op, *cc.nccl.algo)) throw InputError("--algo: " + *why);
  }
  const GroupPlan plan = plan_on_dims(run.spec.op, cc, topo, dims);
  if (auto why = plan_refusal(run.spec.op, cc, plan)) {
    // NCCL's model refuses only an algorithm it is told to use.
    throw InputError((plan.nccl ? (o.algo ? "--algo: " : "collectives.nccl.algorithm: ") : std::string("--op: ")) + *why);
  }
}

}  // namespace

CollectiveRun simulate_collectives(const CollectiveRequest& o) {
  CollectiveRun run;
  run.platform = load_platform(o.platform);
  run.spec.op = parse_op("--op", o.op);
  apply_nccl_options(o, run.spec.op, run.platform);
  // One operation: --chunks under NCCL's model was refused above, so the
  // platform's general warning about it says nothing here.
  std::erase_if(run.platform.warnings, [](const std::string& w) { return w.starts_with(kNcclChunksWarning); });
  run.spec.full = o.platform.full;
  if (o.dims) run.spec.dims = parse_dims("--dims", *o.dims, static_cast<int>(run.platform.dims.size()));
  if (o.root) {
    const Rank npus = Topology(run.platform.dims).num_npus();
    if (!is_rooted(run.spec.op)) throw InputError("--root: only broadcast, reduce, gather and scatter have a root");
    if (*o.root < 0 || *o.root >= npus) {
      throw InputError("--root: " + std::to_string(*o.root) + " is not a rank of this platform (0.." +
                       std::to_string(npus - 1) + ")");
    }
    run.spec.root = static_cast<Rank>(*o.root);
  }
  if (!o.stragglers.empty()) run.spec.stragglers = parse_stragglers(o.stragglers, Topology(run.platform.dims).num_npus());
  check_runnable(o, run);
  std::vector<std::uint64_t> sizes;
  if (o.bytes) {
    if (o.min_bytes || o.max_bytes) throw InputError("--bytes cannot be combined with --min-bytes/--max-bytes");
    if (o.step_factor_given) throw InputError("--step-factor applies to a size sweep (--min-bytes, --max-bytes), not to one --bytes");
    sizes.push_back(parse_size("--bytes", *o.bytes));
  } else {
    const std::uint64_t lo = o.min_bytes ? parse_size("--min-bytes", *o.min_bytes) : 64ull << 10;
    const std::uint64_t hi = o.max_bytes ? parse_size("--max-bytes", *o.max_bytes) : std::max<std::uint64_t>(lo, 256ull << 20);
    if (lo == 0) throw InputError("--min-bytes: must be > 0 for a sweep");
    if (lo > hi) throw InputError("--min-bytes (" + std::to_string(lo) + ") is larger than --max-bytes (" + std::to_string(hi) + ")");
    if (o.step_factor < 2) throw InputError("--step-factor: must be an integer >= 2, got " + std::to_string(o.step_factor));
    sizes = size_sweep(lo, hi, static_cast<std::uint64_t>(o.step_factor));
  }
  const Progress progress(o.progress);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const std::string label = sizes.size() > 1 ? fmt::format("size {}/{} ({})", i + 1, sizes.size(), format_bytes(sizes[i])) : "";
    run.results.push_back(run_collective(run.platform, run.spec, sizes[i], progress.part(i, sizes.size(), label)));
  }
  return run;
}

}  // namespace acesim::api
