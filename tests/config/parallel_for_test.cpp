// parallel_for: every task once, whatever the threads; the first failure by
// index is the one rethrown.
#include "config/parallel_for.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace acesim {
namespace {

TEST(ParallelFor, ThreadCountIsJobsOrEveryCoreAtMostTheTasks) {
  EXPECT_EQ(thread_count(10, 3), 3u);
  EXPECT_EQ(thread_count(2, 8), 2u);
  EXPECT_EQ(thread_count(0, 4), 1u);
  EXPECT_GE(thread_count(1000, 0), 1u);
  EXPECT_EQ(thread_count(1, 0), 1u);
}

TEST(ParallelFor, EveryTaskRunsOnceIntoItsOwnSlot) {
  for (int jobs : {1, 2, 7}) {
    std::vector<long long> out(1000, -1);
    parallel_for(out.size(), jobs, [&](std::size_t i) { out[i] = static_cast<long long>(i) * static_cast<long long>(i); });
    for (std::size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], static_cast<long long>(i * i)) << "jobs " << jobs;
  }
}

TEST(ParallelFor, TheFirstFailureByIndexIsRethrown) {
  for (int jobs : {1, 2, 4}) {
    std::vector<int> ran(50, 0);
    try {
      parallel_for(ran.size(), jobs, [&](std::size_t i) {
        ran[i] = 1;
        if (i == 31 || i == 17 || i == 44) throw std::runtime_error("task " + std::to_string(i));
      });
      FAIL() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "task 17");
    }
    // A failure stops no other task.
    for (int r : ran) EXPECT_EQ(r, 1);
  }
}

}  // namespace
}  // namespace acesim
