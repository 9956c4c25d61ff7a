// Where the acesim binary, the repository and the test inputs are. Defined
// in test_paths.cpp alone, so that the other test files do not embed the
// checkout's absolute path and compile the same in every checkout.
#pragma once

#include <string>

namespace acesim::test {

const std::string& acesim_binary();  // the built acesim CLI
const std::string& source_dir();     // the repository root
const std::string& data_dir();       // tests/data

// The block of a doc (a path from the repository root, e.g.
// "docs/validation.md") between the lines "<!-- NAME tables: begin ..."
// and "<!-- NAME tables: end -->", which a study generates; "(markers
// missing)" when they are not there.
std::string doc_tables(const std::string& doc, const std::string& name);

}  // namespace acesim::test
