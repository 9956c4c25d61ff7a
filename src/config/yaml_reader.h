// Checked access to YAML nodes: every failure names file, line and key path.
#pragma once

#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace acesim::yaml {

int line_of(const YAML::Node& node);

// Throws unless `node` is a map whose keys are all in `allowed`; an unknown
// key is reported at its own line with the closest valid key.
void check_map(const YAML::Node& node, const std::string& file, const std::string& path,
               const std::vector<std::string>& allowed);
void require(const YAML::Node& map, const std::string& key, const std::string& file, const std::string& path);

std::string scalar(const YAML::Node& node, const std::string& file, const std::string& path);
double number(const YAML::Node& node, const std::string& file, const std::string& path);
long long integer(const YAML::Node& node, const std::string& file, const std::string& path);
// A scalar or a list of scalars.
std::vector<std::string> scalar_list(const YAML::Node& node, const std::string& file, const std::string& path,
                                     bool allow_single);

YAML::Node parse(std::string_view text, const std::string& file);

}  // namespace acesim::yaml
