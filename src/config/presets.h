// Platform presets: platforms shipped inside the binary, chosen by name
// (`--platform NAME`). Each is a YAML file under presets/ (embedded at build
// time from the same file users can read and copy) and one registry entry.
#pragma once

#include <string>

#include "config/platform.h"
#include "registry/registry.h"

namespace acesim {

struct PlatformPreset : RegistryEntryBase {
  std::string file;  // its path in the source tree, e.g. "presets/hgx-h200.yaml" (embedded)
  std::string yaml;  // or its text, for a preset registered at run time
};

using PresetRegistry = Registry<PlatformPreset>;
// The registry, with the built-in presets registered on first use.
PresetRegistry& preset_registry();
// The built-ins, one line each (config/presets.cpp).
void register_builtin_presets(PresetRegistry& registry);

// The preset's platform; its source is the preset's file.
PlatformConfig load_preset(const PlatformPreset& preset);
// Its YAML text.
std::string preset_yaml(const PlatformPreset& preset);
// The YAML text of a platform file, or of the preset of that name when no
// such file exists; `source` is set to what it is called in messages.
std::string platform_yaml(const std::string& file_or_preset, std::string& source);

}  // namespace acesim
