// Reports of a long run with failures (driver/goodput.h): text, JSON and a
// CSV of the trials.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "driver/goodput.h"

namespace acesim {

// `run`: which run it follows when there are several (an executor), else empty.
std::string format_goodput(const GoodputReport& r, const std::string& run = "");
nlohmann::json goodput_json(const GoodputReport& r);
// DIR/goodput.csv: one row per trial. Throws InputError when it cannot.
void write_goodput_csv(const GoodputReport& r, const std::string& dir);

}  // namespace acesim
