// Where the test suite's input files are (tests/data; see its README).
#pragma once

#include <string>

#include "test_paths.h"

namespace acesim::test {

inline const std::string kData = data_dir();
inline const std::string kNet = kData + "/astra-sim-2.0/network/";
inline const std::string kSys = kData + "/astra-sim-2.0/system/";
inline const std::string kCustom = kData + "/astra-custom/";

}  // namespace acesim::test
