// What every fuzz target accepts: a clean refusal of bad input (the CLI's
// exit status 2). Anything else escaping — another exception, a crash, a
// sanitizer report, a hang — is a finding.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "config/input_error.h"

namespace acesim::fuzz {

template <typename F>
void expect_clean(F&& f) {
  try {
    f();
  } catch (const InputError&) {
  } catch (const std::invalid_argument&) {
  }
}

inline std::string text(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

}  // namespace acesim::fuzz
