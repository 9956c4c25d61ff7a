// `acesim run --chakra`'s report: text, JSON, CSV of every node kept, and a
// Perfetto trace, of what driver/chakra_run.h ran.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "driver/chakra_run.h"

namespace acesim {

std::string format_chakra(const ChakraReport& r, const PlatformConfig& platform);
nlohmann::json chakra_json(const ChakraReport& r);
// nodes.csv: one row per node of the ranks kept.
void write_chakra_csv(const ChakraReport& r, const std::string& dir);
nlohmann::json chakra_trace_events(const ChakraReport& r);

}  // namespace acesim
