// Errors in user input: one line naming the file, line/key and the problem.
// The CLI prints them as "acesim: error: <what>" and exits with status 2.
#pragma once

#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "registry/quote.h"
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

// What is wrong with a name read from a file (a job's, a layer's, a
// kernel's, a group's), or "" when nothing is: names are UTF-8 text without
// control characters (U+0000..U+001F, U+007F), since reports print them in
// tables, CSV and JSON; a NUL would cut a text report short. The problem
// names the byte: "holds a control character (U+000A) at byte 3".
std::string name_problem(std::string_view name);
// The same for any text value of an input (a path, a description): tabs and
// line breaks are allowed there.
std::string text_problem(std::string_view text);
// Throws InputError "<where>: <problem>" when name_problem(name) finds one.
void check_name(std::string_view name, std::string_view where);

// suggestion() and closest_match() for unknown names: registry/registry.h.

}  // namespace acesim
