// `acesim collective`: nccl-tests-style table for one size or a size sweep.
#include <cstdio>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/platform_options.h"
#include "cli/progress_options.h"
#include "report/collective_sweep.h"

namespace acesim::cli {
namespace {

struct Options {
  PlatformOptions platform;
  std::string bytes;
  std::string min_bytes;
  std::string max_bytes;
  std::string dims;
  long long root = 0;
  std::string library;
  std::string algo;
  std::string proto;
  int channels = 0;
  bool json = false;
  ProgressOptions progress;
  api::CollectiveRequest request;
};

api::CollectiveRun simulate(const Options& o) {
  const std::unique_ptr<ProgressDisplay> display = start_progress(o.progress);
  api::CollectiveRequest request = o.request;
  request.progress = display.get();
  api::CollectiveRun run = api::simulate_collectives(request);
  if (display) display->finish();
  return run;
}

int run(const Options& o) {
  const api::CollectiveRun run = simulate(o);
  // Warnings only once the run has worked, so that a failing run prints its
  // one error line alone.
  print_warnings(run.platform.warnings);
  if (o.json) {
    std::printf("%s\n", to_json(run.platform, run.results).dump(2).c_str());
  } else {
    std::fputs(format_table(run.platform, run.spec, run.results).c_str(), stdout);
  }
  return kExitOk;
}

CommandReport report(const Options& o) {
  const api::CollectiveRun run = simulate(o);
  return {to_json(run.platform, run.results), run.platform.warnings};
}

}  // namespace

CommandRunner add_collective_command(CLI::App& app) {
  auto o = std::make_shared<Options>();
  CLI::App* c = app.add_subcommand("collective", "Time one collective (nccl-tests style table)");
  add_platform_options(c, o->platform);
  c->add_option("--op", o->request.op, join_names(collective_op_names()))->capture_default_str();
  CLI::Option* bytes = c->add_option("--bytes", o->bytes, "one size, e.g. 64MiB (nccl-tests size convention)");
  CLI::Option* min_bytes = c->add_option("--min-bytes", o->min_bytes, "sweep start (default 64KiB)");
  CLI::Option* max_bytes = c->add_option("--max-bytes", o->max_bytes, "sweep end (default 256MiB)");
  // Signed, so that "-1" is refused rather than wrapped.
  CLI::Option* step = c->add_option("--step-factor", o->request.step_factor, "sweep multiplier")->capture_default_str();
  CLI::Option* dims = c->add_option("--dims", o->dims, "dimensions the collective spans, e.g. 0,2 (default: all)");
  c->add_flag("--json", o->json, "print JSON instead of a table");
  CLI::Option* root = c->add_option("--root", o->root, "broadcast, reduce, gather, scatter: the root rank (default 0)");
  CLI::Option* library = c->add_option("--library", o->library, "nccl: run collectives as NCCL does (its algorithms, protocols, "
                                        "channels, cost model); acesim: the platform's plans");
  CLI::Option* algo = c->add_option("--algo", o->algo, "NCCL model: auto (NCCL's cost model), ring, tree, nvls, nvls-tree, collnet-direct, collnet-chain or p2p (all-to-all) (as NCCL_ALGO)");
  CLI::Option* proto = c->add_option("--proto", o->proto, "NCCL model: auto, simple, ll or ll128 (as NCCL_PROTO)");
  CLI::Option* channels = c->add_option("--channels", o->channels, "NCCL model: channels (default: NCCL's for the algorithm)");
  add_progress_options(c, o->progress);
  c->add_option("--straggler", o->request.stragglers,
                "RANK=FACTOR: that NPU's links (in and out) carry FACTOR times less (repeatable; runs in full)");
  // Whether each option was given at all (an empty value still counts).
  auto prepare = [o, bytes, min_bytes, max_bytes, step, dims, root, library, algo, proto, channels] {
    api::CollectiveRequest& r = o->request;
    r.platform = platform_request(o->platform);
    r.step_factor_given = step->count() > 0;
    if (bytes->count() > 0) r.bytes = o->bytes;
    if (min_bytes->count() > 0) r.min_bytes = o->min_bytes;
    if (max_bytes->count() > 0) r.max_bytes = o->max_bytes;
    if (dims->count() > 0) r.dims = o->dims;
    if (root->count() > 0) r.root = o->root;
    if (library->count() > 0) r.library = o->library;
    if (algo->count() > 0) r.algo = o->algo;
    if (proto->count() > 0) r.proto = o->proto;
    if (channels->count() > 0) r.channels = o->channels;
  };
  return {[o, prepare] {
            prepare();
            return run(*o);
          },
          [o, prepare] {
            prepare();
            return report(*o);
          },
          &o->platform,
          [o, fresh = *o] { *o = fresh; }};
}

}  // namespace acesim::cli
