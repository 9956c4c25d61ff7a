// ASTRA-sim 2.0 analytical inputs (network YAML + system JSON):
// load_astra_platform on ASTRA-sim's own example files and on bad input.
#include <gtest/gtest.h>

#include "scratch_dir.h"
#include "test_data.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "collective/plan.h"
#include "config/input_error.h"
#include "config/platform.h"

namespace acesim {
namespace {

namespace fs = std::filesystem;

// ASTRA-sim's analytical backends read a network file's GB/s as 2^30 bytes/s.
constexpr double kAstraGB = 1073741824.0 / 1e9;

using acesim::test::kCustom;
using acesim::test::kData;
using acesim::test::kNet;
using acesim::test::kSys;

std::vector<Algorithm> algs(std::initializer_list<Algorithm> a) { return a; }

class AstraInputs : public test::ScratchDirTest {
 protected:
  // A valid 1-dimension network (8-NPU ring) and a valid system file.
  std::string ring8() { return kNet + "Ring_8npus.yml"; }
  std::string plain_system() { return write("plain.json", "{}\n"); }

  // The InputError message; fails the test when the pair is accepted or
  // something other than InputError is thrown.
  static std::string error_of(const std::string& network, const std::string& system) {
    try {
      load_astra_platform(network, system);
    } catch (const InputError& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.find('\n'), std::string::npos) << "message is not one line: " << msg;
      return msg;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not an InputError: " << e.what();
      return {};
    }
    ADD_FAILURE() << "accepted: " << network << " + " << system;
    return {};
  }
  static void expect_error(const std::string& network, const std::string& system, const std::string& prefix,
                           std::initializer_list<std::string> parts = {}) {
    const std::string msg = error_of(network, system);
    EXPECT_EQ(msg.rfind(prefix, 0), 0u) << "message: " << msg << "\nexpected prefix: " << prefix;
    for (const std::string& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "message: " << msg << "\nmissing: " << p;
  }
  // Network file `name` with the given body; errors are expected to start
  // with "<path>:<line>: <key>: <problem>".
  void expect_network_error(const std::string& body, int line, const std::string& key_and_problem,
                            std::initializer_list<std::string> parts = {}) {
    const std::string net = write("net.yml", body);
    expect_error(net, plain_system(), net + ":" + std::to_string(line) + ": " + key_and_problem, parts);
  }
  void expect_system_error(const std::string& body, int line, const std::string& key_and_problem,
                           std::initializer_list<std::string> parts = {}, const std::string& network = "") {
    const std::string sys = write("sys.json", body);
    const std::string prefix = line > 0 ? sys + ":" + std::to_string(line) + ": " + key_and_problem : sys + ": " + key_and_problem;
    expect_error(network.empty() ? ring8() : network, sys, prefix, parts);
  }

};

// ------------------------------------------------- ASTRA-sim's example files

TEST_F(AstraInputs, Ring8WithRing4Chunks) {
  const PlatformConfig p = load_astra_platform(kNet + "Ring_8npus.yml", kSys + "Ring_4chunks.json");
  EXPECT_EQ(p.source, kNet + "Ring_8npus.yml + " + kSys + "Ring_4chunks.json");
  ASSERT_EQ(p.dims.size(), 1u);
  EXPECT_EQ(p.dims[0].kind, DimKind::kRing);
  EXPECT_EQ(p.dims[0].npus, 8);
  EXPECT_DOUBLE_EQ(p.dims[0].bandwidth_GBps, 50.0 * kAstraGB);
  EXPECT_DOUBLE_EQ(p.dims[0].latency_ns, 500.0);
  EXPECT_EQ(p.dims[0].links_per_neighbour, 1);
  const CollectiveConfig& c = p.collectives;
  EXPECT_EQ(c.chunks, 4);  // preferred-dataset-splits
  EXPECT_EQ(c.active_chunks_per_dim, 1);
  EXPECT_EQ(c.policy, SchedulingPolicy::kLifo);
  EXPECT_EQ(c.endpoint_delay_ps, 10'000);  // 10 cycles of 1 ns
  for (CollectiveOp op : kAllCollectiveOps) {
    EXPECT_EQ(c.op(op).plan, PlanKind::kHierarchical) << to_string(op);
    EXPECT_EQ(c.op(op).per_dim, algs({algorithm("ring")})) << to_string(op);
  }
  ASSERT_TRUE(p.local_mem_bw_GBps.has_value());
  EXPECT_DOUBLE_EQ(*p.local_mem_bw_GBps, 1600.0);
  ASSERT_TRUE(p.peak_perf_TFLOPS.has_value());
  EXPECT_DOUBLE_EQ(*p.peak_perf_TFLOPS, 900.0);
  // boost-mode 0 and roofline-enabled 0 are the unmodelled defaults: no warning.
  EXPECT_TRUE(p.warnings.empty());
  // ASTRA-sim inputs keep acesim's default backend.
  EXPECT_EQ(p.network.backend, "fluid");
}

TEST_F(AstraInputs, HgxH100Validated) {
  const PlatformConfig p = load_astra_platform(kNet + "HGX-H100-validated.yml", kSys + "HGX-H100-validated.json");
  ASSERT_EQ(p.dims.size(), 1u);
  EXPECT_EQ(p.dims[0].kind, DimKind::kSwitch);
  EXPECT_EQ(p.dims[0].npus, 8);
  EXPECT_DOUBLE_EQ(p.dims[0].bandwidth_GBps, 400.0 * kAstraGB);
  EXPECT_DOUBLE_EQ(p.dims[0].latency_ns, 936.25);
  EXPECT_EQ(p.collectives.active_chunks_per_dim, 2);
  EXPECT_EQ(p.collectives.chunks, 4);
  EXPECT_EQ(p.collectives.endpoint_delay_ps, 10'000);
  // The file asks for ring everywhere, overriding the switch default (direct).
  EXPECT_EQ(p.collectives.op(CollectiveOp::kAllToAll).per_dim, algs({algorithm("ring")}));
  EXPECT_EQ(p.collectives.op(CollectiveOp::kAllReduce).plan, PlanKind::kHierarchical);
  ASSERT_TRUE(p.local_mem_bw_GBps.has_value());
  EXPECT_DOUBLE_EQ(*p.local_mem_bw_GBps, 3350.0);
  EXPECT_FALSE(p.peak_perf_TFLOPS.has_value());
  EXPECT_TRUE(p.warnings.empty());
}

TEST_F(AstraInputs, TwoDimensionsWithUnmodelledKeysWarn) {
  const std::string sys = kSys + "hgx_h100_16gpu.json";
  const PlatformConfig p = load_astra_platform(kNet + "hgx_h100_16gpu.yml", sys);
  ASSERT_EQ(p.dims.size(), 2u);
  EXPECT_EQ(p.dims[0].kind, DimKind::kSwitch);
  EXPECT_EQ(p.dims[0].npus, 8);
  EXPECT_DOUBLE_EQ(p.dims[0].bandwidth_GBps, 400.0 * kAstraGB);
  EXPECT_DOUBLE_EQ(p.dims[0].latency_ns, 936.25);
  EXPECT_EQ(p.dims[1].kind, DimKind::kRing);
  EXPECT_EQ(p.dims[1].npus, 2);
  EXPECT_DOUBLE_EQ(p.dims[1].bandwidth_GBps, 50.0 * kAstraGB);
  EXPECT_DOUBLE_EQ(p.dims[1].latency_ns, 1000.0);
  EXPECT_EQ(p.collectives.endpoint_delay_ps, 1'000);
  EXPECT_EQ(p.collectives.active_chunks_per_dim, 2);
  EXPECT_EQ(p.collectives.op(CollectiveOp::kAllReduce).per_dim, algs({algorithm("ring"), algorithm("ring")}));
  ASSERT_TRUE(p.peak_perf_TFLOPS.has_value());
  EXPECT_DOUBLE_EQ(*p.peak_perf_TFLOPS, 700.0);
  // track-local-mem 1, roofline-enabled 1 and local-mem-trace-filename are
  // read but not modelled: one warning each, naming the file.
  ASSERT_EQ(p.warnings.size(), 3u);
  std::string all;
  for (const std::string& w : p.warnings) {
    EXPECT_EQ(w.rfind(sys + ": ", 0), 0u) << w;
    EXPECT_NE(w.find("not modelled"), std::string::npos) << w;
    all += w + "\n";
  }
  for (const char* key : {"track-local-mem", "roofline-enabled", "local-mem-trace-filename"}) {
    EXPECT_NE(all.find(key), std::string::npos) << all;
  }
}

TEST_F(AstraInputs, Torus2D) {
  const PlatformConfig p = load_astra_platform(kNet + "tpu_v3_32_2dtorus.yml", kSys + "tpu_v3_32_2dtorus.json");
  ASSERT_EQ(p.dims.size(), 2u);
  EXPECT_EQ(p.dims[0].npus, 4);
  EXPECT_EQ(p.dims[1].npus, 8);
  for (const DimensionSpec& d : p.dims) {
    EXPECT_EQ(d.kind, DimKind::kRing);
    EXPECT_DOUBLE_EQ(d.bandwidth_GBps, 80.0 * kAstraGB);
    EXPECT_DOUBLE_EQ(d.latency_ns, 1000.0);
  }
  EXPECT_EQ(p.collectives.chunks, 1);
  EXPECT_EQ(p.collectives.op(CollectiveOp::kAllReduce).plan, PlanKind::kHierarchical);
  EXPECT_EQ(p.collectives.op(CollectiveOp::kAllReduce).per_dim, algs({algorithm("ring"), algorithm("ring")}));
}

TEST_F(AstraInputs, OneRingGivesTheFlatPlan) {
  const PlatformConfig p = load_astra_platform(kNet + "tpu_v3_32_2dtorus.yml", kCustom + "one_ring_2d.json");
  const CollectiveConfig& c = p.collectives;
  EXPECT_EQ(c.op(CollectiveOp::kAllReduce).plan, PlanKind::kFlat);
  EXPECT_EQ(c.op(CollectiveOp::kAllReduce).flat, algorithm("ring"));
  EXPECT_EQ(c.op(CollectiveOp::kAllGather).plan, PlanKind::kFlat);  // ["oneRing", "oneRing"]
  EXPECT_EQ(c.op(CollectiveOp::kAllGather).flat, algorithm("ring"));
  // ASTRA-sim 1.0 style string "ring_ring".
  EXPECT_EQ(c.op(CollectiveOp::kReduceScatter).plan, PlanKind::kHierarchical);
  EXPECT_EQ(c.op(CollectiveOp::kReduceScatter).per_dim, algs({algorithm("ring"), algorithm("ring")}));
  EXPECT_EQ(c.op(CollectiveOp::kAllToAll).per_dim, algs({algorithm("direct"), algorithm("direct")}));
  EXPECT_EQ(c.policy, SchedulingPolicy::kFifo);
  EXPECT_EQ(c.endpoint_delay_ps, 5'000);
  EXPECT_EQ(c.chunks, 2);
}

TEST_F(AstraInputs, BaselineGivesThePerDimensionAllReduce) {
  const PlatformConfig p = load_astra_platform(kNet + "tpu_v3_32_2dtorus.yml", kCustom + "baseline_2d.json");
  const CollectiveConfig& c = p.collectives;
  EXPECT_EQ(c.op(CollectiveOp::kAllReduce).plan, PlanKind::kPerDimension);
  EXPECT_EQ(c.op(CollectiveOp::kAllReduce).per_dim, algs({algorithm("ring"), algorithm("halving-doubling")}));
  // Only all-reduce is affected.
  EXPECT_EQ(c.op(CollectiveOp::kReduceScatter).plan, PlanKind::kHierarchical);
  EXPECT_EQ(c.op(CollectiveOp::kAllGather).plan, PlanKind::kHierarchical);
  EXPECT_EQ(c.op(CollectiveOp::kAllToAll).plan, PlanKind::kHierarchical);
}

TEST_F(AstraInputs, BaselineLeavesAFlatAllReduceAlone) {
  const std::string sys =
      write("s.json", R"({"all-reduce-implementation": ["oneRing"], "collective-optimization": "baseline"})");
  const PlatformConfig p = load_astra_platform(kNet + "tpu_v3_32_2dtorus.yml", sys);
  EXPECT_EQ(p.collectives.op(CollectiveOp::kAllReduce).plan, PlanKind::kFlat);
}

TEST_F(AstraInputs, EmptySystemObjectKeepsDefaults) {
  const PlatformConfig p = load_astra_platform(kNet + "HGX-H100-validated.yml", plain_system());
  EXPECT_EQ(p.collectives.chunks, 1);
  EXPECT_EQ(p.collectives.active_chunks_per_dim, 1);
  EXPECT_EQ(p.collectives.endpoint_delay_ps, 0);
  EXPECT_EQ(p.collectives.op(CollectiveOp::kAllReduce).per_dim, algs({algorithm("direct")}));  // switch default
}

TEST_F(AstraInputs, NamesAreMatchedLoosely) {
  const std::string net = write("n.yml",
                                "topology: [ fully_connected, SWITCH, ring ]\n"
                                "npus_count: [ 2, 2, 2 ]\n"
                                "bandwidth: [ 1, 2, 3.5 ]\n"
                                "latency: [ 0, 1.5, 2 ]\n");
  const std::string sys = write("s.json", R"({"scheduling-policy": "fifo", "all-reduce-implementation": ["Ring", "DIRECT", "halving_doubling"]})");
  const PlatformConfig p = load_astra_platform(net, sys);
  ASSERT_EQ(p.dims.size(), 3u);
  EXPECT_EQ(p.dims[0].kind, DimKind::kFullyConnected);
  EXPECT_EQ(p.dims[1].kind, DimKind::kSwitch);
  EXPECT_EQ(p.dims[2].kind, DimKind::kRing);
  EXPECT_DOUBLE_EQ(p.dims[2].bandwidth_GBps, 3.5 * kAstraGB);
  EXPECT_DOUBLE_EQ(p.dims[1].latency_ns, 1.5);
  EXPECT_EQ(p.collectives.policy, SchedulingPolicy::kFifo);
  EXPECT_EQ(p.collectives.op(CollectiveOp::kAllReduce).per_dim,
            algs({algorithm("ring"), algorithm("direct"), algorithm("halving-doubling")}));
}

// ------------------------------------------------------------- bad networks

TEST_F(AstraInputs, NetworkFileProblems) {
  expect_error(kNet + "no_such.yml", plain_system(), kNet + "no_such.yml: cannot open");
  expect_error(dir_.string(), plain_system(), dir_.string() + ": is a directory");
  const std::string empty = write("empty.yml", "");
  expect_error(empty, plain_system(), empty + ": file is empty");
  const std::string list = write("list.yml", "- Ring\n- 8\n");
  expect_error(list, plain_system(), list + ":1: expected a map of keys");
}

TEST_F(AstraInputs, MalformedNetworkYaml) {
  const std::string net = write("net.yml", "topology: [ Ring\nnpus_count: [ 8 ]\n");
  expect_error(net, plain_system(), net + ":", {"malformed YAML"});
}

TEST_F(AstraInputs, NetworkUnknownKeySuggests) {
  expect_network_error("topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwith: [ 50 ]\nlatency: [ 500 ]\n", 3,
                       "bandwith: unknown key", {"did you mean 'bandwidth'"});
  expect_network_error("topology: [ Ring ]\nnpus: [ 8 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n", 2,
                       "npus: unknown key", {"(valid: topology, npus_count, bandwidth, latency)"});
}

TEST_F(AstraInputs, NetworkRepeatedKey) {
  expect_network_error("topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\nlatency: [ 5 ]\n", 5,
                       "latency: given twice", {"first on line 4"});
}

TEST_F(AstraInputs, NetworkMissingKey) {
  expect_network_error("topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50 ]\n", 1, "latency: missing (required)");
}

TEST_F(AstraInputs, NetworkListsRequired) {
  expect_network_error("topology: [ Ring ]\nnpus_count: 8\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n", 2,
                       "npus_count: expected a list");
  expect_network_error("topology: []\nnpus_count: []\nbandwidth: []\nlatency: []\n", 1, "topology: no dimensions given");
  expect_network_error("topology: [ [Ring] ]\nnpus_count: [ 8 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n", 1,
                       "topology[0]: expected a single value");
}

TEST_F(AstraInputs, NetworkEmptyValueIsReportedAtItsKey) {
  expect_network_error("topology:\n# Ring, Ring\n\nnpus_count: [ 8 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n", 1,
                       "topology: expected a list");
}

TEST_F(AstraInputs, NetworkUnknownTopology) {
  expect_network_error("topology: [ Ring, Rnig ]\nnpus_count: [ 2, 2 ]\nbandwidth: [ 5, 5 ]\nlatency: [ 1, 1 ]\n", 1,
                       "topology[1]: unknown topology 'Rnig'", {"did you mean 'Ring'"});
  expect_network_error("topology: [ Torus ]\nnpus_count: [ 8 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n", 1,
                       "topology[0]: unknown topology 'Torus'", {"Ring, FullyConnected, Switch"});
}

TEST_F(AstraInputs, NetworkNpusCount) {
  expect_network_error("topology: [ Ring ]\nnpus_count: [ 0 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n", 2,
                       "npus_count[0]: must be", {"got 0"});
  expect_network_error("topology: [ Ring ]\nnpus_count: [ -8 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n", 2,
                       "npus_count[0]: must be", {"got -8"});
  expect_network_error("topology: [ Ring ]\nnpus_count: [ 8.0 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n", 2,
                       "npus_count[0]: expected an integer, got '8.0'");
  // Block-style lists: the line of the offending entry.
  expect_network_error("topology:\n  - Ring\n  - Ring\nnpus_count:\n  - 4\n  - 0\nbandwidth: [ 5, 5 ]\nlatency: [ 1, 1 ]\n",
                       6, "npus_count[1]: must be", {"got 0"});
  expect_network_error(
      "topology: [ Ring, Ring ]\nnpus_count: [ 8192, 8192 ]\nbandwidth: [ 5, 5 ]\nlatency: [ 1, 1 ]\n", 2,
      "npus_count: more than 16777216 NPUs");
}

TEST_F(AstraInputs, NetworkBandwidth) {
  // ASTRA-sim's own dgx_v100_8gpu.yml has "tbd" placeholders (line 11).
  const std::string dgx = kNet + "dgx_v100_8gpu.yml";
  expect_error(dgx, kSys + "dgx_v100_8gpu.json", dgx + ":11: bandwidth[0]: expected a number, got 'tbd'");
  expect_network_error("topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 0 ]\nlatency: [ 500 ]\n", 3,
                       "bandwidth[0]: must be in 1e-6..1e9 GB/s, got 0");
  expect_network_error("topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ -50 ]\nlatency: [ 500 ]\n", 3,
                       "bandwidth[0]: must be in 1e-6..1e9 GB/s, got -50");
  expect_network_error("topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50GB ]\nlatency: [ 500 ]\n", 3,
                       "bandwidth[0]: expected a number, got '50GB'");
}

TEST_F(AstraInputs, NetworkLatency) {
  expect_network_error("topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50 ]\nlatency: [ -5 ]\n", 4,
                       "latency[0]: must be >= 0 ns, got -5");
  expect_network_error("topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50 ]\nlatency: [ 1e300 ]\n", 4,
                       "latency[0]: must be at most 1e9 ns");
  expect_network_error("topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50 ]\nlatency: [ tbd ]\n", 4,
                       "latency[0]: expected a number, got 'tbd'");
}

TEST_F(AstraInputs, NetworkListLengthsMustAgree) {
  expect_network_error("topology: [ Ring ]\nnpus_count: [ 8, 2 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n", 2,
                       "npus_count: 2 entries, but topology lists 1 dimension");
  expect_network_error("topology: [ Ring, Ring ]\nnpus_count: [ 8, 2 ]\nbandwidth: [ 50, 50 ]\nlatency: [ 500 ]\n", 4,
                       "latency: 1 entry, but topology lists 2 dimensions");
}

// -------------------------------------------------------------- bad systems

TEST_F(AstraInputs, SystemFileProblems) {
  expect_error(ring8(), kSys + "no_such.json", kSys + "no_such.json: cannot open");
  expect_error(ring8(), dir_.string(), dir_.string() + ": is a directory");
  expect_system_error("", 1, "malformed JSON");
  expect_system_error("[1, 2]\n", 1, "expected a JSON object");
  expect_system_error("\"LIFO\"\n", 1, "expected a JSON object");
}

TEST_F(AstraInputs, MalformedJsonNamesTheLine) {
  // Trailing comma: the parser stops at the '}' on line 4.
  expect_system_error("{\n  \"scheduling-policy\": \"LIFO\",\n  \"endpoint-delay\": 0,\n}\n", 4, "malformed JSON");
  expect_system_error("{\n  \"endpoint-delay\": 0\n  \"preferred-dataset-splits\": 2\n}\n", 3, "malformed JSON");
  // A number too large for a double used to escape as an internal error.
  expect_system_error("{\n  \"endpoint-delay\": 1e400\n}\n", 2, "malformed JSON", {"1e400"});
}

TEST_F(AstraInputs, SystemUnknownKeySuggests) {
  expect_system_error("{\n  \"endpoint-delay\": 1,\n  \"all-reduce-implementaton\": [\"ring\"]\n}\n", 3,
                      "all-reduce-implementaton: unknown key", {"did you mean 'all-reduce-implementation'"});
  expect_system_error("{\"preferred-dataset-split\": 4}\n", 1, "preferred-dataset-split: unknown key",
                      {"did you mean 'preferred-dataset-splits'"});
}

TEST_F(AstraInputs, SystemValues) {
  expect_system_error("{\"scheduling-policy\": \"LILO\"}", 1, "scheduling-policy: expected \"LIFO\" or \"FIFO\"");
  expect_system_error("{\"endpoint-delay\": -1}", 1, "endpoint-delay: must be >= 0");
  expect_system_error("{\"endpoint-delay\": \"10\"}", 1, "endpoint-delay: expected a number");
  expect_system_error("{\"endpoint-delay\": 1e300}", 1, "endpoint-delay: must be at most 1e9 ns");
  expect_system_error("{\"preferred-dataset-splits\": 0}", 1, "preferred-dataset-splits: must be >= 1, got 0");
  expect_system_error("{\"preferred-dataset-splits\": 2.5}", 1, "preferred-dataset-splits: expected an integer");
  expect_system_error("{\"preferred-dataset-splits\": 4.0}", 1, "preferred-dataset-splits: expected an integer");
  expect_system_error("{\"preferred-dataset-splits\": 1000001}", 1, "preferred-dataset-splits: must be <= 1000000");
  // Used to wrap round to -1 ("must be >= 1, got -1").
  expect_system_error("{\"preferred-dataset-splits\": 18446744073709551615}", 1,
                      "preferred-dataset-splits: too large: 18446744073709551615");
  expect_system_error("{\"active-chunks-per-dimension\": 0}", 1, "active-chunks-per-dimension: must be >= 1");
  expect_system_error("{\"active-chunks-per-dimension\": -3}", 1, "active-chunks-per-dimension: must be >= 1");
  expect_system_error("{\"collective-optimization\": \"fast\"}", 1,
                      "collective-optimization: expected \"baseline\" or \"localBWAware\"");
  expect_system_error("{\"local-mem-bw\": 0}", 1, "local-mem-bw: must be > 0");
  expect_system_error("{\"peak-perf\": \"lots\"}", 1, "peak-perf: expected a number");
}

TEST_F(AstraInputs, SystemImplementations) {
  expect_system_error("{\"all-reduce-implementation\": [\"rnig\"]}", 1,
                      "all-reduce-implementation: unknown implementation 'rnig'", {"did you mean 'ring'"});
  expect_system_error("{\"all-reduce-implementation\": [\"oneRnig\"]}", 1,
                      "all-reduce-implementation: unknown implementation 'oneRnig'", {"did you mean 'oneRing'"});
  expect_system_error("{\"all-reduce-implementation\": []}", 1, "all-reduce-implementation: empty list");
  expect_system_error("{\"all-reduce-implementation\": 5}", 1, "all-reduce-implementation: expected a list");
  expect_system_error("{\"all-reduce-implementation\": [1]}", 1, "all-reduce-implementation: expected algorithm names");
  expect_system_error("{\"all-gather-implementation\": [\"doubleBinaryTree\"]}", 1, "all-gather-implementation:",
                      {"all-reduce only"});
  expect_system_error("{\"all-reduce-implementation\": [\"oneRing\", \"ring\"]}", 1, "all-reduce-implementation: mixes",
                      {}, kNet + "tpu_v3_32_2dtorus.yml");
  expect_system_error("{\"all-reduce-implementation\": [\"ring\", \"oneRing\"]}", 1, "all-reduce-implementation:",
                      {"cannot be mixed"}, kNet + "tpu_v3_32_2dtorus.yml");
  // halving-doubling needs a power of two: Ring_4npus is fine; a 6-ring is
  // read, and an all-reduce over it refused where it runs (plan_refusal).
  EXPECT_NO_THROW(load_astra_platform(kNet + "Ring_4npus.yml", write("hd.json", R"({"all-reduce-implementation": ["halvingDoubling"]})")));
  const std::string six = write("six.yml", "topology: [ Ring ]\nnpus_count: [ 6 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n");
  const PlatformConfig p = load_astra_platform(six, write("hd6.json", R"({"all-reduce-implementation": ["halvingDoubling"]})"));
  const Topology t(p.dims);
  EXPECT_EQ(plan_refusal(CollectiveOp::kAllReduce, p.collectives, plan_on_dims(CollectiveOp::kAllReduce, p.collectives, t, std::vector<int>{0})),
            "all-reduce over 6 NPUs: halving-doubling all-reduce needs a power-of-two group size, got 6; use ring");
}

TEST_F(AstraInputs, ImplementationListLongerThanTheNetwork) {
  expect_system_error("{\n  \"all-reduce-implementation\": [\"ring\", \"ring\"]\n}\n", 2,
                      "all-reduce-implementation: 2 entries, but " + ring8() + " has 1 dimension");
  // Also for one* lists.
  expect_system_error("{\n\n  \"all-reduce-implementation\": [\"oneRing\", \"oneRing\", \"oneRing\"]\n}\n", 3,
                      "all-reduce-implementation: 3 entries, but " + ring8() + " has 1 dimension");
  expect_system_error("{\"all-reduce-implementation\": \"ring_ring\"}", 1,
                      "all-reduce-implementation: 2 entries, but " + ring8() + " has 1 dimension");
}

TEST_F(AstraInputs, ImplementationListShorterThanTheNetwork) {
  expect_system_error("{\"reduce-scatter-implementation\": [\"ring\"]}", 1,
                      "reduce-scatter-implementation: 1 entry, but " + kNet + "tpu_v3_32_2dtorus.yml has 2 dimensions",
                      {}, kNet + "tpu_v3_32_2dtorus.yml");
}

// ASTRA-sim's own pairs that do not match: the first mismatching key is
// named at its line (keys are processed in alphabetical order).
TEST_F(AstraInputs, MismatchedExamplePairs) {
  struct Case {
    std::string net, sys, what;
  };
  const Case cases[] = {
      {kNet + "Ring_8npus.yml", kSys + "dgx_v100_8gpu.json", "3 entries, but " + kNet + "Ring_8npus.yml has 1 dimension"},
      {kNet + "tpu_v3_32_2dtorus.yml", kSys + "tpu_v3_8.json",
       "1 entry, but " + kNet + "tpu_v3_32_2dtorus.yml has 2 dimensions"},
      {kNet + "hgx_h100_16gpu.yml", kSys + "HGX-H100-validated.json",
       "1 entry, but " + kNet + "hgx_h100_16gpu.yml has 2 dimensions"},
  };
  for (const Case& c : cases) {
    const std::string msg = error_of(c.net, c.sys);
    std::smatch m;
    ASSERT_TRUE(std::regex_search(msg, m, std::regex("^(.*):([0-9]+): ([a-z-]+-implementation): (.*)$"))) << msg;
    EXPECT_EQ(m[1].str(), c.sys);
    EXPECT_EQ(m[4].str(), c.what);
    // The line named is the key's line in the file.
    std::ifstream in(c.sys);
    std::string line;
    int n = 0;
    int key_line = 0;
    while (std::getline(in, line)) {
      ++n;
      if (key_line == 0 && line.find("\"" + m[3].str() + "\"") != std::string::npos) key_line = n;
    }
    EXPECT_EQ(std::to_string(key_line), m[2].str()) << msg;
  }
}

}  // namespace
}  // namespace acesim

namespace acesim {
namespace {

TEST_F(AstraInputs, KeyGivenTwiceIsRefusedNotOverwritten) {
  expect_system_error("{\"preferred-dataset-splits\": 4,\n \"endpoint-delay\": 1,\n \"preferred-dataset-splits\": 8}\n", 3,
                      "preferred-dataset-splits: given twice (first on line 1)");
}

TEST_F(AstraInputs, ProblemsAreReportedInFileOrder) {
  // Both lists are too long for the 1-dimension ring; the first in the file is named.
  expect_system_error("{\"reduce-scatter-implementation\": [\"ring\", \"ring\"],\n"
                      " \"all-gather-implementation\": [\"ring\", \"ring\"]}\n",
                      1, "reduce-scatter-implementation: 2 entries");
}

TEST_F(AstraInputs, ActiveChunksAboveTheLimitAreRefusedNotClamped) {
  expect_system_error("{\"active-chunks-per-dimension\": 1000001}", 1, "active-chunks-per-dimension: must be <= 1000000");
}

}  // namespace
}  // namespace acesim
