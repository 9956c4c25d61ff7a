// Subcommands of the acesim CLI. Each registers its options on an app and
// returns how to run it: as the command line does (print, exit status), and,
// for the commands with a --json report, in-process, returning that report
// (cli/invoke.h: sweeps, MPI workers and the Python module run them so).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace acesim::cli {

struct PlatformOptions;

// Exit statuses.
inline constexpr int kExitOk = 0;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitStuck = 3;

// A command's --json report and the warnings it would print on stderr.
struct CommandReport {
  nlohmann::json json;
  std::vector<std::string> warnings;
};

struct CommandRunner {
  std::function<int()> run;  // as the CLI: prints its output, returns the exit status
  // The --json report, printing nothing; empty for commands without one.
  std::function<CommandReport()> report;
  // Its platform options (null for commands without): callers in-process
  // may hand it a platform's YAML text instead of a file.
  PlatformOptions* platform = nullptr;
  // Puts the values its options write back as registration left them, so
  // that the app can parse another command line (after CLI::App::clear()):
  // a copy of the command's options taken right after registering them.
  std::function<void()> reset;
};

CommandRunner add_collective_command(CLI::App& app);
CommandRunner add_characterize_command(CLI::App& app);
CommandRunner add_run_command(CLI::App& app);
CommandRunner add_reproduce_command(CLI::App& app);
CommandRunner add_calibrate_command(CLI::App& app);
CommandRunner add_list_command(CLI::App& app);
CommandRunner add_sweep_command(CLI::App& app);
CommandRunner add_cluster_command(CLI::App& app);

}  // namespace acesim::cli
