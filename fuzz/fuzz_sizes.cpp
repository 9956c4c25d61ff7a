// Size strings such as 64MiB (config/units.cpp): never a crash, and what is
// accepted prints back to the same number of bytes.
#include <cstdlib>

#include "config/units.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string s = acesim::fuzz::text(data, size);
  std::string err;
  const auto v = acesim::parse_bytes(s, &err);
  if (v) {
    const auto again = acesim::parse_bytes(std::to_string(*v), &err);
    if (!again || *again != *v) std::abort();
  } else if (err.empty()) {
    std::abort();  // a refusal must say why
  }
  return 0;
}
