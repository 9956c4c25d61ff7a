// Errors in user input: one line naming the file, line/key and the problem.
// The CLI prints them as "acesim: error: <what>" and exits with status 2.
#pragma once

#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "registry/registry.h"

namespace acesim {

class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& what) : std::runtime_error(what) {}
};

// A key a file's schema does not know (yaml::check_map), told apart from a
// bad value so that callers setting keys (sweeps) can refuse a misspelt one
// before anything runs.
class UnknownKeyError : public InputError {
 public:
  using InputError::InputError;
};

// "file:line: key: problem" (line 0 or empty file/key parts are left out).
std::string input_location(std::string_view file, int line, std::string_view key);
[[noreturn]] void throw_input_error(std::string_view file, int line, std::string_view key, std::string_view problem);

// suggestion() and closest_match() for unknown names: registry/registry.h.

}  // namespace acesim
