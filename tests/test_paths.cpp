#include "test_paths.h"

#include <fstream>
#include <sstream>

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

std::string doc_tables(const std::string& doc, const std::string& name) {
  std::ifstream in(source_dir() + "/" + doc);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  const std::size_t b = text.find("<!-- " + name + " tables: begin");
  const std::size_t e = text.find("<!-- " + name + " tables: end -->");
  if (b == std::string::npos || e == std::string::npos || e < b) return "(markers missing)";
  const std::size_t start = text.find('\n', b) + 1;
  return text.substr(start, e - start);
}

}  // namespace acesim::test
