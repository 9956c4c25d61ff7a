// Progress of long work (a collective on a million NPUs, a size sweep, a
// study), told to whoever watches it: the CLI draws it on stderr
// (report/progress_display.h). Drivers know what fraction of their work is
// done; a Progress maps that into the caller's share of the whole, so a
// sweep of sizes or a study of points reports one fraction that only grows.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

#include "engine/simulation.h"
#include "engine/time.h"

namespace acesim {

struct ProgressUpdate {
  std::string_view stage;   // what runs now, e.g. "size 3/13 (64MiB): simulating"
  TimePs sim_time = -1;     // the running simulation's clock; -1: none running
  std::uint64_t events = 0;  // happenings the running simulation has handled
  double fraction = -1.0;   // of the whole work, 0..1; negative: not known
};

class ProgressSink {
 public:
  // Called by the thread(s) doing the work, as often as every few thousand
  // events: must be cheap, and safe to call from several threads.
  virtual void progress(const ProgressUpdate& update) = 0;

 protected:
  ~ProgressSink() = default;
};

// A share [begin, end] of the whole work, with a name. A default Progress
// reports nowhere and costs nothing.
class Progress {
 public:
  Progress() = default;
  explicit Progress(ProgressSink* sink) : sink_(sink) {}

  bool on() const { return sink_ != nullptr; }
  // The i-th of n equal shares of this one (i from 0), named `label`.
  Progress part(std::size_t i, std::size_t n, std::string_view label) const {
    const double w = 1.0 / static_cast<double>(std::max<std::size_t>(n, 1));
    return share(w * static_cast<double>(i), w * static_cast<double>(i + 1), label);
  }
  // The share from `from` to `to` (fractions of this one), named `label`.
  Progress share(double from, double to, std::string_view label) const {
    Progress p = *this;
    const double width = end_ - begin_;
    p.begin_ = begin_ + width * std::clamp(from, 0.0, 1.0);
    p.end_ = begin_ + width * std::clamp(to, from, 1.0);
    p.label_ = label_.empty() ? std::string(label) : label.empty() ? label_ : label_ + " " + std::string(label);
    p.stage_ = p.label_;
    p.done_ = 0.0;
    return p;
  }
  // Names what this share does now ("building", "simulating").
  void stage(std::string_view what) const {
    if (sink_ == nullptr) return;
    stage_ = label_.empty() ? std::string(what) : label_ + ": " + std::string(what);
    report(-1, 0, done_);
  }
  // `done`: the fraction of this share done, 0..1.
  void report(TimePs sim_time, std::uint64_t events, double done) const {
    if (sink_ == nullptr) return;
    const double f = std::clamp(done, done_, 1.0);  // never backwards
    done_ = f;
    sink_->progress({stage_, sim_time, events, begin_ + (end_ - begin_) * f});
  }
  // Reports `sim`'s clock and events every Simulation::kObserveEvery
  // happenings while it runs, with `done()` the fraction of this share done.
  // This Progress must outlive the run.
  void watch(Simulation& sim, std::function<double()> done) const {
    if (sink_ == nullptr) return;
    sim.set_observer([this, done = std::move(done)](TimePs now, std::uint64_t handled) {
      report(now, handled, done());
    });
  }

 private:
  ProgressSink* sink_ = nullptr;
  double begin_ = 0.0;
  double end_ = 1.0;
  std::string label_;
  mutable std::string stage_;
  mutable double done_ = 0.0;  // of this share, as last reported
};

}  // namespace acesim
