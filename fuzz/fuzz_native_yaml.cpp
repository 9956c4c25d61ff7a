// acesim's native platform YAML (config/native_yaml.cpp).
#include "config/platform.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  acesim::fuzz::expect_clean([&] { acesim::parse_platform_yaml(acesim::fuzz::text(data, size), "fuzz.yaml"); });
  return 0;
}
