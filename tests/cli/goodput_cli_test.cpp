// `acesim run ... --days D`: a long run with failures (docs/goodput.md) end
// to end: text, JSON, CSV, determinism and bad input.
#include <fstream>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace acesim {
namespace {

class GoodputCli : public test::CliTest {};

const std::vector<std::string> kLlm = {"run", "--platform", "hgx-h100", "--nodes", "4", "--model", "llama3-8b", "--tp", "8"};

std::vector<std::string> with(std::vector<std::string> base, std::initializer_list<std::string> more) {
  base.insert(base.end(), more);
  return base;
}

TEST_F(GoodputCli, LlmRunReportsItsGoodput) {
  const auto text = expect_ok(with(kLlm, {"--days", "30", "--trials", "50"}));
  EXPECT_NE(text.out.find("failures and goodput over 30 days (50 trials, seed 1"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("32 GPUs, 4 nodes, 32 NICs, 32 scale-out links"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("8.03e+09 parameters x 14 B"), std::string::npos) << text.out;
  // The same input, the same numbers.
  EXPECT_EQ(text.out, run(with(kLlm, {"--days", "30", "--trials", "50"})).out);
  const auto r = expect_ok(with(kLlm, {"--days", "30", "--trials", "50", "--json", "--checkpoint-every", "1000", "--seed", "7"}));
  const nlohmann::json j = parse_json(r.out);
  const nlohmann::json& g = j["goodput"];
  EXPECT_EQ(g["failure_model"], "meta-llama3");
  EXPECT_EQ(g["trials"], 50);
  EXPECT_EQ(g["seed"], 7);
  EXPECT_EQ(g["components"]["gpu"], 32);
  EXPECT_EQ(g["checkpoint"]["every_iterations"], 1000);
  EXPECT_EQ(g["checkpoint"]["auto"], false);
  // 8.03e9 parameters x 14 B at 2000 GB/s.
  EXPECT_NEAR(g["checkpoint"]["size_GB"].get<double>(), 112.4, 0.1);
  EXPECT_NEAR(g["checkpoint"]["write_s"].get<double>(), 112.4 / 2000.0, 1e-4);
  // 32 GPUs fail about once in 66 days: the goodput is nearly all.
  EXPECT_NEAR(g["mtbf_s"].get<double>() / 86400.0, 65.9, 0.1);
  EXPECT_GT(g["ettr"]["mean"].get<double>(), 0.99);
  const double hours = g["hours"]["productive"].get<double>() + g["hours"]["checkpointing"].get<double>() +
                       g["hours"]["lost"].get<double>() + g["hours"]["restarting"].get<double>();
  EXPECT_NEAR(hours, 720.0, 1e-6);
  EXPECT_NEAR(g["checkpoint"]["interval_s"].get<double>(), 1000.0 * g["iteration_s"].get<double>(), 1e-6);
  EXPECT_NEAR(g["iteration_s"].get<double>() * 1e9, j["iteration_time_ns"].get<double>(), 1.0);
}

TEST_F(GoodputCli, CsvHasOneRowPerTrial) {
  const std::string out = (dir_ / "csv").string();
  expect_ok(with(kLlm, {"--days", "54", "--trials", "12", "--csv", out, "--failures", "meta-llama3"}));
  const auto rows = test::read_csv(dir_ / "csv" / "goodput.csv");
  ASSERT_EQ(rows.size(), 12u);
  EXPECT_EQ(rows[0].at("trial"), "0");
  for (const auto& row : rows) {
    const double wall = std::stod(row.at("productive_s")) + std::stod(row.at("checkpointing_s")) + std::stod(row.at("lost_s")) +
                        std::stod(row.at("restarting_s"));
    EXPECT_NEAR(wall, 54 * 86400.0, 1e-3);
    EXPECT_EQ(std::stoll(row.at("interruptions")), std::stoll(row.at("gpu_failures")) + std::stoll(row.at("node_failures")) +
                                                       std::stoll(row.at("nic_failures")) + std::stoll(row.at("link_failures")));
  }
}

TEST_F(GoodputCli, AFailureFileOfOnesOwn) {
  const std::filesystem::path f = dir_ / "rates.yaml";
  std::ofstream(f) << "failures_per_1000_days:\n  gpu: 100\nstorage:\n  write_GBps: 10\nrestart:\n  requeue_minutes: 5\n  init_minutes: 1\n";
  const auto r = expect_ok(with(kLlm, {"--days", "10", "--trials", "20", "--failures", f.string(), "--json"}));
  const nlohmann::json g = parse_json(r.out)["goodput"];
  // 32 GPUs x 0.1 a day.
  EXPECT_NEAR(g["failures_per_day"]["gpu"].get<double>(), 3.2, 1e-9);
  EXPECT_EQ(g["failures_per_day"]["node"], 0.0);
  EXPECT_NEAR(g["interruptions"]["mean"].get<double>(), 32.0, 5.0);
  std::ofstream(f) << "failures_per_1000_days:\n  gpu: 1e6\nstorage:\n  write_GBps: 0.001\nrestart:\n  requeue_minutes: 5\n  init_minutes: 1\n";
  expect_bad_input(with(kLlm, {"--days", "10", "--failures", f.string()}),
                   {f.string() + ":1: failures_per_1000_days: the job's mean time between failures", "no checkpoint would ever be written"});
  std::ofstream(f) << "failures_per_1000_days:\n  gpu: -1\n";
  expect_bad_input(with(kLlm, {"--days", "10", "--failures", f.string()}), {f.string() + ":2: failures_per_1000_days.gpu: must be at least 0"});
}

TEST_F(GoodputCli, BadInput) {
  expect_bad_input(with(kLlm, {"--failures", "default"}), {"apply with --days"});
  expect_bad_input(with(kLlm, {"--days", "0"}), {"--days: must be above 0"});
  expect_bad_input(with(kLlm, {"--days", "nan"}), {"--days"});
  expect_bad_input(with(kLlm, {"--days", "5", "--failures", "nope"}), {"--failures: 'nope' is neither a file nor a built-in failure model"});
  expect_bad_input(with(kLlm, {"--days", "5", "--checkpoint-every", "often"}), {"--checkpoint-every: expected 'auto' or a number of iterations"});
  expect_bad_input(with(kLlm, {"--days", "5", "--checkpoint-every", "0"}), {"--checkpoint-every: must be 'auto' or in 1.."});
  expect_bad_input(with(kLlm, {"--days", "5", "--trials", "0"}), {"--trials: must be in 1..1000000"});
  expect_bad_input(with(kLlm, {"--days", "5", "--seed", "-1"}), {"--seed: must be at least 0"});
  expect_bad_input(with(kLlm, {"--days", "5", "--checkpoint-GB", "-3"}), {"--checkpoint-GB: must be above 0"});
  // A layer-table model does not say how large its checkpoint is.
  expect_bad_input({"run", "--platform", "hgx-h100", "--iterations", "1", "--days", "1"}, {"give --checkpoint-GB"});
}

}  // namespace
}  // namespace acesim
