// acesim's native platform YAML: parse_platform_yaml, load_platform_file and
// the built-in default platform. Good files are checked value by value; bad
// ones must throw InputError naming the file, line and key, and the problem.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include "collective/plan.h"
#include "config/input_error.h"
#include "config/platform.h"
#include "config/yaml_errors.h"
#include "test_data.h"

namespace acesim {
namespace {

using test::ring8;

using test::kData;

std::string error_of(const std::string& text, const std::string& file = "bad.yaml") { return test::yaml_error_of(text, file); }

// The message must start with `prefix` ("file:line: key: ") and contain each
// of `parts`; it must be one line.
void expect_error(const std::string& text, const std::string& prefix, std::initializer_list<std::string> parts = {}) {
  const std::string msg = error_of(text);
  EXPECT_EQ(msg.rfind(prefix, 0), 0u) << "message: " << msg << "\nexpected prefix: " << prefix;
  for (const std::string& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "message: " << msg << "\nmissing: " << p;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << "message is not one line: " << msg;
}

// A valid one-dimension file with `extra` appended (the ring is on lines 2-6).

std::vector<Algorithm> algs(std::initializer_list<Algorithm> a) { return a; }

// ---------------------------------------------------------------- good input

TEST(NativeYaml, DefaultPlatformMatchesPreset) {
  const PlatformConfig p = default_platform();
  EXPECT_EQ(p.source, "presets/default.yaml");
  ASSERT_EQ(p.dims.size(), 3u);
  const double bw[] = {200, 100, 100};
  const double lat[] = {20, 500, 500};
  for (int d = 0; d < 3; ++d) {
    EXPECT_EQ(p.dims[d].kind, DimKind::kRing);
    EXPECT_EQ(p.dims[d].npus, 4);
    EXPECT_DOUBLE_EQ(p.dims[d].bandwidth_GBps, bw[d]);
    EXPECT_DOUBLE_EQ(p.dims[d].latency_ns, lat[d]);
    EXPECT_EQ(p.dims[d].links_per_neighbour, 1);
  }
  EXPECT_EQ(p.network.backend, "fluid");
  EXPECT_EQ(p.network.granularity, Granularity::kPhase);
  const CollectiveConfig& c = p.collectives;
  EXPECT_EQ(c.chunks, 16);
  EXPECT_EQ(c.active_chunks_per_dim, 1);
  EXPECT_EQ(c.policy, SchedulingPolicy::kLifo);
  EXPECT_EQ(c.endpoint_delay_ps, 10'000);
  EXPECT_EQ(c.op(CollectiveOp::kAllReduce).plan, PlanKind::kHierarchical);
  EXPECT_EQ(c.op(CollectiveOp::kAllReduce).per_dim, algs({algorithm("ring"), algorithm("ring"), algorithm("ring")}));
  EXPECT_EQ(c.op(CollectiveOp::kReduceScatter).per_dim, algs({algorithm("ring"), algorithm("ring"), algorithm("ring")}));
  EXPECT_EQ(c.op(CollectiveOp::kAllGather).per_dim, algs({algorithm("ring"), algorithm("ring"), algorithm("ring")}));
  EXPECT_EQ(c.op(CollectiveOp::kAllToAll).per_dim, algs({algorithm("direct"), algorithm("direct"), algorithm("direct")}));
  EXPECT_TRUE(p.warnings.empty());
}

TEST(NativeYaml, EmbeddedDefaultIsTheShippedPresetFile) {
  std::ifstream in(acesim::test::source_dir() + "/presets/default.yaml");
  ASSERT_TRUE(in) << "presets/default.yaml not found";
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(default_platform_yaml(), ss.str());
}

TEST(NativeYaml, MinimalFileGetsDocumentedDefaults) {
  const PlatformConfig p = load_platform_file(kData + "/platforms/ring8.yaml");
  EXPECT_EQ(p.source, kData + "/platforms/ring8.yaml");
  ASSERT_EQ(p.dims.size(), 1u);
  EXPECT_EQ(p.dims[0].kind, DimKind::kRing);
  EXPECT_EQ(p.dims[0].npus, 8);
  EXPECT_DOUBLE_EQ(p.dims[0].bandwidth_GBps, 50.0);
  EXPECT_DOUBLE_EQ(p.dims[0].latency_ns, 500.0);
  EXPECT_EQ(p.dims[0].links_per_neighbour, 1);
  EXPECT_EQ(p.network.backend, "fluid");
  EXPECT_EQ(p.network.granularity, Granularity::kPhase);
  EXPECT_EQ(p.collectives.chunks, 1);
  EXPECT_EQ(p.collectives.active_chunks_per_dim, 1);
  EXPECT_EQ(p.collectives.policy, SchedulingPolicy::kLifo);
  EXPECT_EQ(p.collectives.endpoint_delay_ps, 0);
  for (CollectiveOp op : kAllCollectiveOps) {
    EXPECT_EQ(p.collectives.op(op).plan, PlanKind::kHierarchical);
    EXPECT_EQ(p.collectives.op(op).per_dim, algs({algorithm("ring")}));
  }
}

TEST(NativeYaml, EveryKeyIsRead) {
  const PlatformConfig p = load_platform_file(kData + "/platforms/mixed_3d.yaml");
  ASSERT_EQ(p.dims.size(), 3u);
  EXPECT_EQ(p.dims[0].kind, DimKind::kFullyConnected);
  EXPECT_EQ(p.dims[1].kind, DimKind::kSwitch);
  EXPECT_EQ(p.dims[2].kind, DimKind::kRing);  // written "Ring"
  EXPECT_EQ(p.dims[0].npus, 4);
  EXPECT_EQ(p.dims[1].npus, 8);
  EXPECT_EQ(p.dims[2].npus, 4);
  EXPECT_DOUBLE_EQ(p.dims[0].bandwidth_GBps, 150.0);
  EXPECT_DOUBLE_EQ(p.dims[1].bandwidth_GBps, 100.0);
  EXPECT_DOUBLE_EQ(p.dims[2].bandwidth_GBps, 50.5);
  EXPECT_DOUBLE_EQ(p.dims[0].latency_ns, 20.0);
  EXPECT_DOUBLE_EQ(p.dims[1].latency_ns, 250.0);
  EXPECT_DOUBLE_EQ(p.dims[2].latency_ns, 700.0);
  EXPECT_EQ(p.dims[0].links_per_neighbour, 2);
  EXPECT_EQ(p.dims[1].links_per_neighbour, 1);
  EXPECT_EQ(p.network.backend, "analytical");
  EXPECT_EQ(p.network.granularity, Granularity::kStep);
  const CollectiveConfig& c = p.collectives;
  EXPECT_EQ(c.chunks, 8);
  EXPECT_EQ(c.active_chunks_per_dim, 2);
  EXPECT_EQ(c.policy, SchedulingPolicy::kFifo);
  EXPECT_EQ(c.endpoint_delay_ps, 12'500);  // 12.5 ns
  EXPECT_EQ(c.op(CollectiveOp::kAllReduce).plan, PlanKind::kPerDimension);
  EXPECT_EQ(c.op(CollectiveOp::kAllReduce).per_dim,
            algs({algorithm("direct"), algorithm("halving-doubling"), algorithm("ring")}));
  EXPECT_EQ(c.op(CollectiveOp::kReduceScatter).plan, PlanKind::kHierarchical);
  EXPECT_EQ(c.op(CollectiveOp::kReduceScatter).per_dim, algs({algorithm("ring"), algorithm("ring"), algorithm("ring")}));
  // `plan: flat` written after `algorithm` still applies.
  EXPECT_EQ(c.op(CollectiveOp::kAllGather).plan, PlanKind::kFlat);
  EXPECT_EQ(c.op(CollectiveOp::kAllGather).flat, algorithm("ring"));
  EXPECT_EQ(c.op(CollectiveOp::kAllToAll).per_dim,
            algs({algorithm("direct"), algorithm("direct"), algorithm("direct")}));
}

TEST(NativeYaml, DefaultAlgorithmFollowsDimensionKind) {
  const PlatformConfig p = parse_platform_yaml(
      "topology:\n"
      "  - {kind: switch, npus: 4, bandwidth_GBps: 10, latency_ns: 1}\n"
      "  - {kind: fully_connected, npus: 2, bandwidth_GBps: 10, latency_ns: 1}\n"
      "  - {kind: RING, npus: 2, bandwidth_GBps: 10, latency_ns: 0}\n",
      "kinds.yaml");
  ASSERT_EQ(p.dims.size(), 3u);
  EXPECT_EQ(p.dims[0].kind, DimKind::kSwitch);
  EXPECT_EQ(p.dims[1].kind, DimKind::kFullyConnected);
  EXPECT_EQ(p.dims[2].kind, DimKind::kRing);
  EXPECT_DOUBLE_EQ(p.dims[2].latency_ns, 0.0);
  EXPECT_EQ(p.collectives.op(CollectiveOp::kAllReduce).per_dim,
            algs({algorithm("direct"), algorithm("direct"), algorithm("ring")}));
}

TEST(NativeYaml, SingleAlgorithmNameAppliesToEveryDimension) {
  const PlatformConfig p = parse_platform_yaml(
      "topology:\n"
      "  - {kind: ring, npus: 4, bandwidth_GBps: 10, latency_ns: 1}\n"
      "  - {kind: ring, npus: 8, bandwidth_GBps: 10, latency_ns: 1}\n"
      "collectives:\n"
      "  all-reduce: {algorithm: hd}\n"
      "  all-gather: {plan: flat, algorithm: [halvingDoubling]}\n"
      "  reduce-scatter: {algorithm: [ring, direct]}\n"
      "  all-to-all: {}\n",
      "algs.yaml");
  EXPECT_EQ(p.collectives.op(CollectiveOp::kAllReduce).per_dim,
            algs({algorithm("halving-doubling"), algorithm("halving-doubling")}));
  EXPECT_EQ(p.collectives.op(CollectiveOp::kAllGather).plan, PlanKind::kFlat);
  EXPECT_EQ(p.collectives.op(CollectiveOp::kAllGather).flat, algorithm("halving-doubling"));
  EXPECT_EQ(p.collectives.op(CollectiveOp::kReduceScatter).per_dim, algs({algorithm("ring"), algorithm("direct")}));
  EXPECT_EQ(p.collectives.op(CollectiveOp::kAllToAll).per_dim, algs({algorithm("ring"), algorithm("ring")}));
}

TEST(NativeYaml, DimensionOfOneNpuIsAllowed) {
  const PlatformConfig p = parse_platform_yaml(
      "topology:\n  - {kind: ring, npus: 1, bandwidth_GBps: 1, latency_ns: 1}\n", "one.yaml");
  ASSERT_EQ(p.dims.size(), 1u);
  EXPECT_EQ(p.dims[0].npus, 1);
}

// ----------------------------------------------------------------- bad input

TEST(NativeYamlErrors, EmptyOrCommentOnlyFile) {
  expect_error("", "bad.yaml: file is empty");
  expect_error("# just a comment\n\n", "bad.yaml: file is empty");
}

TEST(NativeYamlErrors, SecondDocumentIsRefusedNotDropped) {
  expect_error(ring8("---\ntopology: []\n"), "bad.yaml:7: more than one YAML document");
  // An empty document after the first is harmless.
  EXPECT_NO_THROW(parse_platform_yaml(ring8("---\n"), "ok.yaml"));
  EXPECT_NO_THROW(parse_platform_yaml("---\n" + ring8(), "ok.yaml"));
}

TEST(NativeYamlErrors, RootMustBeAMap) {
  expect_error("- a\n- b\n", "bad.yaml:1: expected a map of keys");
  expect_error("just a string\n", "bad.yaml:1: expected a map of keys");
}

TEST(NativeYamlErrors, MalformedYamlNamesTheLine) {
  expect_error("topology:\n  - {kind: ring, npus: 8\n", "bad.yaml:", {"malformed YAML"});
  const std::string msg = error_of("topology:\n  - kind: ring\n    npus: [8\n    latency_ns: 5\n");
  EXPECT_NE(msg.find("malformed YAML"), std::string::npos) << msg;
  expect_error("a: *nowhere\n", "bad.yaml:1: ", {"malformed YAML"});
}

TEST(NativeYamlErrors, UnknownKeySuggestsTheClosest) {
  expect_error(
      "topology:\n"
      "  - kind: ring\n"
      "    npus: 8\n"
      "    bandwith_GBps: 50\n"
      "    latency_ns: 500\n",
      "bad.yaml:4: topology[0].bandwith_GBps: unknown key", {"did you mean 'bandwidth_GBps'"});
  expect_error("topolgy:\n  - {kind: ring, npus: 8, bandwidth_GBps: 50, latency_ns: 500}\n",
               "bad.yaml:1: topolgy: unknown key", {"did you mean 'topology'"});
  expect_error(ring8("collectives:\n  all-reduce:\n    algoritm: ring\n"),
               "bad.yaml:8: collectives.all-reduce.algoritm: unknown key", {"did you mean 'algorithm'"});
  expect_error(ring8("network:\n  backnd: fluid\n"), "bad.yaml:7: network.backnd: unknown key",
               {"did you mean 'backend'"});
  expect_error(ring8("collectives:\n  chunk: 4\n"), "bad.yaml:7: collectives.chunk: unknown key",
               {"did you mean 'chunks'"});
  // Nothing close: the valid keys are listed.
  expect_error(ring8("zzzzzzzzzz: 1\n"), "bad.yaml:6: zzzzzzzzzz: unknown key",
               {"valid: topology, network, collectives"});
}

TEST(NativeYamlErrors, RepeatedKeyIsRefused) {
  expect_error(
      "topology:\n"
      "  - kind: ring\n"
      "    npus: 8\n"
      "    bandwidth_GBps: 50\n"
      "    latency_ns: 500\n"
      "    npus: 4\n",
      "bad.yaml:6: topology[0].npus: given twice", {"line 3"});
  expect_error(ring8("collectives: {chunks: 2}\ncollectives: {chunks: 3}\n"), "bad.yaml:7: collectives: given twice",
               {"line 6"});
}

TEST(NativeYamlErrors, MissingRequiredKeys) {
  expect_error("network: {backend: fluid}\n", "bad.yaml:1: topology: missing (required)");
  expect_error("topology:\n  - {kind: ring, npus: 8, bandwidth_GBps: 50}\n", "bad.yaml:2: topology[0].latency_ns:",
               {"missing (required)"});
  expect_error("topology:\n  - {npus: 8, bandwidth_GBps: 50, latency_ns: 1}\n", "bad.yaml:2: topology[0].kind:",
               {"missing (required)"});
}

TEST(NativeYamlErrors, TopologyShape) {
  expect_error("topology: []\n", "bad.yaml:1: topology: expected a non-empty list of dimensions");
  expect_error("topology: ring\n", "bad.yaml:1: topology: expected a non-empty list of dimensions");
  expect_error("topology: [ ring ]\n", "bad.yaml:1: topology[0]: expected a map of keys");
  std::string many = "topology:\n";
  for (int i = 0; i < 17; ++i) many += "  - {kind: ring, npus: 2, bandwidth_GBps: 1, latency_ns: 1}\n";
  expect_error(many, "bad.yaml:2: topology: at most 16 dimensions");
  expect_error(
      "topology:\n"
      "  - {kind: ring, npus: 8192, bandwidth_GBps: 1, latency_ns: 1}\n"
      "  - {kind: ring, npus: 8192, bandwidth_GBps: 1, latency_ns: 1}\n",
      "bad.yaml:3: topology: more than 16777216 NPUs in total");
}

TEST(NativeYamlErrors, UnknownNamesSuggestTheClosest) {
  expect_error("topology:\n  - {kind: rign, npus: 8, bandwidth_GBps: 50, latency_ns: 500}\n",
               "bad.yaml:2: topology[0].kind: unknown kind 'rign'", {"did you mean 'ring'"});
  expect_error(ring8("collectives:\n  all-reduce:\n    algorithm: rnig\n"),
               "bad.yaml:8: collectives.all-reduce.algorithm: unknown algorithm 'rnig'", {"did you mean 'ring'"});
  expect_error(ring8("collectives:\n  all-reduce:\n    algorithm: [quantum]\n"),
               "bad.yaml:8: collectives.all-reduce.algorithm: unknown algorithm 'quantum'",
               {"valid: ring, direct, halving-doubling, double-binary-tree"});
  expect_error(ring8("collectives:\n  all-reduce:\n    plan: hierarchcal\n"),
               "bad.yaml:8: collectives.all-reduce.plan: unknown plan 'hierarchcal'", {"did you mean 'hierarchical'"});
  expect_error(ring8("network:\n  backend: fluidd\n"), "bad.yaml:7: network.backend: unknown backend 'fluidd'",
               {"did you mean 'fluid'"});
  expect_error(ring8("network:\n  granularity: steps\n"),
               "bad.yaml:7: network.granularity: unknown granularity 'steps'", {"did you mean 'step'"});
  expect_error(ring8("collectives:\n  scheduling: lifa\n"), "bad.yaml:7: collectives.scheduling: unknown policy 'lifa'",
               {"did you mean 'lifo'"});
}

TEST(NativeYamlErrors, NpusMustBeAPositiveInteger) {
  auto with_npus = [](const std::string& v) {
    return "topology:\n  - kind: ring\n    npus: " + v + "\n    bandwidth_GBps: 50\n    latency_ns: 500\n";
  };
  expect_error(with_npus("0"), "bad.yaml:3: topology[0].npus: must be an integer in 1..1048576, got 0");
  expect_error(with_npus("-4"), "bad.yaml:3: topology[0].npus: must be an integer in 1..1048576, got -4");
  expect_error(with_npus("8.5"), "bad.yaml:3: topology[0].npus: expected an integer, got '8.5'");
  expect_error(with_npus("eight"), "bad.yaml:3: topology[0].npus: expected an integer, got 'eight'");
  expect_error(with_npus("0x10"), "bad.yaml:3: topology[0].npus: expected an integer");
  expect_error(with_npus("99999999999999999999"), "bad.yaml:3: topology[0].npus: expected an integer");
  expect_error(with_npus("2147483648"), "bad.yaml:3: topology[0].npus: must be an integer in 1..1048576");
  expect_error(with_npus("[8]"), "bad.yaml:3: topology[0].npus: expected a single value");
  expect_error(with_npus("~"), "bad.yaml:3: topology[0].npus: expected a single value");
}

TEST(NativeYamlErrors, BandwidthMustBePositive) {
  auto with_bw = [](const std::string& v) {
    return "topology:\n  - kind: ring\n    npus: 8\n    bandwidth_GBps: " + v + "\n    latency_ns: 500\n";
  };
  expect_error(with_bw("0"), "bad.yaml:4: topology[0].bandwidth_GBps: must be in 1e-6..1e9 GB/s, got 0");
  expect_error(with_bw("-50"), "bad.yaml:4: topology[0].bandwidth_GBps: must be in 1e-6..1e9 GB/s, got -50");
  expect_error(with_bw("50GB"), "bad.yaml:4: topology[0].bandwidth_GBps: expected a number, got '50GB'");
  expect_error(with_bw("tbd"), "bad.yaml:4: topology[0].bandwidth_GBps: expected a number, got 'tbd'");
  expect_error(with_bw("inf"), "bad.yaml:4: topology[0].bandwidth_GBps: expected a number");
  expect_error(with_bw("nan"), "bad.yaml:4: topology[0].bandwidth_GBps: expected a number");
  expect_error(with_bw(".inf"), "bad.yaml:4: topology[0].bandwidth_GBps: expected a number");
  expect_error(with_bw("1e400"), "bad.yaml:4: topology[0].bandwidth_GBps: expected a number");
  expect_error(with_bw("\"\""), "bad.yaml:4: topology[0].bandwidth_GBps: expected a number");
}

TEST(NativeYamlErrors, LatencyMustBeNonNegativeAndSane) {
  auto with_lat = [](const std::string& v) {
    return "topology:\n  - kind: ring\n    npus: 8\n    bandwidth_GBps: 50\n    latency_ns: " + v + "\n";
  };
  expect_error(with_lat("-1"), "bad.yaml:5: topology[0].latency_ns: must be >= 0, got -1");
  // Huge values used to overflow the conversion to picoseconds and run.
  expect_error(with_lat("1e300"), "bad.yaml:5: topology[0].latency_ns: must be at most 1e9");
  expect_error(with_lat("2e9"), "bad.yaml:5: topology[0].latency_ns: must be at most 1e9");
  EXPECT_NO_THROW(parse_platform_yaml(with_lat("1e9"), "ok.yaml"));
}

// "key:" with nothing after it: the error points at the key, not at the
// next token (which can be lines further on, past comments).
TEST(NativeYamlErrors, EmptyValueIsReportedAtItsKey) {
  expect_error(ring8("collectives:\n# nothing here yet\n\n# still nothing\nnetwork: {backend: fluid}\n"),
               "bad.yaml:6: collectives: expected a map of keys");
  expect_error("topology:\n", "bad.yaml:1: topology: expected a non-empty list of dimensions");
  expect_error("topology:\n  - kind: ring\n    npus:\n\n    bandwidth_GBps: 50\n    latency_ns: 500\n",
               "bad.yaml:3: topology[0].npus: expected a single value");
}

TEST(NativeYamlErrors, LinksPerNeighbour) {
  expect_error(
      "topology:\n  - {kind: ring, npus: 8, bandwidth_GBps: 50, latency_ns: 5,\n     links_per_neighbour: 0}\n",
      "bad.yaml:3: topology[0].links_per_neighbour: must be an integer in 1..1024, got 0");
}

TEST(NativeYamlErrors, CollectiveNumbers) {
  expect_error(ring8("collectives:\n  chunks: 0\n"), "bad.yaml:7: collectives.chunks: must be an integer in 1..1000000");
  expect_error(ring8("collectives:\n  chunks: 1000001\n"), "bad.yaml:7: collectives.chunks: must be an integer in 1..1000000");
  expect_error(ring8("collectives:\n  chunks: 2.5\n"), "bad.yaml:7: collectives.chunks: expected an integer");
  expect_error(ring8("collectives:\n  active_chunks_per_dimension: 0\n"),
               "bad.yaml:7: collectives.active_chunks_per_dimension: must be an integer in 1..1000000");
  expect_error(ring8("collectives:\n  endpoint_delay_ns: -3\n"), "bad.yaml:7: collectives.endpoint_delay_ns: must be >= 0");
  expect_error(ring8("collectives:\n  endpoint_delay_ns: 1e300\n"),
               "bad.yaml:7: collectives.endpoint_delay_ns: must be at most 1e9");
  expect_error(ring8("collectives:\n"), "bad.yaml:6: collectives: expected a map of keys");
  expect_error(ring8("network: fluid\n"), "bad.yaml:6: network: expected a map of keys");
}

TEST(NativeYamlErrors, AlgorithmListMustMatchTheDimensions) {
  expect_error(ring8("collectives:\n  all-reduce:\n    algorithm: [ring, ring]\n"),
               "bad.yaml:8: collectives.all-reduce.algorithm: 2 algorithms for a topology of 1 dimensions");
  expect_error(ring8("collectives:\n  all-gather:\n    plan: flat\n    algorithm: [ring, direct]\n"),
               "bad.yaml:9: collectives.all-gather.algorithm: a flat plan takes one algorithm");
  expect_error(ring8("collectives:\n  all-reduce:\n    algorithm: {a: b}\n"),
               "bad.yaml:8: collectives.all-reduce.algorithm: expected a list");
}

TEST(NativeYamlErrors, UnsupportedAlgorithmIsRefusedAtItsLine) {
  // An algorithm that cannot run the operation at all: at its line.
  expect_error(ring8("collectives:\n  all-gather:\n    algorithm: double-binary-tree\n"),
               "bad.yaml:8: collectives.all-gather.algorithm:", {"all-reduce only"});
  expect_error(ring8("collectives:\n  all-gather:\n    plan: flat\n    algorithm: double-binary-tree\n"),
               "bad.yaml:9: collectives.all-gather.algorithm:", {"all-reduce only"});
}

// A group size an algorithm cannot serve is not the platform's fault: the
// file is read, and a collective over such a group is refused where it runs
// (plan_refusal), naming the operation, the group, the algorithm and what
// would work. halving-doubling on a ring of 6 serves none; a flat one over
// 8 x 3 serves the 8 of dimension 0, not all 24.
TEST(NativeYaml, AGroupSizeAnAlgorithmCannotServeIsRefusedWhereACollectiveRunsOnIt) {
  const PlatformConfig six = parse_platform_yaml(
      "topology:\n"
      "  - {kind: ring, npus: 6, bandwidth_GBps: 50, latency_ns: 500}\n"
      "collectives:\n"
      "  all-reduce:\n"
      "    algorithm: halving-doubling\n",
      "six.yaml");
  const Topology t6(six.dims);
  EXPECT_EQ(plan_refusal(CollectiveOp::kAllReduce, six.collectives, plan_on_dims(CollectiveOp::kAllReduce, six.collectives, t6, std::vector<int>{0})),
            "all-reduce over 6 NPUs: halving-doubling all-reduce needs a power-of-two group size, got 6; use ring");
  EXPECT_EQ(plan_refusal(CollectiveOp::kAllGather, six.collectives, plan_on_dims(CollectiveOp::kAllGather, six.collectives, t6, std::vector<int>{0})),
            std::nullopt);
  // Listed ranks: a group of 4 of the 6 is served, a group of 3 not.
  EXPECT_EQ(plan_refusal(CollectiveOp::kAllReduce, six.collectives,
                         plan_on_group(CollectiveOp::kAllReduce, six.collectives, listed_group(t6, std::vector<Rank>{0, 1, 2, 3}))),
            std::nullopt);
  EXPECT_EQ(plan_refusal(CollectiveOp::kAllReduce, six.collectives,
                         plan_on_group(CollectiveOp::kAllReduce, six.collectives, listed_group(t6, std::vector<Rank>{1, 3, 5}))),
            "all-reduce over 3 NPUs: halving-doubling all-reduce needs a power-of-two group size, got 3; use ring");
  const PlatformConfig flat = parse_platform_yaml(
      "topology:\n"
      "  - {kind: ring, npus: 8, bandwidth_GBps: 50, latency_ns: 500}\n"
      "  - {kind: ring, npus: 3, bandwidth_GBps: 50, latency_ns: 500}\n"
      "collectives:\n"
      "  reduce-scatter:\n"
      "    plan: flat\n"
      "    algorithm: hd\n",
      "flat.yaml");
  const Topology t24(flat.dims);
  const CollectiveOp rs = CollectiveOp::kReduceScatter;
  EXPECT_EQ(plan_refusal(rs, flat.collectives, plan_on_dims(rs, flat.collectives, t24, std::vector<int>{0, 1})),
            "reduce-scatter over 24 NPUs: halving-doubling reduce-scatter needs a power-of-two group size, got 24; use ring");
  EXPECT_EQ(plan_refusal(rs, flat.collectives, plan_on_dims(rs, flat.collectives, t24, std::vector<int>{0})), std::nullopt);
  // A hierarchical plan: the phase on the dimension it cannot serve.
  const PlatformConfig mixed = parse_platform_yaml(
      "topology:\n"
      "  - {kind: ring, npus: 8, bandwidth_GBps: 50, latency_ns: 500}\n"
      "  - {kind: ring, npus: 3, bandwidth_GBps: 50, latency_ns: 500}\n"
      "collectives:\n"
      "  all-reduce:\n"
      "    algorithm: [ring, halving-doubling]\n",
      "mixed.yaml");
  EXPECT_EQ(plan_refusal(CollectiveOp::kAllReduce, mixed.collectives,
                         plan_on_dims(CollectiveOp::kAllReduce, mixed.collectives, t24, std::vector<int>{0, 1})),
            "all-reduce over 24 NPUs (its all-reduce on dimension 1): halving-doubling all-reduce needs a power-of-two group "
            "size, got 3; use ring");
}

TEST(NativeYamlErrors, ErrorsNameTheFileGiven) {
  const std::string msg = error_of("topology: []\n", "/some/dir/my platform.yaml");
  EXPECT_EQ(msg.rfind("/some/dir/my platform.yaml:1: topology:", 0), 0u) << msg;
}

TEST(NativeYamlErrors, FileProblems) {
  try {
    load_platform_file(kData + "/platforms/no_such_file.yaml");
    ADD_FAILURE() << "missing file accepted";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(kData + "/platforms/no_such_file.yaml: cannot open", 0), 0u) << msg;
  }
  try {
    load_platform_file(kData + "/platforms");
    ADD_FAILURE() << "directory accepted";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(kData + "/platforms: is a directory", 0), 0u) << msg;
  }
}

TEST(NativeYamlErrors, AstraNetworkFileGivenAsPlatformIsRefused) {
  try {
    load_platform_file(kData + "/astra-sim-2.0/network/Ring_8npus.yml");
    ADD_FAILURE() << "ASTRA-sim network file accepted as a native platform";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("Ring_8npus.yml:2: npus_count: unknown key"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace acesim
