// Several jobs on one platform (driver/cluster_run.h, api::simulate_cluster):
// closed forms where two jobs share one bottleneck link, placements, a time
// shift between jobs, LLM jobs placed on nodes, and bad cluster files.
#include <gtest/gtest.h>

#include <functional>

#include "api/api.h"
#include "config/input_error.h"
#include "scratch_dir.h"
#include "test_paths.h"

namespace acesim {
namespace {

class Cluster : public test::ScratchDirTest {
 protected:
  api::ClusterRun run(const std::string& yaml) {
    api::ClusterRequest r;
    r.file = write("cluster.yaml", yaml);
    return api::simulate_cluster(r);
  }
  std::string error(const std::string& yaml) {
    try {
      run(yaml);
    } catch (const InputError& e) {
      return e.what();
    }
    ADD_FAILURE() << "accepted:\n" << yaml;
    return "";
  }
  std::string platform() const { return test::data_dir() + "/platforms/fat_tree_nodes.yaml"; }
};

constexpr TimePs kMs = 1'000'000'000;

// tests/data/platforms/fat_tree_nodes.yaml: one NPU per node, 2 nodes per
// leaf, each leaf one 50 GB/s uplink. A job on a node of each leaf
// all-reduces 1 GB over 2 GPUs: each sends 1e9 B (2 (n-1)/n S) across the
// uplinks, 20 ms alone at 50 GB/s. Two such jobs at once get half each: 40 ms.
TEST_F(Cluster, TwoJobsOnOneBottleneckGetHalfEach) {
  api::ClusterRequest r;
  r.file = test::data_dir() + "/clusters/shared-uplink.yaml";
  const ClusterReport rep = api::simulate_cluster(r).report;
  ASSERT_EQ(rep.jobs.size(), 2u);
  for (const ClusterJobReport& j : rep.jobs) {
    EXPECT_EQ(j.alone_iteration_ps, 20 * kMs);
    EXPECT_EQ(j.iteration_ps, 40 * kMs);
    EXPECT_DOUBLE_EQ(j.slowdown, 2.0);
    EXPECT_EQ(j.iteration_end_ps, (std::vector<TimePs>{40 * kMs, 80 * kMs, 120 * kMs}));
  }
  EXPECT_EQ(rep.jobs[0].nodes, (std::vector<long long>{0, 2}));
  EXPECT_EQ(rep.jobs[1].nodes, (std::vector<long long>{1, 3}));
  // The uplinks carry both jobs' 3 GB and are busy all 120 ms; an NPU's
  // link only its own job's, half the time.
  ASSERT_FALSE(rep.links.empty());
  EXPECT_EQ(rep.links[0].name, "dim0:leaf0->spine0");
  EXPECT_NEAR(rep.links[0].bytes_by_job[0], 3e9, 1.0);
  EXPECT_NEAR(rep.links[0].bytes_by_job[1], 3e9, 1.0);
  EXPECT_NEAR(rep.links[0].utilization, 1.0, 1e-9);
  // Per iteration each NPU sends 1 GB over 4 links (up to its leaf, the
  // uplink, the other leaf's downlink, down to the peer): 8 GB a job.
  EXPECT_NEAR(rep.jobs[0].network_bytes, 3 * 8e9, 10.0);
}

// The same jobs placed on one leaf each (packed) never share a link.
TEST_F(Cluster, PackedJobsShareNothing) {
  const ClusterReport rep = run("platform: " + platform() + R"(
nodes: 4
jobs:
  - {name: a, nodes: 2, placement: packed, iterations: 3, collective: {bytes: 1GB}}
  - {name: b, nodes: 2, iterations: 3, collective: {bytes: 1GB}}
)").report;
  EXPECT_EQ(rep.jobs[0].nodes, (std::vector<long long>{0, 1}));
  EXPECT_EQ(rep.jobs[1].nodes, (std::vector<long long>{2, 3}));
  for (const ClusterJobReport& j : rep.jobs) {
    EXPECT_EQ(j.iteration_ps, 20 * kMs);
    EXPECT_DOUBLE_EQ(j.slowdown, 1.0);
  }
  // spread: one node per leaf, so both cross the uplinks again.
  const ClusterReport spread = run("platform: " + platform() + R"(
nodes: 4
jobs:
  - {name: a, nodes: 2, placement: spread, iterations: 3, collective: {bytes: 1GB}}
  - {name: b, nodes: 2, placement: spread, iterations: 3, collective: {bytes: 1GB}}
)").report;
  EXPECT_EQ(spread.jobs[0].nodes, (std::vector<long long>{0, 2}));
  EXPECT_EQ(spread.jobs[1].nodes, (std::vector<long long>{1, 3}));
  EXPECT_DOUBLE_EQ(spread.jobs[0].slowdown, 2.0);
}

// A time shift between two jobs that compute 20 ms and then all-reduce for
// 20 ms: started together they share the uplink (the all-reduce takes 40 ms,
// an iteration 60); b started 20 ms later all-reduces while a computes, and
// neither slows (the effect CASSINI exploits).
TEST_F(Cluster, ATimeShiftInterleavesTheirCommunication) {
  const std::string jobs = "platform: " + platform() + R"(
nodes: 4
jobs:
  - {name: a, placement: "0,2", iterations: 4, collective: {bytes: 1GB, compute_ms: 20}}
  - {name: b, placement: "1,3", iterations: 4, start_ms: START, collective: {bytes: 1GB, compute_ms: 20}}
)";
  const auto with = [&](const char* start) {
    std::string y = jobs;
    y.replace(y.find("START"), 5, start);
    return run(y).report;
  };
  const ClusterReport together = with("0");
  EXPECT_EQ(together.jobs[0].alone_iteration_ps, 40 * kMs);
  EXPECT_EQ(together.jobs[0].iteration_ps, 60 * kMs);
  EXPECT_DOUBLE_EQ(together.jobs[1].slowdown, 1.5);
  const ClusterReport shifted = with("20");
  EXPECT_EQ(shifted.jobs[0].iteration_ps, 40 * kMs);
  EXPECT_EQ(shifted.jobs[1].iteration_ps, 40 * kMs);
  EXPECT_EQ(shifted.jobs[1].start_ps, 20 * kMs);
  EXPECT_EQ(shifted.jobs[1].iteration_end_ps.front(), 60 * kMs);
  EXPECT_DOUBLE_EQ(shifted.jobs[0].slowdown, 1.0);
}

// An LLM job placed on nodes runs its own plan: alone on a rail-optimized
// preset it takes what `acesim run --full` gives on the same number of nodes.
TEST_F(Cluster, AnLlmJobAloneIsItsOwnRun) {
  const ClusterReport rep = run(R"(
platform: hgx-h100
nodes: 4
jobs:
  - {name: llama, nodes: 2, placement: random, llm: {model: llama3-8b, tp: 8, iterations: 2}}
  - {name: loop, nodes: 2, iterations: 5, collective: {op: all-gather, bytes: 64MiB}}
)").report;
  EXPECT_EQ(rep.jobs[0].gpus, 16);
  EXPECT_NE(rep.jobs[0].placement.find("random (seed 1)"), std::string::npos);
  api::TrainingRequest t;
  t.platform.file = "hgx-h100";
  t.platform.nodes = 2;
  t.platform.full = true;
  t.model = "llama3-8b";
  t.llm.tp = 8;
  const api::TrainingRun alone = api::simulate_training(t);
  EXPECT_EQ(rep.jobs[0].alone_iteration_ps, alone.llm[0].iteration_ps);
  EXPECT_EQ(rep.jobs[1].iteration_end_ps.size(), 5u);
}

// Degraded hardware on one job of the bottleneck platform: 20 ms of compute,
// then the 1 GB all-reduce (20 ms): 40 ms healthy.
// A SimAI/AICB file as a job: alone on rails it is `acesim run --full`.
TEST_F(Cluster, ASimaiJobAloneIsItsOwnRun) {
  const std::string file = test::data_dir() + "/simai/gpt13b_tp8_pp1_ws64_gbs32_aicbgen.txt";
  const ClusterReport rep = run("platform: hgx-h100\nnodes: 8\njobs:\n  - {name: s, nodes: 8, simai: {file: " + file + ", iterations: 2}}\n").report;
  api::TrainingRequest t;
  t.platform.file = "hgx-h100";
  t.platform.nodes = 8;
  t.platform.full = true;
  t.workload_file = file;
  EXPECT_EQ(rep.jobs[0].iteration_ps, api::simulate_training(t).llm[0].iteration_ps);
  EXPECT_NE(rep.jobs[0].what.find("SimAI gpt13b_tp8_pp1_ws64_gbs32_aicbgen.txt (tp 8, pp 1, dp 8"), std::string::npos) << rep.jobs[0].what;
}

// A built-in model's layer table and Chakra traces as jobs: their
// collectives over dimensions become each rank's listed group on the job's
// nodes; alone on rails each takes what `acesim run --full` gives on as many
// nodes (the layer table's updates included in its iteration's end).
TEST_F(Cluster, ModelAndChakraJobsAloneAreTheirOwnRuns) {
  const std::string prefix = test::data_dir() + "/chakra-et/all_reduce_16npus_1MB/all_reduce";
  const ClusterReport rep = run("platform: hgx-h100\nnodes: 8\njobs:\n"
                                "  - {name: resnet, nodes: 2, placement: spread, model: {name: resnet50, iterations: 3}}\n"
                                "  - {name: dlrm, nodes: 4, model: {name: dlrm, batch: 64}}\n"
                                "  - {name: trace, nodes: 2, placement: random, chakra: {prefix: " + prefix + ", iterations: 2}}\n")
                                .report;
  ASSERT_EQ(rep.jobs.size(), 3u);
  EXPECT_EQ(rep.jobs[0].what, "ResNet-50 (DATA)") << rep.jobs[0].what;
  EXPECT_EQ(rep.jobs[0].iteration_end_ps.size(), 3u);
  EXPECT_EQ(rep.jobs[2].what, "Chakra all_reduce.<rank>.et, 2 passes");
  const auto alone = [](int nodes, const std::function<void(api::TrainingRequest&)>& set) {
    api::TrainingRequest t;
    t.platform.file = "hgx-h100";
    t.platform.nodes = nodes;
    t.platform.full = true;
    set(t);
    return api::simulate_training(t);
  };
  const api::TrainingRun resnet = alone(2, [](api::TrainingRequest& t) {
    t.model = "resnet50";
    t.iterations = 3;
  });
  // The run's iteration is the last; the cluster's the mean after the first.
  const std::vector<TimePs>& ends = resnet.reports[0].iteration_end_ps;
  EXPECT_EQ(rep.jobs[0].iteration_end_ps, ends);
  EXPECT_EQ(rep.jobs[0].alone_iteration_ps, (ends[2] - ends[0]) / 2);
  const api::TrainingRun dlrm = alone(4, [](api::TrainingRequest& t) {
    t.model = "dlrm";
    t.batch = 64;
  });
  EXPECT_EQ(rep.jobs[1].alone_iteration_ps, dlrm.reports[0].iteration_ps);
  EXPECT_GT(rep.jobs[1].alone_iteration_ps, 0);
  const api::TrainingRun trace = alone(2, [&](api::TrainingRequest& t) {
    t.chakra_prefix = prefix;
    t.iterations = 2;
  });
  EXPECT_EQ(rep.jobs[2].alone_iteration_ps, trace.chakra[0].iteration_ps);
  EXPECT_GT(rep.jobs[2].alone_iteration_ps, 0);
  // The wrong number of traces for the job's GPUs names the job's key.
  const std::string f = (dir_ / "cluster.yaml").string();
  const std::string err = error("platform: hgx-h100\nnodes: 8\njobs:\n  - {nodes: 1, chakra: {prefix: " + prefix + "}}\n");
  EXPECT_EQ(err.rfind(f + ":4: jobs[0].chakra: ", 0), 0u) << err;
  EXPECT_EQ(error("platform: hgx-h100\nnodes: 8\njobs:\n  - {nodes: 1, model: {name: resnet5}}\n").rfind(f + ":4: jobs[0].model: unknown model 'resnet5'", 0), 0u);
  EXPECT_EQ(error("platform: hgx-h100\nnodes: 2048\njobs:\n  - {nodes: 2048, model: {name: resnet50, iterations: 100}}\n")
                .rfind(f + ":4: jobs[0].model: simulating all 16384 ranks needs about 8.", 0),
            0u);
  EXPECT_EQ(error("platform: hgx-h100\nnodes: 8\njobs:\n  - {nodes: 1, iterations: 2, model: {name: resnet50}}\n"),
            f + ":4: jobs[0].iterations: a model job gives its iterations in model.iterations");
}

TEST_F(Cluster, DegradedHardwareClosedForms) {
  const auto with = [&](const std::string& degraded) {
    return run("platform: " + platform() + "\nnodes: 4\ndegraded: " + degraded +
               "\njobs:\n  - {name: a, placement: '0,2', iterations: 3, collective: {bytes: 1GB, compute_ms: 20}}\n")
        .report.jobs[0];
  };
  // GPU 0 computes 1.5x slower: 30 ms of compute; the all-reduce waits for it.
  ClusterJobReport j = with("[{gpu: 0, compute: 1.5}]");
  EXPECT_EQ(j.healthy_iteration_ps, 40 * kMs);
  EXPECT_EQ(j.iteration_ps, 50 * kMs);
  // GPU 0's NIC at half rate: its 1 GB each way at 25 GB/s, 40 ms.
  EXPECT_EQ(with("[{gpu: 0, nic: 0.5}]").iteration_ps, 60 * kMs);
  // The leaf0 uplink at half: GPU 0's send to GPU 2 at 25 GB/s.
  EXPECT_EQ(with("[{link: 'dim0:leaf0->spine0', share: 0.5}]").iteration_ps, 60 * kMs);
  // A healthy GPU, a slowed GPU that does not hold the job: nothing changes.
  EXPECT_EQ(with("[{gpu: 1, compute: 3}]").iteration_ps, 40 * kMs);
}

// A link down: its routes move to the leaf's other uplink. With one uplink
// per node (leaf_size 2, no oversubscription) two spread jobs share nothing
// (20 ms each); with leaf0's uplink to spine0 down, job a's transfers both
// ways go over spine1 beside job b's, and each gets half: 40 ms, where each
// alone on the same fabric still takes 20 ms.
TEST_F(Cluster, ALinkDownMovesItsTrafficOntoAnotherJobsUplink) {
  const auto with = [&](const std::string& degraded) {
    return run("platform: " + platform() + "\nnodes: 4\nfabric: {kind: fat-tree, leaf_size: 2}\n" + degraded +
               "jobs:\n  - {name: a, placement: '0,2', iterations: 3, collective: {bytes: 1GB}}\n"
               "  - {name: b, placement: '1,3', iterations: 3, collective: {bytes: 1GB}}\n")
        .report;
  };
  const ClusterReport healthy = with("");
  for (const ClusterJobReport& j : healthy.jobs) {
    EXPECT_EQ(j.iteration_ps, 20 * kMs);
    EXPECT_DOUBLE_EQ(j.slowdown, 1.0);
  }
  const ClusterReport down = with("degraded: [{link: 'dim0:leaf0->spine0', down: true}]\n");
  ASSERT_EQ(down.degraded, (std::vector<std::string>{"link dim0:leaf0->spine0 down, both ways; routes that crossed it rerouted"}));
  for (const ClusterJobReport& j : down.jobs) {
    EXPECT_EQ(j.healthy_iteration_ps, 20 * kMs) << j.name;
    EXPECT_EQ(j.alone_iteration_ps, 20 * kMs) << j.name;
    EXPECT_EQ(j.iteration_ps, 40 * kMs) << j.name;
    EXPECT_DOUBLE_EQ(j.slowdown, 2.0);
  }
  // No byte crossed the link, nor its other direction; spine1's carry both jobs'.
  for (const ClusterLinkReport& l : down.links) {
    EXPECT_NE(l.name, "dim0:leaf0->spine0");
    EXPECT_NE(l.name, "dim0:spine0->leaf0");
  }
  EXPECT_EQ(down.links[0].name, "dim0:leaf0->spine1");
  EXPECT_NEAR(down.links[0].bytes_by_job[0], 3e9, 1.0);
  EXPECT_NEAR(down.links[0].bytes_by_job[1], 3e9, 1.0);
  // --no-alone leaves the alone runs out with degraded hardware too.
  api::ClusterRequest r;
  r.file = (dir_ / "cluster.yaml").string();
  r.alone = false;
  for (const ClusterJobReport& j : api::simulate_cluster(r).report.jobs) {
    EXPECT_EQ(j.alone_iteration_ps, 0);
    EXPECT_EQ(j.healthy_iteration_ps, 20 * kMs);
  }
}

// Every GPU's kernels vary (a lognormal of median 1, drawn per GPU): a
// synchronous job waits for its slowest GPU, so the larger the job, the
// more it loses (packed jobs from node 0 hold each smaller one's GPUs).
TEST_F(Cluster, StragglersCostMoreAsTheJobGrows) {
  std::vector<double> loss;
  for (int n : {2, 8, 64}) {
    const ClusterJobReport j = run("platform: " + platform() + "\nnodes: 64\nvariability: {compute_cv: 0.05, seed: 1}\njobs:\n  - {nodes: " +
                                   std::to_string(n) + ", iterations: 3, collective: {bytes: 1MB, compute_ms: 10}}\n")
                                   .report.jobs[0];
    loss.push_back(static_cast<double>(j.iteration_ps) / static_cast<double>(j.healthy_iteration_ps) - 1.0);
  }
  EXPECT_NEAR(loss[0], 0.045, 0.001);
  EXPECT_NEAR(loss[1], 0.125, 0.001);
  EXPECT_NEAR(loss[2], 0.128, 0.001);
  EXPECT_LT(loss[0], loss[1]);
  EXPECT_LE(loss[1], loss[2]);
}

TEST_F(Cluster, BadFilesNameLineAndKey) {
  const std::string head = "platform: " + platform() + "\nnodes: 4\njobs:\n";
  const std::string f = (dir_ / "cluster.yaml").string();
  EXPECT_EQ(error(head + "  - {name: a, nodes: 3, collective: {bytes: 1GB}}\n  - {name: b, nodes: 2, collective: {bytes: 1GB}}\n"),
            f + ":5: jobs[1].nodes: 2 nodes asked, 1 of the cluster's 4 free");
  EXPECT_EQ(error(head + "  - {name: a, placement: 0-2, collective: {bytes: 1GB}}\n  - {name: b, placement: [2, 3], collective: {bytes: 1GB}}\n"),
            f + ":5: jobs[1].placement: node 2 is job a's too");
  EXPECT_EQ(error(head + "  - {name: a, placement: 0-4, collective: {bytes: 1GB}}\n"),
            f + ":4: jobs[0].placement: '0-4' is not a range of the cluster's nodes 0..3");
  EXPECT_EQ(error(head + "  - {name: a, nodes: 2, placement: spraed, collective: {bytes: 1GB}}\n"),
            f + ":4: jobs[0].placement: must be packed, spread, random or a list of nodes (e.g. 0-3,8), got 'spraed' (did you mean 'spread'?)");
  EXPECT_EQ(error(head + "  - {name: a, nodes: 2, llm: {model: llama9, tp: 1}}\n"),
            f + ":4: jobs[0].llm.model: 'llama9' is not a transformer model (a built-in LLM or a model file)");
  EXPECT_EQ(error(head + "  - {name: a, nodes: 2}\n"), f + ":4: jobs[0]: give a job one workload: collective, llm, simai, model or chakra");
  EXPECT_EQ(error(head + "  - {name: a, nodes: 2, collective: {bytes: 1GB}, iteration: 3}\n"),
            f + ":4: jobs[0].iteration: unknown key (did you mean 'iterations'?)");
  EXPECT_EQ(error(head + "  - {name: a, nodes: 1, collective: {bytes: 1GB}}\n  - {name: a, nodes: 1, collective: {bytes: 1GB}}\n"),
            f + ":5: jobs[1].name: 'a' names another job too");
  EXPECT_EQ(error("platform: " + platform() + "\nnodes: 4\nfabric: {kind: torus}\njobs:\n  - {nodes: 1, collective: {bytes: 1GB}}\n"),
            f + ":3: fabric.kind: must be fat-tree or rail, got 'torus'");
  EXPECT_EQ(error("platform: " + platform() + "\nnodes: 4\nfabric: {kind: fat-tree, oversubscription: 0}\njobs:\n  - {nodes: 1, collective: {bytes: 1GB}}\n"),
            f + ":3: fabric.oversubscription: must be in 1..1024, got 0");
  EXPECT_EQ(error("platform: nope.yaml\nnodes: 4\njobs:\n  - {nodes: 1, collective: {bytes: 1GB}}\n").rfind(f + ":1: platform: ", 0), 0u);
  EXPECT_EQ(error(head + "  - {name: a, nodes: 2, collective: {bytes: -1GB}}\n").rfind(f + ":4: jobs[0].collective: ", 0), 0u);
  // An LLM plan that does not fit in HBM, and jobs too big to hold as graphs.
  const std::string oom = error("platform: hgx-h100\nnodes: 4\njobs:\n  - {nodes: 1, llm: {model: llama3-70b, tp: 1, dp: 8}}\n");
  EXPECT_EQ(oom.rfind(f + ":4: jobs[0].llm: the plan does not fit in HBM: stage 0: ", 0), 0u);
  // Why the activations are so large: one micro-batch through all 80 layers.
  EXPECT_NE(oom.find(" > 80 GB HBM; its activations are 1 micro-batch's worth of its layers, in flight at the gradient accumulation "
                     "schedule's peak (allow_oom: true runs it anyway"),
            std::string::npos)
      << oom;
  EXPECT_EQ(error("platform: hgx-h100\nnodes: 1024\njobs:\n  - {nodes: 1024, llm: {model: llama3-70b, tp: 8, pp: 8, iterations: 100, "
                  "global_batch: 16384, recompute: full}}\n")
                .rfind(f + ":4: jobs[0].llm: its 8192 ranks' graphs would hold about 9.44e+10 nodes", 0),
            0u);
  const std::string job = "  - {nodes: 1, collective: {bytes: 1GB}}\n";
  EXPECT_EQ(error("platform: " + platform() + "\nnodes: 4\ndegraded: [{link: 'dim0:leaf0->spine0', share: 0}]\njobs:\n" + job),
            f + ":3: degraded[0].share: a share of 0 is a link down: give {link, down: true}");
  // fat_tree_nodes.yaml has one uplink a leaf: with it down, leaf0 is cut off.
  EXPECT_EQ(error("platform: " + platform() + "\nnodes: 4\ndegraded: [{link: 'dim0:leaf0->spine0', down: true}]\njobs:\n" + job),
            f + ":3: degraded[0].down: no path from leaf0 to leaf1: every switch between them has a link down (acesim needs every GPU to reach every other)");
  EXPECT_EQ(error("platform: " + platform() + "\nnodes: 4\nfabric: {kind: fat-tree, leaf_size: 2}\ndegraded:\n  - {link: 'dim0:spine0->leaf0', down: true}\n  - {link: 'dim0:npu3->leaf1', down: true}\njobs:\n" + job),
            f + ":6: degraded[1].down: npu3 has one link to its leaf and dim0:npu3->leaf1 is down: nothing else reaches it (acesim needs every GPU to reach every other)");
  EXPECT_EQ(error("platform: " + platform() + "\nnodes: 4\ndegraded: [{link: 'dim0:leaf0->spine0', down: false}]\njobs:\n" + job),
            f + ":3: degraded[0].down: must be true (a link that is up needs no item)");
  EXPECT_EQ(error("platform: " + platform() + "\nnodes: 4\ndegraded: [{link: 'dim0:leaf0->spine0', down: true, share: 0.5}]\njobs:\n" + job),
            f + ":3: degraded[0]: give {gpu, compute}, {gpu, nic}, {link, share} or {link, down: true}");
  EXPECT_EQ(error("platform: " + platform() + "\nnodes: 4\ndegraded: [{link: 'dim0:leaf9->spine0', share: 0.5}]\njobs:\n" + job),
            f + ":3: degraded[0].link: no link 'dim0:leaf9->spine0' (names as acesim cluster's links table prints them)");
  EXPECT_EQ(error("platform: " + platform() + "\nnodes: 4\ndegraded: [{gpu: 4, compute: 2}]\njobs:\n" + job),
            f + ":3: degraded[0].gpu: must be in 0..3, got 4");
  EXPECT_EQ(error("platform: " + platform() + "\nnodes: 4\ndegraded: [{gpu: 1, compute: 2, nic: 0.5}]\njobs:\n" + job),
            f + ":3: degraded[0]: a GPU takes compute (how many times longer its kernels take) or nic (its NIC's share of its rate)");
  EXPECT_EQ(error("platform: " + platform() + "\nnodes: 4\ndegraded: [{gpu: 1, compute: 0.5}]\njobs:\n" + job),
            f + ":3: degraded[0].compute: must be in 1..1000, got 0.5");
  EXPECT_EQ(error("platform: " + platform() + "\nnodes: 4\nvariability: {compute_cv: -1}\njobs:\n" + job),
            f + ":3: variability.compute_cv: must be in 0..1, got -1");
}

}  // namespace
}  // namespace acesim
