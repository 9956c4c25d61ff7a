// PyTorch profiler (Kineto) traces (workload/formats/kineto_trace.cpp): the
// streaming JSON reader and its checks. What is accepted must hold what the
// reader promises: GPU activity, no negative durations, one thing at a time
// per stream, every activity launched by a call of the trace, steps in order;
// and the replay built from it (workload/formats/kineto_replay.cpp) holds a
// node for every activity and a role for every node.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <unordered_set>

#include "fuzz_common.h"
#include "workload/formats/kineto_replay.h"
#include "workload/formats/kineto_trace.h"

namespace {

void check(const acesim::kineto::Trace& t) {
  if (t.gpu.empty()) std::abort();
  std::unordered_set<long long> launched;
  for (const auto& r : t.runtime) {
    if (r.dur < 0 || r.name >= t.names.size()) std::abort();
    launched.insert(r.correlation);
  }
  std::map<std::pair<int, long long>, acesim::kineto::Ns> end;
  for (const auto& a : t.gpu) {
    if (a.dur < 0 || a.name >= t.names.size() || launched.count(a.correlation) == 0) std::abort();
    auto [it, first] = end.try_emplace({a.device, a.stream}, a.ts + a.dur);
    if (!first) {
      if (a.ts < it->second) std::abort();
      it->second = a.ts + a.dur;
    }
  }
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
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  acesim::fuzz::expect_clean([&] { check(acesim::kineto::parse_trace(acesim::fuzz::text(data, size), "fuzz.json")); });
  return 0;
}
