#include "report/trace_merge.h"

#include <map>

namespace acesim {

nlohmann::json merge_traces(const std::vector<std::pair<std::string, nlohmann::json>>& labelled) {
  if (labelled.size() == 1) return labelled.front().second;
  nlohmann::json events = nlohmann::json::array();
  nlohmann::json merged = nlohmann::json::object();
  long long next_pid = 0;
  for (const auto& [label, trace] : labelled) {
    for (const auto& [key, value] : trace.items()) {
      if (key != "traceEvents" && !merged.contains(key)) merged[key] = value;
    }
    // This trace's pids in the order they first appear, each a new pid.
    std::map<long long, long long> pids;
    std::map<long long, bool> named;
    const auto pid_of = [&](const nlohmann::json& e) {
      const long long old = e.value("pid", 0LL);
      const auto [it, fresh] = pids.try_emplace(old, next_pid);
      if (fresh) ++next_pid;
      return it->second;
    };
    for (const nlohmann::json& e : trace.at("traceEvents")) {
      nlohmann::json out = e;
      if (e.contains("pid")) {
        const long long pid = pid_of(e);
        out["pid"] = pid;
        if (e.value("ph", "") == "M" && e.value("name", "") == "process_name") {
          out["args"]["name"] = label + ": " + e["args"].value("name", "");
          named[pid] = true;
        }
        if (e.value("ph", "") == "M" && e.value("name", "") == "process_sort_index") continue;  // set below, per run
      }
      if (e.contains("id") && e["id"].is_string()) out["id"] = label + ":" + e["id"].get<std::string>();
      events.push_back(std::move(out));
    }
    for (const auto& [old, pid] : pids) {
      if (!named.count(pid)) {
        events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"args", {{"name", label + ": process " + std::to_string(old)}}}});
      }
      events.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", pid}, {"args", {{"sort_index", pid}}}});
    }
  }
  merged["traceEvents"] = std::move(events);
  return merged;
}

}  // namespace acesim
