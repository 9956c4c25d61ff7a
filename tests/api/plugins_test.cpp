// A workload format and a platform preset added from outside the library (the
// recipes of docs/architecture.md), run end to end through the facade.
#include <fstream>

#include <gtest/gtest.h>

#include "api/api.h"
#include "config/input_error.h"
#include "config/presets.h"
#include "scratch_dir.h"
#include "workload/formats/format_registry.h"

namespace acesim {
namespace {

// A toy layer table: one line per layer, "name compute_us allreduce_bytes".
Workload read_toy_table(const std::string& path, const Topology&) {
  std::ifstream in(path);
  Workload w;
  w.name = path;
  w.parallelism = "DATA";
  std::string name;
  double us = 0.0, bytes = 0.0;
  while (in >> name >> us >> bytes) {
    Layer l;
    l.name = name;
    l.forward.compute.time_ps = static_cast<TimePs>(us * 1e6);
    l.weight_grad.comm.op = CollectiveOp::kAllReduce;
    l.weight_grad.comm.bytes = bytes;
    l.weight_grad.comm.blocking = false;
    w.layers.push_back(l);
  }
  if (w.layers.empty()) throw InputError(path + ": no layers");
  return w;
}

void register_toys() {
  if (workload_format_registry().find("test-table") == nullptr) {
    WorkloadFormatEntry f;
    f.name = "test-table";
    f.help = "name compute_us allreduce_bytes per line (test)";
    f.option = "--workload FILE --format test-table";
    f.read_table = read_toy_table;
    workload_format_registry().add(std::move(f));
  }
  if (preset_registry().find("test-ring4") == nullptr) {
    PlatformPreset p;
    p.name = "test-ring4";
    p.help = "a ring of 4 NPUs (test)";
    p.yaml = "topology:\n  - {kind: ring, npus: 4, bandwidth_GBps: 100, latency_ns: 1000}\n";
    preset_registry().add(std::move(p));
  }
}

class Plugins : public test::ScratchDirTest {};

TEST_F(Plugins, AToyFormatOnAToyPresetRunsEndToEnd) {
  register_toys();
  api::TrainingRequest r;
  r.platform.file = "test-ring4";
  r.platform.executor = "ideal";
  r.workload_file = write("toy.txt", "only 100 4000000\n");
  r.workload_format = "test_table";
  r.iterations = 1;
  const api::TrainingRun run = api::simulate_training(r);
  ASSERT_EQ(run.reports.size(), 1u);
  EXPECT_EQ(run.platform.source, "preset test-ring4");
  // One iteration: 100 us of forward compute, then the 4 MB ring all-reduce
  // on 4 NPUs: 6 steps of (1 us + 1 MB / 100 GB/s) = 6 x 11 us.
  EXPECT_NEAR(ps_to_us(run.reports[0].iteration_ps), 100.0 + 6 * 11.0, 1e-3);
}

TEST_F(Plugins, AGraphFormatIsNotATable) {
  api::TrainingRequest r;
  r.workload_file = write("x.et", "");
  r.workload_format = "chakra";
  try {
    api::simulate_training(r);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "--format: chakra is not a layer table (use --chakra PREFIX)");
  }
}

}  // namespace
}  // namespace acesim
