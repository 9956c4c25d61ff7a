// PyTorch profiler (Kineto) traces (workload/formats/kineto_trace.cpp): the
// streaming JSON reader, its checks and its repairs. What is accepted must
// hold what the reader promises: GPU activity, no negative durations,
// activities and steps in time order, steps numbered in order, no event
// left twice, and the repairs counted as they are (activities starting
// before the work ahead on their stream ends, activities no call of the
// trace launched); and the replay built from it
// (workload/formats/kineto_replay.cpp) holds a node for every activity, a
// role for every node and the reader's repairs.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>
#include <unordered_set>

#include "fuzz_common.h"
#include "workload/formats/kineto_replay.h"
#include "workload/formats/kineto_trace.h"

namespace {

using acesim::kineto::Ns;

void check(const acesim::kineto::Trace& t) {
  if (t.gpu.empty()) std::abort();
  std::unordered_set<long long> launched;
  std::set<std::tuple<Ns, Ns, long long, long long, std::uint32_t, bool>> calls;
  for (const auto& r : t.runtime) {
    if (r.dur < 0 || r.name >= t.names.size()) std::abort();
    if (!calls.insert({r.ts, r.dur, r.correlation, r.tid, r.name, r.driver}).second) std::abort();  // a copy left
    launched.insert(r.correlation);
  }
  std::map<std::pair<int, long long>, Ns> end;
  std::set<std::tuple<Ns, Ns, int, long long, long long, int, std::uint32_t>> seen;
  long long overlapping = 0, unlaunched = 0;
  Ns largest = 0;
  for (std::size_t i = 0; i < t.gpu.size(); ++i) {
    const auto& a = t.gpu[i];
    if (a.dur < 0 || a.name >= t.names.size() || (i > 0 && a.ts < t.gpu[i - 1].ts)) std::abort();
    if (!seen.insert({a.ts, a.dur, a.device, a.stream, a.correlation, static_cast<int>(a.kind), a.name}).second) std::abort();
    if (launched.count(a.correlation) == 0) ++unlaunched;
    auto [it, first] = end.try_emplace({a.device, a.stream}, a.ts + a.dur);
    if (!first) {
      if (a.ts < it->second) {
        ++overlapping;
        largest = std::max(largest, it->second - a.ts);
      }
      it->second = std::max(it->second, a.ts + a.dur);
    }
  }
  const acesim::kineto::Repairs& f = t.repairs;
  if (f.overlapping != overlapping || f.largest_overlap != largest || f.unlaunched != unlaunched) std::abort();
  if (f.duplicate_activities < 0 || f.duplicate_calls < 0 || f.duplicate_steps < 0 || f.duplicate_waits < 0) std::abort();
  for (std::size_t i = 1; i < t.steps.size(); ++i) {
    if (t.steps[i].number <= t.steps[i - 1].number) std::abort();
  }
  acesim::KinetoReplayOptions o;
  o.job_ranks = std::max(1, t.world_size);
  const acesim::KinetoReplay r = acesim::kineto_replay(t, o);
  if (r.activity_nodes.size() != t.gpu.size() || r.roles.size() != r.graph.size() || r.anchors.size() < 2 ||
      r.step_numbers.size() + 1 != r.anchors.size()) {
    std::abort();
  }
  for (std::uint32_t n : r.activity_nodes) {
    if (n >= r.graph.size()) std::abort();
  }
  if (r.repairs.duplicates() != f.duplicates() || r.repairs.overlapping != f.overlapping || r.repairs.unlaunched != f.unlaunched ||
      r.launches > static_cast<long long>(t.runtime.size())) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  acesim::fuzz::expect_clean([&] { check(acesim::kineto::parse_trace(acesim::fuzz::text(data, size), "fuzz.json")); });
  return 0;
}
