// acesim against ASTRA-sim 2.0 on its example microbenchmarks
// (docs/validation.md, section 1): the published tables stay what the study
// computes, and every difference over 5% is named and explained.
#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "cli_runner.h"
#include "config/input_error.h"
#include "reproduce/astra_microbenchmarks.h"
#include "test_paths.h"

namespace acesim {
namespace {

const std::vector<AstraMicrobenchmark>& study() {
  static const std::vector<AstraMicrobenchmark> rows = run_astra_microbenchmarks(test::data_dir());
  return rows;
}

std::string doc_tables() { return test::doc_tables("docs/validation.md", "astra-sim-2.0"); }

TEST(AstraMicrobenchmarks, EveryExampleRuns) {
  // 4 collectives x 8 combinations of NPUs, network and system file.
  ASSERT_EQ(study().size(), 32u);
  for (const AstraMicrobenchmark& m : study()) {
    EXPECT_GT(m.aware.acesim_ns, 0.0);
    EXPECT_GT(m.unaware.acesim_ns, 0.0);
  }
}

TEST(AstraMicrobenchmarks, DocumentedTablesAreWhatTheStudyComputes) {
  EXPECT_EQ(doc_tables(), astra_microbenchmark_tables(study()))
      << "docs/validation.md section 1 is out of date: paste `acesim reproduce astra-sim-2.0`'s tables";
}

TEST(AstraMicrobenchmarks, EveryDifferenceOverFivePercentIsExplained) {
  for (const AstraMicrobenchmark& m : study()) {
    for (const AstraComparison* c : {&m.aware, &m.unaware}) {
      SCOPED_TRACE(m.op + " " + std::to_string(m.npus) + " " + m.network + " " + m.system +
                   (c == &m.aware ? " congestion-aware" : " congestion-unaware"));
      if (std::abs(c->error()) > 0.05) {
        EXPECT_FALSE(c->differences.empty());
      }
      if (c->differences.empty()) {
        EXPECT_LT(std::abs(c->error()), 5e-4);  // the same model: the same time
      } else {
        // The named differences, applied in closed form, account for the gap.
        ASSERT_TRUE(c->adjusted_ns.has_value());
        EXPECT_LT(std::abs(*c->adjusted_ns - c->astra_ns) / c->astra_ns, c == &m.unaware ? 0.005 : 0.02);
      }
    }
  }
}

TEST(AstraMicrobenchmarks, AllGatherGathersEachRanksInput) {
  // The case: 1 MiB all-gather on the 8-NPU ring with 4 chunks is
  // 8 MiB gathered: 4 x 7 steps of 256 KiB at 50 x 2^30 bytes/s + 510 ns.
  for (const AstraMicrobenchmark& m : study()) {
    if (m.op != "all_gather" || m.npus != 8 || m.network != "Ring_8npus" || m.system != "Ring_4chunks") continue;
    const double expected = 28 * (262144.0 / (50 * 1.073741824) + 510.0);
    EXPECT_NEAR(m.unaware.acesim_ns, expected, 1e-3 * expected);
    EXPECT_NEAR(m.unaware.astra_ns, 151016.0, 0.5);
    return;
  }
  ADD_FAILURE() << "row missing";
}

TEST(AstraMicrobenchmarks, MissingDataIsAnInputError) {
  try {
    run_astra_microbenchmarks("/nonexistent");
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/astra-sim-2.0/results/microbenchmarks.csv: cannot open"),
              std::string::npos)
        << e.what();
  }
}

class AstraMicrobenchmarksCli : public test::CliTest {};

TEST_F(AstraMicrobenchmarksCli, WritesItsTablesAndRefusesMissingData) {
  expect_bad_input({"reproduce", "astra-sim-2.0", "--data", "/nonexistent"}, {"--data: '/nonexistent' is not a directory"});
  expect_bad_input({"reproduce", "astra-sim-2.0", "--data", dir_.string()}, {"microbenchmarks.csv: cannot open"});  // a directory without the data
  const test::CliRun r = expect_ok({"reproduce", "astra-sim-2.0", "--data", test::data_dir(), "--out", (dir_ / "out").string()});
  EXPECT_NE(r.out.find(astra_microbenchmark_tables(study())), std::string::npos);
  const std::string csv = test::slurp((dir_ / "out").string() + "/results.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 33);  // header + 32 rows
  EXPECT_NE(test::slurp((dir_ / "out").string() + "/report.md").find("| all_gather | 8 | Ring_8npus | Ring_4chunks | 151.016 | 150.999 |"),
            std::string::npos);
}

}  // namespace
}  // namespace acesim
