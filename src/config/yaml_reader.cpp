#include "config/yaml_reader.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "config/input_error.h"

namespace acesim::yaml {

int line_of(const YAML::Node& node) {
  const YAML::Mark m = node.Mark();
  return m.line >= 0 ? m.line + 1 : 0;
}

YAML::Node parse(std::string_view text, const std::string& file) {
  try {
    YAML::Node root = YAML::Load(std::string(text));
    if (!root.IsDefined() || root.IsNull()) throw_input_error(file, 0, "", "file is empty");
    return root;
  } catch (const YAML::ParserException& e) {
    throw_input_error(file, e.mark.line >= 0 ? e.mark.line + 1 : 0, "", "malformed YAML: " + e.msg);
  }
}

void check_map(const YAML::Node& node, const std::string& file, const std::string& path,
               const std::vector<std::string>& allowed) {
  if (!node.IsMap()) throw_input_error(file, line_of(node), path, "expected a map of keys");
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string key = it->first.Scalar();
    bool ok = false;
    for (const std::string& a : allowed) ok = ok || a == key;
    if (!ok) {
      const std::string full = path.empty() ? key : path + "." + key;
      throw_input_error(file, line_of(it->first), full, "unknown key" + suggestion(key, allowed));
    }
  }
}

void require(const YAML::Node& map, const std::string& key, const std::string& file, const std::string& path) {
  if (!map[key]) {
    throw_input_error(file, line_of(map), path.empty() ? key : path + "." + key, "missing (required)");
  }
}

std::string scalar(const YAML::Node& node, const std::string& file, const std::string& path) {
  if (!node.IsScalar()) throw_input_error(file, line_of(node), path, "expected a single value");
  return node.Scalar();
}

double number(const YAML::Node& node, const std::string& file, const std::string& path) {
  const std::string s = scalar(node, file, path);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end == s.c_str() || *end != '\0' || !std::isfinite(v)) {
    throw_input_error(file, line_of(node), path, "expected a number, got '" + s + "'");
  }
  return v;
}

long long integer(const YAML::Node& node, const std::string& file, const std::string& path) {
  const std::string s = scalar(node, file, path);
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || end == s.c_str() || *end != '\0' || errno == ERANGE) {
    throw_input_error(file, line_of(node), path, "expected an integer, got '" + s + "'");
  }
  return v;
}

std::vector<std::string> scalar_list(const YAML::Node& node, const std::string& file, const std::string& path,
                                     bool allow_single) {
  std::vector<std::string> out;
  if (node.IsScalar() && allow_single) {
    out.push_back(node.Scalar());
    return out;
  }
  if (!node.IsSequence()) throw_input_error(file, line_of(node), path, "expected a list");
  for (std::size_t i = 0; i < node.size(); ++i) out.push_back(scalar(node[i], file, path + "[" + std::to_string(i) + "]"));
  return out;
}

}  // namespace acesim::yaml
