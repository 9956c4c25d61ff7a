// The library facade: what the CLI does, called as a library.
#include <gtest/gtest.h>

#include "api/api.h"
#include "config/input_error.h"
#include "test_data.h"
#include "test_paths.h"

namespace acesim {
namespace {

TEST(Api, ACollectiveSweepAsTheCliRunsIt) {
  api::CollectiveRequest r;
  r.platform.file = test::data_dir() + "/platforms/ring8.yaml";
  r.min_bytes = "1MiB";
  r.max_bytes = "4MiB";
  const api::CollectiveRun run = api::simulate_collectives(r);
  ASSERT_EQ(run.results.size(), 3u);
  EXPECT_EQ(run.results[0].bytes, 1u << 20);
  EXPECT_EQ(run.results[2].bytes, 4u << 20);
  EXPECT_EQ(run.spec.op, CollectiveOp::kAllReduce);
  // Ring all-reduce on a ring of 8, 50 GB/s, 500 ns: 14 x (500 ns + S/8 / 50 GB/s).
  EXPECT_NEAR(ps_to_ns(run.results[0].time_ps), 14 * (500 + (1 << 20) / 8.0 / 50.0), 1e-3);
}

TEST(Api, AstraInputsDefaultToTheIdealExecutorAndGivenKernelTimes) {
  api::TrainingRequest r;
  r.platform.astra_network = test::kNet + "Ring_8npus.yml";
  r.platform.astra_system = test::kCustom + "ring_1chunk_nodelay.json";
  r.workload_file = test::data_dir() + "/astra-sim-1.0/workload/microAllReduce.txt";
  const api::TrainingRun run = api::simulate_training(r);
  ASSERT_EQ(run.reports.size(), 1u);
  EXPECT_EQ(run.reports[0].executor, "ideal");
  EXPECT_TRUE(run.platform.npu.fixed_kernel_times);
}

TEST(Api, NothingGivenComparesSmAndAceOnTheDefault) {
  api::TrainingRequest r;
  r.iterations = 1;
  const api::TrainingRun run = api::simulate_training(r);
  ASSERT_EQ(run.reports.size(), 2u);
  EXPECT_EQ(run.reports[0].executor, "sm");
  EXPECT_EQ(run.reports[1].executor, "ace");
  EXPECT_EQ(run.reports[0].workload, run.reports[1].workload);
}

TEST(Api, APresetByName) {
  api::PlatformRequest r;
  r.file = "hgx-h200";
  const PlatformConfig byname = api::load_platform(r);
  const PlatformConfig file = load_platform_file(test::source_dir() + "/presets/hgx-h200.yaml");
  EXPECT_EQ(byname.source, "presets/hgx-h200.yaml");
  ASSERT_EQ(byname.dims.size(), file.dims.size());
  for (std::size_t d = 0; d < file.dims.size(); ++d) {
    EXPECT_EQ(byname.dims[d].npus, file.dims[d].npus);
    EXPECT_EQ(byname.dims[d].bandwidth_GBps, file.dims[d].bandwidth_GBps);
  }
  EXPECT_EQ(byname.npu.hbm_GBps, file.npu.hbm_GBps);
  r.file = "hgx-h2000";
  EXPECT_THROW(api::load_platform(r), InputError);  // neither a file nor a preset
}

TEST(Api, RefusesBadValuesNamingTheFlag) {
  EXPECT_THROW(api::parse_dims("--dims", "0,0", 2), InputError);
  EXPECT_EQ(api::parse_dims("--dims", "1,0", 2), (std::vector<int>{1, 0}));
  EXPECT_THROW(api::parse_size("--bytes", "2PiB"), InputError);
  EXPECT_EQ(api::parse_stragglers({"3=1.5"}, 8), (std::vector<std::pair<Rank, double>>{{3, 1.5}}));
  try {
    api::parse_op("--op", "allreduc");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "--op: unknown operation 'allreduc' (did you mean 'all-reduce'?)");
  }
  api::TrainingRequest r;
  r.model = "gpt";
  r.workload_file = "x.txt";
  EXPECT_THROW(api::simulate_training(r), InputError);
}

}  // namespace
}  // namespace acesim
