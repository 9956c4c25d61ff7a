#include "workload/formats/chakra_workload.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "collective/plan.h"
#include "config/input_error.h"
#include "config/platform.h"
#include "workload/formats/format_registry.h"

namespace acesim {

using chakra::CommType;
using chakra::NodeType;

namespace {

// The collective engine runs these; the rest of the format's types have no
// counterpart in acesim (yet).
std::optional<CollectiveOp> op_of(CommType t) {
  switch (t) {
    case CommType::kAllReduce: return CollectiveOp::kAllReduce;
    case CommType::kAllGather: return CollectiveOp::kAllGather;
    case CommType::kReduceScatter:
    case CommType::kReduceScatterBlock: return CollectiveOp::kReduceScatter;
    case CommType::kAllToAll: return CollectiveOp::kAllToAll;
    case CommType::kBarrier: return CollectiveOp::kAllReduce;  // of one byte: latency only
    case CommType::kBroadcast: return CollectiveOp::kBroadcast;
    case CommType::kReduce: return CollectiveOp::kReduce;
    case CommType::kGather: return CollectiveOp::kGather;
    case CommType::kScatter: return CollectiveOp::kScatter;
  }
  return std::nullopt;
}

bool on_compute_stream(const chakra::Node& n) {
  return (n.type == NodeType::kComp && !n.is_cpu_op) || n.type == NodeType::kMemLoad || n.type == NodeType::kMemStore;
}

// With groups, two pg_names are the same when their groups are whole
// dimensions and span the same ones (one tensor-parallel group per rank, say).
bool same_group(const chakra::Node& a, const chakra::Node& b, const ChakraGroups* groups) {
  if (a.pg_name == b.pg_name) return true;
  if (groups == nullptr || a.pg_name.empty() || b.pg_name.empty()) return false;
  const auto ga = groups->find(a.pg_name);
  const auto gb = groups->find(b.pg_name);
  return ga != groups->end() && gb != groups->end() && ga->second.whole && gb->second.whole && !ga->second.listed &&
         !gb->second.listed && ga->second.dims == gb->second.dims;
}

bool same_node(const chakra::Node& a, const chakra::Node& b, const ChakraGroups* groups) {
  return a.name == b.name && a.type == b.type && a.duration_micros == b.duration_micros && a.is_cpu_op == b.is_cpu_op &&
         a.comm_type == b.comm_type && a.comm_size == b.comm_size && a.involved_dim == b.involved_dim &&
         a.num_ops == b.num_ops && a.tensor_size == b.tensor_size && a.comm_root == b.comm_root && same_group(a, b, groups) &&
         a.data_deps.size() == b.data_deps.size() && a.ctrl_deps.size() == b.ctrl_deps.size();
}

}  // namespace

ChakraGroups read_chakra_groups(const std::string& path, const Topology& topo) {
  const std::string text = read_text_file(path);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(path + ": not valid JSON: " + e.what());
  }
  if (!j.is_object()) throw InputError(path + ": must be an object of groups, {\"name\": [ranks...]}");
  ChakraGroups groups;
  for (const auto& item : j.items()) {
    const std::string name = item.key();
    const nlohmann::json& value = item.value();
    const auto problem = [&](const std::string& what) { throw InputError(path + ": group '" + name + "': " + what); };
    if (!value.is_array() || value.empty()) problem("must be a non-empty list of ranks");
    ChakraGroup g;
    for (const nlohmann::json& v : value) {
      if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() >= topo.num_npus()) {
        problem(fmt::format("{} is not a rank of the topology's {} NPUs", v.dump(), topo.num_npus()));
      }
      g.ranks.push_back(static_cast<Rank>(v.get<long long>()));
    }
    std::sort(g.ranks.begin(), g.ranks.end());
    if (std::adjacent_find(g.ranks.begin(), g.ranks.end()) != g.ranks.end()) problem("a rank appears twice");
    // The dimensions along which members differ; a group that is all the
    // NPUs differing from its first member only along them is whole
    // dimensions (symmetric runs keep it), any other runs as listed ranks.
    long long size = 1;
    for (int d = 0; d < topo.num_dims(); ++d) {
      for (Rank r : g.ranks) {
        if (topo.coord(r, d) != topo.coord(g.ranks.front(), d)) {
          g.dims.push_back(d);
          size *= topo.dim(d).npus;
          break;
        }
      }
    }
    g.whole = size == static_cast<long long>(g.ranks.size());
    groups.emplace(name, std::move(g));
  }
  return groups;
}

namespace {

// One collective as the executor pairs it: type, size, root.
using CollKey = std::tuple<int, std::uint64_t, std::int64_t>;

// A rank's collectives over whole groups, per set of dimensions, in file order.
std::map<std::vector<int>, std::vector<CollKey>> whole_sequences(const chakra::Trace& t, const ChakraGroups& groups) {
  std::map<std::vector<int>, std::vector<CollKey>> out;
  for (const chakra::Node& n : t.nodes) {
    if (n.type != NodeType::kCommColl || n.pg_name.empty()) continue;
    const auto g = groups.find(n.pg_name);
    if (g == groups.end() || !g->second.whole) continue;
    out[g->second.dims].emplace_back(static_cast<int>(*n.comm_type), n.comm_size.value_or(0), n.comm_root.value_or(-1));
  }
  return out;
}

}  // namespace

bool list_divergent_groups(const std::vector<chakra::Trace>& traces, ChakraGroups& groups) {
  if (traces.empty()) return false;
  const auto first = whole_sequences(traces[0], groups);
  bool differ = false;
  for (std::size_t r = 1; r < traces.size() && !differ; ++r) differ = whole_sequences(traces[r], groups) != first;
  if (!differ) return false;
  for (auto& [name, g] : groups) g.listed = g.whole;
  return true;
}

void check_chakra_groups(const std::vector<chakra::Trace>& traces, const ChakraGroups& groups) {
  for (std::size_t r = 0; r < traces.size(); ++r) {
    for (const chakra::Node& n : traces[r].nodes) {
      if (n.type != NodeType::kCommColl || n.pg_name.empty()) continue;
      const auto g = groups.find(n.pg_name);
      const auto problem = [&](const std::string& what) {
        throw InputError(fmt::format("{}: node {} ({}): {}", traces[r].file, n.id, n.name, what));
      };
      if (g == groups.end()) problem("pg_name '" + n.pg_name + "' is not a group of the groups file");
      if (!std::binary_search(g->second.ranks.begin(), g->second.ranks.end(), static_cast<Rank>(r))) {
        problem(fmt::format("rank {} is not a member of its group '{}'", r, n.pg_name));
      }
    }
  }
}

std::string chakra_asymmetry(const std::vector<chakra::Trace>& traces, const ChakraGroups* groups) {
  if (traces.empty()) return "";
  const chakra::Trace& t0 = traces[0];
  for (const chakra::Node& n : t0.nodes) {
    if (n.type == NodeType::kCommSend || n.type == NodeType::kCommRecv) {
      return "the traces send point-to-point messages (" + t0.file + ": node " + std::to_string(n.id) + ")";
    }
    if (n.type == NodeType::kCommColl && is_rooted(op_of(*n.comm_type).value_or(CollectiveOp::kAllReduce))) {
      return "the traces hold a rooted collective (" + t0.file + ": node " + std::to_string(n.id) + ")";
    }
  }
  for (const auto& [name, g] : groups != nullptr ? *groups : ChakraGroups{}) {
    if (!g.whole) return "group '" + name + "' is not whole topology dimensions";
    if (g.listed) return "ranks issue different collectives over the dimensions of group '" + name + "'";
  }
  std::unordered_map<std::uint64_t, std::size_t> pos0;
  for (std::size_t i = 0; i < t0.nodes.size(); ++i) pos0.emplace(t0.nodes[i].id, i);
  for (std::size_t r = 1; r < traces.size(); ++r) {
    const chakra::Trace& t = traces[r];
    if (t.nodes.shares_with(t0.nodes)) continue;  // the same list: the same nodes
    if (t.nodes.size() != t0.nodes.size()) return t.file + " has a different number of nodes than " + t0.file;
    std::unordered_map<std::uint64_t, std::size_t> pos;
    for (std::size_t i = 0; i < t.nodes.size(); ++i) pos.emplace(t.nodes[i].id, i);
    for (std::size_t i = 0; i < t.nodes.size(); ++i) {
      const chakra::Node& a = t0.nodes[i];
      const chakra::Node& b = t.nodes[i];
      bool same = same_node(a, b, groups);
      for (std::size_t k = 0; same && k < a.data_deps.size(); ++k) same = pos0[a.data_deps[k]] == pos[b.data_deps[k]];
      for (std::size_t k = 0; same && k < a.ctrl_deps.size(); ++k) same = pos0[a.ctrl_deps[k]] == pos[b.ctrl_deps[k]];
      if (!same) return fmt::format("{} node {} differs from {} node {}", t.file, b.id, t0.file, a.id);
    }
  }
  return "";
}

namespace {

std::string where(const chakra::Trace& t, const chakra::Node& n) { return fmt::format("{}: node {} ({})", t.file, n.id, n.name); }

Kernel kernel_of(const chakra::Node& n, bool roofline) {
  Kernel k;
  // A node with no FLOPs but HBM bytes (a memory-bound kernel, as exported
  // LLM jobs have) is roofline work too.
  if (roofline && n.type == NodeType::kComp && n.num_ops && (*n.num_ops > 0.0 || n.tensor_size.value_or(0) > 0)) {
    k.flops = *n.num_ops;
    k.hbm_bytes = n.tensor_size ? static_cast<double>(*n.tensor_size) : 0.0;
    return k;
  }
  if ((n.type == NodeType::kMemLoad || n.type == NodeType::kMemStore) && n.duration_micros == 0 && n.tensor_size) {
    k.hbm_bytes = static_cast<double>(*n.tensor_size);  // a memory node known by its size only
    return k;
  }
  k.time_ps = static_cast<TimePs>(n.duration_micros) * kPsPerUs;
  return k;
}

// A collective's dimensions: its group's, or those involved_dim marks (all when empty).
std::vector<int> collective_dims(const chakra::Trace& t, const chakra::Node& node, const Topology& topo,
                                 const ChakraBinding& b) {
  const auto problem = [&](const std::string& what) { throw InputError(where(t, node) + ": " + what); };
  if (!op_of(*node.comm_type)) problem("comm_type " + chakra::to_string(*node.comm_type) + " is not supported");
  // check_chakra_groups has checked the name and the membership.
  if (b.groups != nullptr && !node.pg_name.empty()) return b.groups->at(node.pg_name).dims;
  if (!node.involved_dim.empty() && static_cast<int>(node.involved_dim.size()) != topo.num_dims()) {
    problem(fmt::format("involved_dim has {} entries for a topology of {} dimensions", node.involved_dim.size(),
                        topo.num_dims()));
  }
  std::vector<int> dims;
  for (int d = 0; d < topo.num_dims(); ++d) {
    if (node.involved_dim.empty() || node.involved_dim[static_cast<std::size_t>(d)]) dims.push_back(d);
  }
  return dims;
}

// The root's position in the collective's group (member order of
// CollectiveRequest::root): comm_root, or the group's lowest rank.
long long root_position(const chakra::Trace& t, const chakra::Node& node, const Topology& topo, const CollectiveSpec& c,
                        Rank rank) {
  if (!node.comm_root) return 0;
  const Rank root = static_cast<Rank>(*node.comm_root);
  const auto problem = [&](const std::string& what) {
    throw InputError(fmt::format("{}: comm_root {}: {}", where(t, node), root, what));
  };
  if (root >= topo.num_npus()) problem(fmt::format("not a rank of the topology's {} NPUs", topo.num_npus()));
  if (!c.members.empty()) {
    const auto it = std::lower_bound(c.members.begin(), c.members.end(), root);
    if (it == c.members.end() || *it != root) problem(fmt::format("not a member of its group '{}'", node.pg_name));
    return it - c.members.begin();
  }
  std::vector<int> spanned;
  for (int d = 0; d < topo.num_dims(); ++d) {
    const bool in = std::find(c.dims.begin(), c.dims.end(), d) != c.dims.end();
    if (in && topo.dim(d).npus > 1) spanned.push_back(d);
    if (!in && topo.coord(root, d) != topo.coord(rank, d)) {
      problem(fmt::format("not in the group of rank {} (they differ on dimension {}, which the collective does not span)",
                          rank, d));
    }
  }
  return position_in_group(topo, spanned, root);
}

// Bytes in the collective engine's convention (docs/formats.md,
// "comm_size"): comm_size is a rank's input, as ASTRA-sim and PyTorch read
// it. An all-gather's or a gather's comm_size is what one rank contributes,
// so the gathered output is group x comm_size (ASTRA-sim's ring all-gather
// sends comm_size per step); acesim's all-gather size is the output.
double collective_bytes(const chakra::Node& node, long long group) {
  const double size = static_cast<double>(*node.comm_size);
  switch (*node.comm_type) {
    case CommType::kBarrier: return 1.0;
    case CommType::kAllGather: return size * static_cast<double>(group);
    case CommType::kGather: return size * static_cast<double>(group);  // every rank's input, gathered
    default: return size;
  }
}

std::string pending_text(const chakra::Node& node) {
  switch (node.type) {
    case NodeType::kCommRecv:
      return fmt::format("node {} ({}) receives from rank {} tag {}", node.id, node.name, *node.comm_src, node.comm_tag.value_or(0));
    case NodeType::kCommSend:
      return fmt::format("node {} ({}) sends to rank {} tag {}", node.id, node.name, *node.comm_dst, node.comm_tag.value_or(0));
    case NodeType::kCommColl:
      return fmt::format("node {} ({}) {} of {} bytes", node.id, node.name, chakra::to_string(*node.comm_type),
                         node.comm_size.value_or(0));
    default: return "";
  }
}

}  // namespace

WorkGraph chakra_graph(const chakra::Trace& t, const Topology& topo, const ChakraBinding& b) {
  WorkGraph g;
  g.source = t.file;
  const chakra::Trace* trace = &t;
  g.where = [trace](std::uint32_t i) { return where(*trace, trace->nodes[i]); };
  g.pending_text = [trace](std::uint32_t i) { return pending_text(trace->nodes[i]); };
  const std::size_t n = t.nodes.size();
  std::unordered_map<std::uint64_t, std::uint32_t> index;
  index.reserve(n);
  for (std::size_t i = 0; i < n; ++i) index.emplace(t.nodes[i].id, static_cast<std::uint32_t>(i));
  // The reader has checked every id and that the graph has no cycle.
  std::vector<std::uint32_t> deps;
  for (std::size_t i = 0; i < n; ++i) {
    const chakra::Node& node = t.nodes[i];
    deps.clear();
    for (const auto* list : {&node.data_deps, &node.ctrl_deps}) {
      for (std::uint64_t d : *list) deps.push_back(index.at(d));
    }
    WorkNodeKind kind = WorkNodeKind::kNop;
    std::uint32_t payload = 0;
    if (on_compute_stream(node)) {
      kind = WorkNodeKind::kCompute;
      payload = g.add_kernel(kernel_of(node, b.roofline));
    } else if (node.type == NodeType::kComp) {
      kind = WorkNodeKind::kCpu;
      payload = g.add_kernel(Kernel{0.0, 0.0, static_cast<TimePs>(node.duration_micros) * kPsPerUs});
    } else if (node.type == NodeType::kCommColl) {
      CollectiveSpec c;
      const ChakraGroup* listed = nullptr;
      if (b.groups != nullptr && !node.pg_name.empty() &&
          (!b.groups->at(node.pg_name).whole || b.groups->at(node.pg_name).listed)) {
        listed = &b.groups->at(node.pg_name);
      }
      c.dims = collective_dims(t, node, topo, b);
      c.op = *op_of(*node.comm_type);
      c.name = node.name;
      long long group = 1;
      if (listed != nullptr) {
        c.dims.clear();
        c.members = listed->ranks;
        group = static_cast<long long>(c.members.size());
      } else {
        for (int d : c.dims) group *= topo.dim(d).npus;
      }
      c.bytes = collective_bytes(node, group);
      if (is_rooted(c.op)) c.root = root_position(t, node, topo, c, b.rank);
      if (group > 1 && c.bytes > 0.0) {  // else nothing to move: a no-op
        kind = WorkNodeKind::kCollective;
        payload = g.add_collective(std::move(c));
      }
    } else if (node.type == NodeType::kCommSend) {
      kind = WorkNodeKind::kSend;
      payload = g.add_message({static_cast<Rank>(*node.comm_dst), node.comm_tag.value_or(0),
                               static_cast<double>(node.comm_size.value_or(0))});
    } else if (node.type == NodeType::kCommRecv) {
      kind = WorkNodeKind::kRecv;
      payload = g.add_message({static_cast<Rank>(*node.comm_src), node.comm_tag.value_or(0),
                               static_cast<double>(node.comm_size.value_or(0))});
    }
    g.add_node(kind, payload, deps);
  }
  g.finish();
  return g;
}

void register_chakra_format(WorkloadFormatRegistry& registry) {
  WorkloadFormatEntry e;
  e.name = "chakra";
  e.aliases = {"chakra-et", "astra-sim-2.0"};
  e.help = "Chakra execution traces PREFIX.<rank>.et, one dependency graph per rank (ASTRA-sim 2.0's format)";
  e.option = "--chakra PREFIX";
  registry.add(std::move(e));
}

}  // namespace acesim
