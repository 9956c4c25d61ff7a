// LLM jobs as Chakra traces (llm_chakra.h).
#include "workload/llm/llm_chakra.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "chakra/group_names.h"
#include "chakra/trace_writer.h"
#include "config/input_error.h"
#include "config/output_file.h"

namespace acesim {
namespace {

using chakra::CommType;
using chakra::NodeType;

CommType comm_type_of(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce: return CommType::kAllReduce;
    case CollectiveOp::kReduceScatter: return CommType::kReduceScatter;
    case CollectiveOp::kAllGather: return CommType::kAllGather;
    case CollectiveOp::kAllToAll: return CommType::kAllToAll;
    default: break;
  }
  // The LLM generator issues no rooted collective; their root would need
  // mapping from a group position to a rank.
  throw std::logic_error("Chakra export: rooted collectives are not exported");
}

// Whole bytes, as the format counts them (the generator's sizes are whole
// for the models' shapes; a fraction is rounded to the nearest byte).
std::uint64_t whole_bytes(double bytes) { return static_cast<std::uint64_t>(std::llround(std::max(0.0, bytes))); }

// Names every distinct set of ranks a collective runs on, across all ranks'
// traces: "<kind>_<n>" after the first kind that uses it.
class GroupNames {
 public:
  explicit GroupNames(const Topology& topo) : topo_(topo) {}

  const std::string& name(Rank r, const CollectiveSpec& c, LlmComm kind) {
    if (!c.members.empty()) return name_of(c.members, kind);
    const std::uint32_t mask = dims_mask(c.dims, topo_);
    const auto key = std::make_pair(r, mask);
    auto it = by_rank_dims_.find(key);
    if (it == by_rank_dims_.end()) it = by_rank_dims_.emplace(key, name_of(ranks_along(r, mask), kind)).first;
    return it->second;
  }

  nlohmann::json json() const { return table_.json(); }
  long long size() const { return table_.size(); }

 private:
  // The NPUs that differ from r only along the dimensions of `mask`.
  std::vector<Rank> ranks_along(Rank r, std::uint32_t mask) const {
    // Start from the member with coordinate 0 along every spanned dimension
    // and sweep them, lowest dimension fastest.
    Rank first = r;
    for (int d = 0; d < topo_.num_dims(); ++d) {
      if ((mask >> d) & 1u) first = topo_.with_coord(first, d, 0);
    }
    std::vector<Rank> out = {first};
    for (int d = 0; d < topo_.num_dims(); ++d) {
      if (((mask >> d) & 1u) == 0) continue;
      const std::size_t n = out.size();
      for (int v = 1; v < topo_.dim(d).npus; ++v) {
        for (std::size_t i = 0; i < n; ++i) out.push_back(topo_.with_coord(out[i], d, v));
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  const std::string& name_of(const std::vector<Rank>& ranks, LlmComm kind) { return table_.name(ranks, std::string(to_string(kind))); }

  const Topology& topo_;
  chakra::GroupNames table_;
  std::map<std::pair<Rank, std::uint32_t>, std::string> by_rank_dims_;
};

std::string node_name(const LlmNodeTag& t, std::string_view what) {
  std::string s = fmt::format("iter{} {}", t.iteration, to_string(t.pass));
  if (t.micro_batch >= 0) s += fmt::format(" mb{}", t.micro_batch);
  if (t.chunk > 0) s += fmt::format(" chunk{}", t.chunk);
  if (t.layer >= 0) s += fmt::format(" layer{}", t.layer);
  return s + " " + std::string(what);
}

// Node i of the graph as node i of the trace (dependencies added later).
chakra::Node convert(const LlmRankGraph& g, std::uint32_t i, Rank r, const NpuConfig& npu, GroupNames& groups,
                     const Topology& topo) {
  const WorkGraph& wg = g.graph;
  const GraphNode& gn = wg.node(i);
  const LlmNodeTag& tag = g.tags[i];
  chakra::Node n;
  n.id = i;
  switch (gn.kind) {
    case WorkNodeKind::kCompute: {
      const Kernel& k = wg.kernel(gn.payload);
      n.type = NodeType::kComp;
      n.num_ops = k.flops / k.flops_efficiency;
      n.tensor_size = whole_bytes(k.hbm_bytes / k.hbm_efficiency);
      const double seconds = std::max(k.flops / k.flops_efficiency / npu.peak_flops(),
                                      k.hbm_bytes / k.hbm_efficiency / (npu.hbm_GBps * 1e9));
      n.duration_micros = static_cast<std::uint64_t>(std::ceil(seconds * 1e6));
      n.name = node_name(tag, "kernel");
      break;
    }
    case WorkNodeKind::kCollective: {
      const CollectiveSpec& c = wg.collective(gn.payload);
      n.type = NodeType::kCommColl;
      n.comm_type = comm_type_of(c.op);
      n.pg_name = groups.name(r, c, tag.comm);
      long long size = static_cast<long long>(c.members.size());
      if (c.members.empty()) {
        size = 1;
        for (int d = 0; d < topo.num_dims(); ++d) {
          if ((dims_mask(c.dims, topo) >> d) & 1u) size *= topo.dim(d).npus;
        }
      }
      // Chakra's comm_size is a rank's input: an all-gather's is its share.
      n.comm_size = whole_bytes(c.op == CollectiveOp::kAllGather ? c.bytes / static_cast<double>(size) : c.bytes);
      n.name = node_name(tag, fmt::format("{} {}", to_string(tag.comm), chakra::to_string(*n.comm_type)));
      break;
    }
    case WorkNodeKind::kSend:
    case WorkNodeKind::kRecv: {
      const MessageSpec& m = wg.message(gn.payload);
      const bool send = gn.kind == WorkNodeKind::kSend;
      n.type = send ? NodeType::kCommSend : NodeType::kCommRecv;
      n.comm_src = send ? r : m.peer;
      n.comm_dst = send ? m.peer : r;
      n.comm_tag = m.tag;
      n.comm_size = whole_bytes(m.bytes);
      n.name = node_name(tag, fmt::format("{} {} {}", to_string(tag.comm), send ? "send to" : "recv from", m.peer));
      break;
    }
    case WorkNodeKind::kNop:
      n.type = NodeType::kMetadata;
      n.name = node_name(tag, "step");
      break;
    case WorkNodeKind::kCpu: {
      // A host-side delay (a blocking ZeRO-3 fetch's launch): a CPU
      // operation, its duration in whole microseconds.
      const Kernel& k = wg.kernel(gn.payload);
      n.type = NodeType::kComp;
      n.is_cpu_op = true;
      n.duration_micros = static_cast<std::uint64_t>((k.time_ps + kPsPerUs - 1) / kPsPerUs);
      n.name = node_name(tag, "host launch");
      break;
    }
    case WorkNodeKind::kWait:
    case WorkNodeKind::kDelay:
      throw std::logic_error("Chakra export: the LLM generator made a node the format has no counterpart for");
  }
  return n;
}

// Rank r's trace: its graph node for node, then the iteration markers, then
// a receive for each mirrored put (a tensor-parallel ring exchange's): the
// trace format pairs every send with a receive, so r receives from
// `put_source` (the rank whose puts land in r) what it puts into its next
// rank, as a node nothing waits for.
chakra::Trace rank_trace(const LlmRankGraph& g, Rank r, Rank put_source, int iterations, const NpuConfig& npu,
                         GroupNames& groups, const Topology& topo) {
  const WorkGraph& wg = g.graph;
  const std::uint32_t n = wg.size();
  chakra::Trace t;
  t.nodes.reserve(n + static_cast<std::size_t>(iterations));
  for (std::uint32_t i = 0; i < n; ++i) t.nodes.push_back(convert(g, i, r, npu, groups, topo));
  const auto iteration = [&](std::uint32_t i) { return std::min(g.tags[i].iteration, iterations - 1); };
  // Dependencies: the graph's edges, parent to child; a node is an entry of
  // its iteration when none of its parents is in that iteration.
  std::vector<bool> entry(n, true);
  for (std::uint32_t p = 0; p < n; ++p) {
    for (std::uint32_t e = wg.child_begin(p); e < wg.child_end(p); ++e) {
      const std::uint32_t c = wg.child(e);
      std::vector<std::uint64_t>& deps = t.nodes[c].data_deps;
      if (std::find(deps.begin(), deps.end(), p) == deps.end()) deps.push_back(p);
      if (iteration(p) == iteration(c)) entry[c] = false;
    }
  }
  // ProfilerStep#k: a marker done at once (no dependency), which the entries
  // of iteration k (k >= 1) follow; iteration 0's nodes follow none, which
  // puts them in the first iteration too.
  for (int k = 0; k < iterations; ++k) {
    chakra::Node m;
    m.id = n + static_cast<std::uint64_t>(k);
    m.type = NodeType::kMetadata;
    m.name = fmt::format("ProfilerStep#{}", k);
    t.nodes.push_back(std::move(m));
  }
  for (std::uint32_t i = 0; i < n; ++i) {
    if (entry[i] && iteration(i) > 0) t.nodes[i].ctrl_deps.push_back(n + static_cast<std::uint64_t>(iteration(i)));
  }
  for (std::uint32_t i = 0; i < n; ++i) {
    const GraphNode& gn = wg.node(i);
    if (gn.kind != WorkNodeKind::kSend || !wg.message(gn.payload).mirrored) continue;
    chakra::Node rv = t.nodes[i];
    rv.id = t.nodes.size();
    rv.type = NodeType::kCommRecv;
    rv.comm_src = put_source;
    rv.comm_dst = r;
    rv.name = node_name(g.tags[i], fmt::format("{} recv from {}", to_string(g.tags[i].comm), put_source));
    rv.data_deps.clear();
    rv.ctrl_deps.clear();
    if (iteration(i) > 0) rv.ctrl_deps.push_back(n + static_cast<std::uint64_t>(iteration(i)));
    t.nodes.push_back(std::move(rv));
  }
  return t;
}

}  // namespace

void check_chakra_export_ranks(long long ranks) {
  if (ranks > kMaxChakraExportRanks) {
    throw InputError(fmt::format("--chakra-out: the job has {} ranks; exporting writes one trace per rank, at most {}",
                                 ranks, kMaxChakraExportRanks));
  }
}

ChakraExportSummary export_llm_chakra(const LlmJob& job, const Topology& topo, const NpuConfig& npu,
                                      const std::string& prefix) {
  const long long ranks = topo.num_npus();
  check_chakra_export_ranks(ranks);
  ChakraExportSummary s;
  s.ranks = ranks;
  GroupNames groups(topo);
  const int iterations = job.options().iterations;
  for (Rank r = 0; r < ranks; ++r) {
    const LlmRankGraph g = job.build(r);
    const std::vector<Rank> tp = job.layout().tp_group(r);
    const auto me = static_cast<std::size_t>(std::find(tp.begin(), tp.end(), r) - tp.begin());
    const Rank put_source = tp[(me + tp.size() - 1) % tp.size()];
    chakra::Trace t = rank_trace(g, r, put_source, iterations, npu, groups, topo);
    s.nodes += static_cast<long long>(t.nodes.size());
    chakra::write_trace_file(t, fmt::format("{}.{}.et", prefix, r));
  }
  const std::string path = prefix + ".groups.json";
  write_output_file(path, groups.json().dump() + '\n', "--chakra-out");
  s.groups = groups.size();
  return s;
}

}  // namespace acesim
