// acesim: how long does a training iteration take on this platform, and where
// does the time go?
#include <cstdio>
#include <exception>
#include <string>

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

}  // namespace

int main(int argc, char** argv) {
  using namespace acesim;
  CLI::App app{"acesim: simulate distributed deep-learning training platforms"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "acesim 0.1.0");
  auto collective = cli::add_collective_command(app);
  auto characterize = cli::add_characterize_command(app);
  auto run = cli::add_run_command(app);
  auto reproduce = cli::add_reproduce_command(app);
  auto calibrate = cli::add_calibrate_command(app);
  auto list = cli::add_list_command(app);

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
    if (app.got_subcommand("collective")) return collective();
    if (app.got_subcommand("characterize")) return characterize();
    if (app.got_subcommand("run")) return run();
    if (app.got_subcommand("reproduce")) return reproduce();
    if (app.got_subcommand("calibrate")) return calibrate();
    if (app.got_subcommand("list")) return list();
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
