// Chakra execution traces at scale: writes one trace per rank into a
// temporary directory, then times reading them (chakra::read_traces) and
// simulating them (run_chakra), per case.
//
//   acesim_bench_chakra [--case=NAME] [--list] [--keep=DIR]
//
// --keep=DIR writes the traces under DIR (DIR/t.<rank>.et) and leaves them
// there, to time `acesim run --chakra DIR/t` or a peer on the same files.
//
// Prints one tab-separated line per case: case, ranks, nodes per rank, bytes
// of traces, read s, simulate s, simulated ranks, simulated time (us), events,
// peak RSS of the process so far (MiB).
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "chakra/astra_to_chakra.h"
#include "chakra/chakra_writer.h"
#include "config/platform.h"
#include "driver/chakra_run.h"
#include "endpoint/executor_registry.h"
#include "workload/formats/astra_workload.h"

#ifndef ACESIM_BENCH_PLATFORMS
#define ACESIM_BENCH_PLATFORMS "bench/platforms"
#endif
#ifndef ACESIM_BENCH_DATA
#define ACESIM_BENCH_DATA "tests/data"
#endif

namespace acesim {
namespace {

namespace wire = test::chakra::wire;
using test::chakra::TraceWriter;

struct Case {
  const char* name;
  const char* platform;  // under bench/platforms/
  const char* executor;
  bool full;
  bool pipeline;  // point-to-point pipeline instead of data/tensor parallel layers
  bool resnet = false;  // ASTRA-sim's ResNet-50 table converted to Chakra, every rank alike
};

const Case kCases[] = {
    {"layers_1024/ideal", "torus_16x8x8.yaml", "ideal", false, false},
    {"layers_1024/sm", "torus_16x8x8.yaml", "sm", false, false},
    {"layers_1024/sm_full", "torus_16x8x8.yaml", "sm", true, false},
    {"pipeline_1024/sm", "torus_16x8x8.yaml", "sm", false, true},
    {"resnet50_astra_64/sm", "resnet_64.yaml", "sm", false, false, true},
};

constexpr int kLayers = 48;

// A transformer-like iteration: per layer a forward kernel and a blocking
// tensor-parallel all-reduce over dimension 0; backward: weight gradients,
// their all-reduce over dimensions 1 and 2 (not waited for), input gradients
// and a blocking all-reduce over dimension 0.
TraceWriter layers_trace() {
  TraceWriter w;
  uint64_t id = 0;
  std::vector<uint64_t> chain;
  for (int l = 0; l < kLayers; ++l) {
    const uint64_t f = id++;
    w.comp(f, "fwd" + std::to_string(l), 120, chain);
    const uint64_t tp = id++;
    w.coll(tp, "fwd_tp" + std::to_string(l), wire::ALL_REDUCE, 8 << 20, {f}, {true, false, false});
    chain = {tp};
  }
  for (int l = kLayers - 1; l >= 0; --l) {
    const uint64_t wg = id++;
    w.comp(wg, "wg" + std::to_string(l), 120, chain);
    w.coll(id++, "wg_dp" + std::to_string(l), wire::ALL_REDUCE, 32 << 20, {wg}, {false, true, true});
    const uint64_t ig = id++;
    w.comp(ig, "ig" + std::to_string(l), 120, {wg});
    const uint64_t tp = id++;
    w.coll(tp, "bwd_tp" + std::to_string(l), wire::ALL_REDUCE, 8 << 20, {ig}, {true, false, false});
    chain = {tp};
  }
  return w;
}

// A pipeline of `ranks` stages, 8 micro-batches: each stage receives from the
// previous one, computes, sends to the next (GPipe forward).
TraceWriter pipeline_trace(int rank, int ranks) {
  TraceWriter w;
  uint64_t id = 0;
  std::vector<uint64_t> prev;
  for (int m = 0; m < 8; ++m) {
    std::vector<uint64_t> deps = prev;
    if (rank > 0) {
      const uint64_t r = id++;
      w.recv(r, "recv" + std::to_string(m), rank - 1, 4 << 20, {}, m);
      deps.push_back(r);
    }
    const uint64_t c = id++;
    w.comp(c, "stage" + std::to_string(m), 200, deps);
    if (rank + 1 < ranks) w.send(id++, "send" + std::to_string(m), rank + 1, 4 << 20, {c}, m);
    prev = {c};
  }
  return w;
}

// ASTRA-sim's ResNet-50 data-parallel table (tests/data/astra-sim-1.0) as
// Chakra traces, converted as the tests convert a table (kernels rounded to
// whole microseconds, the format's unit): every rank's file the same.
TraceWriter resnet_trace(const PlatformConfig& p) {
  const Topology topo(p.dims);
  Workload w = read_astra_workload(std::string(ACESIM_BENCH_DATA) + "/astra-sim-1.0/workload/Resnet50_DataParallel.txt", topo);
  test::chakra::round_to_micros(w);
  return test::chakra::workload_to_chakra(w, topo);
}

long peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;
}

int run_case(const Case& c, const std::string& keep) {
  PlatformConfig p = load_platform_file(std::string(ACESIM_BENCH_PLATFORMS) + "/" + c.platform);
  p.npu.executor = executor_registry().get(c.executor).name;
  long long ranks = 1;
  for (const DimensionSpec& d : p.dims) ranks *= d.npus;
  const std::filesystem::path dir =
      !keep.empty() ? std::filesystem::path(keep)
                    : std::filesystem::temp_directory_path() / ("acesim_bench_chakra_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::vector<TraceWriter> writers;
  std::size_t nodes = 0;
  if (c.pipeline) {
    for (long long r = 0; r < ranks; ++r) writers.push_back(pipeline_trace(static_cast<int>(r), static_cast<int>(ranks)));
    nodes = writers[1].nodes.size();
  } else {
    writers.assign(static_cast<std::size_t>(ranks), c.resnet ? resnet_trace(p) : layers_trace());
    nodes = writers[0].nodes.size();
  }
  const std::string prefix = test::chakra::write_ranks(dir, "t", writers);
  std::uintmax_t bytes = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) bytes += e.file_size();
  writers.clear();

  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  const std::vector<chakra::Trace> traces = chakra::read_traces(prefix, static_cast<int>(ranks));
  const auto t1 = clock::now();
  ChakraRunOptions o;
  o.full = c.full;
  const ChakraReport r = run_chakra(p, traces, prefix, o);
  const auto t2 = clock::now();
  if (keep.empty()) std::filesystem::remove_all(dir);
  std::printf("%s\t%lld\t%zu\t%ju\t%.3f\t%.3f\t%lld\t%.1f\t%llu\t%ld\n", c.name, ranks, nodes, bytes,
              std::chrono::duration<double>(t1 - t0).count(), std::chrono::duration<double>(t2 - t1).count(),
              r.simulated_ranks, ps_to_us(r.total_ps), static_cast<unsigned long long>(r.events), peak_rss_mib());
  return 0;
}

}  // namespace
}  // namespace acesim

int main(int argc, char** argv) {
  std::string only, keep;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--list") == 0) {
      for (const auto& c : acesim::kCases) std::printf("%s\n", c.name);
      return 0;
    }
    if (std::strncmp(argv[i], "--case=", 7) == 0) {
      only = argv[i] + 7;
      continue;
    }
    if (std::strncmp(argv[i], "--keep=", 7) == 0 && argv[i][7] != '\0') {
      keep = argv[i] + 7;
      continue;
    }
    std::fprintf(stderr, "usage: acesim_bench_chakra [--case=NAME] [--list] [--keep=DIR]\n");
    return 2;
  }
  std::printf("# case\tranks\tnodes/rank\ttrace bytes\tread s\tsimulate s\tsimulated ranks\tsimulated us\tevents\tpeak RSS MiB\n");
  bool found = false;
  for (const auto& c : acesim::kCases) {
    if (!only.empty() && only != c.name) continue;
    found = true;
    try {
      acesim::run_case(c, keep);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "acesim_bench_chakra: %s: %s\n", c.name, e.what());
      return 1;
    }
  }
  if (!found) {
    std::fprintf(stderr, "acesim_bench_chakra: no case '%s'\n", only.c_str());
    return 2;
  }
  return 0;
}
