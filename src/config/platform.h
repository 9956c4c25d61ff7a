// A platform: topology, network backend and collective settings, read from
// acesim's native YAML or from ASTRA-sim 2.0 analytical inputs.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collective/plan.h"
#include "endpoint/npu_config.h"
#include "network/network.h"
#include "topology/topology.h"

namespace acesim {

// What to train, from a platform file's `workload:` section (docs/formats.md).
struct WorkloadConfig {
  bool given = false;
  std::string model;  // a built-in model (resnet50, gnmt, dlrm, gpt)
  std::string file;   // or an ASTRA-sim 1.0 text workload, relative to the platform file
  int batch_per_npu = 0;
  int bytes_per_element = 2;
  int iterations = 2;
  std::vector<int> data_dims;
  std::vector<int> model_dims;
};

// A platform's energy model (`energy:` in its YAML; docs/model.md,
// "Energy"): every GPU draws idle_W while the run lasts, active_W more for
// each second all its compute units are busy (pro rata for fewer), and each
// bit costs hbm_pJ_per_bit in HBM and link_pJ_per_bit[d] on a link of
// dimension d.
struct EnergyModel {
  double idle_W = 0.0;
  double active_W = 0.0;
  double hbm_pJ_per_bit = 0.0;
  std::vector<double> link_pJ_per_bit;  // one per topology dimension

  // Joules of `npus` NPUs over `seconds`, from per-NPU means: compute-unit
  // time busy (of `compute_units`; at most all of them all the time), HBM
  // bytes, bytes sent per dimension.
  double joules(double seconds, long long npus, int compute_units, double unit_seconds, double hbm_bytes,
                const std::vector<double>& sent_per_dim) const;
};

struct PlatformConfig {
  std::string source;  // where it came from, for reports
  std::vector<DimensionSpec> dims;
  // The dimension whose size is the number of nodes (`nodes: true` in the
  // YAML; what --nodes sets); -1 when the platform has no node notion.
  int nodes_dim = -1;
  NetworkConfig network;
  CollectiveConfig collectives;
  NpuConfig npu;
  WorkloadConfig workload;
  std::optional<EnergyModel> energy;  // none: reports give no energy (null)
  // From an ASTRA-sim system file; used by the endpoint model.
  std::optional<double> local_mem_bw_GBps;
  std::optional<double> peak_perf_TFLOPS;
  // Check expensive invariants while running (--check): no resource above
  // its capacity after every solve.
  bool check = false;
  // Inputs that were read but do not change the result; printed by the CLI.
  std::vector<std::string> warnings;
};

// Native YAML (schema: docs/formats.md). Throws InputError.
PlatformConfig load_platform_file(const std::string& path);
PlatformConfig parse_platform_yaml(std::string_view text, const std::string& source);
// The same, with paths in it (workload.file) relative to `folder` rather
// than to the source's folder (a platform's text changed in memory, named
// for messages, whose paths are those of the file it came from).
PlatformConfig parse_platform_yaml(std::string_view text, const std::string& source, const std::string& folder);
// The built-in default (presets/default.yaml, embedded at build time).
PlatformConfig default_platform();
std::string_view default_platform_yaml();

// ASTRA-sim 2.0 analytical network YAML + system JSON. Throws InputError.
// The NPU is default_npu() with the system file's local-mem-bw and peak-perf
// when present; the executor is ideal (ASTRA-sim's endpoint semantics).
PlatformConfig load_astra_platform(const std::string& network_yml, const std::string& system_json);
// The same from texts; the names are used in messages.
PlatformConfig parse_astra_platform(std::string_view network_text, const std::string& network_name,
                                    const std::string& system_text, const std::string& system_name);

// Sets the number of nodes (the size of platform.nodes_dim) and checks that
// every collective the platform configures still runs on it. Throws
// InputError naming `flag` (--nodes) and what would work.
void set_nodes(PlatformConfig& platform, long long nodes, const std::string& flag);
// Takes `gpus` GPUs of each node (64 of a 72-GPU NVL72 rack, 4 of an HGX's
// 8): the size of the one dimension inside a node. Throws InputError naming
// `flag` for a platform without nodes, nodes of several dimensions, a count
// outside 1..the node's GPUs, or a collective that cannot run on the result.
void set_gpus_per_node(PlatformConfig& platform, long long gpus, const std::string& flag);

// Reads a whole input file, the one reader every text input goes through.
// Throws InputError naming it when it is missing, a directory, larger than
// limits::kMaxInputFileBytes (a regular file is refused before it is read;
// a device or pipe, /dev/zero, when its bytes pass the cap), UTF-16 or
// UTF-32 text, or holds a NUL byte (not a text file). A UTF-8 byte-order
// mark is dropped.
std::string read_text_file(const std::string& path);

}  // namespace acesim
