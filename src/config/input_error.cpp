#include "config/input_error.h"


namespace acesim {

std::string input_location(std::string_view file, int line, std::string_view key) {
  std::string s;
  s.reserve(file.size() + key.size() + 16);
  s.append(file);
  if (line > 0) {
    s.push_back(':');
    s.append(std::to_string(line));
  }
  if (!key.empty()) {
    if (!s.empty()) s.append(": ");
    s.append(key);
  }
  return s;
}

void throw_input_error(std::string_view file, int line, std::string_view key, std::string_view problem) {
  std::string loc = input_location(file, line, key);
  throw InputError(loc.empty() ? std::string(problem) : loc + ": " + std::string(problem));
}

}  // namespace acesim
