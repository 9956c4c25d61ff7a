// Several runs' Chrome/Perfetto traces as one file: `acesim run --compare
// sm,ace --trace FILE` writes FILE, each executor's processes beside the
// others'. Each trace's processes get pids of their own (in order), their
// names the run's label ("sm: NPU 0"), and a sort index that keeps each
// run's processes together; async slices' ids are kept apart per run.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace acesim {

nlohmann::json merge_traces(const std::vector<std::pair<std::string, nlohmann::json>>& labelled);

}  // namespace acesim
