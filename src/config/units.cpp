#include "config/units.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

namespace acesim {

std::optional<std::uint64_t> parse_bytes(std::string_view text, std::string* error) {
  auto fail = [&](const std::string& why) -> std::optional<std::uint64_t> {
    if (error != nullptr) *error = why;
    return std::nullopt;
  };
  std::string s(text);
  std::size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  std::size_t j = i;
  bool seen_digit = false;
  bool seen_dot = false;
  while (j < s.size() && (std::isdigit(static_cast<unsigned char>(s[j])) || s[j] == '.')) {
    if (s[j] == '.') {
      if (seen_dot) return fail("'" + s + "' is not a size");
      seen_dot = true;
    } else {
      seen_digit = true;
    }
    ++j;
  }
  if (!seen_digit) return fail("'" + s + "' is not a size (expected e.g. 1048576, 64MiB, 1GB)");
  const double value = std::strtod(s.substr(i, j - i).c_str(), nullptr);
  while (j < s.size() && std::isspace(static_cast<unsigned char>(s[j]))) ++j;
  std::string unit = s.substr(j);
  while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.back()))) unit.pop_back();
  double mult = 1.0;
  if (unit.empty() || unit == "B") {
    mult = 1.0;
  } else if (unit == "KiB") {
    mult = 1024.0;
  } else if (unit == "MiB") {
    mult = 1024.0 * 1024.0;
  } else if (unit == "GiB") {
    mult = 1024.0 * 1024.0 * 1024.0;
  } else if (unit == "TiB") {
    mult = 1024.0 * 1024.0 * 1024.0 * 1024.0;
  } else if (unit == "KB" || unit == "kB") {
    mult = 1e3;
  } else if (unit == "MB") {
    mult = 1e6;
  } else if (unit == "GB") {
    mult = 1e9;
  } else if (unit == "TB") {
    mult = 1e12;
  } else if (unit == "K" || unit == "M" || unit == "G" || unit == "T" || unit == "k" || unit == "m" ||
             unit == "g") {
    return fail("'" + s + "': unit '" + unit + "' is ambiguous; write " + unit + "iB (1024-based) or " + unit +
                "B (1000-based)");
  } else {
    return fail("'" + s + "': unknown unit '" + unit + "' (use B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)");
  }
  const double bytes = value * mult;
  if (bytes > 9.0e18) return fail("'" + s + "' is too large");
  if (std::floor(bytes) != bytes) return fail("'" + s + "' is not a whole number of bytes");
  return static_cast<std::uint64_t>(bytes);
}

std::string format_bytes(std::uint64_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  std::uint64_t v = bytes;
  while (u < 4 && v >= 1024 && v % 1024 == 0) {
    v /= 1024;
    ++u;
  }
  return std::to_string(v) + " " + units[u];
}

}  // namespace acesim
