#include "test_paths.h"

namespace acesim::test {

const std::string& acesim_binary() {
  static const std::string path = ACESIM_BINARY;
  return path;
}
const std::string& source_dir() {
  static const std::string path = ACESIM_SOURCE_DIR;
  return path;
}
const std::string& data_dir() {
  static const std::string path = ACESIM_TEST_DATA;
  return path;
}

}  // namespace acesim::test
