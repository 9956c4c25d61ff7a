#include "registry/registry.h"

#include <cctype>

#include "config/input_error.h"

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

std::string registry_suggestion(std::string_view word, const std::vector<std::string>& names) {
  return suggestion(word, names);
}

}  // namespace acesim
