#include "report/progress_display.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace acesim {
namespace {

std::string format_sim_time(TimePs t) {
  const double ps = static_cast<double>(t);
  if (t < kPsPerUs) return fmt::format("{:.1f} ns", ps / static_cast<double>(kPsPerNs));
  if (t < kPsPerMs) return fmt::format("{:.1f} us", ps / static_cast<double>(kPsPerUs));
  if (t < kPsPerSec) return fmt::format("{:.1f} ms", ps / static_cast<double>(kPsPerMs));
  return fmt::format("{:.2f} s", ps / static_cast<double>(kPsPerSec));
}

std::string format_count(std::uint64_t n) {
  const double v = static_cast<double>(n);
  if (n < 10'000) return fmt::format("{}", n);
  if (n < 1'000'000) return fmt::format("{:.1f} k", v / 1e3);
  if (n < 1'000'000'000) return fmt::format("{:.2f} M", v / 1e6);
  return fmt::format("{:.2f} G", v / 1e9);
}

}  // namespace

std::string format_wall(double seconds) {
  if (seconds < 10.0) return fmt::format("{:.1f} s", seconds);
  const auto s = static_cast<long long>(std::llround(seconds));
  if (s < 60) return fmt::format("{} s", s);
  if (s < 3600) return fmt::format("{} min {:02} s", s / 60, s % 60);
  return fmt::format("{} h {:02} min", s / 3600, s % 3600 / 60);
}

std::string progress_line(std::string_view stage, TimePs sim_time, std::uint64_t events, double fraction,
                          double elapsed_s) {
  std::string line = fmt::format("acesim: {}", stage.empty() ? std::string_view("working") : stage);
  if (sim_time >= 0) line += fmt::format(" | sim {} | {} events", format_sim_time(sim_time), format_count(events));
  line += " | " + format_wall(elapsed_s);
  if (fraction >= 0.0) {
    const double f = std::min(fraction, 1.0);
    line += fmt::format(" | {:.0f}%", std::floor(f * 100.0));
    // What is left, were the rest to go at the pace so far.
    if (f >= 0.001 && f < 1.0) line += " | ~" + format_wall(elapsed_s * (1.0 - f) / f) + " left";
  }
  return line;
}

ProgressDisplay::ProgressDisplay(std::FILE* out, ProgressDisplayOptions options)
    : out_(out), options_(options), start_(std::chrono::steady_clock::now()) {
  if (options_.every_s <= 0.0) options_.every_s = options_.terminal_width > 0 ? 0.25 : 5.0;
  thread_ = std::thread([this] { loop(); });
}

ProgressDisplay::~ProgressDisplay() { finish(); }

double ProgressDisplay::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void ProgressDisplay::progress(const ProgressUpdate& u) {
  const std::lock_guard<std::mutex> lock(mu_);
  if (state_.stage != u.stage) state_.stage.assign(u.stage);
  state_.sim_time = u.sim_time;
  state_.events = u.events;
  // Shares that report out of order (parallel runs) must not move it back.
  state_.fraction = std::max(state_.fraction, u.fraction);
}

void ProgressDisplay::loop() {
  // Wakes often enough to start on time and to redraw a terminal smoothly;
  // draws plain lines only every every_s.
  const auto tick = std::chrono::duration<double>(std::min(0.1, options_.every_s));
  double last = -1e300;
  std::unique_lock<std::mutex> lock(mu_);
  while (!wake_.wait_for(lock, tick, [this] { return stop_; })) {
    const double now = elapsed_s();
    if (now < options_.after_s || now - last < options_.every_s) continue;
    const State s = state_;
    lock.unlock();
    draw(s, now);
    last = now;
    lock.lock();
  }
}

void ProgressDisplay::draw(const State& s, double elapsed) {
  std::string line = progress_line(s.stage, s.sim_time, s.events, s.fraction, elapsed);
  if (options_.terminal_width > 0) {
    // Longer than the terminal, a line wraps and \r no longer reaches its start.
    const auto width = static_cast<std::size_t>(std::max(options_.terminal_width - 1, 10));
    if (line.size() > width) line.resize(width);
    std::fprintf(out_, "\r%s\x1b[K", line.c_str());
  } else {
    std::fprintf(out_, "%s\n", line.c_str());
  }
  std::fflush(out_);
  drawn_ = true;
}

void ProgressDisplay::finish() {
  {
    const std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return;
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  const double elapsed = elapsed_s();
  if (options_.terminal_width > 0) {
    if (drawn_) std::fputs("\r\x1b[K", out_);
  } else if (drawn_ || elapsed >= options_.after_s) {
    std::fprintf(out_, "acesim: done in %s\n", format_wall(elapsed).c_str());
  }
  std::fflush(out_);
}

}  // namespace acesim
