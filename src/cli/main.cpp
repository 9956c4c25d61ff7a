// acesim: how long does a training iteration take on this platform, and where
// does the time go?
#include <array>
#include <cstddef>
#include <cstdio>
#include <exception>
#include <functional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "config/input_error.h"
#include "report/collective_sweep.h"

namespace {

std::string one_line(std::string s) {
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

struct Command {
  std::string_view name;
  std::function<int()> (*add)(CLI::App&);
};

constexpr std::array<Command, 6> kCommands{{
    {"collective", acesim::cli::add_collective_command},
    {"characterize", acesim::cli::add_characterize_command},
    {"run", acesim::cli::add_run_command},
    {"reproduce", acesim::cli::add_reproduce_command},
    {"calibrate", acesim::cli::add_calibrate_command},
    {"list", acesim::cli::add_list_command},
}};

// Registering a subcommand's options (and the registry listings in their
// help) is most of a small run's start-up, so only the subcommands the
// command line can enter get theirs: those it names. A request for help (it
// may list every subcommand with its description) registers them all. The
// others are registered by name only, which keeps CLI11's parsing and error
// messages what they are with every subcommand in full.
bool registers_in_full(std::string_view name, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == name || a == "-h" || a == "--help" || a == "--help-all") return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace acesim;
  CLI::App app{"acesim: simulate distributed deep-learning training platforms"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "acesim 0.1.0");
  std::array<std::function<int()>, kCommands.size()> runners;
  for (std::size_t i = 0; i < kCommands.size(); ++i) {
    const Command& c = kCommands[i];
    if (registers_in_full(c.name, argc, argv)) {
      runners[i] = c.add(app);
    } else {
      app.add_subcommand(std::string(c.name));
    }
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "acesim: error: %s (see acesim --help)\n", one_line(e.what()).c_str());
    return cli::kExitBadInput;
  }
  try {
    for (std::size_t i = 0; i < kCommands.size(); ++i) {
      // A subcommand CLI11 parsed was named, so it registered in full.
      if (app.got_subcommand(std::string(kCommands[i].name))) return runners[i]();
    }
    return cli::kExitBadInput;
  } catch (const InputError& e) {
    std::fprintf(stderr, "acesim: error: %s\n", one_line(e.what()).c_str());
    return cli::kExitBadInput;
  } catch (const SimulationStuck& e) {
    std::fprintf(stderr, "acesim: error: %s\n", one_line(e.what()).c_str());
    return cli::kExitStuck;
  } catch (const std::overflow_error& e) {
    std::fprintf(stderr, "acesim: error: %s\n", one_line(e.what()).c_str());
    return cli::kExitBadInput;
  } catch (const std::invalid_argument& e) {
    // Model-level refusals of what the input asked for.
    std::fprintf(stderr, "acesim: error: %s\n", one_line(e.what()).c_str());
    return cli::kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "acesim: internal error: %s\n", one_line(e.what()).c_str());
    return 1;
  }
}
