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

std::string quoted_value(std::string_view value) {
  constexpr std::size_t kMax = 80;
  std::string_view shown = value;
  if (value.size() > kMax) {
    std::size_t cut = kMax - 3;
    while (cut > 0 && (static_cast<unsigned char>(value[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 sequence
    shown = value.substr(0, cut);
  }
  // Bytes a terminal or a C string would not show as they are (controls,
  // a NUL, bytes that are not UTF-8) as \xNN.
  std::string out;
  out.reserve(shown.size());
  auto it = shown.begin();
  while (it != shown.end()) {
    const auto bad = utf8::find_invalid(it, shown.end());
    for (; it != bad; ++it) {
      const auto c = static_cast<unsigned char>(*it);
      if (c < 0x20 || c == 0x7F) {
        out += fmt::format("\\x{:02X}", c);
      } else {
        out += *it;
      }
    }
    if (it != shown.end()) out += fmt::format("\\x{:02X}", static_cast<unsigned char>(*it++));
  }
  if (shown.size() < value.size()) out += "...";
  return out;
}

void check_name(std::string_view name, std::string_view where) {
  const std::string why = name_problem(name);
  if (!why.empty()) throw InputError(std::string(where) + ": " + why);
}

}  // namespace acesim
