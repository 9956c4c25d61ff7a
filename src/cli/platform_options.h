// The flags every simulating subcommand shares: where the platform comes
// from (--platform, or --network/--system) and the overrides applied to it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "api/api.h"
#include "config/platform.h"

namespace acesim::cli {

struct PlatformOptions {
  std::string platform;
  std::string network;
  std::string system;
  std::string backend;
  std::string granularity;
  std::string executor;
  int chunks = 0;
  CLI::Option* chunks_option = nullptr;
  long long nodes = 0;
  CLI::Option* nodes_option = nullptr;
  long long gpus_per_node = 0;
  CLI::Option* gpus_per_node_option = nullptr;
  bool full = false;  // simulate every rank even when one could stand for all
  bool check = false;  // check expensive invariants while running
  // Set in-process (sweeps, the Python module), not by a flag: the
  // platform as its YAML text, standing in for --platform's file.
  std::optional<api::PlatformText> text;
};

void add_platform_options(CLI::App* app, PlatformOptions& o);
// The flags as a library request (api/api.h).
api::PlatformRequest platform_request(const PlatformOptions& o);

// "acesim: warning: ..." on stderr, one line each.
void print_warnings(const std::vector<std::string>& warnings);

// Refuses empty option values instead of falling back to a default.
const CLI::Validator& non_empty();

}  // namespace acesim::cli
