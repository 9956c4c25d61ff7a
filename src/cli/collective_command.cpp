// `acesim collective`: nccl-tests-style table for one size or a size sweep.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/platform_options.h"
#include "config/input_error.h"
#include "config/limits.h"
#include "config/units.h"
#include "report/collective_sweep.h"

namespace acesim::cli {
namespace {

struct Options {
  PlatformOptions platform;
  std::string op = "all-reduce";
  std::string bytes;
  std::string min_bytes;
  std::string max_bytes;
  long long step_factor = 2;  // signed, so that "-1" is refused rather than wrapped
  std::string dims;
  bool json = false;
  // Whether each option was given at all (an empty or zero value still counts).
  bool bytes_given = false;
  bool min_bytes_given = false;
  bool max_bytes_given = false;
  bool dims_given = false;
};

int run(const Options& o) {
  const PlatformConfig platform = load_platform(o.platform);
  CollectiveRequestSpec req;
  req.op = parse_op_option(o.op);
  req.full = o.platform.full;
  if (o.dims_given) {
    if (o.dims.empty()) throw InputError("--dims: empty list (give dimensions like 0,2, or leave --dims out for all)");
    std::stringstream ss(o.dims);
    std::string item;
    while (std::getline(ss, item, ',')) {
      char* end = nullptr;
      const long d = std::strtol(item.c_str(), &end, 10);
      if (item.empty() || *end != '\0' || d < 0 || d >= static_cast<long>(platform.dims.size())) {
        throw InputError("--dims: '" + item + "' is not a dimension of this platform (0.." +
                         std::to_string(platform.dims.size() - 1) + ")");
      }
      if (std::find(req.dims.begin(), req.dims.end(), static_cast<int>(d)) != req.dims.end()) {
        throw InputError("--dims: dimension " + item + " is given twice");
      }
      req.dims.push_back(static_cast<int>(d));
    }
    if (!o.dims.empty() && o.dims.back() == ',') throw InputError("--dims: '' is not a dimension of this platform");
  }
  std::vector<std::uint64_t> sizes;
  if (o.bytes_given) {
    if (o.min_bytes_given || o.max_bytes_given) throw InputError("--bytes cannot be combined with --min-bytes/--max-bytes");
    sizes.push_back(parse_size_option("--bytes", o.bytes));
  } else {
    const std::uint64_t lo = o.min_bytes_given ? parse_size_option("--min-bytes", o.min_bytes) : 64ull << 10;
    const std::uint64_t hi = o.max_bytes_given ? parse_size_option("--max-bytes", o.max_bytes) : std::max<std::uint64_t>(lo, 256ull << 20);
    if (lo == 0) throw InputError("--min-bytes: must be > 0 for a sweep");
    if (lo > hi) throw InputError("--min-bytes (" + std::to_string(lo) + ") is larger than --max-bytes (" + std::to_string(hi) + ")");
    if (o.step_factor < 2) throw InputError("--step-factor: must be an integer >= 2, got " + std::to_string(o.step_factor));
    sizes = size_sweep(lo, hi, static_cast<std::uint64_t>(o.step_factor));
  }
  std::vector<CollectiveResult> results;
  for (std::uint64_t s : sizes) results.push_back(run_collective(platform, req, s));
  // Warnings only once the run has worked, so that a failing run prints its
  // one error line alone.
  for (const std::string& w : platform.warnings) std::fprintf(stderr, "acesim: warning: %s\n", w.c_str());
  if (o.json) {
    std::printf("%s\n", to_json(platform, results).dump(2).c_str());
  } else {
    std::fputs(format_table(platform, req, results).c_str(), stdout);
  }
  return kExitOk;
}

}  // namespace

std::function<int()> add_collective_command(CLI::App& app) {
  auto o = std::make_shared<Options>();
  CLI::App* c = app.add_subcommand("collective", "Time one collective (nccl-tests style table)");
  add_platform_options(c, o->platform);
  c->add_option("--op", o->op, "all-reduce | reduce-scatter | all-gather | all-to-all")->capture_default_str();
  CLI::Option* bytes = c->add_option("--bytes", o->bytes, "one size, e.g. 64MiB (nccl-tests size convention)");
  CLI::Option* min_bytes = c->add_option("--min-bytes", o->min_bytes, "sweep start (default 64KiB)");
  CLI::Option* max_bytes = c->add_option("--max-bytes", o->max_bytes, "sweep end (default 256MiB)");
  c->add_option("--step-factor", o->step_factor, "sweep multiplier")->capture_default_str();
  CLI::Option* dims = c->add_option("--dims", o->dims, "dimensions the collective spans, e.g. 0,2 (default: all)");
  c->add_flag("--json", o->json, "print JSON instead of a table");
  return [o, bytes, min_bytes, max_bytes, dims] {
    o->bytes_given = bytes->count() > 0;
    o->min_bytes_given = min_bytes->count() > 0;
    o->max_bytes_given = max_bytes->count() > 0;
    o->dims_given = dims->count() > 0;
    return run(*o);
  };
}

}  // namespace acesim::cli
