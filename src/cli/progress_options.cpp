#include "cli/progress_options.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "config/input_error.h"

namespace acesim::cli {
namespace {

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

int terminal_width() {
  winsize ws{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 80;
}

double progress_after_s() {
  const char* text = std::getenv("ACESIM_PROGRESS_AFTER");
  if (text == nullptr || *text == '\0') return 1.0;
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (*end != '\0' || !(v >= 0.0 && v <= 1e6)) {
    throw InputError(std::string("ACESIM_PROGRESS_AFTER: '") + text + "' is not a number of seconds in 0..1e6");
  }
  return v;
}

}  // namespace

bool ProgressOptions::quiet_by_default() const { return !on && !off && !stderr_is_terminal(); }

void add_progress_options(CLI::App* app, ProgressOptions& o) {
  CLI::Option* on = app->add_flag("--progress", o.on,
                                  "show progress on stderr (runs over about a second) even when it is not a terminal");
  app->add_flag("--no-progress", o.off, "never show progress (default: shown when stderr is a terminal)")->excludes(on);
}

std::unique_ptr<ProgressDisplay> start_progress(const ProgressOptions& o) {
  if (o.off) return nullptr;
  const bool terminal = stderr_is_terminal();
  if (!o.on && !terminal) return nullptr;
  ProgressDisplayOptions d;
  d.terminal_width = terminal ? terminal_width() : 0;
  d.after_s = progress_after_s();
  return std::make_unique<ProgressDisplay>(stderr, d);
}

}  // namespace acesim::cli
