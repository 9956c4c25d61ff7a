// A sweep's output directory (cli/sweep.h): sweep.json, results.jsonl,
// results.csv; resuming, and merging shards.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <ctime>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "cli/sweep.h"
#include "config/input_error.h"
#include "config/output_file.h"
#include "config/platform.h"
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

// The records of a results.jsonl; a line cut short (a sweep killed while
// writing) or not a record is left out.
std::map<std::size_t, nlohmann::json> read_records(const fs::path& path) {
  std::map<std::size_t, nlohmann::json> records;
  // Read line by line, not through read_text_file (a sweep of millions of
  // points writes more than its cap); a link planted to a device or a FIFO
  // would never end.
  std::error_code ec;
  if (!fs::exists(path, ec)) return records;
  if (!fs::is_regular_file(path, ec)) throw InputError(path.string() + ": not a regular file (written by acesim sweep)");
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


// sweep.json without its inputs: the grid and the shard.
nlohmann::json without_inputs(nlohmann::json meta) {
  meta.erase("inputs");
  return meta;
}

std::vector<std::string> meta_axes(const nlohmann::json& meta) {
  std::vector<std::string> axes;
  for (const nlohmann::json& a : meta.at("axes")) axes.push_back(a.get<std::string>());
  return axes;
}

}  // namespace

DirLock::DirLock(const std::string& dir) : path_((fs::path(dir) / "sweep.lock").string()) {
  // The last holder removes the file as it lets go: a file opened before
  // that is locked in vain, so the lock is taken again on the new one.
  for (int attempt = 0; attempt < 100 && fd_ < 0; ++attempt) {
    const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) throw OutputError("--out: " + path_ + ": cannot open for writing: " + std::strerror(errno), 2);
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      std::string holder(256, '\0');
      const ssize_t n = ::pread(fd, holder.data(), holder.size(), 0);
      holder.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
      while (!holder.empty() && (holder.back() == '\n' || holder.back() == '\0')) holder.pop_back();
      ::close(fd);
      if (err != EWOULDBLOCK) throw OutputError("--out: " + path_ + ": cannot lock: " + std::strerror(err), 2);
      throw InputError("--out: " + dir + " is in use by another sweep (" + (holder.empty() ? "its holder is starting" : holder) +
                       "); wait for it to end, or give another --out");
    }
    struct stat opened{};
    struct stat named{};
    if (::fstat(fd, &opened) == 0 && ::lstat(path_.c_str(), &named) == 0 && opened.st_ino == named.st_ino &&
        opened.st_dev == named.st_dev) {
      fd_ = fd;
    } else {
      ::close(fd);
    }
  }
  if (fd_ < 0) throw OutputError("--out: " + path_ + ": cannot lock: it keeps being replaced", 2);
  char host[256] = "?";
  ::gethostname(host, sizeof host - 1);
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  char started[32] = "?";
  if (::gmtime_r(&now, &utc) != nullptr) std::strftime(started, sizeof started, "%Y-%m-%d %H:%M:%S", &utc);
  const std::string holder = fmt::format("pid {} on {}, started {} UTC\n", ::getpid(), host, started);
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, holder.data(), holder.size(), 0) != static_cast<ssize_t>(holder.size())) {
    // The lock holds without the note; a refused sweep says less.
  }
}

DirLock::~DirLock() {
  ::unlink(path_.c_str());
  ::close(fd_);
}

void write_dir_file(const std::string& path, const std::string& text) {
  // A name of this process's own (pid and a count), made with O_EXCL: never
  // another writer's file, nor a link planted at the name.
  static std::atomic<unsigned long> count{0};
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    tmp = fmt::format("{}.{}.{}.tmp", path, ::getpid(), count.fetch_add(1));
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) throw OutputError("--out: " + tmp + ": cannot open for writing: " + std::strerror(errno), 2);
  std::size_t at = 0;
  while (at < text.size()) {
    const ssize_t n = ::write(fd, text.data() + at, text.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw OutputError("--out: " + tmp + ": cannot write: " + std::strerror(err), 1);
    }
    at += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw OutputError("--out: " + path + ": cannot write: " + std::strerror(err), 1);
  }
}

std::string changed_inputs(const nlohmann::json& was, const nlohmann::json& now, std::set<std::string>* names) {
  std::vector<std::string> changed;
  auto differs = [&](const std::string& name) {
    const bool a = was.is_object() && was.contains(name);
    const bool b = now.is_object() && now.contains(name);
    if (a && b && was[name] == now[name]) return;
    changed.push_back(name);
    if (names != nullptr) names->insert(name);
  };
  if (!was.is_object()) {
    // A sweep.json of an acesim that did not record its inputs.
    if (!now.is_object() || now.empty()) return "";
    if (names != nullptr && now.is_object()) {
      for (const auto& [name, v] : now.items()) names->insert(name);
    }
    return "its inputs were not recorded (an older acesim)";
  }
  std::set<std::string> all;
  for (const nlohmann::json* j : {&was, &now}) {
    if (j->is_object()) {
      for (const auto& [name, v] : j->items()) all.insert(name);
    }
  }
  for (const std::string& name : all) differs(name);
  std::string text;
  for (std::size_t i = 0; i < changed.size() && i < 3; ++i) {
    const std::string& n = changed[i];
    const std::string how = !was.contains(n) ? " is new" : !now.contains(n) ? " is no longer read" : " changed";
    text += (i ? "; " : "") + n + how;
  }
  if (changed.size() > 3) text += fmt::format("; and {} more", changed.size() - 3);
  return text;
}

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

nlohmann::json sweep_meta(const Plan& plan, std::optional<Shard> shard) {
  return {{"acesim_sweep", 1},
          {"grid", plan.grid().identity()},
          {"axes", plan.grid().axis_names()},
          {"points", plan.grid().points()},
          {"shard", shard ? nlohmann::json(shard->text()) : nlohmann::json(nullptr)},
          {"inputs", plan.inputs()}};
}

Output::Output(const std::string& dir, nlohmann::json meta, Resume resume)
    : dir_(dir), meta_(std::move(meta)), keep_records_(resume.keep_records || dir.empty()), axes_(meta_axes(meta_)),
      grid_points_(meta_.at("points").get<std::size_t>()) {
  if (meta_.at("shard").is_string()) shard_ = parse_shard(meta_["shard"].get<std::string>());
  if (dir_.empty()) return;  // in memory only
  create_output_directory(dir_, "--out");
  lock_ = std::make_unique<DirLock>(dir_);
  const fs::path meta_path = fs::path(dir_) / "sweep.json";
  if (fs::exists(fs::symlink_status(meta_path))) {
    SweepDir existing = read_sweep_dir(dir_);
    if (without_inputs(existing.meta) != without_inputs(meta_)) {
      throw InputError("--out: " + dir_ + " holds another sweep (its grid or shard differ); give another --out, or remove it to start again");
    }
    const nlohmann::json was = existing.meta.contains("inputs") ? existing.meta["inputs"] : nlohmann::json(nullptr);
    std::set<std::string> changed;
    const std::string what = changed_inputs(was, meta_["inputs"], &changed);
    if (!what.empty() && !resume.rerun_changed) {
      throw InputError("--out: " + dir_ + " was run with other input files (" + what +
                       "); give --rerun-changed to run again the points that read them, or another --out");
    }
    for (auto& [point, r] : existing.records) {
      if (point >= grid_points_ || (shard_ && !shard_->owns(point))) {
        throw InputError(dir_ + "/results.jsonl: point " + std::to_string(point) + " is not a point of this sweep" +
                         (shard_ ? " (shard " + shard_->text() + ")" : ""));
      }
      if (resume.retry_errors && r.contains("error")) continue;
      if (!changed.empty() && resume.reads && resume.reads(point, changed)) continue;
      std::string line = json_text(r) + "\n";
      keep(std::move(r), std::move(line));
    }
    // The records dropped go first: a sweep killed before the new inputs
    // are written keeps none of the old ones.
    finish_jsonl();
    if (existing.meta != meta_) write_dir_file(meta_path.string(), json_text(meta_, 2) + "\n");
  } else if (fs::exists(fs::symlink_status(fs::path(dir_) / "results.jsonl"))) {
    throw InputError("--out: " + dir_ + " has results.jsonl but no sweep.json; give another --out");
  } else {
    write_dir_file(meta_path.string(), json_text(meta_, 2) + "\n");
    finish_jsonl();
  }
  const std::string jsonl = (fs::path(dir_) / "results.jsonl").string();
  const int fd = ::open(jsonl.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 || (jsonl_ = ::fdopen(fd, "a")) == nullptr) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    throw OutputError("--out: " + jsonl + ": cannot open for writing: " + std::strerror(err), 2);
  }
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
    const nlohmann::json& status = record.contains("status") ? record["status"] : nlohmann::json(nullptr);
    p.status = status.is_number_integer() && status.get<long long>() > 0 && status.get<long long>() < 126 ? status.get<int>() : kExitBadInput;
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

const Output::Point* Output::first_failed() const {
  for (const auto& [point, p] : points_) {
    if (p.failed) return &p;
  }
  return nullptr;
}

std::string Output::first_error() const {
  const std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [point, p] : points_) {
    if (p.failed) return "point " + std::to_string(point) + ": " + p.error;
  }
  return "";
}

int Output::first_error_status() const {
  const std::lock_guard<std::mutex> lock(mu_);
  const Point* p = first_failed();
  return p != nullptr ? p->status : 0;
}

void Output::add(nlohmann::json record) {
  std::string line = dir_.empty() ? std::string() : json_text(record) + "\n";
  const std::lock_guard<std::mutex> lock(mu_);
  if (jsonl_ != nullptr) {
    // A record that cannot be appended (a full disk) stops the sweep: the
    // records since would be lost to a resume.
    errno = 0;
    if (std::fputs(line.c_str(), jsonl_) < 0 || std::fflush(jsonl_) != 0) {
      const int err = errno != 0 ? errno : EIO;
      throw OutputError("--out: " + (fs::path(dir_) / "results.jsonl").string() + ": cannot write: " + std::strerror(err), 1);
    }
  }
  keep(std::move(record), std::move(line));
}

void Output::finish_jsonl() {
  std::string text;
  for (const auto& [point, p] : points_) text += p.line;
  write_dir_file((fs::path(dir_) / "results.jsonl").string(), text);
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
  write_dir_file((fs::path(dir_) / "results.csv").string(), out);
}

SweepDir read_sweep_dir(const std::string& dir) {
  const fs::path meta_path = fs::path(dir) / "sweep.json";
  std::error_code ec;
  if (!fs::exists(meta_path, ec)) throw InputError(dir + ": no sweep.json (not the --out directory of acesim sweep)");
  // Not a device or a FIFO planted there (read_text_file caps the size).
  if (!fs::is_regular_file(meta_path, ec)) throw InputError(meta_path.string() + ": not a regular file (written by acesim sweep)");
  SweepDir d;
  d.meta = nlohmann::json::parse(read_text_file(meta_path.string()), nullptr, false);
  if (d.meta.is_discarded() || !d.meta.is_object() || !d.meta.contains("grid") || !d.meta["grid"].is_object() ||
      !d.meta["grid"].contains("command") || !d.meta["grid"]["command"].is_string() || !d.meta.contains("axes") ||
      !d.meta["axes"].is_array() || !d.meta.contains("points") || !d.meta["points"].is_number_unsigned() ||
      !d.meta.contains("shard") || !(d.meta["shard"].is_null() || d.meta["shard"].is_string()) ||
      (d.meta.contains("inputs") && !d.meta["inputs"].is_object())) {
    throw InputError(meta_path.string() + ": not a sweep description (written by acesim sweep)");
  }
  for (const nlohmann::json& a : d.meta["axes"]) {
    if (!a.is_string()) throw InputError(meta_path.string() + ": axes: expected names");
  }
  if (d.meta["shard"].is_string()) {
    try {
      (void)parse_shard(d.meta["shard"].get<std::string>());
    } catch (const InputError& e) {
      throw InputError(meta_path.string() + ": shard: " + e.what());
    }
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
    if (without_inputs(m) != without_inputs(meta)) throw InputError("sweep merge: " + dirs[i] + " is a sweep of another grid than " + dirs.front());
    const nlohmann::json none;
    const std::string what = changed_inputs(meta.contains("inputs") ? meta["inputs"] : none, m.contains("inputs") ? m["inputs"] : none);
    if (!what.empty()) {
      throw InputError("sweep merge: " + dirs[i] + " was run with other input files than " + dirs.front() + " (" + what +
                       "); run its points again with --rerun-changed");
    }
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
