// An algorithm that cannot serve a group size is an error only where a
// collective runs on such a group (issue 42 item 3): a dense Llama 3 405B
// plan on 131,072 H100s was refused because the platform's direct
// all-to-all cannot serve 16,384 nodes, though the plan runs no all-to-all.
// One check decides (plan_refusal, collective/plan.h) for every kind of job,
// before anything runs; what an algorithm cannot do at all is still refused
// when the platform is read.
#include <gtest/gtest.h>

#include <string>

#include "cli_runner.h"

namespace acesim {
namespace {

class GroupChecks : public test::CliTest {
 protected:
  // Two nodes of six GPUs on a switch, rails between nodes (--nodes sets
  // how many), halving-doubling all-to-all: it serves 2 and 4 NPUs, not 3
  // or 6.
  std::string hd_platform() {
    return write("hd.yaml",
                 "topology:\n"
                 "  - {kind: switch, npus: 8, bandwidth_GBps: 300, latency_ns: 500}\n"
                 "  - {kind: rail, npus: 2, nodes: true, bandwidth_GBps: 50, latency_ns: 2000}\n"
                 "collectives:\n"
                 "  all-to-all:\n"
                 "    algorithm: halving-doubling\n");
  }
  // A small mixture-of-experts model: 6 experts, 2 per token.
  std::string moe_model() {
    return write("tiny-moe.yaml",
                 "name: tiny-moe\nlayers: 2\nhidden: 1024\nheads: 8\nkv_heads: 8\nffn_hidden: 4096\nseq: 1024\n"
                 "vocab: 32000\nactivation: swiglu\ntied_embeddings: false\nexperts: 6\ntop_k: 2\nmoe_ffn_hidden: 1024\n");
  }
};

// The finding: Meta's plan for Llama 3 405B (tp 8, pp 16, ZeRO 1, sequence
// 8192), data parallel over the rest of 16,384 HGX H100 nodes. The preset's
// all-to-all (direct) cannot serve 16,384 nodes; the plan runs none. The
// whole 131,072-GPU run (one rank per stage, 1 micro-batch, 1 iteration)
// takes about 0.2 s here.
TEST_F(GroupChecks, ADenseLlama405BPlanOn131072GpusRuns) {
  const test::CliRun r = expect_ok({"run", "--platform", "hgx-h100", "--nodes", "16384", "--model", "llama3-405b", "--tp", "8",
                                    "--pp", "16", "--zero", "1", "--sequence-parallel", "--decoder-first-pipeline-num-layers", "7",
                                    "--decoder-last-pipeline-num-layers", "7", "--iterations", "1", "--json"});
  const nlohmann::json j = parse_json(r.out);
  EXPECT_EQ(j["npus"].get<long long>(), 131072);
  EXPECT_EQ(j["plan"].get<std::string>(),
            "tp 8, pp 16, dp 1024, sequence parallel, ZeRO 1, 1f1b, layers per stage 7, 8 x14, 7, 1 micro-batch of 1 per replica");
  EXPECT_EQ(j["simulated_ranks"].get<long long>(), 16);
  EXPECT_EQ(j["collectives"].get<long long>(), 1521);
  EXPECT_DOUBLE_EQ(j["iteration_time_ns"].get<double>(), 5071401787.302);
}

// The same platform and scale refuses a plan whose expert all-to-all spans
// 16,384 nodes (16,384 experts, one per data-parallel rank): NCCL's model
// runs all-to-all on at most 2,048 ranks, beyond that the platform's direct
// pattern, which cannot serve the group. One line naming the collective,
// its group, the algorithm and what would work, before anything runs.
TEST_F(GroupChecks, AnMoePlanWhoseAllToAllTheAlgorithmCannotServeIsRefused) {
  const std::string model = write("wide-moe.yaml",
                                  "name: wide-moe\nlayers: 1\nhidden: 1024\nheads: 8\nkv_heads: 8\nffn_hidden: 4096\n"
                                  "seq: 1024\nvocab: 32000\nactivation: swiglu\ntied_embeddings: false\nexperts: 16384\n"
                                  "top_k: 1\nmoe_ffn_hidden: 256\n");
  expect_bad_input({"run", "--platform", "hgx-h100", "--nodes", "16384", "--model", model, "--tp", "8", "--ep", "16384",
                    "--sequence-parallel", "--iterations", "1"},
                   {"acesim: error: wide-moe: rank 0, iteration 0, forward layer 0 micro-batch 0, ep communication: "
                    "all-to-all over 16384 NPUs: direct all-to-all: a group of 16384 NPUs has too many pairs for a direct "
                    "pattern; use ring or a hierarchical plan"});
  // A smaller one: halving-doubling serves an expert group of 2, not of 6.
  const std::string hd = hd_platform();
  const std::string moe = moe_model();
  const test::CliRun two = expect_ok({"run", "--platform", hd, "--nodes", "6", "--model", moe, "--tp", "8", "--ep", "2",
                                      "--sequence-parallel", "--iterations", "1", "--json"});
  const nlohmann::json j = parse_json(two.out);
  EXPECT_EQ(j["plan"].get<std::string>(), "tp 8, pp 1, dp 6, ep 2, sequence parallel, 1 micro-batch of 1 per replica");
  EXPECT_DOUBLE_EQ(j["iteration_time_ns"].get<double>(), 3115806.113);
  EXPECT_DOUBLE_EQ(j["exposed_comm_ns"]["ep"].get<double>(), 73943.04);
  expect_bad_input({"run", "--platform", hd, "--nodes", "6", "--model", moe, "--tp", "8", "--ep", "6", "--sequence-parallel"},
                   {"acesim: error: tiny-moe: rank 0, iteration 0, forward layer 0 micro-batch 0, ep communication: "
                    "all-to-all over 6 NPUs: halving-doubling all-to-all needs a power-of-two group size, got 6; use ring"});
}

// acesim collective checks the operation it times, on its group: the
// preset's all-to-all over 16,384 nodes is refused.
TEST_F(GroupChecks, ACollectiveIsCheckedOnItsOwnGroup) {
  expect_bad_input({"collective", "--platform", "hgx-h100", "--nodes", "16384", "--op", "all-to-all", "--bytes", "1MiB"},
                   {"acesim: error: --op: all-to-all over 131072 NPUs (its all-to-all on dimension 1): direct all-to-all: a "
                    "group of 16384 NPUs has too many pairs for a direct pattern; use ring or a hierarchical plan"});
  // Within a node (dimension 0) the same all-to-all runs (15.274 us; 2 s
  // to simulate every node's, too long for this suite).
  // A forced NCCL algorithm, on the group it would serve: NVLS inside a
  // node, not across two.
  const std::string nvls = write("nvls.yaml",
                                 "topology:\n"
                                 "  - {kind: switch, npus: 8, bandwidth_GBps: 370.8, latency_ns: 500, nvls: true}\n"
                                 "  - {kind: rail, npus: 2, nodes: true, bandwidth_GBps: 50, latency_ns: 2000}\n"
                                 "collectives:\n  library: nccl\n  nccl: {algorithm: nvls}\n");
  expect_bad_input({"collective", "--platform", nvls, "--bytes", "1MiB"},
                   {"acesim: error: collectives.nccl.algorithm: all-reduce over 16 NPUs: NCCL's nvls all-reduce: NVLS "
                    "across nodes needs CollNet, which is not modelled; use nvls-tree, ring or tree"});
  expect_ok({"collective", "--platform", nvls, "--dims", "0", "--bytes", "1MiB"});
  expect_bad_input({"collective", "--platform", "hgx-h100", "--nodes", "2", "--algo", "nvls", "--bytes", "1MiB"},
                   {"acesim: error: --algo: all-reduce over 16 NPUs: NCCL's nvls all-reduce: NVLS across nodes"});
  expect_ok({"collective", "--platform", "hgx-h100", "--nodes", "2", "--algo", "nvls", "--dims", "0", "--bytes", "1MiB"});
}

// Layer tables, Chakra traces and SimAI files: the first node that issues
// a collective the platform cannot run on its group is named, before
// anything runs.
TEST_F(GroupChecks, LayerTablesChakraTracesAndSimaiFilesAreCheckedBeforeTheyRun) {
  const std::string six = write("six.yaml",
                                "topology:\n  - {kind: ring, npus: 6, bandwidth_GBps: 50, latency_ns: 500}\n"
                                "collectives:\n  all-reduce:\n    algorithm: halving-doubling\n");
  expect_bad_input({"run", "--platform", six, "--model", "resnet50"},
                   {"acesim: error: ResNet-50: rank 0 node 56: all-reduce over 6 NPUs: halving-doubling all-reduce needs a "
                    "power-of-two group size, got 6; use ring"});
  const std::string nvls = write("nvls.yaml",
                                 "topology:\n"
                                 "  - {kind: switch, npus: 8, bandwidth_GBps: 370.8, latency_ns: 500, nvls: true}\n"
                                 "  - {kind: rail, npus: 2, nodes: true, bandwidth_GBps: 50, latency_ns: 2000}\n"
                                 "collectives:\n  library: nccl\n  nccl: {algorithm: nvls}\n");
  const std::string traces = test::data_dir() + "/chakra-et/all_reduce_16npus_1MB/all_reduce";
  expect_bad_input({"run", "--platform", nvls, "--chakra", traces},
                   {"acesim: error: " + traces + ".0.et: node", ": all-reduce over 16 NPUs: NCCL's nvls all-reduce: NVLS "
                    "across nodes needs CollNet, which is not modelled; use nvls-tree, ring or tree"});
  // The 8-GPU traces run inside one node, where NVLS serves them.
  const test::CliRun one = expect_ok({"run", "--platform", nvls, "--nodes", "1", "--chakra",
                                      test::data_dir() + "/chakra-et/all_reduce_8npus_1MB/all_reduce", "--json"});
  EXPECT_DOUBLE_EQ(parse_json(one.out)["iteration_time_ns"].get<double>(), 28864.823);
  // SimAI's MoE example on 9,216 GPUs: a platform that forces NVLS, which
  // NCCL's model runs for all-reduce only, cannot run its first tensor-
  // parallel all-gather; the row is named.
  const std::string simai = test::data_dir() + "/simai/workload_analytical.txt";
  expect_bad_input({"run", "--platform", nvls, "--nodes", "1152", "--workload", simai},
                   {"acesim: error: " + simai + ": rank 0, iteration 0, forward layer 7 micro-batch 0 (attention_column), tp "
                    "communication: all-gather over 2 NPUs: NCCL's nvls all-gather: NVLS is modelled for all-reduce only; use ring"});
}

// Cluster jobs run on the cluster's ranks: each job's collectives are
// checked on the groups it holds there.
TEST_F(GroupChecks, ClusterJobsAreCheckedOnTheirGroups) {
  const std::string platform = write("six-gpus.yaml",
                                     "topology:\n"
                                     "  - {kind: switch, npus: 6, bandwidth_GBps: 300, latency_ns: 500}\n"
                                     "  - {kind: rail, npus: 1, nodes: true, bandwidth_GBps: 50, latency_ns: 2000}\n"
                                     "collectives:\n  all-to-all:\n    algorithm: halving-doubling\n");
  const std::string cluster = write("cluster.yaml",
                                    "platform: six-gpus.yaml\nnodes: 2\njobs:\n"
                                    "  - {name: reduce, nodes: 1, collective: {op: all-reduce, bytes: 1MiB}, iterations: 2}\n"
                                    "  - {name: exchange, nodes: 1, collective: {op: all-to-all, bytes: 1MiB}, iterations: 2}\n");
  expect_bad_input({"cluster", cluster},
                   {"acesim: error: exchange: rank 6 node 0: all-to-all over 6 NPUs: halving-doubling all-to-all needs a "
                    "power-of-two group size, got 6; use ring"});
  const std::string fine = write("fine.yaml",
                                 "platform: six-gpus.yaml\nnodes: 2\njobs:\n"
                                 "  - {name: reduce, nodes: 1, collective: {op: all-reduce, bytes: 1MiB}, iterations: 2}\n");
  expect_ok({"cluster", fine});
}

// What an algorithm cannot do on any group is still refused when the
// platform is read, and --nodes still refuses a node dimension that makes
// such a phase appear.
TEST_F(GroupChecks, WhatAnAlgorithmCannotDoAtAllIsRefusedUpFront) {
  const std::string dbt = write("dbt.yaml",
                                "topology:\n"
                                "  - {kind: switch, npus: 8, bandwidth_GBps: 300, latency_ns: 500}\n"
                                "  - {kind: rail, npus: 1, nodes: true, bandwidth_GBps: 50, latency_ns: 2000}\n"
                                "collectives:\n  all-gather:\n    algorithm: [ring, double-binary-tree]\n");
  expect_ok({"collective", "--platform", dbt, "--op", "all-gather", "--bytes", "1MiB"});
  expect_bad_input({"collective", "--platform", dbt, "--nodes", "2", "--op", "all-reduce", "--bytes", "1MiB"},
                   {"acesim: error: --nodes: 2 nodes: all-gather on dimension 1: double-binary-tree all-gather: "
                    "double-binary-tree implements all-reduce only (choose another algorithm in the platform file)"});
  // A platform file whose group sizes an algorithm cannot serve is read;
  // the collective that would run on such a group is refused.
  const std::string six = write("six.yaml",
                                "topology:\n  - {kind: ring, npus: 6, bandwidth_GBps: 50, latency_ns: 500}\n"
                                "collectives:\n  all-reduce:\n    algorithm: halving-doubling\n");
  expect_bad_input({"collective", "--platform", six, "--bytes", "1MiB"},
                   {"acesim: error: --op: all-reduce over 6 NPUs: halving-doubling all-reduce needs a power-of-two group "
                    "size, got 6; use ring"});
  const test::CliRun ag = expect_ok({"collective", "--platform", six, "--op", "all-gather", "--bytes", "1MiB", "--json"});
  EXPECT_DOUBLE_EQ(parse_json(ag.out)["results"][0]["time_ns"].get<double>(), 19976.267);
}

}  // namespace
}  // namespace acesim
