#include "cli/platform_options.h"

#include <cstdio>

#include "config/presets.h"
#include "endpoint/executor_registry.h"

namespace acesim::cli {

const CLI::Validator& non_empty() {
  static const CLI::Validator v(
      [](std::string& s) { return s.empty() ? std::string("must not be empty") : std::string(); }, "", "non-empty");
  return v;
}

void add_platform_options(CLI::App* app, PlatformOptions& o) {
  app->add_option("--platform", o.platform, "acesim platform YAML, or a preset: " + preset_registry().choices() + " (none given: the preset default)")
      ->check(non_empty());
  app->add_option("--network", o.network, "ASTRA-sim 2.0 analytical network YAML")->check(non_empty());
  app->add_option("--system", o.system, "ASTRA-sim 2.0 system JSON")->check(non_empty());
  app->add_option("--backend", o.backend, "network backend: " + backend_registry().choices() + " (overrides the platform)")
      ->check(non_empty());
  app->add_option("--granularity", o.granularity, "fluid backend: " + join_names(granularity_names()) + " (overrides the platform)")
      ->check(non_empty());
  app->add_option("--executor", o.executor,
                  "communication executor: " + executor_registry().choices() +
                      " (overrides the platform; ASTRA-sim inputs default to ideal)")
      ->check(non_empty());
  o.chunks_option = app->add_option("--chunks", o.chunks, "chunks per collective (overrides the platform)");
  o.nodes_option = app->add_option("--nodes", o.nodes,
                                   "nodes of a node-based platform (any N >= 1; the size of its `nodes: true` dimension)");
  o.gpus_per_node_option = app->add_option("--gpus-per-node", o.gpus_per_node,
                                           "GPUs a job takes of each node (64 of a 72-GPU NVL72 rack; default: all)");
  app->add_flag("--full", o.full, "simulate every rank, even when one representative rank could stand for all");
  app->add_flag("--check", o.check, "check expensive invariants while running (slower)");
}

api::PlatformRequest platform_request(const PlatformOptions& o) {
  api::PlatformRequest r;
  r.file = o.platform;
  r.astra_network = o.network;
  r.astra_system = o.system;
  r.backend = o.backend;
  r.granularity = o.granularity;
  r.executor = o.executor;
  if (o.chunks_option != nullptr && o.chunks_option->count() > 0) r.chunks = o.chunks;
  if (o.nodes_option != nullptr && o.nodes_option->count() > 0) r.nodes = o.nodes;
  if (o.gpus_per_node_option != nullptr && o.gpus_per_node_option->count() > 0) r.gpus_per_node = o.gpus_per_node;
  r.full = o.full;
  r.check = o.check;
  r.text = o.text;
  return r;
}

void print_warnings(const std::vector<std::string>& warnings) {
  for (const std::string& w : warnings) std::fprintf(stderr, "acesim: warning: %s\n", w.c_str());
}

}  // namespace acesim::cli
