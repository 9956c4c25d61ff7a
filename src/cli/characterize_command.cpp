// `acesim characterize STUDY`: the ACE paper's endpoint characterization.
#include <cstdio>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/platform_options.h"
#include "cli/progress_options.h"
#include "config/input_error.h"
#include "config/limits.h"
#include "config/units.h"
#include "registry/registry.h"
#include "report/characterization.h"

namespace acesim::cli {
namespace {

struct Options {
  std::string study;
  PlatformOptions platform;
  std::string op = "all-reduce";
  std::string bytes = "64MiB";
  std::string gemm = "4096,4096,4096";
  bool json = false;
  ProgressOptions progress;
  CLI::Option* op_option = nullptr;
  CLI::Option* gemm_option = nullptr;
};

// Options a study would not use: refused rather than ignored.
void check_study_options(const Options& o) {
  if (!o.platform.executor.empty()) {
    throw InputError("--executor: each study runs the executors it compares (units and overlap: sm with K units or channels, "
                     "ace, ideal, dma; hbm and traffic: sm and ace); leave it out");
  }
  if (o.gemm_option->count() > 0 && o.study != "overlap") throw InputError("--gemm applies to the overlap study, not to " + o.study);
  if (o.op_option->count() > 0 && o.study == "traffic") throw InputError("--op: the traffic study runs every operation; leave it out");
}

Kernel parse_gemm(const std::string& text) {
  std::stringstream ss(text);
  std::string item;
  std::vector<double> dims;
  while (std::getline(ss, item, ',')) {
    char* end = nullptr;
    const double v = std::strtod(item.c_str(), &end);
    if (item.empty() || *end != '\0' || !(v >= 1.0 && v <= 1e7)) {
      throw InputError("--gemm: '" + text + "' is not M,N,K (three sizes in 1..1e7)");
    }
    dims.push_back(v);
  }
  // (getline drops a trailing empty item: "1,2,3," must not pass as 1,2,3.)
  if (dims.size() != 3 || text.back() == ',') throw InputError("--gemm: '" + text + "' is not M,N,K (three sizes in 1..1e7)");
  return gemm_kernel(dims[0], dims[1], dims[2]);
}

struct Characterized {
  PlatformConfig platform;
  CollectiveRequestSpec req;
  std::uint64_t bytes = 0;
  Study study;
};

Characterized simulate(const Options& o) {
  check_study_options(o);
  Characterized c;
  c.platform = api::load_platform(platform_request(o.platform));
  c.req.op = api::parse_op("--op", o.op);
  c.req.full = o.platform.full;
  c.bytes = api::parse_size("--bytes", o.bytes);
  if (c.bytes == 0) throw InputError("--bytes: must be > 0");
  const Kernel kernel = parse_gemm(o.gemm);
  const std::unique_ptr<ProgressDisplay> display = start_progress(o.progress);
  c.study = run_study(o.study, c.platform, c.req, c.bytes, kernel, Progress(display.get()));
  if (display) display->finish();
  return c;
}

int run(const Options& o) {
  const Characterized c = simulate(o);
  print_warnings(c.platform.warnings);
  if (o.json) {
    std::printf("%s\n", study_json(c.study).dump(2).c_str());
  } else {
    std::fputs(format_study(c.study, c.platform, c.req, c.bytes).c_str(), stdout);
  }
  return kExitOk;
}

CommandReport report(const Options& o) {
  const Characterized c = simulate(o);
  return {study_json(c.study), c.platform.warnings};
}

}  // namespace

CommandRunner add_characterize_command(CLI::App& app) {
  auto o = std::make_shared<Options>();
  CLI::App* c = app.add_subcommand(
      "characterize", "The endpoint characterization: bandwidth vs compute units (units) and vs HBM bandwidth (hbm), "
                      "kernel slowdown under overlap (overlap), HBM bytes per network byte (traffic)");
  c->add_option("study", o->study, join_names(study_names()))->required()->check(CLI::IsMember(study_names()));
  add_platform_options(c, o->platform);
  o->op_option = c->add_option("--op", o->op, "collective operation (not for traffic, which runs every one)")->capture_default_str();
  c->add_option("--bytes", o->bytes, "collective size")->capture_default_str()->check(non_empty());
  o->gemm_option = c->add_option("--gemm", o->gemm, "overlap study: the kernel, a GEMM of M,N,K (bf16)")->capture_default_str();
  c->add_flag("--json", o->json, "print JSON instead of a table");
  add_progress_options(c, o->progress);
  return {[o] { return run(*o); }, [o] { return report(*o); }, &o->platform, [o, fresh = *o] { *o = fresh; }};
}

}  // namespace acesim::cli
