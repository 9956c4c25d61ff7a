#include "config/yaml_reader.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <utility>

#include <yaml-cpp/depthguard.h>

#include "config/input_error.h"

namespace acesim::yaml {

namespace {
// An empty value ("key:" with nothing after it) carries the position of the
// next token, which can be lines further on; check_map() records the line of
// its key here so that messages about the value point at the key.
thread_local std::vector<std::pair<YAML::Node, int>> empty_value_lines;
// Every key and value of a file is UTF-8 text without control characters
// but tabs and line breaks (a quoted "\0" would cut a report or a number
// short: strtod stops at it). Names are checked further where they are
// read (check_name). Nesting is bounded by the parser's own limit.
void check_text(const YAML::Node& node, const std::string& file, int depth) {
  if (depth > 256) throw_input_error(file, line_of(node), "", "nested more than 256 levels deep");
  if (node.IsScalar()) {
    if (const std::string why = text_problem(node.Scalar()); !why.empty()) {
      throw_input_error(file, node.Mark().line >= 0 ? node.Mark().line + 1 : 0, "", "the value " + quote(node.Scalar()) + " " + why);
    }
    return;
  }
  if (node.IsSequence()) {
    for (const YAML::Node& item : node) check_text(item, file, depth + 1);
  } else if (node.IsMap()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (it->first.IsScalar()) {
        if (const std::string why = text_problem(it->first.Scalar()); !why.empty()) {
          throw_input_error(file, it->first.Mark().line >= 0 ? it->first.Mark().line + 1 : 0, "",
                            "the key " + quote(it->first.Scalar()) + " " + why);
        }
      } else {
        throw_input_error(file, it->first.Mark().line >= 0 ? it->first.Mark().line + 1 : 0, "", "a key must be a single value");
      }
      check_text(it->second, file, depth + 1);
    }
  }
}

}  // namespace

int line_of(const YAML::Node& node) {
  if (node.IsNull()) {
    for (const auto& [n, line] : empty_value_lines) {
      if (n.is(node)) return line;
    }
  }
  const YAML::Mark m = node.Mark();
  return m.line >= 0 ? m.line + 1 : 0;
}

YAML::Node parse(std::string_view text, const std::string& file) {
  empty_value_lines.clear();
  try {
    // Load() silently drops every document after the first, and yaml-cpp
    // 0.7's LoadAll() can loop forever on malformed input (found by
    // fuzz_native_yaml): look for a document marker after content instead.
    {
      int line_no = 0;
      bool content = false;  // the first document has begun
      bool second = false;   // a marker after it: anything more is a second document
      std::size_t pos = 0;
      while (pos <= text.size()) {
        const std::size_t end = std::min(text.find('\n', pos), text.size());
        const std::string_view line = text.substr(pos, end - pos);
        ++line_no;
        const bool marker = (line.substr(0, 3) == "---" || line.substr(0, 3) == "...") &&
                            (line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r');
        const std::size_t first = line.find_first_not_of(" \t\r");
        const bool has_content = !marker && first != std::string_view::npos && line[first] != '#';
        if (marker && content) second = true;
        if (has_content && second) {
          throw_input_error(file, line_no, "", "more than one YAML document (a second '---')");
        }
        if (has_content) content = true;
        if (end == text.size()) break;
        pos = end + 1;
      }
    }
    const YAML::Node loaded = YAML::Load(std::string(text));
    YAML::Node root = loaded;
    if (!root.IsDefined() || root.IsNull()) throw_input_error(file, 0, "", "file is empty");
    check_text(root, file, 0);
    return root;
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp stops at 500 levels with the words "bad file".
    throw_input_error(file, e.mark.line >= 0 ? e.mark.line + 1 : 0, "",
                      "nested " + std::to_string(e.depth()) + " levels deep, more than the YAML reader takes");
  } catch (const YAML::Exception& e) {
    throw_input_error(file, e.mark.line >= 0 ? e.mark.line + 1 : 0, "", "malformed YAML: " + e.msg);
  }
}

void check_map(const YAML::Node& node, const std::string& file, const std::string& path,
               const std::vector<std::string>& allowed) {
  if (!node.IsMap()) throw_input_error(file, line_of(node), path, "expected a map of keys");
  std::vector<std::pair<std::string, int>> seen;  // key, line
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string key = it->first.Scalar();
    const std::string full = path.empty() ? key : path + "." + key;
    bool ok = false;
    for (const std::string& a : allowed) ok = ok || a == key;
    if (!ok) throw UnknownKeyError(input_location(file, line_of(it->first), full) + ": unknown key" + suggestion(key, allowed));
    // yaml-cpp keeps both copies of a repeated key and node[key] finds the
    // first: refuse rather than silently ignore one of them.
    for (const auto& [k, line] : seen) {
      if (k == key) {
        throw_input_error(file, line_of(it->first), full,
                          "given twice" + (line > 0 ? " (first on line " + std::to_string(line) + ")" : std::string()));
      }
    }
    seen.emplace_back(key, line_of(it->first));
    if (it->second.IsNull()) empty_value_lines.emplace_back(it->second, line_of(it->first));
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
