// ASTRA-sim 2.0 network YAML + system JSON (config/astra_inputs.cpp). The
// input is split at the first NUL byte: network text, then system text.
#include <algorithm>

#include "config/platform.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string all = acesim::fuzz::text(data, size);
  const std::size_t cut = std::min(all.find('\0'), all.size());
  const std::string network = all.substr(0, cut);
  const std::string system = cut < all.size() ? all.substr(cut + 1) : std::string("{}");
  acesim::fuzz::expect_clean([&] { acesim::parse_astra_platform(network, "fuzz.yml", system, "fuzz.json"); });
  return 0;
}
