// Stragglers on collectives: a slower endpoint's links (in and out) slow
// every step that crosses them (issue: tail latency of one rank).
#include <gtest/gtest.h>

#include "api/api.h"
#include "cli_runner.h"
#include "config/input_error.h"
#include "support.h"

namespace acesim {
namespace {

TEST(CollectiveStraggler, ASlowerRankSlowsEveryRingStep) {
  // Ring of 4 at 100 GB/s, 500 ns: rank 1 at factor 2 halves the links
  // 0->1 and 1->2, and every step of the ring waits for them:
  // 2(n-1) (L + c/n / (B/2)) on both backends.
  const double c = 8 << 20;
  for (const char* backend : {"fluid", "analytical"}) {
    const PlatformConfig p = test::platform({test::dim(DimKind::kRing, 4, 100, 500)}, backend);
    CollectiveRequestSpec req;
    req.stragglers = {{1, 2.0}};
    const CollectiveResult r = run_collective(p, req, static_cast<std::uint64_t>(c));
    EXPECT_NEAR(ps_to_ns(r.time_ps), 6 * (500 + c / 4 / 50.0), 1e-3) << backend;
    EXPECT_EQ(r.simulation, "full: stragglers");
    EXPECT_EQ(r.simulated_ranks, 4);
    req.stragglers.clear();
    EXPECT_NEAR(ps_to_ns(run_collective(p, req, static_cast<std::uint64_t>(c)).time_ps), 6 * (500 + c / 4 / 100.0), 1e-3);
  }
}

TEST(CollectiveStraggler, ThroughTheFacadeAndTheCli) {
  api::CollectiveRequest r;
  r.platform.file = test::source_dir() + "/tests/data/platforms/ring8.yaml";
  r.bytes = "1MiB";
  r.stragglers = {"3=1.5"};
  const api::CollectiveRun run = api::simulate_collectives(r);
  EXPECT_EQ(run.results[0].simulation, "full: stragglers");
  r.stragglers = {"8=2"};
  EXPECT_THROW(api::simulate_collectives(r), InputError);  // no rank 8 on a ring of 8
  r.stragglers = {"3=0"};
  EXPECT_THROW(api::simulate_collectives(r), InputError);
}

class CollectiveStragglerCli : public test::CliTest {};

TEST_F(CollectiveStragglerCli, BadValuesAreOneLineErrors) {
  expect_bad_input({"collective", "--bytes", "1MiB", "--straggler", "x"}, {"--straggler", "RANK=FACTOR"});
  expect_bad_input({"collective", "--bytes", "1MiB", "--straggler", "64=2"}, {"--straggler", "rank 64"});
  expect_ok({"collective", "--bytes", "1MiB", "--straggler", "5=3", "--json"});
}

}  // namespace
}  // namespace acesim
