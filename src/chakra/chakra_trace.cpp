#include "chakra/chakra_trace.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <stdexcept>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "chakra/et_def.pb.h"
#include "config/input_error.h"
#include "config/limits.h"

namespace acesim::chakra {

static_assert(kMaxRanks == acesim::limits::kMaxNpus);
static_assert(kMaxTraceFileBytes < (1ULL << 31));  // message sizes fit protobuf's int

std::string to_string(NodeType t) {
  switch (t) {
    case NodeType::kMetadata: return "METADATA_NODE";
    case NodeType::kMemLoad: return "MEM_LOAD_NODE";
    case NodeType::kMemStore: return "MEM_STORE_NODE";
    case NodeType::kComp: return "COMP_NODE";
    case NodeType::kCommSend: return "COMM_SEND_NODE";
    case NodeType::kCommRecv: return "COMM_RECV_NODE";
    case NodeType::kCommColl: return "COMM_COLL_NODE";
  }
  return "node type " + std::to_string(static_cast<int>(t));
}

std::string to_string(CommType t) {
  switch (t) {
    case CommType::kAllReduce: return "ALL_REDUCE";
    case CommType::kReduce: return "REDUCE";
    case CommType::kAllGather: return "ALL_GATHER";
    case CommType::kGather: return "GATHER";
    case CommType::kScatter: return "SCATTER";
    case CommType::kBroadcast: return "BROADCAST";
    case CommType::kAllToAll: return "ALL_TO_ALL";
    case CommType::kReduceScatter: return "REDUCE_SCATTER";
    case CommType::kReduceScatterBlock: return "REDUCE_SCATTER_BLOCK";
    case CommType::kBarrier: return "BARRIER";
  }
  return "comm_type " + std::to_string(static_cast<int>(t));
}

namespace {

using Attr = wire::AttributeProto;

// Text from the file, made fit for a one-line message: control bytes
// escaped, long text cut.
std::string printable(std::string_view s, std::size_t max = 80) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (out.size() >= max) {
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string node_label(uint64_t id, std::string_view name) {
  std::string s = "node " + std::to_string(id);
  if (!name.empty()) s += " (" + printable(name) + ")";
  return s;
}

// The name of the value an attribute holds (its oneof field).
std::string value_kind(const Attr& a) {
  static const char* const kNames[] = {
      "double_val",   "double_list",   "float_val",    "float_list",   "int32_val",    "int32_list",
      "int64_val",    "int64_list",    "uint32_val",   "uint32_list",  "uint64_val",   "uint64_list",
      "sint32_val",   "sint32_list",   "sint64_val",   "sint64_list",  "fixed32_val",  "fixed32_list",
      "fixed64_val",  "fixed64_list",  "sfixed32_val", "sfixed32_list", "sfixed64_val", "sfixed64_list",
      "bool_val",     "bool_list",     "string_val",   "string_list",  "bytes_val",    "bytes_list"};
  const int c = static_cast<int>(a.value_case());
  if (c >= 3 && c <= 32) return kNames[c - 3];
  return "no value";
}

// An integer attribute value of any encoding, as sign and magnitude (so that
// every int64 and every uint64 fits).
struct IntValue {
  bool negative = false;
  uint64_t magnitude = 0;

  static IntValue of_signed(int64_t v) {
    if (v >= 0) return {false, static_cast<uint64_t>(v)};
    return {true, static_cast<uint64_t>(-(v + 1)) + 1};
  }
  static IntValue of_unsigned(uint64_t v) { return {false, v}; }
  std::string str() const { return (negative ? "-" : "") + std::to_string(magnitude); }
};

std::optional<IntValue> scalar_int(const Attr& a) {
  switch (a.value_case()) {
    case Attr::kInt32Val: return IntValue::of_signed(a.int32_val());
    case Attr::kInt64Val: return IntValue::of_signed(a.int64_val());
    case Attr::kUint32Val: return IntValue::of_unsigned(a.uint32_val());
    case Attr::kUint64Val: return IntValue::of_unsigned(a.uint64_val());
    case Attr::kSint32Val: return IntValue::of_signed(a.sint32_val());
    case Attr::kSint64Val: return IntValue::of_signed(a.sint64_val());
    case Attr::kFixed32Val: return IntValue::of_unsigned(a.fixed32_val());
    case Attr::kFixed64Val: return IntValue::of_unsigned(a.fixed64_val());
    case Attr::kSfixed32Val: return IntValue::of_signed(a.sfixed32_val());
    case Attr::kSfixed64Val: return IntValue::of_signed(a.sfixed64_val());
    default: return std::nullopt;
  }
}

template <typename Repeated>
std::vector<IntValue> ints_of(const Repeated& values, bool is_signed) {
  std::vector<IntValue> out;
  out.reserve(static_cast<std::size_t>(values.size()));
  for (const auto v : values) {
    out.push_back(is_signed ? IntValue::of_signed(static_cast<int64_t>(v))
                            : IntValue::of_unsigned(static_cast<uint64_t>(v)));
  }
  return out;
}

std::optional<std::vector<IntValue>> list_int(const Attr& a) {
  switch (a.value_case()) {
    case Attr::kInt32List: return ints_of(a.int32_list().values(), true);
    case Attr::kInt64List: return ints_of(a.int64_list().values(), true);
    case Attr::kUint32List: return ints_of(a.uint32_list().values(), false);
    case Attr::kUint64List: return ints_of(a.uint64_list().values(), false);
    case Attr::kSint32List: return ints_of(a.sint32_list().values(), true);
    case Attr::kSint64List: return ints_of(a.sint64_list().values(), true);
    case Attr::kFixed32List: return ints_of(a.fixed32_list().values(), false);
    case Attr::kFixed64List: return ints_of(a.fixed64_list().values(), false);
    case Attr::kSfixed32List: return ints_of(a.sfixed32_list().values(), true);
    case Attr::kSfixed64List: return ints_of(a.sfixed64_list().values(), true);
    default: return std::nullopt;
  }
}

// Field numbers the messages define; a field with one of these numbers but
// another wire type lands among the unknown fields, which means corrupt data.
const char* node_field_name(int number) {
  static const char* const kNames[] = {"id",        "name",  "type",    "ctrl_deps", "data_deps",
                                       "start_time_micros", "duration_micros", "inputs", "outputs", "attr"};
  return number >= 1 && number <= 10 ? kNames[number - 1] : nullptr;
}

const char* wire_type_name(google::protobuf::UnknownField::Type t) {
  switch (t) {
    case google::protobuf::UnknownField::TYPE_VARINT: return "varint";
    case google::protobuf::UnknownField::TYPE_FIXED32: return "fixed32";
    case google::protobuf::UnknownField::TYPE_FIXED64: return "fixed64";
    case google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED: return "length-delimited";
    case google::protobuf::UnknownField::TYPE_GROUP: return "group";
  }
  return "unknown";
}

// Whether a message has a field numbered 1..max_known among its unknown
// fields: one of its own fields with another wire type.
bool has_mistyped_field(const google::protobuf::Message& m, int max_known) {
  const auto& unknown = m.GetReflection()->GetUnknownFields(m);
  for (int i = 0; i < unknown.field_count(); ++i) {
    if (unknown.field(i).number() <= max_known) return true;
  }
  return false;
}

enum KnownAttr : unsigned {
  kIsCpuOp = 1u << 0,
  kNumOps = 1u << 1,
  kTensorSize = 1u << 2,
  kCommType = 1u << 3,
  kCommSize = 1u << 4,
  kCommSrc = 1u << 5,
  kCommDst = 1u << 6,
  kCommTag = 1u << 7,
  kInvolvedDim = 1u << 8,
  kPgName = 1u << 9,
  kCommRoot = 1u << 10,
};

struct KnownAttrName {
  std::string_view name;
  KnownAttr bit;
};
constexpr KnownAttrName kKnownAttrs[] = {
    {"is_cpu_op", kIsCpuOp}, {"num_ops", kNumOps},   {"tensor_size", kTensorSize}, {"comm_type", kCommType},
    {"comm_size", kCommSize}, {"comm_src", kCommSrc}, {"comm_dst", kCommDst},       {"comm_tag", kCommTag},
    {"involved_dim", kInvolvedDim}, {"pg_name", kPgName},     {"comm_root", kCommRoot},
};

class Parser {
 public:
  Parser(std::string_view bytes, const std::string& file) : bytes_(bytes), file_(file) {}

  Trace run() {
    Trace t;
    t.file = file_;
    if (bytes_.empty()) fail("empty file (a Chakra trace starts with its global metadata)");
    if (bytes_.size() > kMaxTraceFileBytes) fail("larger than 1 GiB, not a trace this reader accepts");
    std::size_t pos = 0;
    std::size_t message = 0;  // 0: the global metadata; k: the k-th node message
    while (pos < bytes_.size()) {
      const std::size_t start = pos;
      const std::string what = message == 0 ? "the global metadata" : "node message " + std::to_string(message);
      if (message > kMaxNodesPerTrace) {
        fail_at(start, what + ": more than " + std::to_string(kMaxNodesPerTrace) + " nodes in one trace");
      }
      const uint64_t len = read_length(pos, what);
      const std::size_t remaining = bytes_.size() - pos;
      if (len > kMaxMessageBytes) {
        fail_at(start, what + ": length prefix says " + std::to_string(len) +
                           " bytes, more than the 64 MiB a message may have (corrupt file?)");
      }
      if (len > remaining) {
        fail_at(start, what + ": length prefix says " + std::to_string(len) + " bytes, but only " +
                           std::to_string(remaining) + " remain (truncated file?)");
      }
      const char* data = bytes_.data() + pos;
      const int size = static_cast<int>(len);
      if (message == 0) {
        wire::GlobalMetadata md;
        const bool parsed = md.ParseFromArray(data, size);
        if (!parsed || has_mistyped_field(md, 2)) {
          // A file that starts with a node has no metadata at all.
          wire::Node probe;
          if (probe.ParseFromArray(data, size) && probe.type() >= 1 && probe.type() <= 7) {
            fail_at(start, "the file does not start with Chakra global metadata: its first message reads as a node "
                           "(a trace is one GlobalMetadata message, then Node messages)");
          }
          if (!parsed) {
            fail_at(start, what + " (" + std::to_string(len) + " bytes) is not valid protobuf data (corrupt file?)");
          }
          fail_at(start, what + ": a field has the wrong wire type (corrupt file?)");
        }
        t.version = md.version();
      } else {
        wire::Node n;
        if (!n.ParseFromArray(data, size)) {
          fail_at(start, what + " (" + std::to_string(len) + " bytes) is not valid protobuf data (corrupt file?)");
        }
        const auto& unknown = n.GetReflection()->GetUnknownFields(n);
        for (int i = 0; i < unknown.field_count(); ++i) {
          if (const char* field = node_field_name(unknown.field(i).number())) {
            fail_at(start, what + ": field " + std::to_string(unknown.field(i).number()) + " (" + field +
                               ") has the wrong wire type, " + wire_type_name(unknown.field(i).type()) +
                               " (corrupt file?)");
          }
        }
        t.nodes.push_back(convert(n));
        message_of_.push_back(message);
      }
      pos += static_cast<std::size_t>(len);
      ++message;
    }
    check_graph(t);
    return t;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw InputError(file_ + ": " + what); }
  [[noreturn]] void fail_at(std::size_t offset, const std::string& what) const {
    fail("byte " + std::to_string(offset) + ": " + what);
  }
  [[noreturn]] void fail_node(const Node& n, const std::string& what) const {
    fail(node_label(n.id, n.name) + ": " + what);
  }

  // A message's varint length prefix at pos; advances pos past it.
  uint64_t read_length(std::size_t& pos, const std::string& what) const {
    const std::size_t start = pos;
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos >= bytes_.size()) fail_at(start, what + ": length prefix cut off by the end of the file (truncated file?)");
      const auto b = static_cast<unsigned char>(bytes_[pos++]);
      if (shift == 63 && b > 1) break;
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return v;
    }
    fail_at(start, what + ": malformed length prefix (a varint of more than 64 bits; corrupt file?)");
  }

  // --- attributes ---------------------------------------------------------

  [[noreturn]] void fail_attr(const Node& n, std::string_view attr, const std::string& what) const {
    fail_node(n, "attribute " + std::string(attr) + ": " + what);
  }

  IntValue int_attr(const Node& n, const Attr& a) const {
    if (auto v = scalar_int(a)) return *v;
    fail_attr(n, a.name(), "expected an integer (int32_val, int64_val, uint64_val, ...), got " + value_kind(a));
  }
  uint64_t uint_attr(const Node& n, const Attr& a, uint64_t max) const {
    const IntValue v = int_attr(n, a);
    if (v.negative) fail_attr(n, a.name(), "must be >= 0, got " + v.str());
    if (v.magnitude > max) fail_attr(n, a.name(), "must be at most " + std::to_string(max) + ", got " + v.str());
    return v.magnitude;
  }
  int64_t signed_attr(const Node& n, const Attr& a) const {
    const IntValue v = int_attr(n, a);
    constexpr auto kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    if (!v.negative && v.magnitude > kMax) fail_attr(n, a.name(), "does not fit int64: " + v.str());
    if (!v.negative) return static_cast<int64_t>(v.magnitude);
    return -static_cast<int64_t>(v.magnitude - 1) - 1;
  }
  bool bool_attr(const Node& n, const Attr& a) const {
    if (a.value_case() == Attr::kBoolVal) return a.bool_val();
    if (auto v = scalar_int(a)) {
      if (!v->negative && v->magnitude <= 1) return v->magnitude == 1;
      fail_attr(n, a.name(), "must be a bool (or the integer 0 or 1), got " + v->str());
    }
    fail_attr(n, a.name(), "expected bool_val (or an integer 0 or 1), got " + value_kind(a));
  }
  double number_attr(const Node& n, const Attr& a) const {
    double d = 0;
    if (a.value_case() == Attr::kDoubleVal) {
      d = a.double_val();
    } else if (a.value_case() == Attr::kFloatVal) {
      d = static_cast<double>(a.float_val());
    } else if (auto v = scalar_int(a)) {
      if (v->negative) fail_attr(n, a.name(), "must be >= 0, got " + v->str());
      return static_cast<double>(v->magnitude);
    } else {
      fail_attr(n, a.name(), "expected a number (double_val, float_val or an integer), got " + value_kind(a));
    }
    if (!std::isfinite(d) || d < 0) fail_attr(n, a.name(), "must be a finite number >= 0, got " + std::to_string(d));
    return d;
  }
  std::vector<bool> bool_list_attr(const Node& n, const Attr& a) const {
    std::vector<bool> out;
    if (a.value_case() == Attr::kBoolList) {
      out.assign(a.bool_list().values().begin(), a.bool_list().values().end());
      return out;
    }
    if (auto list = list_int(a)) {
      out.reserve(list->size());
      for (std::size_t i = 0; i < list->size(); ++i) {
        const IntValue& v = (*list)[i];
        if (v.negative || v.magnitude > 1) {
          fail_attr(n, a.name(), "entry " + std::to_string(i) + " must be 0 or 1, got " + v.str());
        }
        out.push_back(v.magnitude == 1);
      }
      return out;
    }
    fail_attr(n, a.name(), "expected bool_list (or a list of integers 0 and 1), got " + value_kind(a));
  }

  void read_attr(Node& n, const Attr& a, unsigned& seen) const {
    const std::string& name = a.name();
    const KnownAttrName* known = nullptr;
    for (const auto& k : kKnownAttrs) {
      if (k.name == name) known = &k;
    }
    if (known == nullptr) return;  // other attributes are legitimate; not ours
    if ((seen & known->bit) != 0) fail_attr(n, name, "given twice");
    seen |= known->bit;
    if (a.value_case() == Attr::VALUE_NOT_SET) fail_attr(n, name, "has no value");
    switch (known->bit) {
      case kIsCpuOp: n.is_cpu_op = bool_attr(n, a); break;
      case kNumOps: n.num_ops = number_attr(n, a); break;
      case kTensorSize: n.tensor_size = uint_attr(n, a, std::numeric_limits<uint64_t>::max()); break;
      case kCommType: {
        const IntValue v = int_attr(n, a);
        if (v.negative || v.magnitude > static_cast<uint64_t>(CommType::kBarrier)) {
          fail_attr(n, name, "unknown collective type " + v.str() + " (known: 0 ALL_REDUCE .. 9 BARRIER)");
        }
        n.comm_type = static_cast<CommType>(v.magnitude);
        break;
      }
      case kCommSize: n.comm_size = uint_attr(n, a, limits::kMaxCollectiveBytes); break;
      case kCommSrc: n.comm_src = static_cast<int64_t>(uint_attr(n, a, kMaxRanks - 1)); break;
      case kCommDst: n.comm_dst = static_cast<int64_t>(uint_attr(n, a, kMaxRanks - 1)); break;
      case kCommTag: n.comm_tag = signed_attr(n, a); break;
      case kCommRoot: n.comm_root = static_cast<int64_t>(uint_attr(n, a, kMaxRanks - 1)); break;
      case kInvolvedDim: n.involved_dim = bool_list_attr(n, a); break;
      case kPgName:
        if (a.value_case() != Attr::kStringVal) fail_attr(n, name, "expected string_val, got " + value_kind(a));
        n.pg_name = a.string_val();
        break;
    }
  }

  // --- nodes --------------------------------------------------------------

  static std::vector<uint64_t> unique_in_order(const google::protobuf::RepeatedField<uint64_t>& ids) {
    std::vector<uint64_t> out;
    out.reserve(static_cast<std::size_t>(ids.size()));
    std::unordered_set<uint64_t> seen;
    for (const uint64_t id : ids) {
      if (seen.insert(id).second) out.push_back(id);
    }
    return out;
  }

  Node convert(const wire::Node& w) const {
    Node n;
    n.id = w.id();
    if (const std::string why = name_problem(w.name()); !why.empty()) {
      fail("node " + std::to_string(n.id) + ": its name " + quote(w.name()) + " " + why);
    }
    n.name = w.name();
    const int type = static_cast<int>(w.type());
    if (type == 0) fail_node(n, "node type INVALID_NODE (0)");
    if (type < 0 || type > 7) {
      fail_node(n, "unknown node type " + std::to_string(type) + " (known: the types 1 METADATA_NODE .. 7 COMM_COLL_NODE of Chakra 0.0.4)");
    }
    n.type = static_cast<NodeType>(type);
    n.data_deps = unique_in_order(w.data_deps());
    n.ctrl_deps = unique_in_order(w.ctrl_deps());
    if (w.duration_micros() > kMaxDurationMicros) {
      fail_node(n, "duration_micros " + std::to_string(w.duration_micros()) + " is more than 1e9 (1000 s)");
    }
    n.duration_micros = w.duration_micros();
    unsigned seen = 0;
    for (const Attr& a : w.attr()) read_attr(n, a, seen);

    const std::string kind = to_string(n.type);
    auto require = [&](bool present, const char* attr) {
      if (!present) fail_node(n, kind + " without attribute " + attr);
    };
    switch (n.type) {
      case NodeType::kCommColl:
        require(n.comm_type.has_value(), "comm_type");
        require(n.comm_size.has_value(), "comm_size");
        break;
      case NodeType::kCommSend:
        require(n.comm_dst.has_value(), "comm_dst");
        require(n.comm_size.has_value(), "comm_size");
        break;
      case NodeType::kCommRecv:
        require(n.comm_src.has_value(), "comm_src");
        require(n.comm_size.has_value(), "comm_size");
        break;
      default: break;
    }
    if ((n.type == NodeType::kCommSend || n.type == NodeType::kCommRecv) && n.comm_src && n.comm_dst &&
        *n.comm_src == *n.comm_dst) {
      fail_node(n, kind + " from rank " + std::to_string(*n.comm_src) + " to itself");
    }
    return n;
  }

  // --- the dependency graph -----------------------------------------------

  void check_graph(const Trace& t) const {
    const std::size_t count = t.nodes.size();
    std::unordered_map<uint64_t, std::size_t> index;
    index.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
      const Node& n = t.nodes[i];
      const auto [it, inserted] = index.emplace(n.id, i);
      if (!inserted) {
        const Node& first = t.nodes[it->second];
        fail_node(n, "node id " + std::to_string(n.id) + " is used twice (first by node message " +
                         std::to_string(message_of_[it->second]) +
                         (first.name.empty() ? "" : ", " + printable(first.name)) + ")");
      }
    }
    // Edges from each node to what it depends on, as indices.
    std::vector<std::size_t> first_edge(count + 1, 0);
    std::vector<std::size_t> edges;
    for (std::size_t i = 0; i < count; ++i) {
      const Node& n = t.nodes[i];
      for (const auto* deps : {&n.data_deps, &n.ctrl_deps}) {
        const char* kind = deps == &n.data_deps ? "data" : "control";
        for (const uint64_t d : *deps) {
          if (d == n.id) fail_node(n, std::string(kind) + " dependency on itself");
          const auto it = index.find(d);
          if (it == index.end()) {
            fail_node(n, std::string(kind) + " dependency on node " + std::to_string(d) +
                             ", which is not in the trace");
          }
          edges.push_back(it->second);
        }
      }
      first_edge[i + 1] = edges.size();
    }
    // Iterative depth-first search; a dependency on a node still on the
    // path closes a cycle.
    enum : unsigned char { kNew, kOnPath, kDone };
    std::vector<unsigned char> state(count, kNew);
    std::vector<std::pair<std::size_t, std::size_t>> path;  // node, next edge
    for (std::size_t root = 0; root < count; ++root) {
      if (state[root] != kNew) continue;
      path.push_back({root, first_edge[root]});
      state[root] = kOnPath;
      while (!path.empty()) {
        auto& [node, edge] = path.back();
        if (edge == first_edge[node + 1]) {
          state[node] = kDone;
          path.pop_back();
          continue;
        }
        const std::size_t next = edges[edge++];
        if (state[next] == kOnPath) report_cycle(t, path, next);
        if (state[next] == kNew) {
          state[next] = kOnPath;
          path.push_back({next, first_edge[next]});
        }
      }
    }
  }

  [[noreturn]] void report_cycle(const Trace& t, const std::vector<std::pair<std::size_t, std::size_t>>& path,
                                 std::size_t back_to) const {
    std::size_t from = 0;
    while (path[from].first != back_to) ++from;
    std::vector<uint64_t> ids;
    for (std::size_t i = from; i < path.size(); ++i) ids.push_back(t.nodes[path[i].first].id);
    ids.push_back(t.nodes[back_to].id);
    std::string cycle;
    constexpr std::size_t kShown = 12;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (ids.size() > kShown && i == kShown - 2) {
        cycle += " -> ... (" + std::to_string(ids.size() - 1) + " nodes)";
        i = ids.size() - 1;
      }
      cycle += (cycle.empty() ? "" : " -> ") + std::to_string(ids[i]);
    }
    fail_node(t.nodes[back_to], "dependency cycle: " + cycle + " (each depends on the next)");
  }

  std::string_view bytes_;
  const std::string& file_;
  std::vector<std::size_t> message_of_;  // node index -> its node message number
};

std::string rank_file(const std::string& prefix, int rank) { return prefix + "." + std::to_string(rank) + ".et"; }

bool file_exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

}  // namespace

Trace parse_trace(std::string_view bytes, const std::string& file_name_for_errors) {
  return Parser(bytes, file_name_for_errors).run();
}

namespace {
// A file's bytes, checked as the reader accepts them (a regular file or a
// stream, at most kMaxTraceFileBytes).
std::string read_file_bytes(const std::string& path) {
  // POSIX reads: a rank's file is opened, sized and read in a few system
  // calls (a thousand ranks' files are read per run).
  struct Fd {
    int fd;
    ~Fd() {
      if (fd >= 0) ::close(fd);
    }
  } f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) throw InputError(path + ": cannot open: " + std::strerror(errno));
  struct stat st{};
  if (::fstat(f.fd, &st) != 0) throw InputError(path + ": cannot open: " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw InputError(path + ": is a directory, expected a Chakra trace file");
  std::string bytes;
  if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) <= kMaxTraceFileBytes) {
    bytes.reserve(static_cast<std::size_t>(st.st_size));
  }
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(f.fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw InputError(path + ": cannot read: " + std::strerror(errno));
    }
    if (n == 0) break;
    bytes.append(buf, static_cast<std::size_t>(n));
    if (bytes.size() > kMaxTraceFileBytes) throw InputError(path + ": larger than 1 GiB, not a trace this reader accepts");
  }
  return bytes;
}

// Ranks' files are often byte for byte the same (every data-parallel rank of
// a converted table, every rank of a stage): each distinct content is parsed
// once, and the ranks that repeat it share its node list. The contents kept
// to compare against are bounded, so traces that all differ cost no more
// memory than before; past the bound a new content is parsed without being
// kept.
constexpr std::size_t kKeptContentBytes = 256u << 20;
}  // namespace

Trace read_trace_file(const std::string& path) { return parse_trace(read_file_bytes(path), path); }

std::vector<Trace> read_traces(const std::string& prefix, int expected_ranks) {
  if (expected_ranks < -1) throw std::invalid_argument("read_traces: expected_ranks must be >= -1");
  int ranks = expected_ranks;
  if (expected_ranks >= 0) {
    if (expected_ranks > kMaxRanks) {
      throw InputError(prefix + ": " + std::to_string(expected_ranks) + " ranks, more than " +
                       std::to_string(kMaxRanks));
    }
    for (int r = 0; r < expected_ranks; ++r) {
      if (!file_exists(rank_file(prefix, r))) {
        throw InputError(rank_file(prefix, r) + ": no such file; the topology has " + std::to_string(expected_ranks) +
                         " NPUs, so the trace needs " + rank_file(prefix, 0) + " .. " +
                         rank_file(prefix, expected_ranks - 1));
      }
    }
    if (file_exists(rank_file(prefix, expected_ranks))) {
      throw InputError(rank_file(prefix, expected_ranks) + ": trace has more ranks than the topology's " +
                       std::to_string(expected_ranks) + " NPUs");
    }
  } else {
    ranks = 0;
    while (ranks < kMaxRanks && file_exists(rank_file(prefix, ranks))) ++ranks;
    if (ranks == 0) {
      throw InputError(rank_file(prefix, 0) + ": no such file (a Chakra trace is " + rank_file(prefix, 0) + ", " +
                       rank_file(prefix, 1) + ", ...: one file per rank)");
    }
  }

  std::vector<Trace> traces;
  traces.reserve(static_cast<std::size_t>(ranks));
  {
    struct Kept {
      std::string bytes;
      std::size_t rank;
    };
    std::unordered_multimap<std::size_t, Kept> kept;  // by the content's hash
    std::size_t kept_bytes = 0;
    for (int r = 0; r < ranks; ++r) {
      const std::string path = rank_file(prefix, r);
      std::string bytes = read_file_bytes(path);
      const std::size_t hash = std::hash<std::string_view>{}(bytes);
      const Trace* same = nullptr;
      for (auto [it, end] = kept.equal_range(hash); it != end && same == nullptr; ++it) {
        if (it->second.bytes == bytes) same = &traces[it->second.rank];
      }
      if (same != nullptr) {
        Trace copy = *same;  // shares the nodes until either is changed
        copy.file = path;
        traces.push_back(std::move(copy));
        continue;
      }
      traces.push_back(parse_trace(bytes, path));
      if (kept_bytes + bytes.size() <= kKeptContentBytes) {
        kept_bytes += bytes.size();
        kept.emplace(hash, Kept{std::move(bytes), static_cast<std::size_t>(r)});
      }
    }
  }

  // Point-to-point: the own side is the file's rank, the peer another rank
  // in range; every (source, destination, tag) has as many sends as receives.
  struct Count {
    long long sends = 0, recvs = 0;
    int send_rank = -1, recv_rank = -1;
    std::size_t send_node = 0, recv_node = 0;  // the first of each
  };
  std::map<std::tuple<int64_t, int64_t, int64_t>, Count> pairs;
  for (int r = 0; r < ranks; ++r) {
    Trace& t = traces[static_cast<std::size_t>(r)];
    for (std::size_t i = 0; i < t.nodes.size(); ++i) {
      // Read through the shared list; only a send or receive is written (its
      // own side), which gives this rank a list of its own.
      if (const NodeType type = std::as_const(t.nodes)[i].type; type != NodeType::kCommSend && type != NodeType::kCommRecv) {
        continue;
      }
      Node& n = t.nodes[i];
      const bool send = n.type == NodeType::kCommSend;
      auto fail = [&](const std::string& what) {
        throw InputError(t.file + ": " + node_label(n.id, n.name) + ": " + what);
      };
      std::optional<int64_t>& own = send ? n.comm_src : n.comm_dst;
      const int64_t peer = send ? *n.comm_dst : *n.comm_src;
      const char* own_attr = send ? "comm_src" : "comm_dst";
      if (own && *own != r) {
        fail(std::string(own_attr) + " is " + std::to_string(*own) + ", but this is rank " + std::to_string(r) +
             "'s trace");
      }
      own = r;
      if (peer == r) fail(to_string(n.type) + " from rank " + std::to_string(r) + " to itself");
      if (peer >= ranks) {
        fail(std::string(send ? "comm_dst" : "comm_src") + " is rank " + std::to_string(peer) + ", but the trace has " +
             std::to_string(ranks) + " ranks (0.." + std::to_string(ranks - 1) + ")");
      }
      Count& c = pairs[{*n.comm_src, *n.comm_dst, n.comm_tag.value_or(0)}];
      if (send && c.sends++ == 0) {
        c.send_rank = r;
        c.send_node = i;
      }
      if (!send && c.recvs++ == 0) {
        c.recv_rank = r;
        c.recv_node = i;
      }
    }
  }
  for (const auto& [key, c] : pairs) {
    if (c.sends == c.recvs) continue;
    const auto& [src, dst, tag] = key;
    const bool more_sends = c.sends > c.recvs;
    const Trace& t = traces[static_cast<std::size_t>(more_sends ? c.send_rank : c.recv_rank)];
    const Node& n = t.nodes[more_sends ? c.send_node : c.recv_node];
    throw InputError(t.file + ": " + node_label(n.id, n.name) + ": " + std::to_string(c.sends) + " send(s) from rank " +
                     std::to_string(src) + " to rank " + std::to_string(dst) + " with tag " + std::to_string(tag) +
                     " but " + std::to_string(c.recvs) + " matching receive(s)");
  }
  return traces;
}

}  // namespace acesim::chakra
