// --nodes: the size of a node-based platform's node dimension; --gpus-per-node:
// how many GPUs of each node a job takes.
#include <string>
#include <vector>

#include "collective/plan.h"
#include "config/input_error.h"
#include "config/limits.h"
#include "config/platform.h"
#include "config/presets.h"

namespace acesim {
namespace {

// The built-in presets that have a node dimension, for the message that
// refuses --nodes elsewhere.
std::string node_presets() {
  std::string names;
  for (const PlatformPreset& p : preset_registry().entries()) {
    if (load_preset(p).nodes_dim < 0) continue;
    names += (names.empty() ? "" : ", ") + p.name;
  }
  return names;
}

// Why an algorithm the platform configures cannot run its operation on the
// dimension that --nodes makes more than one node (double-binary-tree for
// an all-gather), or "". A group size an algorithm cannot serve is refused
// only where a collective runs on such a group (plan_refusal, collective/plan.h).
std::string unrunnable(const PlatformConfig& platform) { return validate(platform.collectives, Topology(platform.dims)); }

}  // namespace

void set_nodes(PlatformConfig& platform, long long nodes, const std::string& flag) {
  if (nodes < 1 || nodes > limits::kMaxNpusPerDimension) {
    throw InputError(flag + ": must be an integer in 1..1048576, got " + std::to_string(nodes));
  }
  if (platform.nodes_dim < 0) {
    throw InputError(flag + ": " + platform.source + " has no node dimension; use a node-based preset (" + node_presets() +
                     ") or mark a dimension `nodes: true` in a platform file");
  }
  long long total = nodes;
  for (std::size_t d = 0; d < platform.dims.size(); ++d) {
    if (static_cast<int>(d) != platform.nodes_dim) total *= platform.dims[d].npus;
  }
  if (total > limits::kMaxNpus) {
    throw InputError(flag + ": " + std::to_string(nodes) + " nodes make " + std::to_string(total) + " NPUs, more than 16777216");
  }
  platform.dims[static_cast<std::size_t>(platform.nodes_dim)].npus = static_cast<int>(nodes);
  if (const std::string why = unrunnable(platform); !why.empty()) {
    throw InputError(flag + ": " + std::to_string(nodes) + " nodes: " + why + " (choose another algorithm in the platform file)");
  }
}

void set_gpus_per_node(PlatformConfig& platform, long long gpus, const std::string& flag) {
  if (platform.nodes_dim < 0) {
    throw InputError(flag + ": " + platform.source + " has no node dimension; use a node-based preset (" + node_presets() + ")");
  }
  int scale_up = -1;
  for (std::size_t d = 0; d < platform.dims.size(); ++d) {
    if (static_cast<int>(d) == platform.nodes_dim) continue;
    if (scale_up >= 0) {
      throw InputError(flag + ": " + platform.source + "'s nodes have more than one dimension; give the node's shape in a platform file");
    }
    scale_up = static_cast<int>(d);
  }
  if (scale_up < 0) throw InputError(flag + ": " + platform.source + "'s nodes hold one NPU each");
  const int most = platform.dims[static_cast<std::size_t>(scale_up)].npus;
  if (gpus < 1 || gpus > most) {
    throw InputError(flag + ": must be an integer in 1.." + std::to_string(most) + " (" + platform.source + "'s node), got " +
                     std::to_string(gpus));
  }
  platform.dims[static_cast<std::size_t>(scale_up)].npus = static_cast<int>(gpus);
  if (const std::string why = unrunnable(platform); !why.empty()) {
    throw InputError(flag + ": " + std::to_string(gpus) + " GPUs a node: " + why + " (choose another algorithm in the platform file)");
  }
}

}  // namespace acesim
