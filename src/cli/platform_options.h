// The flags every simulating subcommand shares: where the platform comes
// from (--platform, or --network/--system) and the overrides applied to it.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

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
};

void add_platform_options(CLI::App* app, PlatformOptions& o);
// Reads the platform and applies the overrides; throws InputError.
PlatformConfig load_platform(const PlatformOptions& o);

// Refuses empty option values instead of falling back to a default.
const CLI::Validator& non_empty();

}  // namespace acesim::cli
