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
// Writes DIR/layers.csv, DIR/collectives.csv and DIR/network.csv (DIR is
// created). Throws InputError when it cannot.
void write_training_csv(const TrainReport& r, const std::string& dir);
// DIR/network.csv: one row per dimension, per NPU over the whole run: bytes
// sent, utilization, time communication over it was in flight, utilization
// while in flight. Throws InputError when it cannot write.
void write_network_csv(const std::string& dir, const std::vector<double>& bytes, const std::vector<double>& utilization,
                       const std::vector<double>& in_flight_ps, const std::vector<double>& utilization_in_flight);
// Picoseconds to nanoseconds, element by element.
std::vector<double> ps_to_ns_each(const std::vector<double>& ps);
// Each iteration's time from its end and the one before (from 0 for the
// first), in nanoseconds: the JSON's iteration_times_ns.
std::vector<double> iteration_times_ns(const std::vector<TimePs>& ends);
// Chrome trace-event JSON (opens in ui.perfetto.dev): one process per traced
// NPU with a compute track, a wait track and one async track per collective.
nlohmann::json training_trace(const TrainReport& r);

}  // namespace acesim
