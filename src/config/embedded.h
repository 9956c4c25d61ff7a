// Files compiled into the binary (CMakeLists.txt, ACESIM_EMBEDDED_FILES):
// presets, the reproduction's workload tables and plotting script.
#pragma once

#include <string_view>

namespace acesim {

// The file's text by its path in the source tree, e.g. "presets/default.yaml".
// Throws std::logic_error for a name that is not embedded.
std::string_view embedded_file(std::string_view name);

}  // namespace acesim
