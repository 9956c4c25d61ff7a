#include "cli/platform_options.h"

#include "config/input_error.h"
#include "config/limits.h"
#include "config/units.h"
#include "endpoint/executor_registry.h"

namespace acesim::cli {

const CLI::Validator& non_empty() {
  static const CLI::Validator v(
      [](std::string& s) { return s.empty() ? std::string("must not be empty") : std::string(); }, "", "non-empty");
  return v;
}

void add_platform_options(CLI::App* app, PlatformOptions& o) {
  app->add_option("--platform", o.platform, "acesim platform YAML (default: built-in presets/default.yaml)")
      ->check(non_empty());
  app->add_option("--network", o.network, "ASTRA-sim 2.0 analytical network YAML")->check(non_empty());
  app->add_option("--system", o.system, "ASTRA-sim 2.0 system JSON")->check(non_empty());
  app->add_option("--backend", o.backend, "network backend: analytical | fluid (overrides the platform)")
      ->check(non_empty());
  app->add_option("--granularity", o.granularity, "fluid backend: phase | step (overrides the platform)")
      ->check(non_empty());
  app->add_option("--executor", o.executor,
                  "communication executor: " + executor_registry().choices() +
                      " (overrides the platform; ASTRA-sim inputs default to ideal)")
      ->check(non_empty());
  o.chunks_option = app->add_option("--chunks", o.chunks, "chunks per collective (overrides the platform)");
  app->add_flag("--full", o.full, "simulate every rank, even when one representative rank could stand for all");
  app->add_flag("--check", o.check, "check expensive invariants while running (slower)");
}

CollectiveOp parse_op_option(const std::string& text) {
  const auto op = parse_collective_op(text);
  if (!op) {
    const auto names = collective_op_names();
    throw InputError("--op: unknown operation '" + text + "'" + suggestion(text, names));
  }
  return *op;
}

std::uint64_t parse_size_option(const std::string& flag, const std::string& text) {
  std::string err;
  const auto v = parse_bytes(text, &err);
  if (!v) throw InputError(flag + ": " + err);
  if (*v > limits::kMaxCollectiveBytes) {
    throw InputError(flag + ": '" + text + "' is larger than the 1 PiB a collective may move");
  }
  return *v;
}

PlatformConfig load_platform(const PlatformOptions& o) {
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
  if (!o.executor.empty()) {
    const ExecutorEntry* e = executor_registry().find(o.executor);
    if (e == nullptr) throw InputError("--executor: " + executor_registry().unknown(o.executor));
    platform.npu.executor = e->name;
  }
  platform.check = o.check;
  if (o.chunks_option != nullptr && o.chunks_option->count() > 0) {
    if (o.chunks < 1 || o.chunks > limits::kMaxChunks) {
      throw InputError("--chunks: must be an integer in 1..1000000, got " + std::to_string(o.chunks));
    }
    platform.collectives.chunks = o.chunks;
    // An explicit chunk count is taken as given.
    platform.collectives.max_chunk_bytes = 0;
  }
  return platform;
}

}  // namespace acesim::cli
