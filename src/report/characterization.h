// The characterization studies' report: table and JSON of what
// driver/characterization.h ran (acesim characterize; docs/characterization.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "driver/characterization.h"
#include "report/collective_sweep.h"

namespace acesim {

std::string format_study(const Study& study, const PlatformConfig& platform, const CollectiveRequestSpec& req,
                         std::uint64_t bytes);
nlohmann::json study_json(const Study& study);

}  // namespace acesim
