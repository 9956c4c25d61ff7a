// Whole runs: one collective simulated end to end through run_collective()
// (fresh Simulation, topology, network backend and collective engine each
// time), on the platforms in bench/platforms/.
//
//   acesim_bench_run [Google Benchmark flags]
//       every case as a Google Benchmark (wall time per run, events, events/s)
//   acesim_bench_run --case=NAME [--repeat=N]
//       one case, N runs in this process (default 3), then one line of
//       tab-separated figures: case, best and median wall time, events,
//       events/s, simulated time, and the process's peak RSS (getrusage).
//       bench/run.sh runs every case this way, one process each, so each
//       peak RSS belongs to one case.
//   acesim_bench_run --list
//       the case names
#include <benchmark/benchmark.h>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "config/platform.h"
#include "report/collective_sweep.h"

#ifndef ACESIM_BENCH_PLATFORMS
#define ACESIM_BENCH_PLATFORMS "bench/platforms"
#endif

namespace acesim {
namespace {

struct Case {
  const char* name;
  const char* platform;  // file under bench/platforms/
  std::uint64_t bytes;
  std::string backend;
  Granularity granularity;
};

constexpr std::uint64_t kMiB = 1ull << 20;
constexpr std::uint64_t kGiB = 1ull << 30;

// The target: a 1 GiB hierarchical all-reduce on 1,024 NPUs (16x8x8
// torus of rings, 64 chunks), with each backend/granularity; and a small case.
const Case kCases[] = {
    {"ring8_1MiB/fluid_phase", "ring_8.yaml", kMiB, "fluid", Granularity::kPhase},
    {"ring8_1MiB/fluid_step", "ring_8.yaml", kMiB, "fluid", Granularity::kStep},
    {"ring8_1MiB/analytical", "ring_8.yaml", kMiB, "analytical", Granularity::kPhase},
    {"torus1024_1GiB/fluid_phase", "torus_16x8x8.yaml", kGiB, "fluid", Granularity::kPhase},
    {"torus1024_1GiB/fluid_step", "torus_16x8x8.yaml", kGiB, "fluid", Granularity::kStep},
    {"torus1024_1GiB/analytical", "torus_16x8x8.yaml", kGiB, "analytical", Granularity::kPhase},
};

PlatformConfig platform_for(const Case& c) {
  PlatformConfig p = load_platform_file(std::string(ACESIM_BENCH_PLATFORMS) + "/" + c.platform);
  p.network.backend = c.backend;
  p.network.granularity = c.granularity;
  return p;
}

// Every rank simulated (--full): the benchmark measures the full engine,
// not the symmetric shortcut (which bench/run.sh times separately).
const CollectiveRequestSpec kAllReduce = [] {
  CollectiveRequestSpec s;
  s.full = true;
  return s;
}();

void BM_Run(benchmark::State& state, const Case& c) {
  const PlatformConfig platform = platform_for(c);
  CollectiveResult r{};
  for (auto _ : state) {
    r = run_collective(platform, kAllReduce, c.bytes);
    benchmark::DoNotOptimize(r.time_ps);
  }
  const auto events = static_cast<double>(r.events);
  state.SetItemsProcessed(static_cast<std::int64_t>(r.events) * state.iterations());  // events/s
  state.counters["events"] = events;
  state.counters["sim_us"] = ps_to_us(r.time_ps);
}

long peak_rss_kb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;  // kB on Linux
}

int run_one(std::string_view name, int repeat) {
  const Case* found = nullptr;
  for (const Case& c : kCases) {
    if (name == c.name) found = &c;
  }
  if (found == nullptr) {
    std::fprintf(stderr, "acesim_bench_run: unknown case '%.*s' (see --list)\n", static_cast<int>(name.size()),
                 name.data());
    return 2;
  }
  const PlatformConfig platform = platform_for(*found);
  std::vector<double> wall;
  CollectiveResult r{};
  for (int i = 0; i < repeat; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    r = run_collective(platform, kAllReduce, found->bytes);
    const auto t1 = std::chrono::steady_clock::now();
    wall.push_back(std::chrono::duration<double>(t1 - t0).count());
  }
  std::sort(wall.begin(), wall.end());
  const double best = wall.front();
  const double median = wall[wall.size() / 2];
  // case, best wall (s), median wall (s), events, events/s (best), simulated time (us), peak RSS (kB)
  std::printf("%s\t%.6f\t%.6f\t%llu\t%.0f\t%.3f\t%ld\n", found->name, best, median,
              static_cast<unsigned long long>(r.events), best > 0.0 ? static_cast<double>(r.events) / best : 0.0,
              ps_to_us(r.time_ps), peak_rss_kb());
  return 0;
}

}  // namespace
}  // namespace acesim

int main(int argc, char** argv) {
  using namespace acesim;
  std::string one;
  int repeat = 3;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--list") {
      for (const Case& c : kCases) std::printf("%s\n", c.name);
      return 0;
    }
    if (a.starts_with("--case=")) one = std::string(a.substr(7));
    if (a.starts_with("--repeat=")) repeat = std::max(1, std::atoi(argv[i] + 9));
  }
  try {
    if (!one.empty()) return run_one(one, repeat);
    for (const Case& c : kCases) {
      benchmark::RegisterBenchmark(c.name, BM_Run, c)->Unit(benchmark::kMillisecond)->UseRealTime();
    }
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "acesim_bench_run: %s\n", e.what());
    return 1;
  }
  return 0;
}
