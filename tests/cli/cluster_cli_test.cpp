// `acesim cluster FILE.yaml` end to end (docs/cluster.md): text, JSON, CSV,
// the trace and bad input.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "test_data.h"

namespace acesim {
namespace {

class ClusterCli : public test::CliTest {};

const std::string kFile = test::kData + "/clusters/shared-uplink.yaml";

TEST_F(ClusterCli, TextJsonCsvAndTrace) {
  const auto text = expect_ok({"cluster", kFile});
  EXPECT_NE(text.out.find("# acesim cluster: 2 jobs on 4 nodes (4 GPUs)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("a          2       0.000          40.000          20.000     2.000  listed: nodes 0,2"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("dim0:leaf0->spine0      50.0  100.0%       3.000       3.000"), std::string::npos) << text.out;
  const std::string csv = (dir_ / "csv").string(), trace = (dir_ / "t.json").string();
  const auto r = expect_ok({"cluster", kFile, "--json", "--csv", csv, "--trace", trace});
  const nlohmann::json j = parse_json(r.out);
  EXPECT_EQ(j["gpus"], 4);
  EXPECT_EQ(j["total_time_ns"], 120e6);
  ASSERT_EQ(j["jobs"].size(), 2u);
  EXPECT_EQ(j["jobs"][1]["name"], "b");
  EXPECT_EQ(j["jobs"][1]["nodes"], nlohmann::json::array({1, 3}));
  EXPECT_EQ(j["jobs"][1]["slowdown"], 2.0);
  EXPECT_EQ(j["jobs"][1]["iteration_end_ns"], nlohmann::json::array({40e6, 80e6, 120e6}));
  EXPECT_EQ(j["busiest_links"][0]["bytes_by_job"]["b"], 3e9);
  EXPECT_EQ(j["links_used"], 12);
  const auto jobs = test::read_csv(dir_ / "csv" / "jobs.csv");
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].at("slowdown"), "2");
  EXPECT_EQ(test::read_csv(dir_ / "csv" / "iterations.csv").size(), 6u);
  const auto links = test::read_csv(dir_ / "csv" / "links.csv");
  EXPECT_EQ(links.size(), 12u);
  EXPECT_EQ(links[0].at("bytes_a"), "3000000000");
  // The trace: a process per job, its iterations, collectives as async slices.
  const nlohmann::json t = parse_json(test::slurp(trace));
  int iterations = 0, collectives = 0;
  for (const nlohmann::json& e : t["traceEvents"]) {
    if (e["ph"] == "X" && e["cat"] == "iteration") ++iterations;
    if (e["ph"] == "b") ++collectives;
  }
  EXPECT_EQ(iterations, 6);
  EXPECT_EQ(collectives, 6);
  // Without the runs alone: no slowdown.
  const nlohmann::json n = parse_json(expect_ok({"cluster", kFile, "--json", "--no-alone"}).out);
  EXPECT_TRUE(n["jobs"][0]["slowdown"].is_null());
}

// A sweep of cluster files: each point is the command line's --json.
TEST_F(ClusterCli, SweepsRunClusterFiles) {
  const std::string grid = write("grid.yaml", "command: cluster\ngrid:\n  file: [" + kFile + "]\n  no-alone: [false, true]\n");
  expect_ok({"sweep", grid, "--out", (dir_ / "out").string(), "--jobs", "1", "--no-progress"});
  const auto rows = test::read_csv(dir_ / "out" / "results.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("total_time_ns"), "120000000.0");
  EXPECT_EQ(rows[1].at("links_used"), "12");
  const nlohmann::json first = parse_json(test::slurp(dir_ / "out" / "results.jsonl").substr(0, test::slurp(dir_ / "out" / "results.jsonl").find('\n')));
  EXPECT_EQ(first["result"]["jobs"][0]["slowdown"], 2.0);
}

// An LLM job priced in situ: a calibration file beside the cluster file, or
// the shipped one; the same job without one is as it was; each bad
// calibration is one line at its key.
TEST_F(ClusterCli, LlmJobsTakeACalibration) {
  write("cal.yaml", "calibration: 1\nparameters:\n  - tensor: 1.2\n    step_fixed_ms: 40\n");
  write("amp.yaml", "calibration: 1\nparameters:\n  - arch: ampere\n    tensor: 1.2\n");
  const auto cluster = [&](const std::string& name, const std::string& calibration) {
    return write(name, "platform: hgx-h100\nnodes: 2\njobs:\n  - nodes: 1\n    llm: {model: llama3-8b, tp: 8, global_batch: 8" +
                           (calibration.empty() ? std::string() : ", calibration: " + calibration) + "}\n");
  };
  const auto iteration_ms = [&](const std::string& file) {
    const nlohmann::json j = parse_json(expect_ok({"cluster", file, "--json"}).out);
    return j["jobs"][0]["iteration_time_ns"].get<double>() / 1e6;
  };
  const double plain = iteration_ms(cluster("plain.yaml", ""));
  const double in_situ = iteration_ms(cluster("insitu.yaml", "cal.yaml"));
  EXPECT_GT(in_situ, plain + 40.0);  // the host's 40 ms a step, and slower GEMMs
  EXPECT_LT(in_situ, plain * 1.2 + 40.0 + 1e-6);
  EXPECT_GT(iteration_ms(cluster("shipped.yaml", "published-runs")), plain);
  const auto text = expect_ok({"cluster", (dir_ / "insitu.yaml").string()});
  EXPECT_NE(text.out.find("; in situ: " + (dir_ / "cal.yaml").string() + ")"), std::string::npos) << text.out;
  const std::string none = cluster("none.yaml", "no.yaml");
  expect_bad_input({"cluster", none}, {none + ":5: jobs[0].llm.calibration: --calibration: " + (dir_ / "no.yaml").string() + ": cannot open"});
  const std::string other = cluster("other.yaml", "amp.yaml");
  expect_bad_input({"cluster", other}, {other + ":5: jobs[0].llm.calibration: --calibration " + (dir_ / "amp.yaml").string() +
                                        ": no entry for this platform's architecture 'hopper'"});
}

TEST_F(ClusterCli, BadInput) {
  expect_bad_input({"cluster", (dir_ / "none.yaml").string()}, {"none.yaml: cannot open: No such file or directory"});
  const std::string f = write("c.yaml", "platform: hgx-h100\nnodes: 2\njobs:\n  - {nodes: 3, collective: {bytes: 1GB}}\n");
  expect_bad_input({"cluster", f}, {f + ":4: jobs[0].nodes: must be in 1..2, got 3"});
  const std::string g = write("g.yaml", "platform: hgx-h100\nnodes: 2\njobs:\n  - {nodes: 1, collective: {bytes: 1GB}}\n  - {nodes: 1, placement: 0, collective: {bytes: 1GB}}\n");
  // The listed job is placed first: node 0 is its; the packed one gets node 1.
  const nlohmann::json j = parse_json(expect_ok({"cluster", g, "--json"}).out);
  EXPECT_EQ(j["jobs"][0]["nodes"], nlohmann::json::array({1}));
  EXPECT_EQ(j["jobs"][1]["nodes"], nlohmann::json::array({0}));
  expect_bad_input({"cluster"}, {"file is required"});
  // An LLM job's precision against its GPU, as a run's: MXFP8 needs
  // Blackwell's block-scaled tensor cores, FP8 an FP8 GPU.
  const std::string mx = write("mx.yaml", "platform: hgx-h100\nnodes: 1\njobs:\n  - nodes: 1\n    llm: {model: llama3-8b, tp: 8, precision: mxfp8}\n");
  expect_bad_input({"cluster", mx}, {mx + ":5: jobs[0].llm.precision: mxfp8 needs block-scaled FP8 tensor cores"});
  const std::string a100 = write("a100.yaml", "platform: hgx-a100\nnodes: 1\njobs:\n  - nodes: 1\n    llm: {model: llama3-8b, tp: 8, precision: fp8}\n");
  expect_bad_input({"cluster", a100}, {a100 + ":5: jobs[0].llm.precision: fp8 needs FP8 tensor cores"});
}

}  // namespace
}  // namespace acesim
