#include "config/units.h"

#include <cctype>
#include <cstdint>
#include <numeric>
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
  // The number is read exactly, as digits / 10^frac_digits, so that "4.1MB"
  // is 4100000 bytes (4.1 * 1e6 in floating point is not a whole number).
  std::size_t j = i;
  std::string int_part;
  std::string frac_part;
  bool seen_dot = false;
  while (j < s.size() && (std::isdigit(static_cast<unsigned char>(s[j])) || s[j] == '.')) {
    if (s[j] == '.') {
      if (seen_dot) return fail("'" + s + "' is not a size");
      seen_dot = true;
    } else {
      (seen_dot ? frac_part : int_part).push_back(s[j]);
    }
    ++j;
  }
  const bool seen_digit = !int_part.empty() || !frac_part.empty();
  while (!frac_part.empty() && frac_part.back() == '0') frac_part.pop_back();
  const int frac_digits = static_cast<int>(frac_part.size());
  std::uint64_t digits = 0;
  bool too_many_digits = false;
  for (char c : int_part + frac_part) {
    const auto d = static_cast<std::uint64_t>(c - '0');
    if (digits > (UINT64_MAX - d) / 10) {
      too_many_digits = true;
      break;
    }
    digits = digits * 10 + d;
  }
  if (!seen_digit) return fail("'" + s + "' is not a size (expected e.g. 1048576, 64MiB, 1GB)");
  if (too_many_digits) return fail("'" + s + "' has too many digits");
  while (j < s.size() && std::isspace(static_cast<unsigned char>(s[j]))) ++j;
  std::string unit = s.substr(j);
  while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.back()))) unit.pop_back();
  std::uint64_t mult = 1;
  if (unit.empty() || unit == "B") {
    mult = 1;
  } else if (unit == "KiB") {
    mult = 1ull << 10;
  } else if (unit == "MiB") {
    mult = 1ull << 20;
  } else if (unit == "GiB") {
    mult = 1ull << 30;
  } else if (unit == "TiB") {
    mult = 1ull << 40;
  } else if (unit == "KB" || unit == "kB") {
    mult = 1'000;
  } else if (unit == "MB") {
    mult = 1'000'000;
  } else if (unit == "GB") {
    mult = 1'000'000'000;
  } else if (unit == "TB") {
    mult = 1'000'000'000'000;
  } else if (unit == "K" || unit == "M" || unit == "G" || unit == "T" || unit == "k" || unit == "m" ||
             unit == "g" || unit == "t") {
    const char u = static_cast<char>(std::toupper(static_cast<unsigned char>(unit[0])));
    return fail("'" + s + "': unit '" + unit + "' is ambiguous; write " + u + "iB (1024-based) or " + u +
                "B (1000-based)");
  } else {
    return fail("'" + s + "': unknown unit '" + unit + "' (use B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)");
  }
  // bytes = digits * mult / 10^frac_digits, which must be whole.
  if (frac_digits > 19) return fail("'" + s + "' is not a whole number of bytes");
  std::uint64_t den = 1;
  for (int k = 0; k < frac_digits; ++k) den *= 10;
  const std::uint64_t g = std::gcd(mult, den);
  mult /= g;
  den /= g;
  if (digits % den != 0) return fail("'" + s + "' is not a whole number of bytes");
  const std::uint64_t whole = digits / den;
  constexpr std::uint64_t kMaxBytes = 9'000'000'000'000'000'000ull;
  if (whole > kMaxBytes / mult) return fail("'" + s + "' is too large");
  return whole * mult;
}

std::optional<int> parse_precision(std::string_view name) {
  if (name == "fp8") return 1;
  if (name == "fp16" || name == "bf16") return 2;
  if (name == "fp32") return 4;
  return std::nullopt;
}

std::vector<std::string> precision_names() { return {"fp8", "fp16", "bf16", "fp32"}; }

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
