// `acesim collective`: nccl-tests-style table for one size or a size sweep.
#include <cstdio>
#include <memory>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "config/input_error.h"
#include "config/units.h"
#include "report/collective_sweep.h"

namespace acesim::cli {
namespace {

struct Options {
  std::string platform;
  std::string network;
  std::string system;
  std::string op = "all-reduce";
  std::string bytes;
  std::string min_bytes;
  std::string max_bytes;
  std::uint64_t step_factor = 2;
  std::string backend;
  std::string granularity;
  int chunks = 0;
  std::string dims;
  bool json = false;
};

std::uint64_t size_option(const std::string& flag, const std::string& text) {
  std::string err;
  const auto v = parse_bytes(text, &err);
  if (!v) throw InputError(flag + ": " + err);
  return *v;
}

int run(const Options& o) {
  PlatformConfig platform;
  if (!o.platform.empty() && (!o.network.empty() || !o.system.empty())) {
    throw InputError("--platform cannot be combined with --network/--system");
  }
  if (o.network.empty() != o.system.empty()) {
    throw InputError(o.network.empty() ? "--system needs --network (ASTRA-sim inputs come as a pair)"
                                       : "--network needs --system (ASTRA-sim inputs come as a pair)");
  }
  if (!o.platform.empty()) {
    platform = load_platform_file(o.platform);
  } else if (!o.network.empty()) {
    platform = load_astra_platform(o.network, o.system);
  } else {
    platform = default_platform();
  }
  if (!o.backend.empty()) {
    const auto b = parse_backend(o.backend);
    if (!b) throw InputError("--backend: unknown backend '" + o.backend + "' (valid: analytical, fluid)");
    platform.network.backend = *b;
  }
  if (!o.granularity.empty()) {
    const auto g = parse_granularity(o.granularity);
    if (!g) throw InputError("--granularity: unknown granularity '" + o.granularity + "' (valid: phase, step)");
    platform.network.granularity = *g;
  }
  if (o.chunks != 0) {
    if (o.chunks < 1) throw InputError("--chunks: must be >= 1");
    platform.collectives.chunks = o.chunks;
  }
  CollectiveRequestSpec req;
  const auto op = parse_collective_op(o.op);
  if (!op) {
    const auto names = collective_op_names();
    throw InputError("--op: unknown operation '" + o.op + "'" + suggestion(o.op, names));
  }
  req.op = *op;
  if (!o.dims.empty()) {
    std::stringstream ss(o.dims);
    std::string item;
    while (std::getline(ss, item, ',')) {
      char* end = nullptr;
      const long d = std::strtol(item.c_str(), &end, 10);
      if (item.empty() || *end != '\0' || d < 0 || d >= static_cast<long>(platform.dims.size())) {
        throw InputError("--dims: '" + item + "' is not a dimension of this platform (0.." +
                         std::to_string(platform.dims.size() - 1) + ")");
      }
      req.dims.push_back(static_cast<int>(d));
    }
  }
  std::vector<std::uint64_t> sizes;
  if (!o.bytes.empty()) {
    if (!o.min_bytes.empty() || !o.max_bytes.empty()) throw InputError("--bytes cannot be combined with --min-bytes/--max-bytes");
    sizes.push_back(size_option("--bytes", o.bytes));
  } else {
    const std::uint64_t lo = o.min_bytes.empty() ? 64ull << 10 : size_option("--min-bytes", o.min_bytes);
    const std::uint64_t hi = o.max_bytes.empty() ? std::max<std::uint64_t>(lo, 256ull << 20) : size_option("--max-bytes", o.max_bytes);
    if (lo == 0) throw InputError("--min-bytes: must be > 0 for a sweep");
    if (lo > hi) throw InputError("--min-bytes (" + std::to_string(lo) + ") is larger than --max-bytes (" + std::to_string(hi) + ")");
    if (o.step_factor < 2) throw InputError("--step-factor: must be an integer >= 2");
    sizes = size_sweep(lo, hi, o.step_factor);
  }
  for (const std::string& w : platform.warnings) std::fprintf(stderr, "acesim: warning: %s\n", w.c_str());
  std::vector<CollectiveResult> results;
  for (std::uint64_t s : sizes) results.push_back(run_collective(platform, req, s));
  if (o.json) {
    std::printf("%s\n", to_json(platform, results).dump(2).c_str());
  } else {
    std::fputs(format_table(platform, req, results).c_str(), stdout);
  }
  return kExitOk;
}

}  // namespace

std::function<int()> add_collective_command(CLI::App& app) {
  auto o = std::make_shared<Options>();
  CLI::App* c = app.add_subcommand("collective", "Time one collective (nccl-tests style table)");
  c->add_option("--platform", o->platform, "acesim platform YAML (default: built-in presets/default.yaml)");
  c->add_option("--network", o->network, "ASTRA-sim 2.0 analytical network YAML");
  c->add_option("--system", o->system, "ASTRA-sim 2.0 system JSON");
  c->add_option("--op", o->op, "all-reduce | reduce-scatter | all-gather | all-to-all")->capture_default_str();
  c->add_option("--bytes", o->bytes, "one size, e.g. 64MiB (nccl-tests size convention)");
  c->add_option("--min-bytes", o->min_bytes, "sweep start (default 64KiB)");
  c->add_option("--max-bytes", o->max_bytes, "sweep end (default 256MiB)");
  c->add_option("--step-factor", o->step_factor, "sweep multiplier")->capture_default_str();
  c->add_option("--backend", o->backend, "network backend: analytical | fluid (overrides the platform)");
  c->add_option("--granularity", o->granularity, "fluid backend: phase | step (overrides the platform)");
  c->add_option("--chunks", o->chunks, "chunks per collective (overrides the platform)");
  c->add_option("--dims", o->dims, "dimensions the collective spans, e.g. 0,2 (default: all)");
  c->add_flag("--json", o->json, "print JSON instead of a table");
  return [o] { return run(*o); };
}

}  // namespace acesim::cli
