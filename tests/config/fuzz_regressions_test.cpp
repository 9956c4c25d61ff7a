// Inputs the fuzzers (fuzz/) found; each must now be refused cleanly.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "config/input_error.h"
#include "config/platform.h"
#include "test_data.h"

namespace acesim {
namespace {

std::string read(const std::string& name) {
  std::ifstream in(test::kData + "/fuzz-regressions/" + name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// yaml-cpp 0.7's LoadAll() looped forever, growing memory, on these
// (fuzz_native_yaml and fuzz_astra_platform, timeouts).
TEST(FuzzRegressions, YamlThatHungLoadAll) {
  const std::string yaml = read("native_yaml_loadall_hang.yaml");
  ASSERT_FALSE(yaml.empty());
  EXPECT_THROW(parse_platform_yaml(yaml, "hang.yaml"), InputError);
  const std::string pair = read("astra_platform_loadall_hang.seed");
  ASSERT_FALSE(pair.empty());
  const std::size_t cut = pair.find('\0');
  const std::string network = pair.substr(0, cut);
  const std::string system = cut == std::string::npos ? "{}" : pair.substr(cut + 1);
  EXPECT_THROW(parse_astra_platform(network, "hang.yml", system, "hang.json"), InputError);
}

}  // namespace
}  // namespace acesim
