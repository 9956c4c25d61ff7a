#include "config/presets.h"

#include "config/embedded.h"

namespace acesim {
namespace {

void add(PresetRegistry& registry, std::string name, std::string help) {
  PlatformPreset p;
  p.file = "presets/" + name + ".yaml";
  p.name = std::move(name);
  p.help = std::move(help);
  registry.add(std::move(p));
}

}  // namespace

void register_builtin_presets(PresetRegistry& registry) {
  add(registry, "default", "64 NPUs in a 4x4x4 torus of the ACE paper's era (the default platform)");
  add(registry, "ace-isca21", "the ACE paper's evaluated setting, reconstructed (docs/reproduction.md)");
  add(registry, "hgx-h200", "four HGX H200 nodes: NVLink 4 through NVSwitch, one 400 Gb/s NIC per GPU");
}

PresetRegistry& preset_registry() {
  static PresetRegistry registry("platform preset", register_builtin_presets);
  return registry;
}

PlatformConfig load_preset(const PlatformPreset& preset) {
  if (!preset.yaml.empty()) return parse_platform_yaml(preset.yaml, "preset " + preset.name);
  return parse_platform_yaml(embedded_file(preset.file), preset.file);
}

}  // namespace acesim
