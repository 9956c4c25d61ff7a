// Design-space sweeps (`acesim sweep`, docs/sweeps.md): a grid file names a
// command, its base options and axes -- `grid:` (every combination) and
// `zip:` (lists advanced together) -- over the command's options and the
// platform YAML's keys (dotted paths such as topology.1.bandwidth_GBps).
// Every point runs in-process through cli/invoke.h, so a point means what
// the same command line means; its --json report becomes one row of
// results.csv and one line of results.jsonl.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/invoke.h"
#include "engine/progress.h"

namespace acesim::cli::sweep {

// JSON text for files and messages: bytes that are not UTF-8 (a platform
// file's, carried into a point's error message) become U+FFFD rather than
// an exception.
std::string json_text(const nlohmann::json& j, int indent = -1);

// A value as results.csv and messages write it: a string as it is, a list
// comma-joined, null as nothing, anything else as JSON.
std::string value_text(const nlohmann::json& v);

// An option or a platform key (its name has a dot) and a value for it; YAML
// scalars are kept as their text.
struct Setting {
  std::string name;
  nlohmann::json value;
  bool platform_key() const { return name.find('.') != std::string::npos; }
};

struct Axis {
  std::string name;
  std::vector<nlohmann::json> values;
  bool platform_key() const { return name.find('.') != std::string::npos; }
};

// The most points a grid may have.
inline constexpr std::size_t kMaxPoints = 100'000'000;

struct Grid {
  std::string source;   // the grid file, for messages
  // Where relative file names in it (platform, model, workload...) are
  // found: the grid file's folder ("" for the working directory).
  std::string folder;
  std::string command;  // collective | run | characterize
  std::vector<Setting> options;  // the base options, in file order
  std::vector<Axis> grid;        // cartesian product, in file order (the last varies fastest)
  std::vector<Axis> zip;         // advanced together, as one more axis after the grid's
  // Points: the product of the grid axes' lengths and the zip lists' length.
  std::size_t points() const;
  // The axes' names, grid then zip: the parameter columns of results.csv.
  std::vector<std::string> axis_names() const;
  // What identifies the grid (DIR/sweep.json): a resumed sweep or a merged
  // shard must have the same.
  nlohmann::json identity() const;
};

// Reads a grid; throws InputError naming the file, line and key for
// anything malformed (an unknown top-level key, an empty axis, zip lists of
// different lengths, a name in two places). Relative file names in it are
// the folder of `source`'s (the working directory's when it has none).
Grid parse_grid(std::string_view yaml_text, const std::string& source);
Grid load_grid(const std::string& path);

using api::PlatformText;

// What a value of an option names, for every command a grid can run: an
// input the points read, found beside the grid file and fingerprinted in
// sweep.json (docs/sweeps.md, "Files"), or nothing.
enum class InputKind {
  kNone,       // not a file (a size, a built-in model, a built-in failure model...)
  kFile,       // one file (a platform that is no file beside the grid is a preset's name)
  kPrefix,     // the files PREFIX.<rank>.et (--chakra)
  kFileOrDir,  // a file, or a directory of files (--kineto)
  kCluster,    // a cluster file, and every file it names (acesim cluster FILE)
};
struct InputOption {
  std::string_view name;  // the long option without dashes (a positional's name)
  InputKind kind;
  // Whether a value names a file (null: every value does): --model names a
  // file only as *.yaml, --failures only when it is no built-in's name.
  bool (*names_file)(const std::string& value) = nullptr;
};
// The one list of options that name input files: what a sweep resolves and
// fingerprints. tests/cli/sweep_test.cpp walks every command's options so
// that an option taking a file is either here or in output_options().
const std::vector<InputOption>& input_options();
// The options that name files a point writes (--csv, --trace, --chakra-out):
// not inputs, and refused in a grid of more than one point.
const std::vector<std::string_view>& output_options();
// What `value` of option `name` (spelt without dashes) names.
InputKind input_kind(const std::string& name, const nlohmann::json& value);

// Every point of a grid, checked before any runs: the command and every
// option name exist, every value is of the option's kind, and every
// platform key exists in every base platform the points use.
class Plan {
 public:
  explicit Plan(Grid grid);  // throws InputError
  const Grid& grid() const { return grid_; }
  std::size_t size() const { return size_; }
  // Point `index`'s axis values, by axis name.
  nlohmann::json params(std::size_t index) const;
  // How to run point `index` (safe to call from several threads).
  Invocation invocation(std::size_t index) const;
  // The files the points read, each named as the grid names it
  // ("platform: p.yaml", "kernel-times: k.csv", "platform: p.yaml:
  // workload.file w.txt", "file: c.yaml: m.yaml" for a file a cluster file
  // names), with a fingerprint of its content ("missing" when there is
  // none; a Chakra prefix or a directory over their files): what a resumed
  // sweep must still find. Files of the base platforms' own (presets) are
  // not files. Every option of input_options() is one.
  std::map<std::string, std::string> inputs() const;
  // Whether point `index` reads one of the files named in `names`.
  bool reads_any(std::size_t index, const std::set<std::string>& names) const;

 private:
  // The settings of point `index`: base options, then its axis values.
  std::vector<Setting> settings(std::size_t index) const;
  // The platform YAML text with the point's keys set, and its name. `base`
  // is the platform option's value: null (the default platform), a file or
  // preset name, or a platform written inline (a map).
  PlatformText platform_text(const nlohmann::json& base, const std::vector<Setting>& keys) const;
  // Calls f(section, name, value) for every value of the grid's options and axes.
  void for_each_value(const std::function<void(const std::string&, const std::string&, const nlohmann::json&)>& f) const;
  // Refuses `nodes` beside topology.K.npus of a base platform's nodes dimension.
  void refuse_nodes_with_npus(const std::vector<nlohmann::json>& bases) const;
  // A setting's value with a relative file name found in the grid's folder.
  nlohmann::json resolved(const std::string& name, const nlohmann::json& value) const;
  // A file a point reads: its name in inputs(), its path, what it is.
  struct InputFile {
    std::string name;
    std::string path;
    InputKind kind;
  };
  // The files a point with these settings reads, a cluster file's own
  // files after it.
  std::vector<InputFile> files(const std::vector<Setting>& settings) const;
  // The files a cluster file at `path` (as resolved) names, as found
  // beside it; read once per sweep.
  std::vector<std::string> cluster_files(const std::string& path) const;

  Grid grid_;
  RegisteredCommand command_;  // its options, looked up (read only) from every thread
  std::size_t size_ = 0;
  std::vector<std::size_t> radix_;  // each axis's length: grid axes, then the zip group
  mutable std::mutex mu_;
  mutable std::map<std::string, PlatformText> platforms_;  // by base and key values
  mutable std::map<std::string, std::vector<std::string>> cluster_files_;  // by the cluster file's path
};

// Runs point `index`: its record for results.jsonl, {"point", "params",
// "result"} or, when the point failed, {"point", "params", "error",
// "status"} with the CLI's message and exit status.
nlohmann::json run_point(const Plan& plan, std::size_t index);

// "I/N": every N-th point from I (0 <= I < N).
struct Shard {
  std::size_t index = 0;
  std::size_t count = 1;
  bool owns(std::size_t point) const { return point % count == index; }
  std::string text() const { return std::to_string(index) + "/" + std::to_string(count); }
};
Shard parse_shard(const std::string& text);  // throws InputError

// Holds DIR/sweep.lock while a sweep writes DIR: an advisory lock
// (flock(2)) that a second sweep into DIR, from another process or another
// thread of this one, is refused (InputError naming the holder: its pid,
// host and start). The kernel releases it when its process dies, so a lock
// file left by a killed sweep is taken over.
class DirLock {
 public:
  explicit DirLock(const std::string& dir);
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;
  ~DirLock();

 private:
  std::string path_;
  int fd_ = -1;
};

// Writes DIR/NAME whole: through a temporary file of a name no other
// writer uses, renamed over it (a symbolic link planted at the name is
// replaced, not followed). Throws InputError.
void write_dir_file(const std::string& path, const std::string& text);

// What a sweep started again on its DIR does with the records there.
struct Resume {
  bool keep_records = false;   // keep every record for sorted_records()
  bool retry_errors = false;   // drop error records: their points run again
  bool rerun_changed = false;  // drop the records of points that read an input file that changed
  // Whether point P reads one of the inputs named (for rerun_changed).
  std::function<bool(std::size_t, const std::set<std::string>&)> reads;
};

// The output directory: DIR/sweep.json (the grid's identity, the shard,
// the inputs' fingerprints), DIR/results.jsonl (one record per point,
// appended as points finish) and DIR/results.csv (one row per point,
// sorted by point, rewritten at the end).
class Output {
 public:
  // Opens DIR, creating it, and locks it (an empty DIR: records kept in
  // memory only). When DIR already holds a sweep of the same grid and
  // shard, its records are kept (resume); another sweep's DIR, records of
  // points that are not the sweep's, or inputs that changed (unless
  // resume.rerun_changed) are refused (InputError).
  Output(const std::string& dir, nlohmann::json meta, Resume resume = {});
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;
  ~Output();
  // The points already done.
  bool done(std::size_t point) const { return points_.count(point) > 0; }
  std::size_t errors() const;  // error records among them
  // "point N: message" of the lowest error record, or ""; and its status.
  std::string first_error() const;
  int first_error_status() const;
  // Every record, sorted by point (with keep_records, or an empty DIR).
  std::vector<nlohmann::json> sorted_records() const;
  // Appends one record to results.jsonl (thread-safe).
  void add(nlohmann::json record);
  // Writes results.jsonl again sorted by point, and results.csv.
  void finish();

 private:
  // What a point leaves for the files: its results.jsonl line and its
  // results.csv cells (metrics by column number), not its JSON, which
  // takes several times the memory.
  struct Point {
    std::string line;
    std::vector<std::string> params;  // by axis
    std::vector<std::pair<std::size_t, std::string>> metrics;
    std::string error;
    int status = 0;
    bool failed = false;
    nlohmann::json record;  // with keep_records
  };
  void keep(nlohmann::json record, std::string line);  // under mu_
  void finish_jsonl();  // results.jsonl from points_, sorted
  const Point* first_failed() const;  // under mu_

  std::string dir_;
  nlohmann::json meta_;
  bool keep_records_ = false;
  std::vector<std::string> axes_;
  std::size_t grid_points_ = 0;
  std::optional<Shard> shard_;
  std::unique_ptr<DirLock> lock_;
  mutable std::mutex mu_;
  std::map<std::size_t, Point> points_;
  std::vector<std::string> columns_;  // metric names, numbered as met
  std::unordered_map<std::string, std::size_t> column_of_;
  std::FILE* jsonl_ = nullptr;
};
// What DIR/sweep.json says of a sweep: the grid's identity, its axes (the
// parameter columns), its points, the shard ("I/N", or null for all) and
// the files its points read (Plan::inputs()).
nlohmann::json sweep_meta(const Plan& plan, std::optional<Shard> shard);

// What differs between the inputs of two sweep.json (`was`, `now`): "NAME
// changed" for each, joined with "; " (at most a few named), or "" when
// none.
std::string changed_inputs(const nlohmann::json& was, const nlohmann::json& now, std::set<std::string>* names = nullptr);

// The report's metrics as results.csv names them, in the report's order: the
// dotted --json paths; the report's list of rows (collective's `results`,
// run's `runs`, characterize's `rows`) unwrapped when it holds one row and
// indexed otherwise (`results.1.time_ns`); lists of numbers indexed
// (`link_bytes_per_dim.0`); lists of records (per layer, per collective)
// left to results.jsonl. A metric named like an axis is `result.NAME`.
std::vector<std::pair<std::string, nlohmann::json>> flatten_metrics(const nlohmann::json& report,
                                                                    const std::vector<std::string>& axes);

// Reads DIR/sweep.json and DIR/results.jsonl (for merge and plot).
struct SweepDir {
  nlohmann::json meta;
  std::map<std::size_t, nlohmann::json> records;
};
SweepDir read_sweep_dir(const std::string& dir);

// Joins shards of one grid into `out` (InputError for shards of different
// grids); returns the points still missing.
std::vector<std::size_t> merge(const std::vector<std::string>& dirs, const std::string& out);

}  // namespace acesim::cli::sweep

namespace acesim::cli::sweep {

// What `acesim sweep GRID --out DIR` was asked.
struct SweepRequest {
  std::string grid_file;  // the grid file, or the name of grid_text in messages
  std::string grid_text;  // when set, the grid itself (YAML or JSON)
  std::string out;        // the output directory; empty: none (records in memory)
  bool keep_records = false;  // return every record of the grid (or shard) in the summary
  int jobs = 0;  // threads per process; 0: every core (one per rank under MPI)
  std::optional<Shard> shard;
  bool retry_errors = false;   // run again the points DIR holds as errors
  bool rerun_changed = false;  // run again the points DIR holds whose input files changed
  ProgressSink* progress = nullptr;
};
struct SweepSummary {
  std::size_t points = 0;    // of the grid (or its shard)
  std::size_t run = 0;       // run now
  std::size_t resumed = 0;   // done before (resume)
  std::size_t errors = 0;    // error rows among all done
  double wall_s = 0.0;
  std::string first_error;  // "point N: message" of the lowest error row
  int first_error_status = 0;  // its exit status
  std::vector<nlohmann::json> records;  // with keep_records: sorted by point
  bool failed = false;  // an MPI worker rank whose rank 0 refused the sweep (and said why)
};
// What the request asks of the records DIR holds; `plan` says which points
// read which files (it must outlive the Resume).
Resume resume_of(const SweepRequest& request, const Plan& plan);
// Runs the points of the grid (or shard) not yet in DIR on local threads.
// Throws InputError for a bad grid before any point runs.
SweepSummary run_sweep(const SweepRequest& request);

// Under mpirun with more than one rank (cli/sweep_mpi.cpp; false when acesim
// was built without MPI): rank 0 hands points out one at a time and writes
// DIR; every rank runs points. The result is the same files.
bool under_mpi();
int mpi_rank();  // 0 without MPI
SweepSummary run_sweep_mpi(const SweepRequest& request);

// `acesim sweep plot`: DIR's points as a line plot of `y` against `x`, one
// line per value of `hue`; `where` items KEY=VALUE keep only those points.
// Returns the PNG's path.
struct PlotRequest {
  std::string dir;
  std::string x;
  std::string y;
  std::string hue;
  std::vector<std::string> where;
  std::string out;  // default DIR/<y>-vs-<x>.png
};
std::string plot(const PlotRequest& request);

}  // namespace acesim::cli::sweep

namespace acesim::cli::sweep {

// One run of `command` with `options` (an option or platform key name to a
// value, as a grid's options: the platform may be a map written inline):
// its --json report. Throws InvokeError with the CLI's status and message.
// What the Python module's acesim.collective/run/characterize call.
nlohmann::json run_once(const std::string& command, const nlohmann::json& options, const std::string& source);

}  // namespace acesim::cli::sweep
