#include "config/input_error.h"

#include <fmt/format.h>
#include <utf8cpp/utf8.h>

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

namespace {

std::string problem(std::string_view text, bool allow_layout) {
  const auto bad = utf8::find_invalid(text.begin(), text.end());
  if (bad != text.end()) {
    return fmt::format("is not UTF-8 text (byte 0x{:02X} at byte {})", static_cast<unsigned char>(*bad), bad - text.begin());
  }
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (allow_layout && (c == '\t' || c == '\n' || c == '\r')) continue;
    if (c < 0x20 || c == 0x7F) return fmt::format("holds a control character (U+{:04X}) at byte {}", c, i);
  }
  return {};
}

}  // namespace

std::string name_problem(std::string_view name) { return problem(name, false); }

std::string text_problem(std::string_view text) { return problem(text, true); }

void check_name(std::string_view name, std::string_view where) {
  const std::string why = name_problem(name);
  if (!why.empty()) throw InputError(std::string(where) + ": " + why);
}

}  // namespace acesim
