// MLCommons Chakra execution traces (ET), the workload format of ASTRA-sim
// 2.0: one protobuf file per rank, PREFIX.<rank>.et, each a dependency graph
// of compute and communication nodes (docs/formats.md, "Chakra execution
// traces"). This is the reader: it checks a trace completely and gives a
// plain model of it; what the nodes mean when simulated is up to its user.
//
// Every problem in a file is an InputError with one line naming the file,
// the node (id and name) where there is one, and the problem.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace acesim::chakra {

// The format's node types; the values are the wire values. INVALID_NODE (0)
// and unknown values are refused, so they never appear here.
enum class NodeType {
  kMetadata = 1,  // METADATA_NODE
  kMemLoad = 2,   // MEM_LOAD_NODE
  kMemStore = 3,  // MEM_STORE_NODE
  kComp = 4,      // COMP_NODE
  kCommSend = 5,  // COMM_SEND_NODE
  kCommRecv = 6,  // COMM_RECV_NODE
  kCommColl = 7,  // COMM_COLL_NODE
};

// The format's collective types (attribute comm_type); values are the wire values.
enum class CommType {
  kAllReduce = 0,
  kReduce = 1,
  kAllGather = 2,
  kGather = 3,
  kScatter = 4,
  kBroadcast = 5,
  kAllToAll = 6,
  kReduceScatter = 7,
  kReduceScatterBlock = 8,
  kBarrier = 9,
};

// The format's names: "COMP_NODE", "ALL_REDUCE", ...
std::string to_string(NodeType t);
std::string to_string(CommType t);

// One node. Attributes the reader knows are decoded into the fields below
// (absent ones stay empty); any other attribute is legitimate and ignored.
struct Node {
  uint64_t id = 0;
  std::string name;
  NodeType type = NodeType::kComp;
  // Ids of nodes of the same trace that must finish first. Either list may
  // name nodes later in the file; repeats within a list are dropped. The
  // graph of both lists together is checked: no dangling ids, no self
  // dependency, no cycle.
  std::vector<uint64_t> data_deps;
  std::vector<uint64_t> ctrl_deps;
  uint64_t duration_micros = 0;  // microseconds; at most 1e9 (1000 s)
  bool is_cpu_op = false;        // attribute is_cpu_op; false when absent
  // Collectives always have both; sends and receives always have comm_size.
  std::optional<CommType> comm_type;
  std::optional<uint64_t> comm_size;  // bytes, at most 2^50
  // Which topology dimensions a collective spans (attribute involved_dim);
  // empty when absent. Not checked against any topology here.
  std::vector<bool> involved_dim;
  // Sends always have comm_dst, receives comm_src (ranks, >= 0). The own
  // side may be absent in a parsed file; read_traces fills it with the
  // file's rank. comm_tag: matching key for send/receive; absent means 0.
  std::optional<int64_t> comm_src, comm_dst, comm_tag;
  // The root rank of a rooted collective (attribute comm_root, an acesim
  // extension: Chakra's converter records none); absent: the group's lowest rank.
  std::optional<int64_t> comm_root;
  std::optional<double> num_ops;         // >= 0, finite
  std::optional<uint64_t> tensor_size;   // bytes
  std::string pg_name;                   // process group; "" when absent
};

// A trace's nodes, shared by copies until one of them changes: ranks whose
// files are the same bytes hold one list (read_traces), so reading a
// thousand equal files costs one list in memory, not a thousand. Const
// access reads the shared list; any non-const access (operator[], begin,
// push_back, ...) first takes a copy of its own if the list is shared, so a
// copy behaves as the independent vector it was. Iteration is const only,
// so reading a rank's nodes never copies them.
class NodeList {
 public:
  using value_type = Node;
  using const_iterator = std::vector<Node>::const_iterator;

  NodeList() = default;
  NodeList(std::vector<Node> nodes) : nodes_(std::make_shared<std::vector<Node>>(std::move(nodes))) {}  // NOLINT
  NodeList(std::initializer_list<Node> nodes) : NodeList(std::vector<Node>(nodes)) {}

  std::size_t size() const { return nodes_ ? nodes_->size() : 0; }
  bool empty() const { return size() == 0; }
  const Node& operator[](std::size_t i) const { return (*nodes_)[i]; }
  const Node& back() const { return nodes_->back(); }
  const_iterator begin() const { return nodes_ ? nodes_->cbegin() : const_iterator(); }
  const_iterator end() const { return nodes_ ? nodes_->cend() : const_iterator(); }

  Node& operator[](std::size_t i) { return own()[i]; }
  Node& back() { return own().back(); }
  void reserve(std::size_t n) { own().reserve(n); }
  void push_back(Node n) { own().push_back(std::move(n)); }

  // Whether both hold the very same list (copies not changed since).
  bool shares_with(const NodeList& other) const { return nodes_ != nullptr && nodes_ == other.nodes_; }

 private:
  std::vector<Node>& own() {
    if (!nodes_) {
      nodes_ = std::make_shared<std::vector<Node>>();
    } else if (nodes_.use_count() > 1) {
      nodes_ = std::make_shared<std::vector<Node>>(*nodes_);
    }
    return *nodes_;
  }
  std::shared_ptr<std::vector<Node>> nodes_;
};

struct Trace {
  std::string file;     // as given, for messages
  std::string version;  // the global metadata's version, e.g. "0.0.4" (not checked)
  NodeList nodes;       // in file order (not necessarily dependency order)
};

// Input limits (checked before allocating).
inline constexpr uint64_t kMaxTraceFileBytes = 1ULL << 30;   // 1 GiB per file
inline constexpr uint64_t kMaxMessageBytes = 64ULL << 20;    // 64 MiB per message
inline constexpr std::size_t kMaxNodesPerTrace = 10'000'000;
inline constexpr uint64_t kMaxDurationMicros = 1'000'000'000;  // 1000 s
inline constexpr int kMaxRanks = 1 << 24;                      // limits::kMaxNpus

// Parses and checks one file's bytes; file_name_for_errors prefixes every message.
Trace parse_trace(std::string_view bytes, const std::string& file_name_for_errors);
Trace read_trace_file(const std::string& path);

// Reads PREFIX.0.et, PREFIX.1.et, ... (ASTRA-sim's naming). With
// expected_ranks >= 0 exactly that many must exist (PREFIX.<expected_ranks>.et
// must not); with -1, files are read up to the first missing one (at least
// PREFIX.0.et must exist). Across the ranks it checks that sends and
// receives name a peer rank in range other than their own, and fills in the
// own side (comm_src of a send, comm_dst of a receive) where absent; a given
// own side must be the file's rank.
std::vector<Trace> read_traces(const std::string& prefix, int expected_ranks);

}  // namespace acesim::chakra
