// Progress of a long run drawn on stderr (engine/progress.h says what is
// reported): what runs, the simulated time, events handled, wall time and an
// estimate of the time left. Nothing appears before `after_s` of wall time,
// so short runs print nothing. On a terminal one line is redrawn in place and
// erased at the end; otherwise a plain line every `every_s`, and a last line
// with the wall time. A thread of its own draws, so a long set-up or a slow
// stretch of simulation still shows the clock moving.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "engine/progress.h"
#include "engine/time.h"

namespace acesim {

struct ProgressDisplayOptions {
  int terminal_width = 0;  // > 0: a terminal this wide (one line redrawn); 0: plain lines
  double after_s = 1.0;    // wall time before anything is shown
  double every_s = 0.0;    // between plain lines; 0: 0.25 s on a terminal, 5 s otherwise
};

class ProgressDisplay final : public ProgressSink {
 public:
  ProgressDisplay(std::FILE* out, ProgressDisplayOptions options);
  ProgressDisplay(const ProgressDisplay&) = delete;
  ProgressDisplay& operator=(const ProgressDisplay&) = delete;
  ~ProgressDisplay();

  void progress(const ProgressUpdate& update) override;
  // Stops drawing: erases the line on a terminal; otherwise, when the run
  // lasted `after_s` or more, prints a last line. Call before printing
  // results. Idempotent.
  void finish();

 private:
  struct State {
    std::string stage;
    TimePs sim_time = -1;
    std::uint64_t events = 0;
    double fraction = -1.0;
  };
  void loop();
  double elapsed_s() const;
  void draw(const State& s, double elapsed);

  std::FILE* out_;
  ProgressDisplayOptions options_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mu_;
  std::condition_variable wake_;
  State state_;
  bool stop_ = false;
  bool drawn_ = false;  // touched by the drawing thread only, until it is joined
  std::thread thread_;
};

// One line: "acesim: <stage> | sim 12.3 us | 1,234,567 events | 5.1 s | 34% | ~9.8 s left".
// A negative sim_time or fraction leaves its field out.
std::string progress_line(std::string_view stage, TimePs sim_time, std::uint64_t events, double fraction,
                          double elapsed_s);
// Seconds as people read them: "0.8 s", "12 s", "3 min 05 s", "2 h 07 min".
std::string format_wall(double seconds);

}  // namespace acesim
