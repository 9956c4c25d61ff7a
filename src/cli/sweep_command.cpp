// `acesim sweep`: design-space sweeps (cli/sweep.h, docs/sweeps.md).
#include <cstdio>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/platform_options.h"
#include "cli/progress_options.h"
#include "cli/sweep.h"
#include "config/input_error.h"

namespace acesim::cli {
namespace {

struct Options {
  std::string grid;
  std::string out;
  int jobs = 0;
  std::string shard;
  bool retry_errors = false;
  bool rerun_changed = false;
  ProgressOptions progress;
  CLI::Option* jobs_option = nullptr;
  // merge
  std::vector<std::string> merge_dirs;
  std::string merge_out;
  // plot
  sweep::PlotRequest plot;
};

// The request the flags make; the same on every MPI rank.
sweep::SweepRequest sweep_request(const Options& o, bool mpi) {
  if (o.grid.empty()) throw InputError("sweep: give a grid file (acesim sweep GRID.yaml --out DIR), or merge / plot");
  if (o.out.empty()) throw InputError("sweep: --out DIR is required (where results.csv and results.jsonl go)");
  if (o.jobs_option->count() > 0 && (o.jobs < 1 || o.jobs > 1024)) {
    throw InputError("--jobs: must be in 1..1024, got " + std::to_string(o.jobs));
  }
  sweep::SweepRequest r;
  r.grid_file = o.grid;
  r.out = o.out;
  r.jobs = o.jobs;
  r.retry_errors = o.retry_errors;
  r.rerun_changed = o.rerun_changed;
  if (!o.shard.empty()) r.shard = sweep::parse_shard(o.shard);
  if (mpi && o.jobs_option->count() > 0) {
    throw InputError("--jobs: under mpirun each rank runs one point at a time; start one rank per core instead");
  }
  return r;
}

int run_grid(const Options& o) {
  const bool mpi = sweep::under_mpi();
  const bool root = sweep::mpi_rank() == 0;
  sweep::SweepRequest r;
  try {
    r = sweep_request(o, mpi);
  } catch (const InputError&) {
    if (!root) return kExitBadInput;  // every rank finds it; rank 0 says it
    throw;
  }
  const std::unique_ptr<ProgressDisplay> display = root ? start_progress(o.progress) : nullptr;
  r.progress = display.get();
  const sweep::SweepSummary s = mpi ? sweep::run_sweep_mpi(r) : sweep::run_sweep(r);
  if (display) display->finish();
  if (s.failed) return kExitBadInput;  // rank 0 said why
  if (!root) return kExitOk;
  std::printf("sweep: %zu points%s: %zu run in %.2f s%s, %zu errors; %s/results.csv\n", s.points,
              r.shard ? fmt::format(" (shard {})", r.shard->text()).c_str() : "", s.run, s.wall_s,
              s.resumed > 0 ? fmt::format(", {} done before", s.resumed).c_str() : "", s.errors, o.out.c_str());
  if (s.points > 0 && s.errors == s.points) {
    std::fflush(stdout);
    throw InvokeError({s.first_error_status, fmt::format("sweep: every point failed; the first: {}", s.first_error), false});
  }
  if (!s.first_error.empty()) std::printf("sweep: the first error (the `error` column has each): %s\n", s.first_error.c_str());
  return kExitOk;
}

int run_merge(const Options& o) {
  const std::vector<std::size_t> missing = sweep::merge(o.merge_dirs, o.merge_out);
  std::printf("sweep merge: %zu directories into %s/results.csv", o.merge_dirs.size(), o.merge_out.c_str());
  if (missing.empty()) {
    std::printf(", every point\n");
  } else {
    std::string list;
    for (std::size_t i = 0; i < missing.size() && i < 10; ++i) list += (i ? ", " : "") + std::to_string(missing[i]);
    std::printf(", %zu points missing (%s%s)\n", missing.size(), list.c_str(), missing.size() > 10 ? ", ..." : "");
  }
  return kExitOk;
}

}  // namespace

CommandRunner add_sweep_command(CLI::App& app) {
  auto o = std::make_shared<Options>();
  CLI::App* c = app.add_subcommand("sweep", "Run a grid of collective/run/characterize points (docs/sweeps.md); also under mpirun, "
                                            "or sharded for Slurm job arrays");
  c->require_subcommand(0, 1);
  c->add_option("grid", o->grid, "the grid file (YAML: command, options, grid, zip)")->check(non_empty());
  c->add_option("--out", o->out, "output directory: results.csv, results.jsonl, sweep.json (a sweep started again resumes)")
      ->check(output_dir());
  o->jobs_option = c->add_option("--jobs", o->jobs, "points run at once (default: every core; 1 per rank under mpirun)");
  c->add_option("--shard", o->shard, "I/N: run every N-th point from point I (Slurm job arrays; join with sweep merge)")
      ->check(non_empty());
  c->add_flag("--retry-errors", o->retry_errors, "resuming: run again the points that failed");
  c->add_flag("--rerun-changed", o->rerun_changed,
              "resuming when a file the points read changed (platform, model, workload): run again the points that read it");
  add_progress_options(c, o->progress);

  CLI::App* merge = c->add_subcommand("merge", "Join the --out directories of a grid's shards into one");
  merge->add_option("dirs", o->merge_dirs, "the shards' directories")->required();
  merge->add_option("--out", o->merge_out, "the joined directory")->required()->check(output_dir());

  CLI::App* plot = c->add_subcommand("plot", "Plot a sweep's metric against an axis (PNG, matplotlib)");
  plot->add_option("dir", o->plot.dir, "the sweep's --out directory")->required()->check(non_empty());
  plot->add_option("--x", o->plot.x, "axis or metric along x")->required()->check(non_empty());
  plot->add_option("--y", o->plot.y, "metric along y (a results.csv column)")->required()->check(non_empty());
  plot->add_option("--hue", o->plot.hue, "one line per value of this axis")->check(non_empty());
  plot->add_option("--where", o->plot.where, "KEY=VALUE: only the points with this value (repeatable)");
  plot->add_option("--out", o->plot.out, "the PNG (default DIR/<y>-vs-<x>.png)")->check(non_empty());

  return {[o, c, merge, plot] {
            if (merge->parsed() || plot->parsed()) {
              // merge and plot take their own options: one given to the
              // sweep before them would be silently dropped.
              const char* sub = merge->parsed() ? "merge" : "plot";
              for (const CLI::Option* opt : c->get_options()) {
                const std::string& name = opt->get_name();
                if (opt->count() > 0 && name != "--help" && name != "--progress" && name != "--no-progress") {
                  throw InputError(
                      fmt::format("sweep {}: {} is the sweep's, not {}'s; run the grid and the {} as two commands", sub, name, sub, sub));
                }
              }
            }
            if (merge->parsed()) return run_merge(*o);
            if (plot->parsed()) {
              std::printf("sweep plot: %s\n", sweep::plot(o->plot).c_str());
              return kExitOk;
            }
            return run_grid(*o);
          },
          nullptr, nullptr, nullptr};
}

}  // namespace acesim::cli
