// Where the acesim binary, the repository and the test inputs are. Defined
// in test_paths.cpp alone, so that the other test files do not embed the
// checkout's absolute path and compile the same in every checkout.
#pragma once

#include <string>

namespace acesim::test {

const std::string& acesim_binary();  // the built acesim CLI
const std::string& source_dir();     // the repository root
const std::string& data_dir();       // tests/data

}  // namespace acesim::test
