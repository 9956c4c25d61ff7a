// --progress / --no-progress, shared by the subcommands that can run long:
// progress on stderr when it is a terminal or --progress is given, never on
// stdout (report/progress_display.h draws it).
#pragma once

#include <memory>

#include <CLI/CLI.hpp>

#include "report/progress_display.h"

namespace acesim::cli {

struct ProgressOptions {
  bool on = false;   // --progress: even when stderr is not a terminal
  bool off = false;  // --no-progress: never
  // Neither flag and stderr not a terminal.
  bool quiet_by_default() const;
};

void add_progress_options(CLI::App* app, ProgressOptions& o);
// The display the flags ask for, drawing on stderr, or null. The environment
// variable ACESIM_PROGRESS_AFTER (seconds, default 1) says how long a run
// goes before anything is shown.
std::unique_ptr<ProgressDisplay> start_progress(const ProgressOptions& o);

}  // namespace acesim::cli
