// A sweep's output directory (cli/sweep.h): sweep.json, results.jsonl,
// results.csv; resuming, and merging shards.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <unordered_map>

#include "cli/sweep.h"
#include "config/input_error.h"
#include "config/output_file.h"
#include "config/csv.h"

namespace acesim::cli::sweep {
namespace {

namespace fs = std::filesystem;

// The report's lists of rows: one row is the point's own; several are indexed.
bool row_list(const std::string& key) { return key == "results" || key == "runs" || key == "rows"; }

bool scalar(const nlohmann::json& j) { return !j.is_object() && !j.is_array(); }

void flatten(const nlohmann::json& j, const std::string& prefix, bool top, std::set<std::string>& seen,
             std::vector<std::pair<std::string, nlohmann::json>>& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      const std::string name = prefix.empty() ? k : prefix + "." + k;
      if (top && row_list(k) && v.is_array() && !v.empty() && v.front().is_object()) {
        if (v.size() == 1) {
          flatten(v.front(), prefix, false, seen, out);
        } else {
          for (std::size_t i = 0; i < v.size(); ++i) flatten(v[i], name + "." + std::to_string(i), false, seen, out);
        }
      } else {
        flatten(v, name, false, seen, out);
      }
    }
  } else if (j.is_array()) {
    // Lists of scalars are indexed; lists of records (layers, collectives)
    // stay in results.jsonl.
    if (!std::all_of(j.begin(), j.end(), scalar)) return;
    for (std::size_t i = 0; i < j.size(); ++i) flatten(j[i], prefix + "." + std::to_string(i), false, seen, out);
  } else if (seen.insert(prefix).second) {
    out.emplace_back(prefix, j);
  }
}

// Whole, or not at all: a sweep killed while writing leaves the file before.
void write_file(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".tmp";
  write_output_file(tmp.string(), text, "--out");
  fs::rename(tmp, path);
}

// The records of a results.jsonl; a line cut short (a sweep killed while
// writing) or not a record is left out.
std::map<std::size_t, nlohmann::json> read_records(const fs::path& path) {
  std::map<std::size_t, nlohmann::json> records;
  std::ifstream f(path);
  std::string line;
  while (std::getline(f, line)) {
    nlohmann::json r = nlohmann::json::parse(line, nullptr, false);
    if (r.is_discarded() || !r.is_object() || !r.contains("point") || !r["point"].is_number_unsigned()) continue;
    const std::size_t point = r["point"].get<std::size_t>();
    records.emplace(point, std::move(r));
  }
  return records;
}


std::vector<std::string> meta_axes(const nlohmann::json& meta) {
  std::vector<std::string> axes;
  for (const nlohmann::json& a : meta.at("axes")) axes.push_back(a.get<std::string>());
  return axes;
}

}  // namespace

std::vector<std::pair<std::string, nlohmann::json>> flatten_metrics(const nlohmann::json& report,
                                                                    const std::vector<std::string>& axes) {
  std::vector<std::pair<std::string, nlohmann::json>> out;
  std::set<std::string> seen;
  flatten(report, "", true, seen, out);
  for (auto& [name, value] : out) {
    if (std::find(axes.begin(), axes.end(), name) != axes.end()) name = "result." + name;
  }
  return out;
}

nlohmann::json sweep_meta(const Grid& grid, std::optional<Shard> shard) {
  return {{"acesim_sweep", 1},
          {"grid", grid.identity()},
          {"axes", grid.axis_names()},
          {"points", grid.points()},
          {"shard", shard ? nlohmann::json(shard->text()) : nlohmann::json(nullptr)}};
}

Output::Output(const std::string& dir, nlohmann::json meta, bool keep_records)
    : dir_(dir), meta_(std::move(meta)), keep_records_(keep_records || dir.empty()), axes_(meta_axes(meta_)), grid_points_(meta_.at("points").get<std::size_t>()) {
  if (meta_.at("shard").is_string()) shard_ = parse_shard(meta_["shard"].get<std::string>());
  if (dir_.empty()) return;  // in memory only
  create_output_directory(dir_, "--out");
  const fs::path meta_path = fs::path(dir_) / "sweep.json";
  if (fs::exists(meta_path)) {
    SweepDir existing = read_sweep_dir(dir_);
    if (existing.meta != meta_) {
      throw InputError("--out: " + dir_ + " holds another sweep (its grid or shard differ); give another --out, or remove it to start again");
    }
    for (auto& [point, r] : existing.records) {
      if (point >= grid_points_ || (shard_ && !shard_->owns(point))) {
        throw InputError(dir_ + "/results.jsonl: point " + std::to_string(point) + " is not a point of this sweep" +
                         (shard_ ? " (shard " + shard_->text() + ")" : ""));
      }
      std::string line = json_text(r) + "\n";
      keep(std::move(r), std::move(line));
    }
  } else if (fs::exists(fs::path(dir_) / "results.jsonl")) {
    throw InputError("--out: " + dir_ + " has results.jsonl but no sweep.json; give another --out");
  } else {
    write_file(meta_path, json_text(meta_, 2) + "\n");
  }
  // Again without a line a killed sweep may have cut short.
  finish_jsonl();
  jsonl_ = std::fopen((fs::path(dir_) / "results.jsonl").c_str(), "a");
  if (jsonl_ == nullptr) throw OutputError("--out: " + dir_ + "/results.jsonl: cannot open for writing: " + std::strerror(errno), 2);
}

Output::~Output() {
  if (jsonl_ != nullptr) std::fclose(jsonl_);
}

void Output::keep(nlohmann::json record, std::string line) {
  const std::size_t point = record.at("point").get<std::size_t>();
  Point p;
  p.line = std::move(line);
  const nlohmann::json& params = record.at("params");
  for (const std::string& a : axes_) p.params.push_back(params.contains(a) ? value_text(params.at(a)) : "");
  if (record.contains("result")) {
    for (auto& [name, value] : flatten_metrics(record.at("result"), axes_)) {
      const auto [it, added] = column_of_.emplace(name, columns_.size());
      if (added) columns_.push_back(name);
      p.metrics.emplace_back(it->second, value_text(value));
    }
  }
  if (record.contains("error")) {
    p.failed = true;
    p.error = record.at("error").get<std::string>();
  }
  if (keep_records_) p.record = std::move(record);
  points_.insert_or_assign(point, std::move(p));
}

std::size_t Output::errors() const {
  const std::lock_guard<std::mutex> lock(mu_);
  std::size_t n = 0;
  for (const auto& [point, p] : points_) n += p.failed ? 1 : 0;
  return n;
}

std::vector<nlohmann::json> Output::sorted_records() const {
  const std::lock_guard<std::mutex> lock(mu_);
  std::vector<nlohmann::json> out;
  for (const auto& [point, p] : points_) out.push_back(p.record);
  return out;
}

std::string Output::first_error() const {
  const std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [point, p] : points_) {
    if (p.failed) return "point " + std::to_string(point) + ": " + p.error;
  }
  return "";
}

void Output::add(nlohmann::json record) {
  std::string line = dir_.empty() ? std::string() : json_text(record) + "\n";
  const std::lock_guard<std::mutex> lock(mu_);
  if (jsonl_ != nullptr) {
    std::fputs(line.c_str(), jsonl_);
    std::fflush(jsonl_);
  }
  keep(std::move(record), std::move(line));
}

void Output::finish_jsonl() {
  std::string text;
  for (const auto& [point, p] : points_) text += p.line;
  write_file(fs::path(dir_) / "results.jsonl", text);
}

void Output::finish() {
  const std::lock_guard<std::mutex> lock(mu_);
  if (jsonl_ != nullptr) std::fclose(jsonl_);
  jsonl_ = nullptr;
  if (dir_.empty()) return;
  finish_jsonl();
  // results.csv: the metric columns in the order the points (sorted) meet them.
  std::vector<std::size_t> order;
  std::vector<std::size_t> position(columns_.size(), columns_.size());
  for (const auto& [point, p] : points_) {
    for (const auto& [c, text] : p.metrics) {
      if (position[c] == columns_.size()) {
        position[c] = order.size();
        order.push_back(c);
      }
    }
  }
  std::string out = "point";
  for (const std::string& a : axes_) out += "," + csv_field(a);
  for (const std::size_t c : order) out += "," + csv_field(columns_[c]);
  out += ",error\n";
  std::vector<const std::string*> cells(order.size());
  for (const auto& [point, p] : points_) {
    out += std::to_string(point);
    for (const std::string& v : p.params) out += "," + csv_field(v);
    std::fill(cells.begin(), cells.end(), nullptr);
    for (const auto& [c, text] : p.metrics) cells[position[c]] = &text;
    for (const std::string* cell : cells) {
      out += ',';
      if (cell != nullptr) out += csv_field(*cell);
    }
    out += "," + csv_field(p.error) + "\n";
  }
  write_file(fs::path(dir_) / "results.csv", out);
}

SweepDir read_sweep_dir(const std::string& dir) {
  const fs::path meta_path = fs::path(dir) / "sweep.json";
  std::ifstream f(meta_path);
  if (!f) throw InputError(dir + ": no sweep.json (not the --out directory of acesim sweep)");
  std::stringstream text;
  text << f.rdbuf();
  SweepDir d;
  d.meta = nlohmann::json::parse(text.str(), nullptr, false);
  if (d.meta.is_discarded() || !d.meta.is_object() || !d.meta.contains("grid") || !d.meta.contains("axes") ||
      !d.meta["axes"].is_array() || !d.meta.contains("points")) {
    throw InputError(meta_path.string() + ": not a sweep description (written by acesim sweep)");
  }
  for (const nlohmann::json& a : d.meta["axes"]) {
    if (!a.is_string()) throw InputError(meta_path.string() + ": axes: expected names");
  }
  d.records = read_records(fs::path(dir) / "results.jsonl");
  for (const auto& [point, r] : d.records) {
    if (!r.contains("params") || !r["params"].is_object() || (!r.contains("result") && !r.contains("error")) ||
        (r.contains("error") && !r["error"].is_string())) {
      throw InputError(dir + "/results.jsonl: point " + std::to_string(point) + ": not a sweep record");
    }
  }
  return d;
}

std::vector<std::size_t> merge(const std::vector<std::string>& dirs, const std::string& out) {
  if (dirs.empty()) throw InputError("sweep merge: no directories given");
  std::vector<SweepDir> parts;
  for (const std::string& d : dirs) parts.push_back(read_sweep_dir(d));
  nlohmann::json meta = parts.front().meta;
  meta["shard"] = nullptr;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    nlohmann::json m = parts[i].meta;
    m["shard"] = nullptr;
    if (m != meta) throw InputError("sweep merge: " + dirs[i] + " is a sweep of another grid than " + dirs.front());
  }
  Output o(out, meta);
  for (SweepDir& p : parts) {
    for (auto& [point, r] : p.records) {
      if (!o.done(point)) o.add(std::move(r));
    }
  }
  o.finish();
  std::vector<std::size_t> missing;
  const std::size_t points = meta.at("points").get<std::size_t>();
  for (std::size_t i = 0; i < points; ++i) {
    if (!o.done(i)) missing.push_back(i);
  }
  return missing;
}

}  // namespace acesim::cli::sweep
