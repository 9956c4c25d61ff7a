// `acesim run --kineto`'s report: text, JSON and steps.csv of what
// driver/kineto_run.h replayed.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "driver/kineto_run.h"

namespace acesim {

std::string format_kineto(const KinetoReport& r, const PlatformConfig& platform);
nlohmann::json kineto_json(const KinetoReport& r);
// DIR/steps.csv: one row per ProfilerStep, measured and replayed.
void write_kineto_csv(const KinetoReport& r, const std::string& dir);

}  // namespace acesim
