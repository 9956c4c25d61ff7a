// Grid files and their points (cli/sweep.h).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "cli/sweep.h"
#include "compute/in_situ.h"
#include "config/failure_model.h"
#include "config/input_error.h"
#include "config/platform.h"
#include "config/presets.h"
#include "config/yaml_reader.h"
#include "registry/quote.h"

namespace acesim::cli::sweep {
namespace {

// YAML as JSON: scalars keep their text (the command line's), nulls are null.
nlohmann::json to_json(const YAML::Node& n) {
  if (n.IsNull()) return nullptr;
  if (n.IsScalar()) return n.Scalar();
  if (n.IsSequence()) {
    nlohmann::json a = nlohmann::json::array();
    for (const YAML::Node& item : n) a.push_back(to_json(item));
    return a;
  }
  nlohmann::json o = nlohmann::json::object();
  for (auto it = n.begin(); it != n.end(); ++it) o[it->first.Scalar()] = to_json(it->second);
  return o;
}

YAML::Node to_yaml(const nlohmann::json& j) {
  if (j.is_null()) return YAML::Node(YAML::NodeType::Null);
  if (j.is_string()) return YAML::Node(j.get<std::string>());
  if (j.is_boolean()) return YAML::Node(j.get<bool>());
  if (j.is_number()) return YAML::Node(json_text(j));
  YAML::Node n;
  if (j.is_array()) {
    n = YAML::Node(YAML::NodeType::Sequence);
    for (const nlohmann::json& item : j) n.push_back(to_yaml(item));
  } else {
    n = YAML::Node(YAML::NodeType::Map);
    for (const auto& [k, v] : j.items()) n[k] = to_yaml(v);
  }
  return n;
}

// An option's name as the grid's identity keeps it: no dashes in front,
// '-' for '_' (platform keys are kept as written).
std::string setting_name(const std::string& name) {
  return name.find('.') != std::string::npos ? name : option_spelling(name);
}

std::vector<Axis> read_axes(const YAML::Node& map, const std::string& file, const std::string& section) {
  std::vector<Axis> axes;
  if (!map) return axes;
  if (!map.IsMap()) yaml::check_map(map, file, section, {});
  for (auto it = map.begin(); it != map.end(); ++it) {
    const std::string key = it->first.Scalar();
    const std::string path = section + "." + shortened(key);
    const YAML::Node values = it->second;
    if (!values.IsSequence()) throw_input_error(file, yaml::line_of(values), path, "expected a list of values, e.g. [1, 2]");
    if (values.size() == 0) throw_input_error(file, yaml::line_of(it->first), path, "empty axis (give at least one value)");
    Axis a{setting_name(key), {}};
    for (const YAML::Node& v : values) a.values.push_back(to_json(v));
    axes.push_back(std::move(a));
  }
  return axes;
}

// Sets `path` (dotted; numbers index lists) in `root` to `value`. Maps
// missing on the way are made (the platform reader refuses unknown keys);
// a list index must exist.
void set_path(YAML::Node root, const std::string& path, const nlohmann::json& value, const std::string& where) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    const std::size_t dot = path.find('.', start);
    parts.push_back(path.substr(start, dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  YAML::Node node = root;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    if (part.empty()) throw InputError(where + ": a dotted path with an empty part");
    const bool last = i + 1 == parts.size();
    if (node.IsSequence()) {
      char* end = nullptr;
      const long idx = std::strtol(part.c_str(), &end, 10);
      if (*end != '\0' || idx < 0 || static_cast<std::size_t>(idx) >= node.size()) {
        throw InputError(where + ": " + quote(part) + " is not an index of the platform's list (0.." +
                         std::to_string(static_cast<long>(node.size()) - 1) + ")");
      }
      if (last) {
        node[static_cast<std::size_t>(idx)] = to_yaml(value);
      } else {
        node.reset(node[static_cast<std::size_t>(idx)]);
      }
    } else if (node.IsMap() || node.IsNull()) {
      if (last) {
        node[part] = to_yaml(value);
      } else {
        if (!node[part]) node[part] = YAML::Node(YAML::NodeType::Map);
        node.reset(node[part]);
      }
    } else {
      throw InputError(where + ": the platform's " + quote(parts[i - 1]) + " is a value, not a map or list");
    }
  }
}

namespace fs = std::filesystem;

// A fingerprint of a file's bytes: std::hash of each MiB, combined, and
// the size; "missing" when it cannot be read. (Streamed, not read whole: a
// trace may be larger than any input file read_text_file takes.)
std::string fingerprint(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return "missing";
  std::ifstream f(path, std::ios::binary);
  if (!f) return "missing";
  std::uint64_t h = 0;
  std::uint64_t size = 0;
  std::string chunk(1 << 20, '\0');
  while (f.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || f.gcount() > 0) {
    const auto n = static_cast<std::size_t>(f.gcount());
    h = h * 1099511628211ULL ^ std::hash<std::string_view>{}(std::string_view(chunk.data(), n));
    size += n;
  }
  return fmt::format("{:016x} {} bytes", h, size);
}

// The files of `folder` whose names `take` accepts, as one fingerprint:
// each name with its own, in name order.
template <typename Take>
std::string files_fingerprint(const fs::path& folder, Take take) {
  std::error_code ec;
  std::vector<std::string> names;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string n = it->path().filename().string();
    if (take(n)) names.push_back(n);
  }
  if (names.empty()) return "missing";
  std::sort(names.begin(), names.end());
  std::string all;
  for (const std::string& n : names) all += n + " " + fingerprint(folder / n) + "\n";
  return fmt::format("{} files, {:016x}", names.size(), std::hash<std::string>{}(all));
}

// The files of a Chakra prefix (PREFIX.<rank>.et), as one fingerprint.
std::string prefix_fingerprint(const fs::path& prefix) {
  const fs::path folder = prefix.has_parent_path() ? prefix.parent_path() : fs::path(".");
  const std::string stem = prefix.filename().string() + ".";
  return files_fingerprint(folder, [&](const std::string& n) { return n.starts_with(stem) && n.ends_with(".et"); });
}

// A file, or every file of a directory (not below it).
std::string file_or_dir_fingerprint(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return fingerprint(path);
  return files_fingerprint(path, [&](const std::string& n) { return fs::is_regular_file(path / n, ec); });
}

std::string fingerprint(const fs::path& path, InputKind kind) {
  switch (kind) {
    case InputKind::kPrefix: return prefix_fingerprint(path);
    case InputKind::kFileOrDir: return file_or_dir_fingerprint(path);
    default: return fingerprint(path);
  }
}

bool model_file(const std::string& v) { return v.ends_with(".yaml") || v.ends_with(".yml"); }

bool failures_file(const std::string& v) {
  const std::vector<std::string> builtins = failure_model_names();
  return std::find(builtins.begin(), builtins.end(), v) == builtins.end();
}

// The shipped calibration is named, not a file beside the grid.
bool calibration_file(const std::string& v) { return v != kPublishedRunsCalibration; }

// The workload file a platform's YAML text names (`workload.file`, or a
// model file as `workload.model`), or "".
std::pair<std::string, std::string> platform_workload(const std::string& text) {
  try {
    const YAML::Node root = YAML::Load(text);
    const YAML::Node w = root.IsMap() ? root["workload"] : YAML::Node();
    if (!w || !w.IsMap()) return {};
    if (w["file"] && w["file"].IsScalar()) return {"workload.file", w["file"].Scalar()};
    if (w["model"] && w["model"].IsScalar() && model_file(w["model"].Scalar())) return {"workload.model", w["model"].Scalar()};
  } catch (const YAML::Exception&) {
  }
  return {};
}

}  // namespace

const std::vector<InputOption>& input_options() {
  static const std::vector<InputOption> options{
      {"platform", InputKind::kFile},  // or a preset's name, when no such file is beside the grid
      {"network", InputKind::kFile},
      {"system", InputKind::kFile},
      {"workload", InputKind::kFile},
      {"chakra", InputKind::kPrefix},
      {"chakra-groups", InputKind::kFile},
      {"kineto", InputKind::kFileOrDir},
      {"model", InputKind::kFile, model_file},
      {"kernel-times", InputKind::kFile},
      {"calibration", InputKind::kFile, calibration_file},
      {"failures", InputKind::kFile, failures_file},
      {"file", InputKind::kCluster},
  };
  return options;
}

const std::vector<std::string_view>& output_options() {
  static const std::vector<std::string_view> options{"csv", "trace", "chakra-out"};
  return options;
}

InputKind input_kind(const std::string& name, const nlohmann::json& value) {
  if (!value.is_string() || value.get_ref<const std::string&>().empty()) return InputKind::kNone;
  const std::string n = option_spelling(name);
  for (const InputOption& o : input_options()) {
    if (o.name != n) continue;
    if (o.names_file != nullptr && !o.names_file(value.get<std::string>())) return InputKind::kNone;
    return o.kind;
  }
  return InputKind::kNone;
}

std::string json_text(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string value_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  if (v.is_array()) {
    std::string s;
    for (const nlohmann::json& item : v) s += (s.empty() ? "" : ",") + value_text(item);
    return s;
  }
  return json_text(v);
}

std::size_t Grid::points() const {
  // Saturating at kMaxPoints + 1, which parse_grid() refuses: twenty axes of
  // ten values would overflow.
  std::size_t n = 1;
  auto times = [&n](std::size_t k) { n = k != 0 && n > (kMaxPoints + 1) / k ? kMaxPoints + 1 : n * k; };
  for (const Axis& a : grid) times(a.values.size());
  if (!zip.empty()) times(zip.front().values.size());
  return n;
}

std::vector<std::string> Grid::axis_names() const {
  std::vector<std::string> names;
  for (const Axis& a : grid) names.push_back(a.name);
  for (const Axis& a : zip) names.push_back(a.name);
  return names;
}

nlohmann::json Grid::identity() const {
  auto axes = [](const std::vector<Axis>& list) {
    nlohmann::json a = nlohmann::json::array();
    for (const Axis& x : list) a.push_back({x.name, x.values});
    return a;
  };
  nlohmann::json opts = nlohmann::json::array();
  for (const Setting& s : options) opts.push_back({s.name, s.value});
  return {{"command", command}, {"options", opts}, {"grid", axes(grid)}, {"zip", axes(zip)}};
}

Grid parse_grid(std::string_view yaml_text, const std::string& source) {
  const YAML::Node root = yaml::parse(yaml_text, source);
  yaml::check_map(root, source, "", {"command", "options", "grid", "zip"});
  yaml::require(root, "command", source, "");
  Grid g;
  g.source = source;
  g.folder = fs::path(source).parent_path().string();
  g.command = yaml::scalar(root["command"], source, "command");
  if (const YAML::Node opts = root["options"]) {
    if (!opts.IsNull()) {
      if (!opts.IsMap()) yaml::check_map(opts, source, "options", {});
      for (auto it = opts.begin(); it != opts.end(); ++it) {
        g.options.push_back({setting_name(it->first.Scalar()), to_json(it->second)});
      }
    }
  }
  g.grid = read_axes(root["grid"], source, "grid");
  g.zip = read_axes(root["zip"], source, "zip");
  for (const Axis& a : g.zip) {
    if (a.values.size() != g.zip.front().values.size()) {
      throw_input_error(source, yaml::line_of(root["zip"]), "zip",
                        "lists of different lengths (" + shortened(g.zip.front().name) + ": " + std::to_string(g.zip.front().values.size()) +
                            ", " + shortened(a.name) + ": " + std::to_string(a.values.size()) + "); zip advances them together");
    }
  }
  std::set<std::string> seen;
  auto once = [&](const std::string& name, const char* section) {
    if (!seen.insert(name).second) {
      throw_input_error(source, 0, std::string(section) + "." + shortened(name), "given twice (in options, grid or zip)");
    }
  };
  for (const Setting& s : g.options) once(s.name, "options");
  for (const Axis& a : g.grid) once(a.name, "grid");
  for (const Axis& a : g.zip) once(a.name, "zip");
  if (g.points() > kMaxPoints) throw_input_error(source, 0, "", "more than 100,000,000 points (split it into several grids)");
  return g;
}

Grid load_grid(const std::string& path) { return parse_grid(read_text_file(path), path); }

Plan::Plan(Grid grid) : grid_(std::move(grid)) {
  const std::string& src = grid_.source;
  try {
    command_ = register_command(grid_.command);
  } catch (const InputError& e) {
    throw InputError(src + ": command: " + e.what());
  }
  size_ = grid_.points();
  for (const Axis& a : grid_.grid) radix_.push_back(a.values.size());
  if (!grid_.zip.empty()) radix_.push_back(grid_.zip.front().values.size());

  // Every option name and value, and which base platforms the points use.
  std::vector<nlohmann::json> bases;
  bool astra = false;
  bool keys = false;
  auto check = [&](const std::string& section, const std::string& name, const nlohmann::json& value) {
    const std::string where = src + ": " + section + "." + shortened(name);
    if (name.find('.') != std::string::npos) {
      // No platform key is near this long; one that is would cost the YAML
      // reader seconds per megabyte before it was refused.
      if (name.size() > 256) throw InputError(where + ": not a platform key (" + std::to_string(name.size()) + " bytes long)");
      keys = true;
      return;
    }
    if (name == "platform") {
      if (!value.is_null() && !value.is_string() && !value.is_object()) {
        throw InputError(where + ": a platform file, a preset's name or a map (the platform YAML itself), not a list");
      }
      bases.push_back(value);
      if (value.is_object()) return;  // a platform written inline
    }
    // Files a run writes would be written over by every point.
    const std::vector<std::string_view>& outputs = output_options();
    if (size_ > 1 && !value.is_null() && std::find(outputs.begin(), outputs.end(), option_spelling(name)) != outputs.end()) {
      throw InputError(where + ": --" + name + " writes files, which every point would write over; run the point you want "
                       "them for as a command");
    }
    option_arguments(*command_.command, name, value, where);
    if ((name == "network" || name == "system") && !value.is_null()) astra = true;
  };
  for_each_value(check);
  if (!keys) return;
  if (astra) throw InputError(src + ": platform keys need an acesim platform (--platform), not --network/--system");
  if (bases.empty()) bases.push_back(nullptr);
  // Each key, with its first value, in each base platform: a key the
  // platform format does not know is refused now; a bad value is the
  // point's error.
  std::vector<Setting> first;
  for (const Setting& s : grid_.options) {
    if (s.platform_key()) first.push_back(s);
  }
  for (const std::vector<Axis>* list : {&grid_.grid, &grid_.zip}) {
    for (const Axis& a : *list) {
      if (!a.platform_key()) continue;
      // Its first value that sets it (null leaves the key as it is).
      const auto v = std::find_if(a.values.begin(), a.values.end(), [](const nlohmann::json& x) { return !x.is_null(); });
      if (v != a.values.end()) first.push_back({a.name, *v});
    }
  }
  refuse_nodes_with_npus(bases);
  for (const nlohmann::json& base : bases) {
    PlatformText platform;
    try {
      // A platform the reader refuses by itself is each point's error, as
      // on the command line; the keys are checked in the others.
      if (platform_text(base, {}).parsed == nullptr) continue;
      platform = platform_text(base, first);
    } catch (const InputError& e) {  // no such platform, or no place for a key
      throw InputError(src + ": " + e.what());
    }
    try {
      if (platform.parsed == nullptr) parse_platform_yaml(platform.yaml, platform.source, platform.folder);
    } catch (const UnknownKeyError& e) {
      throw InputError(src + ": platform key: " + e.what());
    } catch (const InputError&) {
      // A value the platform refuses: that point's error.
    }
  }
}

void Plan::for_each_value(const std::function<void(const std::string&, const std::string&, const nlohmann::json&)>& f) const {
  for (const Setting& s : grid_.options) f("options", s.name, s.value);
  for (const Axis& a : grid_.grid) {
    for (const nlohmann::json& v : a.values) f("grid", a.name, v);
  }
  for (const Axis& a : grid_.zip) {
    for (const nlohmann::json& v : a.values) f("zip", a.name, v);
  }
}

void Plan::refuse_nodes_with_npus(const std::vector<nlohmann::json>& bases) const {
  // --nodes sets the NPUs of the platform's `nodes: true` dimension, over
  // whatever topology.K.npus set there: one of the two columns would not
  // be what the point ran.
  std::map<std::string, std::string> set;  // name -> where, for names set to a value somewhere
  for_each_value([&](const std::string& section, const std::string& name, const nlohmann::json& v) {
    if (!v.is_null()) set.emplace(name, section + "." + name);
  });
  if (!set.count("nodes")) return;
  for (const auto& [name, where] : set) {
    if (!name.starts_with("topology.") || !name.ends_with(".npus")) continue;
    const std::string k = name.substr(9, name.size() - 9 - 5);
    if (k.empty() || !std::all_of(k.begin(), k.end(), [](char c) { return c >= '0' && c <= '9'; }) || k.size() > 6) continue;
    for (const nlohmann::json& base : bases) {
      PlatformText p;
      try {
        p = platform_text(base, {});
      } catch (const InputError&) {
        continue;  // refused below, or each point's error
      }
      if (p.parsed != nullptr && p.parsed->nodes_dim == std::stoi(k)) {
        throw InputError(grid_.source + ": " + set.at("nodes") + " and " + where + " both set the NPUs of " + p.source +
                         "'s nodes dimension (topology." + k + ", `nodes: true`), and --nodes wins: sweep one of them");
      }
    }
  }
}

nlohmann::json Plan::resolved(const std::string& name, const nlohmann::json& value) const {
  if (input_kind(name, value) == InputKind::kNone) return value;
  const std::string v = value.get<std::string>();
  if (grid_.folder.empty() || v.empty() || fs::path(v).is_absolute()) return value;
  const fs::path in_folder = fs::path(grid_.folder) / v;
  std::error_code ec;
  if (name == "platform" && !fs::is_regular_file(in_folder, ec) && preset_registry().find(v) != nullptr) return value;
  return in_folder.string();
}

std::vector<std::string> Plan::cluster_files(const std::string& path) const {
  {
    const std::lock_guard<std::mutex> lock(mu_);
    if (auto it = cluster_files_.find(path); it != cluster_files_.end()) return it->second;
  }
  // The cluster reader names each file as it meets it (api::read_cluster),
  // so the list is what a point reads, up to where the point would fail.
  std::vector<std::string> named;
  try {
    (void)api::read_cluster(path, read_text_file(path), &named);
  } catch (...) {
  }
  const std::lock_guard<std::mutex> lock(mu_);
  return cluster_files_.emplace(path, std::move(named)).first->second;
}

std::vector<Plan::InputFile> Plan::files(const std::vector<Setting>& settings) const {
  std::vector<InputFile> out;
  nlohmann::json base;
  std::string workload_file;
  for (const Setting& s : settings) {
    if (s.name == "platform") base = s.value;
    if (s.name == "workload.file" && !s.value.is_null()) workload_file = value_text(s.value);
    const InputKind kind = input_kind(s.name, s.value);
    if (kind == InputKind::kNone) continue;
    const std::string name = s.name + ": " + s.value.get<std::string>();
    const std::string path = resolved(s.name, s.value).get<std::string>();
    out.push_back({name, path, kind});
    if (kind != InputKind::kCluster) continue;
    // The files it names, by their names in it: read_cluster() gives each
    // as found beside it (its folder, "/", the name), or as named when absolute.
    const std::string folder = fs::path(path).parent_path().string();
    for (const std::string& f : cluster_files(path)) {
      const std::string as_named = !folder.empty() && f.starts_with(folder + "/") ? f.substr(folder.size() + 1) : f;
      std::error_code ec;
      const InputKind k = fs::is_regular_file(f, ec) ? InputKind::kFile
                          : fs::is_directory(f, ec)  ? InputKind::kFileOrDir
                                                     : InputKind::kPrefix;  // a Chakra prefix, or missing
      out.push_back({name + ": " + as_named, f, k});
    }
  }
  // The workload file the point's platform names, relative to its folder.
  std::string text;
  std::string folder = grid_.folder;
  std::string name = "inline platform";
  if (base.is_object()) {
    text = json_text(base);
  } else {
    try {
      std::string source;
      text = base.is_string() ? platform_yaml(resolved("platform", base).get<std::string>(), source) : std::string(default_platform_yaml());
      folder = base.is_string() ? fs::path(source).parent_path().string() : "presets";
      name = base.is_string() ? "platform: " + base.get<std::string>() : "default platform";
    } catch (const InputError&) {
      return out;  // no such platform: the point's error
    }
  }
  auto [key, file] = workload_file.empty() ? platform_workload(text) : std::pair<std::string, std::string>{"workload.file", workload_file};
  if (key.empty()) return out;
  const std::string path = key == "workload.file" && fs::path(file).is_relative() ? (fs::path(folder) / file).string() : file;
  out.push_back({name + ": " + key + " " + file, path, InputKind::kFile});
  return out;
}

std::map<std::string, std::string> Plan::inputs() const {
  std::map<std::string, std::string> out;
  auto take = [&](const std::vector<Setting>& s) {
    for (const InputFile& f : files(s)) {
      if (!out.count(f.name)) out[f.name] = fingerprint(f.path, f.kind);
    }
  };
  // The platforms, each with every workload.file a key sets in it; every
  // other file on its own.
  std::vector<nlohmann::json> bases;
  std::vector<nlohmann::json> workload_files;
  for_each_value([&](const std::string&, const std::string& name, const nlohmann::json& v) {
    if (name == "platform") {
      bases.push_back(v);
    } else if (name == "workload.file") {
      workload_files.push_back(v);
    } else if (input_kind(name, v) != InputKind::kNone) {
      take({{name, v}});
    }
  });
  if (bases.empty()) bases.push_back(nullptr);
  if (workload_files.empty()) workload_files.push_back(nullptr);
  for (const nlohmann::json& b : bases) {
    for (const nlohmann::json& w : workload_files) take({{"platform", b}, {"workload.file", w}});
  }
  return out;
}

bool Plan::reads_any(std::size_t index, const std::set<std::string>& names) const {
  for (const InputFile& f : files(settings(index))) {
    if (names.count(f.name)) return true;
  }
  return false;
}

std::vector<Setting> Plan::settings(std::size_t index) const {
  std::vector<std::size_t> digit(radix_.size());
  for (std::size_t k = radix_.size(); k-- > 0;) {
    digit[k] = index % radix_[k];
    index /= radix_[k];
  }
  std::vector<Setting> out = grid_.options;
  for (std::size_t k = 0; k < grid_.grid.size(); ++k) out.push_back({grid_.grid[k].name, grid_.grid[k].values[digit[k]]});
  for (const Axis& a : grid_.zip) out.push_back({a.name, a.values[digit.back()]});
  return out;
}

nlohmann::json Plan::params(std::size_t index) const {
  nlohmann::json p = nlohmann::json::object();
  const std::vector<Setting> all = settings(index);
  for (std::size_t i = grid_.options.size(); i < all.size(); ++i) p[all[i].name] = all[i].value;
  return p;
}

PlatformText Plan::platform_text(const nlohmann::json& base, const std::vector<Setting>& all_keys) const {
  // A key set to null is left as the platform has it.
  std::vector<Setting> keys;
  for (const Setting& k : all_keys) {
    if (!k.value.is_null()) keys.push_back(k);
  }
  std::string id = json_text(base);
  for (const Setting& k : keys) id += "\n" + k.name + "=" + json_text(k.value);
  {
    const std::lock_guard<std::mutex> lock(mu_);
    if (auto it = platforms_.find(id); it != platforms_.end()) return it->second;
  }
  std::string source;
  std::string text;
  if (base.is_null()) {
    source = "presets/default.yaml";
    text = std::string(default_platform_yaml());
  } else if (base.is_object()) {
    source = "inline platform";
    text = json_text(base);  // JSON is YAML
  } else {
    const std::string name = resolved("platform", base).get<std::string>();
    std::error_code ec;
    if (!std::filesystem::is_regular_file(name, ec) && preset_registry().find(name) == nullptr) {
      throw InputError("platform: no file '" + name + "' and " + preset_registry().unknown(base.get<std::string>()));
    }
    text = platform_yaml(name, source);
  }
  // Paths in it stay relative to the file's folder (the grid's for a
  // platform written inline).
  PlatformText result{text, source, base.is_object() ? grid_.folder : std::filesystem::path(source).parent_path().string(), nullptr};
  if (!keys.empty()) {
    YAML::Node root = yaml::parse(text, source);
    std::string with;
    for (const Setting& k : keys) {
      set_path(root, k.name, k.value, shortened(k.name));
      with += (with.empty() ? " with " : "; ") + k.name + "=" + value_text(k.value);
    }
    YAML::Emitter out;
    out << root;
    result.yaml = out.c_str();
    result.source = source + with;
  }
  // Read once for every point that uses it; a platform the reader refuses
  // goes to each point as text, to fail where the command line would.
  try {
    result.parsed = std::make_shared<const PlatformConfig>(parse_platform_yaml(result.yaml, result.source, result.folder));
  } catch (const InputError&) {
  }
  const std::lock_guard<std::mutex> lock(mu_);
  platforms_.emplace(id, result);
  return result;
}

Invocation Plan::invocation(std::size_t index) const {
  const std::vector<Setting> all = settings(index);
  std::vector<Setting> keys;
  nlohmann::json base;
  for (const Setting& s : all) {
    if (s.platform_key() && !s.value.is_null()) keys.push_back(s);
    if (s.name == "platform") base = s.value;
  }
  // The platform goes as its text (and as read, once for all points), not
  // as --platform: always when keys change it or it is written inline; a
  // file or preset the same way unless it cannot be read, which the
  // command then reports as the command line would.
  bool as_text = !keys.empty() || base.is_object();
  PlatformText platform;
  if (as_text) {
    platform = platform_text(base, keys);
  } else if (base.is_string()) {
    try {
      platform = platform_text(base, keys);
      as_text = true;
    } catch (const InputError&) {
    }
  }
  Invocation inv;
  inv.args.push_back(grid_.command);
  for (const Setting& s : all) {
    if (s.platform_key() || (as_text && s.name == "platform")) continue;
    for (std::string& a : option_arguments(*command_.command, s.name, resolved(s.name, s.value), grid_.source + ": " + shortened(s.name))) {
      inv.args.push_back(std::move(a));
    }
  }
  if (as_text) {
    inv.platform = platform;
  }
  return inv;
}

nlohmann::json run_point(const Plan& plan, std::size_t index) {
  nlohmann::json record{{"point", index}, {"params", plan.params(index)}};
  try {
    CommandReport r = invoke(plan.invocation(index));
    record["result"] = std::move(r.json);
    if (!r.warnings.empty()) record["warnings"] = r.warnings;
  } catch (...) {
    const CommandError e = current_error();
    record["error"] = e.internal ? "internal error: " + e.message : e.message;
    record["status"] = e.status;
  }
  return record;
}

Shard parse_shard(const std::string& text) {
  const std::size_t slash = text.find('/');
  auto number = [&](const std::string& s, unsigned long long& v) {
    char* end = nullptr;
    v = std::strtoull(s.c_str(), &end, 10);
    return !s.empty() && *end == '\0' && s[0] != '-' && s[0] != '+' && v <= 1'000'000;
  };
  unsigned long long i = 0;
  unsigned long long n = 0;
  if (slash == std::string::npos || !number(text.substr(0, slash), i) || !number(text.substr(slash + 1), n) || n == 0) {
    throw InputError("--shard: " + quote(text) + " is not I/N (e.g. 0/4: every 4th point from point 0)");
  }
  if (i >= n) throw InputError("--shard: " + quote(text) + ": I must be below N (shards 0/" + std::to_string(n) + " .. " +
                               std::to_string(n - 1) + "/" + std::to_string(n) + ")");
  return {i, n};
}

}  // namespace acesim::cli::sweep
