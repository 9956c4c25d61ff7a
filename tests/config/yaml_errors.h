// Helpers of the native YAML reader tests: a valid one-dimension platform to
// append to, and the InputError a text produces.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "config/input_error.h"
#include "config/platform.h"

namespace acesim::test {

// A valid one-dimension file with `extra` appended (the ring is on lines 1-5,
// `extra` starts on line 6).
inline std::string ring8(const std::string& extra = "") {
  return "topology:\n"               // 1
         "  - kind: ring\n"          // 2
         "    npus: 8\n"             // 3
         "    bandwidth_GBps: 50\n"  // 4
         "    latency_ns: 500\n" +   // 5
         extra;                      // 6...
}

// The InputError message for `text`; fails the test when it is accepted or
// something other than InputError is thrown.
inline std::string yaml_error_of(const std::string& text, const std::string& file = "bad.yaml") {
  try {
    parse_platform_yaml(text, file);
  } catch (const InputError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not an InputError: " << e.what() << "\n--- input:\n" << text;
    return {};
  }
  ADD_FAILURE() << "accepted:\n" << text;
  return {};
}

}  // namespace acesim::test
