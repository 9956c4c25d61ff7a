// Chakra execution traces (chakra/chakra_trace.cpp): length-prefixed
// protobuf messages, their attributes and the dependency graph. What is
// accepted must hold what the reader promises: unique ids, dependencies on
// nodes of the trace, the attributes each communication node needs.
#include <cstdlib>
#include <unordered_set>

#include "chakra/chakra_trace.h"
#include "fuzz_common.h"

namespace {

void check(const acesim::chakra::Trace& t) {
  using acesim::chakra::NodeType;
  std::unordered_set<std::uint64_t> ids;
  for (const auto& n : t.nodes) {
    if (!ids.insert(n.id).second) std::abort();
  }
  for (const auto& n : t.nodes) {
    for (const auto* deps : {&n.data_deps, &n.ctrl_deps}) {
      for (const auto d : *deps) {
        if (d == n.id || ids.count(d) == 0) std::abort();
      }
    }
    if (n.type == NodeType::kCommColl && (!n.comm_type || !n.comm_size)) std::abort();
    if (n.type == NodeType::kCommSend && (!n.comm_dst || !n.comm_size)) std::abort();
    if (n.type == NodeType::kCommRecv && (!n.comm_src || !n.comm_size)) std::abort();
    if (n.duration_micros > acesim::chakra::kMaxDurationMicros) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  acesim::fuzz::expect_clean([&] { check(acesim::chakra::parse_trace(acesim::fuzz::text(data, size), "fuzz.et")); });
  return 0;
}
