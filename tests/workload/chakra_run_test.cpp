// Running Chakra execution traces: hand-computed timelines, the shared
// sample, symmetric equal to full, the same answer as the equivalent
// ASTRA-sim 1.0 table, and what cannot run.
#include "driver/chakra_run.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "chakra/astra_to_chakra.h"
#include "chakra/chakra_writer.h"
#include "cli_runner.h"
#include "config/input_error.h"
#include "config/platform.h"
#include "endpoint/executor_registry.h"
#include "engine/simulation.h"
#include "report/collective_sweep.h"
#include "test_data.h"
#include "workload/formats/astra_workload.h"
#include "driver/training_run.h"

namespace acesim {
namespace {

using test::chakra::TraceWriter;
using test::chakra::write_ranks;
namespace wire = test::chakra::wire;

// n NPUs on one ring of 50 GB/s links, 500 ns per hop, no endpoint delay.
PlatformConfig ring(int n, const std::string& executor = "ideal") {
  return parse_platform_yaml(fmt::format(R"(
topology:
  - {{kind: ring, npus: {}, bandwidth_GBps: 50, latency_ns: 500}}
collectives:
  endpoint_delay_ns: 0
communication:
  executor: {}
)",
                                         n, executor),
                             "ring.yaml");
}

TimePs collective_ps(const PlatformConfig& p, CollectiveOp op, std::uint64_t bytes) {
  CollectiveRequestSpec req;
  req.op = op;
  return run_collective(p, req, bytes).time_ps;
}

class ChakraRun : public test::ScratchDirTest {
 protected:
  ChakraReport run(const PlatformConfig& p, const std::vector<TraceWriter>& ranks, ChakraRunOptions o = {}) {
    const std::string prefix = write_ranks(dir_, "t", ranks);
    return run_chakra(p, chakra::read_traces(prefix, static_cast<int>(ranks.size())), prefix, o);
  }
  const ChakraNodeRecord& node(const ChakraReport& r, Rank rank, std::uint64_t id) {
    for (const ChakraNodeRecord& n : r.node_records) {
      if (n.rank == rank && n.id == id) return n;
    }
    throw std::logic_error("no such node");
  }
};

TEST_F(ChakraRun, TheSharedSampleIsOneAllReduce) {
  // ASTRA-sim's sample: every rank all-reduces 1 MiB over the whole ring.
  const PlatformConfig p = ring(8);
  const std::string prefix = test::kData + "/chakra-et/all_reduce_8npus_1MB/all_reduce";
  const ChakraReport r = run_chakra(p, chakra::read_traces(prefix, 8), prefix);
  EXPECT_EQ(r.total_ps, collective_ps(p, CollectiveOp::kAllReduce, 1 << 20));
  // Ring all-reduce on 8: 14 steps of 1 MiB / 8 at 50 GB/s plus 500 ns each.
  EXPECT_EQ(r.total_ps, 14 * (seconds_to_ps_ceil((1 << 20) / 8 / 50e9) + 500'000));
  EXPECT_EQ(r.simulated_ranks, 1);
  EXPECT_EQ(r.simulation, "symmetric");
  EXPECT_EQ(r.collectives, 1u);
}

TEST_F(ChakraRun, DependenciesAndStreamsByHand) {
  // Each rank: A (10 us) -> all-reduce of 1 MiB; A -> B (5 us); C (3 us)
  // after the all-reduce and B; a CPU node (25 us) beside them.
  const PlatformConfig p = ring(4);
  TraceWriter w;
  w.comp(1, "A", 10);
  w.coll(2, "ar", wire::ALL_REDUCE, 1 << 20, {1});
  w.comp(3, "B", 5, {1});
  w.comp(4, "C", 3, {2, 3});
  w.comp(5, "cpu", 25).mutable_attr(0)->set_bool_val(true);
  const ChakraReport r = run(p, {w, w, w, w});
  const TimePs ar = collective_ps(p, CollectiveOp::kAllReduce, 1 << 20);
  const TimePs us = kPsPerUs;
  ASSERT_GT(ar, 5 * us);
  EXPECT_EQ(node(r, 0, 1).end_ps, 10 * us);
  EXPECT_EQ(node(r, 0, 2).start_ps, 10 * us);
  EXPECT_EQ(node(r, 0, 2).end_ps, 10 * us + ar);
  EXPECT_EQ(node(r, 0, 3).start_ps, 10 * us);
  EXPECT_EQ(node(r, 0, 3).end_ps, 15 * us);
  EXPECT_EQ(node(r, 0, 4).start_ps, 10 * us + ar);
  EXPECT_EQ(node(r, 0, 5).end_ps, 25 * us);  // the CPU runs beside the compute stream
  EXPECT_EQ(r.total_ps, std::max(25 * us, 13 * us + ar));
  EXPECT_EQ(r.compute_ps, 18 * us);
  EXPECT_EQ(r.cpu_ps, 25 * us);
  EXPECT_EQ(r.comm_ps, ar);
}

TEST_F(ChakraRun, OneKernelAtATimePerRank) {
  const PlatformConfig p = ring(2);
  TraceWriter w;
  w.comp(1, "x", 10);
  w.comp(2, "y", 20);
  w.comp(3, "z", 0, {1});  // zero time, but it queues for the stream behind y
  const ChakraReport r = run(p, {w, w});
  EXPECT_EQ(r.total_ps, 30 * kPsPerUs);
  EXPECT_EQ(node(r, 0, 2).start_ps, 10 * kPsPerUs);  // waited for the stream
  EXPECT_EQ(node(r, 0, 3).ready_ps, 10 * kPsPerUs);
  EXPECT_EQ(node(r, 0, 3).end_ps, 30 * kPsPerUs);
}

TEST_F(ChakraRun, SendAndReceiveByHand) {
  // Rank 0 computes 10 us, then sends 1 MiB to rank 1 (one hop: 500 ns +
  // 1 MiB / 50 GB/s); rank 1 receives it, then computes 5 us. A second
  // message with another tag is received late: it waits in the network.
  const PlatformConfig p = ring(2);
  TraceWriter a, b;
  a.comp(1, "work", 10);
  a.send(2, "send", 1, 1 << 20, {1});
  a.send(3, "send_early", 1, 1000, {}, 7);
  b.recv(1, "recv", 0, 1 << 20);
  b.comp(2, "use", 5, {1});
  b.comp(3, "busy", 100);
  b.recv(4, "recv_late", 0, 1000, {3}, 7);
  ChakraRunOptions o;
  o.trace_ranks = 2;
  const ChakraReport r = run(p, {a, b}, o);
  const TimePs msg = 500'000 + seconds_to_ps_ceil((1 << 20) / 50e9);
  EXPECT_EQ(node(r, 0, 2).end_ps, 10 * kPsPerUs + msg);
  EXPECT_EQ(node(r, 1, 1).end_ps, 10 * kPsPerUs + msg);
  // "use" waits for the stream ("busy" started at 0 and runs 100 us).
  EXPECT_EQ(node(r, 1, 2).start_ps, 100 * kPsPerUs);
  EXPECT_EQ(node(r, 1, 4).end_ps, 100 * kPsPerUs);  // its data arrived long before
  EXPECT_EQ(r.total_ps, 105 * kPsPerUs);
  EXPECT_EQ(r.messages, 2u);
  EXPECT_EQ(r.simulated_ranks, 2);  // messages: every rank simulated
}

TEST_F(ChakraRun, FlopsThroughTheRoofline) {
  PlatformConfig p = ring(2);
  TraceWriter w;
  auto& n = w.comp(1, "gemm", 999);
  test::chakra::add_attr(n, test::chakra::attr_double("num_ops", 1.2e12));  // 1.2 TFLOP
  const ChakraReport as_recorded = run(p, {w, w});
  EXPECT_EQ(as_recorded.total_ps, 999 * kPsPerUs);
  ChakraRunOptions o;
  o.roofline = true;
  const ChakraReport through_npu = run(p, {w, w}, o);
  EXPECT_EQ(through_npu.total_ps, seconds_to_ps_ceil(1.2e12 / p.npu.peak_flops()));
}

// A data-parallel and a hybrid trace on a 2-D torus with contention.
std::vector<TraceWriter> mixed_traces() {
  TraceWriter w;
  w.comp(1, "f0", 40);
  w.coll(2, "a2a", wire::ALL_TO_ALL, 4 << 20, {1}, {true, false});
  w.comp(3, "f1", 30, {2});
  w.coll(4, "ag", wire::ALL_GATHER, 2 << 20, {3}, {false, true});
  w.comp(5, "b1", 60, {4});
  w.coll(6, "ar1", wire::ALL_REDUCE, 16 << 20, {5});
  w.comp(7, "b0", 60, {5});
  w.coll(8, "ar0", wire::ALL_REDUCE, 8 << 20, {7}, {true, true});
  w.coll(9, "rs", wire::REDUCE_SCATTER, 8 << 20, {7}, {false, true});
  return std::vector<TraceWriter>(16, w);
}

PlatformConfig torus(const std::string& executor) {
  return parse_platform_yaml(fmt::format(R"(
topology:
  - {{kind: ring, npus: 4, bandwidth_GBps: 100, latency_ns: 200}}
  - {{kind: ring, npus: 4, bandwidth_GBps: 25, latency_ns: 700}}
collectives: {{chunks: 4, max_chunk_bytes: 1MiB}}
communication:
  executor: {}
)",
                                         executor),
                             "torus.yaml");
}

TEST_F(ChakraRun, SymmetricEqualsFull) {
  for (const char* e : {"ideal", "sm", "ace"}) {
    SCOPED_TRACE(e);
    const PlatformConfig p = torus(e);
    const ChakraReport sym = run(p, mixed_traces());
    ChakraRunOptions full;
    full.full = true;
    const ChakraReport all = run(p, mixed_traces(), full);
    EXPECT_EQ(sym.simulated_ranks, 1);
    EXPECT_EQ(all.simulated_ranks, 16);
    EXPECT_EQ(sym.total_ps, all.total_ps);
    for (std::uint64_t id = 1; id <= 9; ++id) EXPECT_EQ(node(sym, 0, id).end_ps, node(all, 0, id).end_ps) << id;
    EXPECT_EQ(sym.network_utilization_per_dim, all.network_utilization_per_dim);
  }
  // sm: communication slows compute; the timeline differs from ideal.
  EXPECT_GT(run(torus("sm"), mixed_traces()).total_ps, run(torus("ideal"), mixed_traces()).total_ps);
}

TEST_F(ChakraRun, NodeIdsMayDifferAcrossRanksAndStaySymmetric) {
  std::vector<TraceWriter> ranks;
  for (int r = 0; r < 4; ++r) {
    TraceWriter w;
    const uint64_t base = 100 * static_cast<uint64_t>(r);
    w.comp(base + 1, "f", 10);
    w.coll(base + 2, "ar", wire::ALL_REDUCE, 1 << 20, {base + 1});
    ranks.push_back(w);
  }
  EXPECT_EQ(run(ring(4), ranks).simulation, "symmetric");
  ranks[2].nodes[0].set_duration_micros(11);  // one rank computes longer: not the same program
  const ChakraReport r = run(ring(4), ranks);
  EXPECT_EQ(r.simulated_ranks, 4);
  EXPECT_NE(r.simulation.find("t.2.et node 201 differs"), std::string::npos) << r.simulation;
}

TEST_F(ChakraRun, CommunicatorGroupsNameWholeDimensions) {
  // Four groups along dimension 0 of the 4x4 torus, by name, give the same
  // run as involved_dim = {true, false}.
  const PlatformConfig p = torus("sm");
  write("groups.json", R"({"tp0": [0, 1, 2, 3], "tp1": [4, 5, 6, 7], "tp2": [8, 9, 10, 11], "tp3": [15, 14, 13, 12],
                           "dp0": [0, 4, 8, 12]})");
  const ChakraGroups groups = read_chakra_groups((dir_ / "groups.json").string(), Topology(p.dims));
  EXPECT_EQ(groups.at("tp3").dims, std::vector<int>{0});
  EXPECT_EQ(groups.at("dp0").dims, std::vector<int>{1});
  std::vector<TraceWriter> named, by_dims;
  for (int r = 0; r < 16; ++r) {
    TraceWriter a, b;
    a.comp(1, "f", 20);
    auto& c = a.coll(2, "ar", wire::ALL_REDUCE, 8 << 20, {1});
    test::chakra::add_attr(c, test::chakra::attr_string("pg_name", "tp" + std::to_string(r / 4)));
    b.comp(1, "f", 20);
    b.coll(2, "ar", wire::ALL_REDUCE, 8 << 20, {1}, {true, false});
    named.push_back(a);
    by_dims.push_back(b);
  }
  ChakraRunOptions o;
  o.groups = &groups;
  const ChakraReport a = run(p, named, o);
  const ChakraReport b = run(p, by_dims);
  EXPECT_EQ(a.total_ps, b.total_ps);
  // The names differ per rank, but every group spans dimension 0: symmetric.
  EXPECT_EQ(a.simulated_ranks, 1);
  EXPECT_EQ(b.simulated_ranks, 1);
  o.full = true;
  EXPECT_EQ(run(p, named, o).total_ps, a.total_ps);
  // A rank outside its group is refused, whichever rank it is.
  auto& stray = named[13].nodes[1];
  stray.mutable_attr(stray.attr_size() - 1)->set_string_val("tp0");
  o.full = false;
  try {
    run(p, named, o);
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("t.13.et: node 2 (ar): rank 13 is not a member of its group 'tp0'"), std::string::npos)
        << e.what();
  }
  // Without a groups file pg_name is not used: the collective spans every dimension.
  EXPECT_GT(run(p, named).total_ps, a.total_ps);
}

// The same workload as an ASTRA-sim 1.0 table and as Chakra traces.
TEST_F(ChakraRun, RootedCollectivesReadCommSizeAsPyTorchRecordsIt) {
  // comm_size is a rank's input: the message for broadcast and reduce, each
  // rank's piece for gather (the root gathers 4 of them), the root's whole
  // buffer for scatter. comm_root picks the root (default: rank 0).
  const PlatformConfig p = ring(4);
  const std::uint64_t mib = 1 << 20;
  struct Case {
    wire::CollectiveCommType type;
    std::int64_t comm_size;
    CollectiveOp op;
  };
  for (const Case& c : {Case{wire::BROADCAST, 1 << 20, CollectiveOp::kBroadcast}, Case{wire::REDUCE, 1 << 20, CollectiveOp::kReduce},
                        Case{wire::GATHER, 1 << 18, CollectiveOp::kGather}, Case{wire::SCATTER, 1 << 20, CollectiveOp::kScatter}}) {
    for (int root : {0, 2}) {
      std::vector<TraceWriter> ranks(4);
      for (TraceWriter& w : ranks) {
        auto& n = w.coll(1, "c", c.type, c.comm_size);
        if (root != 0) test::chakra::add_attr(n, test::chakra::attr_int64("comm_root", root));
      }
      const ChakraReport r = run(p, ranks);
      CollectiveRequestSpec req;
      req.op = c.op;
      req.root = root;
      EXPECT_EQ(r.total_ps, run_collective(p, req, mib).time_ps) << to_string(c.op) << " root " << root;
      EXPECT_EQ(r.simulated_ranks, 4);
      EXPECT_NE(r.simulation.find("rooted collective"), std::string::npos) << r.simulation;
    }
  }
}

TEST_F(ChakraRun, BarrierAndReduceScatterBlockRun) {
  // A barrier is an all-reduce of one byte (what torch.distributed.barrier
  // does on NCCL); REDUCE_SCATTER_BLOCK is a reduce-scatter.
  const PlatformConfig p = ring(4);
  std::vector<TraceWriter> barrier(4), block(4);
  for (TraceWriter& w : barrier) w.coll(1, "b", wire::BARRIER, 0);
  for (TraceWriter& w : block) w.coll(1, "rs", wire::REDUCE_SCATTER_BLOCK, 1 << 20);
  EXPECT_EQ(run(p, barrier).total_ps, collective_ps(p, CollectiveOp::kAllReduce, 1));
  EXPECT_EQ(run(p, block).total_ps, collective_ps(p, CollectiveOp::kReduceScatter, 1 << 20));
}

TEST_F(ChakraRun, GroupsOfAnyRanksRunRoutedOverTheFabric) {
  // {0, 2, 5} on a ring of 8 (50 GB/s, 500 ns a hop): a ring all-reduce on
  // three members, 0->2 two hops, 2->5 and 5->0 three, on disjoint links:
  // 4 steps of 3 x 500 ns + (S/3) / 50 GB/s. Ranks outside the group only compute.
  const PlatformConfig p = ring(8);
  write("odd.json", R"({"odd": [5, 0, 2]})");
  const ChakraGroups groups = read_chakra_groups((dir_ / "odd.json").string(), Topology(p.dims));
  EXPECT_FALSE(groups.at("odd").whole);
  EXPECT_EQ(groups.at("odd").ranks, (std::vector<Rank>{0, 2, 5}));
  const double S = 3 << 20;
  std::vector<TraceWriter> ranks(8);
  for (int r = 0; r < 8; ++r) {
    ranks[static_cast<std::size_t>(r)].comp(1, "f", 1);
    if (r == 0 || r == 2 || r == 5) {
      auto& c = ranks[static_cast<std::size_t>(r)].coll(2, "ar", wire::ALL_REDUCE, 3 << 20, {1});
      test::chakra::add_attr(c, test::chakra::attr_string("pg_name", "odd"));
    }
  }
  ChakraRunOptions o;
  o.groups = &groups;
  const ChakraReport r = run(p, ranks, o);
  const double want_ps = 1e6 + 4 * (3 * 500e3 + S / 3 / 50e9 * 1e12);
  EXPECT_NEAR(static_cast<double>(r.total_ps), want_ps, 1e3);
  EXPECT_EQ(r.simulation, "full: group 'odd' is not whole topology dimensions");
  // The same group as a direct request to the collective engine.
  CollectiveRequestSpec req;
  req.members = {0, 2, 5};
  EXPECT_EQ(r.total_ps, 1'000'000 + run_collective(p, req, 3 << 20).time_ps);
}

TEST_F(ChakraRun, SameTimeAsTheEquivalentTable) {
  const std::string two_d = R"(
topology:
  - {kind: ring, npus: 4, bandwidth_GBps: 100, latency_ns: 200}
  - {kind: ring, npus: 4, bandwidth_GBps: 25, latency_ns: 700}
collectives: {chunks: 4, max_chunk_bytes: 1MiB}
)";
  for (const char* table : {"Resnet50_DataParallel.txt", "MLP_HybridParallel_Data_Model.txt",
                            "Transformer_HybridParallel.txt", "microAllReduce.txt"}) {
    for (const char* executor : {"ideal", "sm", "ace"}) {
      SCOPED_TRACE(std::string(table) + " " + executor);
      PlatformConfig p = parse_platform_yaml(two_d, "2d.yaml");
      p.npu.executor = executor_registry().get(executor).name;
      const Topology topo(p.dims);
      Workload w = read_astra_workload(test::kData + "/astra-sim-1.0/workload/" + table, topo);
      test::chakra::round_to_micros(w);
      w.iterations = 1;
      const TrainReport trained = run_training(p, w);
      const TraceWriter t = test::chakra::workload_to_chakra(w, topo);
      const ChakraReport traced = run(p, std::vector<TraceWriter>(16, t));
      EXPECT_EQ(traced.total_ps, trained.iteration_ps);
      EXPECT_EQ(traced.compute_ps, trained.compute_ps);
      EXPECT_EQ(traced.network_utilization_per_dim, trained.network_utilization_per_dim);
    }
  }
}

// ---- what cannot run ----

class ChakraRunCli : public test::CliTest {
 protected:
  std::string platform(int n) {
    return write("p.yaml", fmt::format("topology:\n  - {{kind: ring, npus: {}, bandwidth_GBps: 50, latency_ns: 500}}\n", n));
  }
};

TEST_F(ChakraRunCli, RunsTheSampleAndWritesItsOutputs) {
  const std::string prefix = test::kData + "/chakra-et/all_reduce_8npus_1MB/all_reduce";
  const std::string csv = (dir_ / "csv").string();
  const std::string trace = (dir_ / "trace.json").string();
  const test::CliRun r = run({"run", "--platform", platform(8), "--chakra", prefix, "--csv", csv, "--trace", trace});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("total time (us)                           43.700"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("simulated 1 of 8 ranks: symmetric"), std::string::npos);
  EXPECT_NE(test::slurp(csv + "/nodes.csv").find("0,0,all_reduce_8npus_1MB,COMM_COLL_NODE,ALL_REDUCE 1048576 B dims 0,0,0,43700.16,43700.16"),
            std::string::npos)
      << test::slurp(csv + "/nodes.csv");
  const nlohmann::json t = nlohmann::json::parse(test::slurp(trace));
  EXPECT_FALSE(t["traceEvents"].empty());
  const test::CliRun j = run({"run", "--platform", platform(8), "--chakra", prefix, "--compare", "sm,ace", "--json"});
  ASSERT_EQ(j.status, 0) << j.err;
  EXPECT_EQ(parse_json(j.out)["runs"].size(), 2u);
}

TEST_F(ChakraRunCli, BadTracesAndBadCombinations) {
  const std::string sample = test::kData + "/chakra-et/all_reduce_8npus_1MB/all_reduce";
  // Rank counts that disagree with the topology.
  expect_bad_input({"run", "--platform", platform(4), "--chakra", sample}, {"all_reduce.4.et", "4"});
  expect_bad_input({"run", "--platform", platform(16), "--chakra", sample}, {"all_reduce.8.et"});
  expect_bad_input({"run", "--platform", platform(8), "--chakra", sample, "--model", "gpt"}, {"--chakra", "--model"});
  expect_bad_input({"run", "--platform", platform(8), "--chakra", sample, "--batch", "3"}, {"--batch"});
  expect_bad_input({"run", "--platform", platform(8), "--chakra", sample, "--iterations", "0"}, {"--iterations", "1..10000"});
  expect_bad_input({"run", "--platform", platform(8), "--chakra-flops"}, {"--chakra-flops"});

  // A send without its receive.
  TraceWriter a, b;
  a.send(1, "lonely", 1, 64);
  const std::string unmatched = test::chakra::write_ranks(dir_, "u", {a, b});
  expect_bad_input({"run", "--platform", platform(2), "--chakra", unmatched}, {"u.0.et", "node 1 (lonely)", "1 send(s) from rank 0 to rank 1 with tag 0 but 0 matching receive(s)"});
  // Sizes that disagree.
  TraceWriter c, d;
  c.send(1, "s", 1, 64);
  d.recv(1, "r", 0, 128);
  expect_bad_input({"run", "--platform", platform(2), "--chakra", test::chakra::write_ranks(dir_, "z", {c, d})},
                   {"z.0.et", "node 1 (s)", "64 bytes", "z.1.et", "expects 128"});
  // Ranks that disagree on a collective.
  TraceWriter e, f;
  e.coll(1, "grad", wire::ALL_REDUCE, 1024);
  f.coll(1, "grad", wire::ALL_GATHER, 1024);
  expect_bad_input({"run", "--platform", platform(2), "--chakra", test::chakra::write_ranks(dir_, "m", {e, f})},
                   {"node 1 (grad)", "all-gather", "all-reduce"});
  // A root outside the collective's group, and dimensions the topology lacks.
  TraceWriter g;
  auto& bc = g.coll(1, "bcast", wire::BROADCAST, 1024);
  test::chakra::add_attr(bc, test::chakra::attr_int64("comm_root", 2));
  expect_bad_input({"run", "--platform", platform(2), "--chakra", test::chakra::write_ranks(dir_, "b", {g, g})},
                   {"b.0.et", "node 1 (bcast)", "comm_root 2", "not a rank of the topology's 2 NPUs"});
  TraceWriter h;
  h.coll(1, "ar", wire::ALL_REDUCE, 1024, {}, {true, true});
  expect_bad_input({"run", "--platform", platform(2), "--chakra", test::chakra::write_ranks(dir_, "d", {h, h})},
                   {"d.0.et", "node 1 (ar)", "involved_dim has 2 entries", "1 dimensions"});
}

TEST_F(ChakraRunCli, BadGroups) {
  const std::string sample = test::kData + "/chakra-et/all_reduce_8npus_1MB/all_reduce";
  auto groups = [&](const std::string& json) { return write("g.json", json); };
  expect_bad_input({"run", "--platform", platform(8), "--chakra", sample, "--chakra-groups", groups("{\"a\": [0, 9]}")},
                   {"g.json", "group 'a'", "9 is not a rank"});
  expect_bad_input({"run", "--platform", platform(8), "--chakra", sample, "--chakra-groups", groups("{\"a\": [1, 1]}")},
                   {"g.json", "twice"});
  expect_bad_input({"run", "--platform", platform(8), "--chakra", sample, "--chakra-groups", groups("[1")},
                   {"g.json", "not valid JSON"});
  TraceWriter w;
  auto& c = w.coll(1, "ar", wire::ALL_REDUCE, 1024);
  test::chakra::add_attr(c, test::chakra::attr_string("pg_name", "nope"));
  const std::string prefix = test::chakra::write_ranks(dir_, "n", {w, w});
  expect_bad_input({"run", "--platform", platform(2), "--chakra", prefix, "--chakra-groups", groups("{\"all\": [0, 1]}")},
                   {"n.0.et", "node 1 (ar)", "pg_name 'nope'"});
  // A rooted collective whose root is not in its (listed) group.
  std::vector<TraceWriter> ranks(4);
  for (int r : {0, 2}) {
    auto& gc = ranks[static_cast<std::size_t>(r)].coll(1, "g", wire::GATHER, 1024);
    test::chakra::add_attr(gc, test::chakra::attr_string("pg_name", "pair"));
    test::chakra::add_attr(gc, test::chakra::attr_int64("comm_root", 1));
  }
  const std::string rooted = test::chakra::write_ranks(dir_, "r", ranks);
  expect_bad_input({"run", "--platform", platform(4), "--chakra", rooted, "--chakra-groups", groups("{\"pair\": [0, 2]}")},
                   {"r.0.et", "node 1 (g)", "comm_root 1", "not a member of its group 'pair'"});
  // Without groups, the root must lie in the rank's group over the collective's dimensions.
  std::vector<TraceWriter> torus_ranks(4);
  for (auto& tw : torus_ranks) {
    auto& sc = tw.coll(1, "s", wire::SCATTER, 1024, {}, {true, false});
    test::chakra::add_attr(sc, test::chakra::attr_int64("comm_root", 3));
  }
  const std::string p22 = write("p22.yaml", R"(
topology:
  - {kind: ring, npus: 2, bandwidth_GBps: 50, latency_ns: 500}
  - {kind: ring, npus: 2, bandwidth_GBps: 50, latency_ns: 500}
)");
  expect_bad_input({"run", "--platform", p22, "--chakra", test::chakra::write_ranks(dir_, "q", torus_ranks)},
                   {"q.0.et", "node 1 (s)", "comm_root 3", "not in the group of rank 0", "dimension 1"});
}

TEST_F(ChakraRunCli, ADeadlockSaysWhoWaits) {
  // Each rank receives before it sends: nobody sends.
  TraceWriter a, b;
  a.recv(1, "wait_b", 1, 64);
  a.send(2, "to_b", 1, 64, {1});
  b.recv(1, "wait_a", 0, 64);
  b.send(2, "to_a", 0, 64, {1});
  const test::CliRun r = run({"run", "--platform", platform(2), "--chakra", test::chakra::write_ranks(dir_, "x", {a, b})});
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_NE(r.err.find("x.0.et: 0 of 2 nodes done; node 1 (wait_b) receives from rank 1 tag 0"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("x.1.et: 0 of 2 nodes done; node 1 (wait_a) receives from rank 0 tag 0"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace acesim
