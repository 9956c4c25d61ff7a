// The studies' plots: a Python script shipped inside the binary
// (config/embedded.h), written into the output directory and run there with
// Debian's python3 and python3-matplotlib.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace acesim {

// Writes the embedded file `script` (e.g. "scripts/plot_reproduction.py")
// into dir and runs it with dir as its argument. Returns whether it ran
// cleanly; when not, a warning with its output goes to `progress` (if set).
bool run_plot_script(const std::string& dir, std::string_view script, std::FILE* progress);
// Writes the embedded file `script` into dir and runs it with `args`; returns
// its exit status (non-zero also when python3 cannot be started), with what
// it printed in `output`. Throws OutputError when the script cannot be written.
int run_embedded_script(const std::string& dir, std::string_view script, const std::vector<std::string>& args,
                        std::string& output);

}  // namespace acesim
