// One report per executor: `--compare sm,ace,ideal` runs the same input side
// by side. Internal to api/.
#pragma once

#include <string>
#include <vector>

#include "config/platform.h"
#include "engine/progress.h"

namespace acesim::api {

// Appends to `out`, for each executor in order, what `one(platform, progress)`
// returns for the platform with that executor and its share of the progress.
template <typename Report, typename Run>
void per_executor(const PlatformConfig& platform, const std::vector<std::string>& executors, ProgressSink* sink,
                  std::vector<Report>& out, Run one) {
  const Progress progress(sink);
  for (std::size_t i = 0; i < executors.size(); ++i) {
    PlatformConfig p = platform;
    p.npu.executor = executors[i];
    out.push_back(one(p, progress.part(i, executors.size(), executors.size() > 1 ? executors[i] : "")));
  }
}

}  // namespace acesim::api
