// acesim: how long does a training iteration take on this platform, and where
// does the time go?
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>
#include <string_view>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/invoke.h"
#include "cli/option_checks.h"

namespace {

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

// Output that could not be written (a full disk behind `> FILE`) is an
// error, as for the files the commands write (config/output_file.h).
int finish_stdout(int status) {
  errno = 0;
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return status;
  std::fprintf(stderr, "acesim: error: standard output: cannot write: %s\n",
               errno != 0 ? std::strerror(errno) : "an I/O error (disk full?)");
  return status == 0 ? 1 : status;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace acesim;
  CLI::App app{"acesim: simulate distributed deep-learning training platforms"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "acesim 0.1.0");
  const std::vector<cli::CommandEntry>& commands = cli::command_table();
  std::vector<std::function<int()>> runners(commands.size());
  for (std::size_t i = 0; i < commands.size(); ++i) {
    const cli::CommandEntry& c = commands[i];
    if (registers_in_full(c.name, argc, argv)) {
      runners[i] = c.add(app).run;
      cli::add_option_checks(*app.get_subcommand(std::string(c.name)));
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
    std::fprintf(stderr, "acesim: error: %s\n", cli::current_error().message.c_str());
    return cli::kExitBadInput;
  } catch (...) {
    // A check after parsing (an output path that cannot be used).
    const cli::CommandError e = cli::current_error();
    std::fprintf(stderr, "acesim: %s: %s\n", e.internal ? "internal error" : "error", e.message.c_str());
    return e.status;
  }
  try {
    for (std::size_t i = 0; i < commands.size(); ++i) {
      // A subcommand CLI11 parsed was named, so it registered in full.
      if (app.got_subcommand(std::string(commands[i].name))) return finish_stdout(runners[i]());
    }
    return cli::kExitBadInput;
  } catch (...) {
    const cli::CommandError e = cli::current_error();
    std::fprintf(stderr, "acesim: %s: %s\n", e.internal ? "internal error" : "error", e.message.c_str());
    return e.status;
  }
}
