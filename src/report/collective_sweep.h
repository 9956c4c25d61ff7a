// `acesim collective`'s report: the platform in a line, the nccl-tests-style
// table and JSON of the runs driver/collective_run.h made.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "config/platform.h"
#include "driver/collective_run.h"

namespace acesim {

std::string describe_platform(const PlatformConfig& platform);
std::string format_table(const PlatformConfig& platform, const CollectiveRequestSpec& req,
                         const std::vector<CollectiveResult>& results);
nlohmann::json to_json(const PlatformConfig& platform, const std::vector<CollectiveResult>& results);

}  // namespace acesim
