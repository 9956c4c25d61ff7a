// --progress / --no-progress: progress on stderr only, stdout untouched.
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli_runner.h"
#include "test_paths.h"

namespace acesim {
namespace {

class ProgressCli : public test::CliTest {
 protected:
  void TearDown() override {
    ::unsetenv("ACESIM_PROGRESS_AFTER");
    CliTest::TearDown();
  }
};

TEST_F(ProgressCli, AShortRunPrintsNothingOnStderrWhenItIsNotATerminal) {
  const std::string ring = test::data_dir() + "/platforms/ring8.yaml";
  expect_ok({"collective", "--platform", ring, "--bytes", "1MiB"});
  expect_ok({"collective", "--platform", ring, "--bytes", "1MiB", "--json", "--progress"});  // shorter than a second
  expect_ok({"run", "--platform", ring, "--model", "resnet50", "--iterations", "1", "--no-progress"});
}

TEST_F(ProgressCli, ProgressGoesToStderrAndLeavesTheJsonOnStdoutAsItWas) {
  const std::string ring = test::data_dir() + "/platforms/ring8.yaml";
  const std::vector<std::vector<std::string>> commands = {
      {"collective", "--platform", ring, "--min-bytes", "1MiB", "--max-bytes", "4MiB", "--json"},
      {"run", "--platform", ring, "--model", "resnet50", "--iterations", "1", "--json"},
      {"characterize", "units", "--platform", ring, "--bytes", "1MiB", "--json"},
  };
  for (const auto& args : commands) {
    SCOPED_TRACE(args[0]);
    const test::CliRun quiet = expect_ok(args);
    // Shown at once, however short the run: a last line at least.
    ::setenv("ACESIM_PROGRESS_AFTER", "0", 1);
    std::vector<std::string> with = args;
    with.push_back("--progress");
    const test::CliRun shown = run(with);
    ::unsetenv("ACESIM_PROGRESS_AFTER");
    EXPECT_EQ(shown.status, 0) << shown.err;
    EXPECT_EQ(shown.out, quiet.out);  // byte for byte
    (void)parse_json(shown.out);
    ASSERT_FALSE(shown.err_lines().empty());
    EXPECT_EQ(shown.err_lines().back().rfind("acesim: done in ", 0), 0u) << shown.err;
    for (const std::string& line : shown.err_lines()) EXPECT_EQ(line.rfind("acesim: ", 0), 0u) << line;
  }
}

TEST_F(ProgressCli, ProgressAndNoProgressTogetherAreRefused) {
  expect_bad_input({"collective", "--bytes", "1MiB", "--progress", "--no-progress"}, {"--progress", "--no-progress"});
  ::setenv("ACESIM_PROGRESS_AFTER", "soon", 1);
  expect_bad_input({"collective", "--bytes", "1MiB", "--progress"}, {"ACESIM_PROGRESS_AFTER", "soon"});
}

}  // namespace
}  // namespace acesim
