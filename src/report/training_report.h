// Reports of a training run: text, JSON, CSV tables and a Chrome/Perfetto trace.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "driver/training_run.h"

namespace acesim {

std::string format_training(const TrainReport& r, const PlatformConfig& platform);
// Several runs of one workload (e.g. sm and ace) side by side.
std::string format_comparison(const std::vector<TrainReport>& runs, const PlatformConfig& platform);
nlohmann::json training_json(const TrainReport& r);
// Writes DIR/layers.csv and DIR/collectives.csv (DIR is created). Throws InputError when it cannot.
void write_training_csv(const TrainReport& r, const std::string& dir);
// Chrome trace-event JSON (opens in ui.perfetto.dev): one process per traced
// NPU with a compute track, a wait track and one async track per collective.
nlohmann::json training_trace(const TrainReport& r);

}  // namespace acesim
