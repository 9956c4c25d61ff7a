// Platforms by name and --nodes: the node-based presets, every number of
// theirs with a source, the node count on collective, run and characterize,
// and the one-line errors for what cannot work.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "api/api.h"
#include "cli_runner.h"
#include "config/input_error.h"
#include "config/presets.h"

namespace {

class Nodes : public acesim::test::CliTest {};

const std::vector<std::string> kNodePresets = {"hgx-a100", "hgx-a100-40gb", "hgx-h100", "hgx-h200", "hgx-b200", "gb200-nvl72", "mi300x", "mi355x"};

// NVLink at the data rate NCCL's topology assigns a link (src/graph/topo.h:
// 20.0, 20.6, 40.1 GB/s per Ampere, Hopper, Blackwell link), NICs at line rate.
TEST(NodePresets, EachHasANodeDimensionAndNcclsLinkRates) {
  using acesim::PlatformConfig;
  struct Want {
    std::string name;
    int per_node;
    double nvlink;
    double nic;
  };
  for (const Want& w : std::vector<Want>{{"hgx-a100", 8, 12 * 20.0, 25},
                                         {"hgx-a100-40gb", 8, 12 * 20.0, 25},
                                         {"hgx-h100", 8, 18 * 20.6, 50},
                                         {"hgx-h200", 8, 18 * 20.6, 50},
                                         {"hgx-b200", 8, 18 * 40.1, 50},
                                         {"gb200-nvl72", 72, 18 * 40.1, 50},
                                         {"mi300x", 8, 46.55, 50}, {"mi355x", 8, 55.86, 50}}) {
    const PlatformConfig p = acesim::load_preset(acesim::preset_registry().get(w.name));
    ASSERT_EQ(p.dims.size(), 2u) << w.name;
    EXPECT_EQ(p.nodes_dim, 1) << w.name;
    EXPECT_EQ(p.dims[0].npus, w.per_node) << w.name;
    EXPECT_NEAR(p.dims[0].bandwidth_GBps, w.nvlink, 1e-9) << w.name;
    EXPECT_EQ(p.dims[1].kind.name(), "rail") << w.name;
    EXPECT_EQ(p.dims[1].bandwidth_GBps, w.nic) << w.name;
  }
  for (const char* name : {"default", "ace-isca21"}) {
    EXPECT_EQ(acesim::load_preset(acesim::preset_registry().get(name)).nodes_dim, -1) << name;
  }
}

// Every line of a node preset that sets a number says where it comes from
// (a comment: a source, "assumption" or "calibration constant").
TEST(NodePresets, EveryNumberHasAComment) {
  const std::regex number_line(R"(^\s*-?\s*[A-Za-z_-]+:\s*[-+]?[0-9])");
  for (const std::string& name : kNodePresets) {
    std::ifstream in(acesim::test::source_dir() + "/presets/" + name + ".yaml");
    ASSERT_TRUE(in) << name;
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
      ++n;
      if (std::regex_search(line, number_line)) {
        EXPECT_NE(line.find('#'), std::string::npos) << name << ":" << n << ": " << line;
      }
    }
  }
}

TEST_F(Nodes, SetsTheNodeCountOnEveryCommand) {
  for (const std::string n : {"1", "3", "5"}) {
    const auto r = expect_ok({"collective", "--platform", "hgx-h100", "--nodes", n, "--op", "all-reduce", "--bytes", "1MiB", "--json"});
    const nlohmann::json j = parse_json(r.out);
    EXPECT_EQ(j["results"][0]["ranks"], 8 * std::stoi(n)) << r.out;
    // The preset runs NCCL's collectives, whose rings cross nodes on a
    // different NIC per channel: symmetric within a node, full across nodes.
    EXPECT_EQ(j["results"][0]["simulated_ranks"], n == "1" ? 1 : 8 * std::stoi(n)) << r.out;
  }
  // With the platform's own plans, rails keep the platform symmetric.
  const auto plans = expect_ok({"collective", "--platform", "hgx-a100", "--nodes", "5", "--bytes", "1MiB", "--library", "acesim", "--json"});
  EXPECT_EQ(parse_json(plans.out)["results"][0]["simulated_ranks"], 1) << plans.out;
  const auto gb = expect_ok({"collective", "--platform", "gb200-nvl72", "--nodes", "2", "--bytes", "1MiB", "--json"});
  EXPECT_EQ(parse_json(gb.out)["results"][0]["ranks"], 144);
  const auto run = expect_ok({"run", "--platform", "hgx-h200", "--nodes", "2", "--model", "gpt"});
  EXPECT_NE(run.out.find("16 NPUs"), std::string::npos) << run.out;
  expect_ok({"characterize", "traffic", "--platform", "hgx-b200", "--nodes", "3"});
}

// Naming a board means one of it, as nccl-tests on one box: one node (a
// rack for gb200-nvl72) unless --nodes says more; the first line of every
// command's table says how many NPUs.
TEST_F(Nodes, ThePresetsAreOneNodeByDefault) {
  for (const std::string& name : kNodePresets) {
    const int per_node = name == "gb200-nvl72" ? 72 : 8;
    const auto r = expect_ok({"collective", "--platform", name, "--bytes", "1MiB", "--json"});
    EXPECT_EQ(parse_json(r.out)["results"][0]["ranks"], per_node) << name;
    const auto t = expect_ok({"collective", "--platform", name, "--bytes", "1MiB"});
    EXPECT_EQ(t.out.rfind("# acesim collective: all-reduce on " + std::to_string(per_node) + " NPUs (", 0), 0u) << t.out;
  }
  const auto four = expect_ok({"collective", "--platform", "hgx-h100", "--nodes", "4", "--bytes", "1MiB"});
  EXPECT_EQ(four.out.rfind("# acesim collective: all-reduce on 32 NPUs (", 0), 0u) << four.out;
  const auto run = expect_ok({"run", "--platform", "hgx-h100", "--iterations", "1", "--executor", "sm"});
  EXPECT_EQ(run.out.rfind("# acesim run: ResNet-50 (DATA) on 8 NPUs, 1 iteration(s), executor sm\n", 0), 0u) << run.out;
  const auto compare = expect_ok({"run", "--platform", "hgx-h100", "--iterations", "1", "--compare", "sm,ace"});
  EXPECT_EQ(compare.out.rfind("# acesim run: ResNet-50 (DATA) on 8 NPUs, 1 iteration(s)\n", 0), 0u) << compare.out;
  const auto llm = expect_ok({"run", "--platform", "hgx-h100", "--model", "llama3-8b", "--tp", "8", "--global-batch", "2"});
  EXPECT_EQ(llm.out.rfind("# acesim run: llama3-8b on 8 GPUs: tp 8, pp 1, dp 1", 0), 0u) << llm.out;
  const auto study = expect_ok({"characterize", "overlap", "--platform", "hgx-h100"});
  EXPECT_EQ(study.out.rfind("# acesim characterize overlap: all-reduce of 64 MiB (67108864 bytes) on 8 NPUs\n", 0), 0u) << study.out;
  // NCCL's model on one node: NVLS in the switch, 16 channels.
  EXPECT_NE(study.out.find("sm channels=16*         138.827        157.976      13.8%"), std::string::npos) << study.out;
  const std::string prefix = acesim::test::data_dir() + "/chakra-et/all_reduce_8npus_1MB/all_reduce";
  const auto chakra = expect_ok({"run", "--platform", "hgx-h100", "--chakra", prefix});
  EXPECT_EQ(chakra.out.rfind("# acesim run: Chakra traces " + prefix + ".<rank>.et on 8 NPUs; rank 0:", 0), 0u) << chakra.out;
}

TEST_F(Nodes, RefusesWhatCannotWork) {
  expect_bad_input({"collective", "--platform", "hgx-h100", "--nodes", "0"}, {"--nodes", "1..1048576", "got 0"});
  expect_bad_input({"collective", "--platform", "hgx-h100", "--nodes", "-3"}, {"--nodes"});
  expect_bad_input({"collective", "--platform", "ace-isca21", "--nodes", "2"},
                   {"--nodes", "ace-isca21", "no node dimension", "hgx-h100", "gb200-nvl72"});
  expect_bad_input({"run", "--nodes", "2"}, {"--nodes", "default.yaml", "no node dimension"});
  expect_bad_input({"collective", "--platform", "hgx-h10"}, {"--platform", "'hgx-h10'", "did you mean 'hgx-h100'"});
  expect_bad_input({"characterize", "units", "--platform", "gb200nvl72x"}, {"--platform", "did you mean 'gb200-nvl72'"});
}

// --gpus-per-node: a job on part of each node, as NVIDIA's GB200 runs take
// 64 GPUs of a 72-GPU rack: 4 racks of 64 make 256 GPUs on NVLink domains
// of 64, the same platform a runs file's 256-GPU GB200 row gets.
TEST_F(Nodes, GpusPerNodeTakesPartOfEachNode) {
  const auto r = expect_ok({"collective", "--platform", "gb200-nvl72", "--gpus-per-node", "64", "--nodes", "4", "--bytes", "1MiB", "--json"});
  EXPECT_EQ(parse_json(r.out)["results"][0]["ranks"], 256) << r.out;
  const auto one = expect_ok({"collective", "--platform", "hgx-h100", "--gpus-per-node", "4", "--bytes", "1MiB", "--json"});
  EXPECT_EQ(parse_json(one.out)["results"][0]["ranks"], 4) << one.out;
  const auto llm = expect_ok({"run", "--platform", "gb200-nvl72", "--gpus-per-node", "8", "--model", "llama3-8b", "--global-batch", "8",
                              "--iterations", "1"});
  EXPECT_EQ(llm.out.rfind("# acesim run: llama3-8b on 8 GPUs:", 0), 0u) << llm.out;
  expect_bad_input({"collective", "--platform", "gb200-nvl72", "--gpus-per-node", "73"},
                   {"--gpus-per-node: must be an integer in 1..72", "got 73"});
  expect_bad_input({"collective", "--platform", "hgx-h100", "--gpus-per-node", "0"}, {"--gpus-per-node", "1..8", "got 0"});
  expect_bad_input({"collective", "--platform", "ace-isca21", "--gpus-per-node", "2"}, {"--gpus-per-node", "no node dimension"});
}

}  // namespace
