// Errors in user input: one line naming the file, line/key and the problem.
// The CLI prints them as "acesim: error: <what>" and exits with status 2.
#pragma once

#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace acesim {

class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& what) : std::runtime_error(what) {}
};

// "file:line: key: problem" (line 0 or empty file/key parts are left out).
std::string input_location(std::string_view file, int line, std::string_view key);
[[noreturn]] void throw_input_error(std::string_view file, int line, std::string_view key, std::string_view problem);

// The candidate closest to `word` by edit distance, if it is close enough to
// be a likely typo; empty otherwise.
std::string closest_match(std::string_view word, std::span<const std::string> candidates);
// " (did you mean 'x'?)" or " (valid: a, b, c)".
std::string suggestion(std::string_view word, std::span<const std::string> candidates);

}  // namespace acesim
