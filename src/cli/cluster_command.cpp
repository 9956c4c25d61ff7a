// `acesim cluster FILE.yaml`: several jobs on one platform (docs/cluster.md).
#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "api/api.h"
#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/platform_options.h"
#include "cli/progress_options.h"
#include "config/output_file.h"
#include "report/cluster_report.h"

namespace acesim::cli {
namespace {

struct Options {
  std::string file;
  bool json = false;
  bool no_alone = false;
  std::string csv;
  std::string trace;
  ProgressOptions progress;
};

api::ClusterRun simulate(Options& o) {
  api::ClusterRequest r;
  r.file = o.file;
  r.alone = !o.no_alone;
  r.trace = !o.trace.empty();
  const std::unique_ptr<ProgressDisplay> display = start_progress(o.progress);
  r.progress = display.get();
  api::ClusterRun run = api::simulate_cluster(r);
  if (display) display->finish();
  if (!o.csv.empty()) write_cluster_csv(run.report, o.csv);
  if (!o.trace.empty()) write_output_file(o.trace, cluster_trace(run.report).dump() + '\n', "--trace");
  return run;
}

int run(Options& o) {
  const api::ClusterRun run = simulate(o);
  if (o.json) {
    std::printf("%s\n", cluster_json(run.report).dump(2).c_str());
  } else {
    std::fputs(format_cluster(run.report).c_str(), stdout);
  }
  return kExitOk;
}

}  // namespace

CommandRunner add_cluster_command(CLI::App& app) {
  auto o = std::make_shared<Options>();
  CLI::App* c = app.add_subcommand("cluster", "Simulate several jobs sharing one platform's fabric: each job's slowdown, the links they share (docs/cluster.md)");
  c->add_option("file", o->file, "the cluster file (YAML: platform, nodes, fabric, jobs)")->required();
  c->add_flag("--json", o->json, "print JSON instead of tables");
  c->add_flag("--no-alone", o->no_alone, "skip each job's run alone on its nodes (no slowdown)");
  c->add_option("--csv", o->csv, "write jobs.csv, iterations.csv and links.csv into this directory")->check(output_dir());
  c->add_option("--trace", o->trace, "write a Chrome/Perfetto trace (ui.perfetto.dev): a process per job, its first rank's compute and communication, its iterations")
      ->check(output_file());
  add_progress_options(c, o->progress);
  return {[o] { return run(*o); }, [o] { return CommandReport{cluster_json(simulate(*o).report), {}}; }, nullptr,
          [o, fresh = *o] { *o = fresh; }};
}

}  // namespace acesim::cli
