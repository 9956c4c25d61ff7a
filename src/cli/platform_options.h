// The flags every simulating subcommand shares: where the platform comes
// from (--platform, or --network/--system) and the overrides applied to it.
#pragma once

#include <cstdint>
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
  bool full = false;  // simulate every rank even when one could stand for all
  bool check = false;  // check expensive invariants while running
};

void add_platform_options(CLI::App* app, PlatformOptions& o);
// Reads the platform and applies the overrides; throws InputError.
PlatformConfig load_platform(const PlatformOptions& o);

// --op: a collective operation name, or InputError with a suggestion.
CollectiveOp parse_op_option(const std::string& text);
// A size flag (e.g. --bytes 64MiB), at most the 1 PiB a collective may move.
std::uint64_t parse_size_option(const std::string& flag, const std::string& text);

// Refuses empty option values instead of falling back to a default.
const CLI::Validator& non_empty();

}  // namespace acesim::cli
