// Running a command in-process, exactly as the command line would: the same
// CLI11 parsing, checks and messages, with its --json report returned instead
// of printed. Sweeps (cli/sweep.h), MPI workers and the Python module run
// every point through here, so a point means what the same command line
// means.
#pragma once

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "api/api.h"

namespace acesim::cli {

// The CLI's subcommands, in --help's order.
struct CommandEntry {
  std::string_view name;
  CommandRunner (*add)(CLI::App&);
  bool reports_json;  // has a --json report that invoke() can return
};
const std::vector<CommandEntry>& command_table();

// What the CLI does with the exception in flight (call inside a catch): its
// exit status and one-line message, without "acesim: error: ".
struct CommandError {
  int status = kExitBadInput;
  std::string message;
  bool internal = false;  // a bug, not the input's fault ("internal error")
  bool output = false;    // a file could not be written (config/output_file.h)
};
CommandError current_error();

// A failed invoke(): the status and message the CLI would have given.
class InvokeError : public std::runtime_error {
 public:
  explicit InvokeError(CommandError e) : std::runtime_error(e.message), error_(std::move(e)) {}
  const CommandError& error() const { return error_; }

 private:
  CommandError error_;
};

// A command registered alone on a fresh app, for looking its options up and
// parsing once.
struct RegisteredCommand {
  std::unique_ptr<CLI::App> app;
  CLI::App* command = nullptr;
  CommandRunner runner;
};
// Throws InputError for a name that is no command with a --json report.
RegisteredCommand register_command(std::string_view name);

// The command-line arguments that give option `name` (spelt as its long flag
// without the dashes; '_' stands for '-') the value `value`:
//   null: nothing (the command's default);
//   a flag: true (or "true") gives it, false (or "false") leaves it out;
//   a list: the option repeated when it takes several values (--straggler),
//     else its items joined with commas (--compare sm,ace);
//   a number or string: that text. A positional (characterize's study)
//     takes its value alone.
// Throws InputError for an option the command lacks (with the closest
// name), one the caller sets itself (--json, --progress, --no-progress), or
// a value of the wrong kind; `where` begins the message.
std::vector<std::string> option_arguments(const CLI::App& command, const std::string& name, const nlohmann::json& value,
                                          const std::string& where);
// An option's name as its long flag spells it, without the dashes:
// "--min_bytes" and "min_bytes" are "min-bytes".
std::string option_spelling(std::string name);

struct Invocation {
  std::vector<std::string> args;  // after "acesim": the command, then its options
  // When set: the platform as its YAML text, in place of --platform's file.
  std::optional<api::PlatformText> platform;
};
// Runs it (with --json and without progress) and returns its report.
// Throws InvokeError with the CLI's status and message when the CLI would
// fail.
CommandReport invoke(const Invocation& invocation);

}  // namespace acesim::cli
