#include "registry/registry.h"
#include "registry/quote.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include <fmt/format.h>
#include <utf8cpp/utf8.h>

namespace acesim {

std::string normalize_name(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '-' || c == '_' || c == ' ') continue;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

std::string join_names(const std::vector<std::string>& names, std::string_view separator) {
  std::string out;
  for (const std::string& n : names) {
    if (!out.empty()) out += separator;
    out += n;
  }
  return out;
}

std::string shortened(std::string_view value) {
  std::string_view shown = value;
  if (value.size() > kMaxQuoted) {
    std::size_t cut = kMaxQuoted;
    while (cut > 0 && (static_cast<unsigned char>(value[cut]) & 0xC0) == 0x80) --cut;  // inside a UTF-8 character
    shown = value.substr(0, cut);
  }
  // Bytes a terminal or a C string would not show as they are (control
  // characters, a NUL, bytes that are not UTF-8) as \xNN: a message is one
  // line, and a NUL would cut it short.
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

std::string quote(std::string_view value) { return "'" + shortened(value) + "'"; }

namespace {
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (same ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}
}  // namespace

std::string closest_match(std::string_view word, std::span<const std::string> candidates) {
  std::string best;
  std::size_t best_d = static_cast<std::size_t>(-1);
  const std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
  for (const std::string& c : candidates) {
    // At least the lengths' difference apart: too far, and not worth the
    // |word| x |c| steps (a 50 MB word).
    if (std::max(word.size(), c.size()) - std::min(word.size(), c.size()) > limit) continue;
    const std::size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best_d <= limit ? best : std::string();
}

std::string suggestion(std::string_view word, std::span<const std::string> candidates) {
  const std::string m = closest_match(word, candidates);
  if (!m.empty()) return " (did you mean '" + m + "'?)";
  std::string s = " (valid: ";
  for (std::size_t i = 0; i < candidates.size(); ++i) s += (i ? ", " : "") + candidates[i];
  return s + ")";
}

}  // namespace acesim
