// Failure models (failure_model.h): built-ins embedded from
// presets/failures/, or a user's YAML file.
#include "config/failure_model.h"

#include <filesystem>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "config/embedded.h"
#include "config/input_error.h"
#include "config/platform.h"
#include "config/yaml_reader.h"
#include "registry/registry.h"

namespace acesim {
namespace {

struct Builtin {
  const char* name;
  const char* file;
};
// `default` is the first one's alias.
constexpr Builtin kBuiltins[] = {
    {"meta-llama3", "presets/failures/meta-llama3.yaml"},
};

// A rate or a bandwidth: finite, in [lo, hi].
double ranged(const YAML::Node& n, const std::string& file, const std::string& path, double lo, double hi, bool lo_open) {
  const double v = yaml::number(n, file, path);
  if (v < lo || (lo_open && v == lo) || v > hi) {
    throw_input_error(file, yaml::line_of(n), path,
                      fmt::format("must be {} {:g} and at most {:g}, got {}", lo_open ? "above" : "at least", lo, hi, yaml::scalar(n, file, path)));
  }
  return v;
}

FailureClass parse_class(const YAML::Node& n, const std::string& file, const std::string& path) {
  const std::string s = yaml::scalar(n, file, path);
  for (int c = 0; c < kFailureClasses; ++c) {
    if (s == kFailureClassNames[static_cast<std::size_t>(c)]) return static_cast<FailureClass>(c);
  }
  const std::vector<std::string> names(kFailureClassNames.begin(), kFailureClassNames.end());
  throw_input_error(file, yaml::line_of(n), path, "unknown class '" + s + "'" + suggestion(s, names));
}

// Counts and component numbers are bounded so that their products stay exact.
constexpr double kMaxRate = 1e6;        // failures per component per 1000 days: one every 86 ms
constexpr long long kMaxCount = 1'000'000'000;
constexpr double kMaxGBps = 1e9;
constexpr double kMaxMinutes = 1e7;     // 19 years
constexpr double kMaxPlannedPerDay = 1e4;  // one every 8.6 s

void read_observed(const YAML::Node& o, const std::string& file, FailureModel& m) {
  const std::string p = "observed";
  yaml::check_map(o, file, p, {"days", "gpus", "nodes", "nics", "links", "causes", "planned"});
  yaml::require(o, "days", file, p);
  yaml::require(o, "causes", file, p);
  m.observed_days = ranged(o["days"], file, p + ".days", 0.0, 1e6, true);
  for (int c = 0; c < kFailureClasses; ++c) {
    const std::string key = std::string(kFailureClassNames[static_cast<std::size_t>(c)]) + "s";
    if (!o[key]) continue;
    const long long v = yaml::integer(o[key], file, p + "." + key);
    if (v < 1 || v > kMaxCount) {
      throw_input_error(file, yaml::line_of(o[key]), p + "." + key, fmt::format("must be in 1..{}, got {}", kMaxCount, v));
    }
    m.observed_components[static_cast<std::size_t>(c)] = v;
  }
  if (o["planned"]) {
    m.observed_planned = yaml::integer(o["planned"], file, p + ".planned");
    if (m.observed_planned < 0 || m.observed_planned > kMaxCount) {
      throw_input_error(file, yaml::line_of(o["planned"]), p + ".planned", fmt::format("must be in 0..{}, got {}", kMaxCount, m.observed_planned));
    }
    m.planned_per_day = static_cast<double>(m.observed_planned) / m.observed_days;
    if (m.planned_per_day > kMaxPlannedPerDay) {
      throw_input_error(file, yaml::line_of(o["planned"]), p + ".planned",
                        fmt::format("{} in {:g} days is {:.3g} a day; at most {:g}", m.observed_planned, m.observed_days, m.planned_per_day, kMaxPlannedPerDay));
    }
  }
  const YAML::Node causes = o["causes"];
  if (!causes.IsSequence() || causes.size() == 0) {
    throw_input_error(file, yaml::line_of(causes), p + ".causes", "expected a list of {cause, class, count}");
  }
  std::array<long long, kFailureClasses> counts{};
  for (std::size_t i = 0; i < causes.size(); ++i) {
    const std::string q = fmt::format("{}.causes[{}]", p, i);
    const YAML::Node c = causes[i];
    yaml::check_map(c, file, q, {"cause", "class", "count"});
    for (const char* k : {"cause", "class", "count"}) yaml::require(c, k, file, q);
    FailureCause fc;
    fc.cause = yaml::scalar(c["cause"], file, q + ".cause");
    fc.cls = parse_class(c["class"], file, q + ".class");
    fc.count = yaml::integer(c["count"], file, q + ".count");
    if (fc.count < 0 || fc.count > kMaxCount) {
      throw_input_error(file, yaml::line_of(c["count"]), q + ".count", fmt::format("must be in 0..{}, got {}", kMaxCount, fc.count));
    }
    const auto k = static_cast<std::size_t>(fc.cls);
    if (m.observed_components[k] == 0) {
      throw_input_error(file, yaml::line_of(c["class"]), q + ".class",
                        fmt::format("observed.{}s is not given: the {} rate needs how many there were", kFailureClassNames[k],
                                    kFailureClassNames[k]));
    }
    counts[k] += fc.count;
    m.causes.push_back(fc);
  }
  for (std::size_t c = 0; c < counts.size(); ++c) {
    if (m.observed_components[c] > 0) {
      m.per_1000_days[c] = 1000.0 * static_cast<double>(counts[c]) / (static_cast<double>(m.observed_components[c]) * m.observed_days);
    }
  }
}

// The line of `key` itself in `map` (a block map's value starts a line later).
int key_line(const YAML::Node& map, const std::string& key) {
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (it->first.Scalar() == key) return yaml::line_of(it->first);
  }
  return 0;
}

}  // namespace

std::vector<std::string> failure_model_names() {
  std::vector<std::string> names = {"default"};
  for (const Builtin& b : kBuiltins) names.emplace_back(b.name);
  return names;
}

FailureModel parse_failure_model(const std::string& yaml_text, const std::string& file) {
  const YAML::Node root = yaml::parse(yaml_text, file);
  yaml::check_map(root, file, "", {"name", "source", "failures_per_1000_days", "observed", "planned_per_day", "storage", "restart", "checkpoint"});
  FailureModel m;
  m.file = file;
  m.name = root["name"] ? yaml::scalar(root["name"], file, "name") : file;
  if (const std::string why = name_problem(m.name); root["name"] && !why.empty()) throw_input_error(file, yaml::line_of(root["name"]), "name", why);
  if (root["source"]) m.source = yaml::scalar(root["source"], file, "source");
  const YAML::Node direct = root["failures_per_1000_days"];
  const YAML::Node observed = root["observed"];
  if (direct && observed) {
    throw_input_error(file, yaml::line_of(observed), "observed", "give the rates either as failures_per_1000_days or as observed counts, not both");
  }
  if (!direct && !observed) throw_input_error(file, 0, "", "no rates: give failures_per_1000_days or observed");
  if (direct) {
    m.rates_line = key_line(root, "failures_per_1000_days");
    std::vector<std::string> keys(kFailureClassNames.begin(), kFailureClassNames.end());
    yaml::check_map(direct, file, "failures_per_1000_days", keys);
    for (int c = 0; c < kFailureClasses; ++c) {
      const char* k = kFailureClassNames[static_cast<std::size_t>(c)];
      if (direct[k]) m.per_1000_days[static_cast<std::size_t>(c)] = ranged(direct[k], file, std::string("failures_per_1000_days.") + k, 0.0, kMaxRate, false);
    }
  } else {
    m.rates_line = key_line(root, "observed");
    read_observed(observed, file, m);
  }
  if (const YAML::Node planned = root["planned_per_day"]) {
    if (m.observed_planned >= 0) {
      throw_input_error(file, yaml::line_of(planned), "planned_per_day", "observed.planned gives it already; give one of them");
    }
    m.planned_per_day = ranged(planned, file, "planned_per_day", 0.0, kMaxPlannedPerDay, false);
  }
  const YAML::Node storage = root["storage"];
  yaml::require(root, "storage", file, "");
  yaml::check_map(storage, file, "storage", {"write_GBps", "read_GBps"});
  yaml::require(storage, "write_GBps", file, "storage");
  m.write_GBps = ranged(storage["write_GBps"], file, "storage.write_GBps", 0.0, kMaxGBps, true);
  m.read_GBps = storage["read_GBps"] ? ranged(storage["read_GBps"], file, "storage.read_GBps", 0.0, kMaxGBps, true) : m.write_GBps;
  const YAML::Node restart = root["restart"];
  yaml::require(root, "restart", file, "");
  yaml::check_map(restart, file, "restart", {"requeue_minutes", "init_minutes"});
  yaml::require(restart, "requeue_minutes", file, "restart");
  yaml::require(restart, "init_minutes", file, "restart");
  m.requeue_minutes = ranged(restart["requeue_minutes"], file, "restart.requeue_minutes", 0.0, kMaxMinutes, false);
  m.init_minutes = ranged(restart["init_minutes"], file, "restart.init_minutes", 0.0, kMaxMinutes, false);
  if (const YAML::Node ck = root["checkpoint"]) {
    yaml::check_map(ck, file, "checkpoint", {"size_GB", "async"});
    if (ck["size_GB"]) m.checkpoint_GB = ranged(ck["size_GB"], file, "checkpoint.size_GB", 0.0, 1e9, true);
    if (ck["async"]) {
      const std::string a = yaml::scalar(ck["async"], file, "checkpoint.async");
      if (a != "true" && a != "false") throw_input_error(file, yaml::line_of(ck["async"]), "checkpoint.async", "expected true or false, got '" + a + "'");
      m.async = a == "true";
    }
  }
  return m;
}

FailureModel load_failure_model(const std::string& name_or_file) {
  const std::string name = name_or_file == "default" ? kBuiltins[0].name : name_or_file;
  for (const Builtin& b : kBuiltins) {
    if (name == b.name) return parse_failure_model(std::string(embedded_file(b.file)), b.file);
  }
  std::error_code ec;
  if (!std::filesystem::exists(name_or_file, ec)) {
    throw InputError("--failures: '" + name_or_file + "' is neither a file nor a built-in failure model" +
                     suggestion(name_or_file, failure_model_names()) + "; the built-ins: " + join_names(failure_model_names()));
  }
  std::string text;
  try {
    text = read_text_file(name_or_file);
  } catch (const InputError& e) {
    throw InputError(std::string("--failures: ") + e.what());
  }
  return parse_failure_model(text, name_or_file);
}

}  // namespace acesim
