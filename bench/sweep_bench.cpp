// Sweeps against the simulations they run (docs/performance.md, "Sweeps").
//
//   acesim_bench_sweep GRID.yaml ACESIM [SAMPLE]
//
// For a collective grid whose points set --op, --bytes, --executor, the
// platform and its keys (bench/grids/allreduce_10k.yaml), prints seconds for:
//   simulations  every point's api::simulate_collectives() and its JSON,
//                called directly with the platform already read: the floor
//   sweep -j1    run_sweep() on one thread, writing its directory
//   sweep -j2    the same on two threads
//   processes    one `acesim collective` process per point, as a shell loop
//                over the grid would run it (SAMPLE points, scaled to all)
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "api/api.h"
#include "cli/sweep.h"
#include "report/collective_sweep.h"

namespace {

using namespace acesim;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string arg(const std::vector<std::string>& args, const std::string& flag) {
  for (std::size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == flag) return args[i + 1];
  }
  return "";
}

std::string quote(const std::string& s) { return "'" + s + "'"; }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: acesim_bench_sweep GRID.yaml ACESIM [SAMPLE]\n");
    return 2;
  }
  const std::string grid_file = argv[1];
  const std::string acesim_cli = argv[2];
  const std::size_t sample = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 100;
  const cli::sweep::Plan plan(cli::sweep::load_grid(grid_file));
  const std::size_t n = plan.size();
  const std::filesystem::path tmp = std::filesystem::temp_directory_path() / ("acesim_bench_sweep_" + std::to_string(::getpid()));
  std::filesystem::create_directories(tmp);

  // The floor: the simulations alone.
  std::vector<cli::Invocation> points;
  for (std::size_t i = 0; i < n; ++i) points.push_back(plan.invocation(i));
  auto t = Clock::now();
  std::size_t bytes_out = 0;
  for (const cli::Invocation& p : points) {
    api::CollectiveRequest r;
    r.platform.text = p.platform;
    r.platform.executor = arg(p.args, "--executor");
    r.op = arg(p.args, "--op");
    r.bytes = arg(p.args, "--bytes");
    const api::CollectiveRun run = api::simulate_collectives(r);
    bytes_out += to_json(run.platform, run.results).dump().size();
  }
  const double simulations = since(t);

  double sweep_s[2] = {0, 0};
  for (int jobs : {1, 2}) {
    cli::sweep::SweepRequest req;
    req.grid_file = grid_file;
    req.out = (tmp / ("out" + std::to_string(jobs))).string();
    req.jobs = jobs;
    t = Clock::now();
    cli::sweep::run_sweep(req);
    sweep_s[jobs - 1] = since(t);
  }

  // One process per point, for `sample` points spread over the grid; each
  // distinct platform written to a file, as a shell loop would need.
  std::map<std::string, std::string> files;
  std::string script;
  const std::size_t step = std::max<std::size_t>(1, n / std::max<std::size_t>(sample, 1));
  std::size_t ran = 0;
  for (std::size_t i = 0; i < n && ran < sample; i += step, ++ran) {
    const cli::Invocation& p = points[i];
    std::string cmd = quote(acesim_cli);
    for (const std::string& a : p.args) cmd += " " + quote(a);
    if (p.platform) {
      std::string& f = files[p.platform->yaml];
      if (f.empty()) {
        f = (tmp / ("platform" + std::to_string(files.size()) + ".yaml")).string();
        std::ofstream(f) << p.platform->yaml;
      }
      cmd += " --platform " + quote(f);
    }
    script += cmd + " --json >/dev/null || exit 1\n";
  }
  const std::string script_path = (tmp / "loop.sh").string();
  std::ofstream(script_path) << script;
  t = Clock::now();
  const int rc = std::system(("bash " + quote(script_path)).c_str());
  const double processes = since(t) * static_cast<double>(n) / static_cast<double>(ran);
  std::filesystem::remove_all(tmp);
  if (rc != 0) {
    std::fprintf(stderr, "acesim_bench_sweep: the process loop failed\n");
    return 2;
  }
  std::printf("points\t%zu\n", n);
  std::printf("simulations\t%.3f s\t%.1f us/point\t(JSON %zu bytes)\n", simulations, 1e6 * simulations / static_cast<double>(n), bytes_out);
  std::printf("sweep -j1\t%.3f s\t%.2fx the simulations\n", sweep_s[0], sweep_s[0] / simulations);
  std::printf("sweep -j2\t%.3f s\t%.2fx faster than -j1\n", sweep_s[1], sweep_s[0] / sweep_s[1]);
  std::printf("processes\t%.3f s\t%.2fx the sweep -j1 (%zu processes, scaled)\n", processes, processes / sweep_s[0], ran);
  return 0;
}
