// The progress line and when the display shows it.
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "report/progress_display.h"

namespace acesim {
namespace {

std::string read_all(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string s;
  char buf[512];
  while (std::fgets(buf, sizeof buf, f) != nullptr) s += buf;
  return s;
}

TEST(ProgressLine, SaysWhatRunsWhereTheSimulationIsAndWhatIsLeft) {
  // A quarter done in 3 s: three times as long again is left.
  EXPECT_EQ(progress_line("size 2/4 (1 MiB): simulating", 12'345'678, 1'835'037, 0.25, 3.0),
            "acesim: size 2/4 (1 MiB): simulating | sim 12.3 us | 1.84 M events | 3.0 s | 25% | ~9.0 s left");
  EXPECT_EQ(progress_line("building", -1, 0, 0.5, 80.0), "acesim: building | 1 min 20 s | 50% | ~1 min 20 s left");
  // Nothing done yet, or nothing known: no estimate.
  EXPECT_EQ(progress_line("building", -1, 0, 0.0, 2.0), "acesim: building | 2.0 s | 0%");
  EXPECT_EQ(progress_line("", 2 * kPsPerSec, 12'000'000'000ULL, -1.0, 7200.0),
            "acesim: working | sim 2.00 s | 12.00 G events | 2 h 00 min");
  EXPECT_EQ(progress_line("x", 999, 9999, 1.0, 0.3), "acesim: x | sim 1.0 ns | 9999 events | 0.3 s | 100%");
  EXPECT_EQ(progress_line("x", 0, 123'456, -1.0, 12.4), "acesim: x | sim 0.0 ns | 123.5 k events | 12 s");
}

TEST(ProgressDisplay, NothingForARunShorterThanTheDelay) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    ProgressDisplay d(f, {.terminal_width = 0, .after_s = 60.0, .every_s = 0.0});
    d.progress({"simulating", 1000, 10, 0.5});
    d.finish();
  }
  EXPECT_EQ(read_all(f), "");
  std::fclose(f);
}

TEST(ProgressDisplay, PlainLinesThenADoneLineWhenNotATerminal) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  ProgressDisplay d(f, {.terminal_width = 0, .after_s = 0.0, .every_s = 0.05});
  d.progress({"simulating", 5 * kPsPerUs, 4096, 0.5});
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  d.finish();
  d.finish();  // once only
  const std::string out = read_all(f);
  EXPECT_NE(out.find("acesim: simulating | sim 5.0 us | 4096 events | "), std::string::npos) << out;
  EXPECT_NE(out.find("| 50% | ~"), std::string::npos) << out;
  EXPECT_EQ(out.find('\r'), std::string::npos) << out;
  EXPECT_EQ(out.rfind("acesim: done in "), out.rfind("acesim: ")) << out;  // the last line
  std::fclose(f);
}

TEST(ProgressDisplay, OneLineRedrawnAndErasedOnATerminal) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  ProgressDisplay d(f, {.terminal_width = 30, .after_s = 0.0, .every_s = 0.05});
  d.progress({"a long stage name that does not fit", 5 * kPsPerUs, 4096, 0.5});
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  d.finish();
  const std::string out = read_all(f);
  EXPECT_EQ(out.find('\n'), std::string::npos) << out;
  EXPECT_NE(out.find("\racesim: a long stage name tha\x1b[K"), std::string::npos) << out;  // 29 columns
  EXPECT_EQ(out.substr(out.size() - 4), "\r\x1b[K");  // erased at the end
  std::fclose(f);
}

}  // namespace
}  // namespace acesim
