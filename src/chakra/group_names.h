// Communicator groups of exported Chakra traces (ASTRA-sim's groups file,
// {"name": [ranks...]}): every distinct set of ranks named once, "<prefix>_<n>"
// after the prefix of its first use, n counting that prefix's groups.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>


namespace acesim::chakra {

class GroupNames {
 public:
  // `ranks` ascending (acesim's Rank: std::int32_t; this layer sits below topology/).
  const std::string& name(const std::vector<std::int32_t>& ranks, const std::string& prefix) {
    auto it = names_.find(ranks);
    if (it == names_.end()) it = names_.emplace(ranks, fmt::format("{}_{}", prefix, count_[prefix]++)).first;
    return it->second;
  }
  nlohmann::json json() const {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [ranks, name] : names_) j[name] = ranks;
    return j;
  }
  long long size() const { return static_cast<long long>(names_.size()); }

 private:
  std::map<std::vector<std::int32_t>, std::string> names_;
  std::map<std::string, int> count_;
};

}  // namespace acesim::chakra
