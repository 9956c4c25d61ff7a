// Subcommands of the acesim CLI. Each registers its options on the app and
// returns the function that runs it (exit status).
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace acesim::cli {

// Exit statuses.
inline constexpr int kExitOk = 0;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitStuck = 3;

std::function<int()> add_collective_command(CLI::App& app);
std::function<int()> add_characterize_command(CLI::App& app);
std::function<int()> add_run_command(CLI::App& app);
std::function<int()> add_reproduce_command(CLI::App& app);
std::function<int()> add_calibrate_command(CLI::App& app);
std::function<int()> add_list_command(CLI::App& app);

}  // namespace acesim::cli
