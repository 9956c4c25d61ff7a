#include "config/presets.h"

#include <filesystem>

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
  add(registry, "hgx-a100", "HGX A100 nodes (1; --nodes N): NVLink 3 through NVSwitch, one 200 Gb/s NIC per GPU on rails");
  add(registry, "hgx-a100-40gb", "HGX A100 nodes with the 40 GB GPU (HBM2, 1,555 GB/s); otherwise as hgx-a100");
  add(registry, "hgx-h100", "HGX H100 nodes (1; --nodes N): NVLink 4 through NVSwitch, one 400 Gb/s NIC per GPU on rails");
  add(registry, "hgx-h200", "HGX H200 nodes (1; --nodes N): NVLink 4 through NVSwitch, one 400 Gb/s NIC per GPU on rails");
  add(registry, "hgx-b200", "HGX B200 nodes (1; --nodes N): NVLink 5 through NVSwitch, one 400 Gb/s NIC per GPU on rails");
  add(registry, "gb200-nvl72", "GB200 NVL72 racks (1; --nodes N): 72 GPUs in one NVLink 5 domain, one 400 Gb/s NIC per GPU on rails");
  add(registry, "mi300x", "AMD MI300X nodes (1; --nodes N): 8 GPUs on a fully connected xGMI mesh, one 400 Gb/s NIC per GPU on rails");
  add(registry, "mi355x", "AMD MI355X nodes (1; --nodes N): 8 GPUs on a fully connected xGMI mesh, one 400 Gb/s Pollara NIC per GPU on rails");
}

PresetRegistry& preset_registry() {
  static PresetRegistry registry("platform preset", register_builtin_presets);
  return registry;
}

std::string preset_yaml(const PlatformPreset& preset) {
  return preset.yaml.empty() ? std::string(embedded_file(preset.file)) : preset.yaml;
}

PlatformConfig load_preset(const PlatformPreset& preset) {
  return parse_platform_yaml(preset_yaml(preset), preset.yaml.empty() ? preset.file : "preset " + preset.name);
}

std::string platform_yaml(const std::string& file_or_preset, std::string& source) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file_or_preset, ec)) {
    if (const PlatformPreset* p = preset_registry().find(file_or_preset)) {
      source = p->yaml.empty() ? p->file : "preset " + p->name;
      return preset_yaml(*p);
    }
  }
  source = file_or_preset;
  return read_text_file(file_or_preset);
}

}  // namespace acesim
