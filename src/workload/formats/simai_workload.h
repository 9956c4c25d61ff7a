// SimAI / AICB training workloads (docs/formats.md, "SimAI workloads"): the
// layer table SimAI (Alibaba, NSDI'25) reads and AICB writes, ASTRA-sim
// 1.0's HYBRID_TRANSFORMER_FWD_IN_BCKWD table extended with the plan
//   HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: TP ep: EP pp: PP
//     vpp: V ga: GA all_gpus: N checkpoints: 0 checkpoint_initiates: 0 pp_comm: BYTES
// and collectives named for their group: ALLREDUCE (TP in the forward and
// input-gradient columns, DP in the weight-gradient column), ALLREDUCE_EP
// (the experts' all-to-all group), ALLREDUCE_DP_EP (the experts' data
// parallelism); likewise ALLGATHER, REDUCESCATTER, ALLTOALL. Compute in ns,
// sizes in bytes (the whole buffer, as nccl-tests counts it).
//
// The rows are one rank's iteration with gradient accumulation written out:
// rows before the micro-batches (AICB's data-parallel gradient and parameter
// collectives), GA equal blocks of rows (one micro-batch each), rows after.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collective/types.h"
#include "engine/time.h"

namespace acesim {

enum class SimaiGroup : std::uint8_t { kTp, kEp, kDpEp, kDp };
std::string_view to_string(SimaiGroup g);

enum class SimaiPass : std::uint8_t { kForward, kInputGrad, kWeightGrad };

struct SimaiComm {
  std::optional<CollectiveOp> op;  // none: NONE
  SimaiGroup group = SimaiGroup::kTp;
  double bytes = 0.0;
};

struct SimaiRow {
  std::string name;
  int line = 0;
  std::array<TimePs, 3> compute_ps{};  // by SimaiPass
  std::array<SimaiComm, 3> comm{};     // by SimaiPass
  TimePs update_ps = 0;                // after each of its collectives (SimAI's delay)
};

struct SimaiWorkload {
  std::string file;
  int tp = 1, ep = 1, pp = 1, ga = 1;
  long long vpp = 0;       // AICB writes the layers per stage here; informational
  long long all_gpus = 0;  // 0: not in the header (the platform's GPUs)
  double pp_comm_bytes = 0.0;
  std::vector<SimaiRow> rows;
  // rows [0, preamble): before the micro-batches; then ga blocks of `block`
  // rows; then the rest.
  std::size_t preamble = 0;
  std::size_t block = 0;
  std::size_t tail_begin() const { return preamble + static_cast<std::size_t>(ga) * block; }
};

// SimAI's own header keys, which ASTRA-sim 1.0's header has not: ep:, pp:,
// vpp:, ga:, all_gpus:, pp_comm (or pp_comm:).
bool is_simai_header_key(std::string_view token);
// Whether a file's first line is a SimAI header (the fwd-in-bckwd keyword
// with any of SimAI's own keys).
bool is_simai_header(std::string_view first_line);
bool looks_like_simai(const std::string& path);

// Throws InputError naming file, line, column and the problem.
SimaiWorkload parse_simai_workload(std::string_view text, const std::string& file);
SimaiWorkload read_simai_workload(const std::string& path);

}  // namespace acesim
