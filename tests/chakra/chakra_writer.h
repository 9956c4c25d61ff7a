// Writes Chakra execution traces for the tests, with the wire classes that
// protoc generates from src/chakra/et_def.proto, so that tests make the
// traces they read:
//
//   TraceWriter w;                                    // metadata version "0.0.4"
//   w.comp(1, "fwd", 250);                            // 250 us
//   w.coll(2, "grad_ar", wire::ALL_REDUCE, 1 << 20, {1}, {true, false});
//   w.send(3, "to_1", /*dst=*/1, 4096, {2});
//   w.node(4, "odd", wire::COMP_NODE).add_ctrl_deps(3);  // anything else: the wire class
//   write_ranks(dir_, "t", {w0, w1});                 // dir_/t.0.et, dir_/t.1.et; returns dir_/t
//
// The shortcuts encode attributes as Chakra's own tools do (is_cpu_op as
// bool_val, comm_type and comm_size as int64_val, comm_src/dst/tag as
// int32_val, involved_dim as bool_list); attr() makes any other encoding.
// A returned Node& is valid until the next node is added.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/util/delimited_message_util.h>

#include "chakra/et_def.pb.h"

namespace acesim::test::chakra {

namespace wire = acesim::chakra::wire;

// An attribute `name`, its value set by `set` on the AttributeProto:
//   attr("comm_size", [](auto& a) { a.set_sfixed64_val(64); })
template <typename Set>
wire::AttributeProto attr(const std::string& name, Set&& set) {
  wire::AttributeProto a;
  a.set_name(name);
  set(a);
  return a;
}
inline wire::AttributeProto attr_bool(const std::string& name, bool v) {
  return attr(name, [&](wire::AttributeProto& a) { a.set_bool_val(v); });
}
inline wire::AttributeProto attr_int64(const std::string& name, int64_t v) {
  return attr(name, [&](wire::AttributeProto& a) { a.set_int64_val(v); });
}
inline wire::AttributeProto attr_int32(const std::string& name, int32_t v) {
  return attr(name, [&](wire::AttributeProto& a) { a.set_int32_val(v); });
}
inline wire::AttributeProto attr_uint64(const std::string& name, uint64_t v) {
  return attr(name, [&](wire::AttributeProto& a) { a.set_uint64_val(v); });
}
inline wire::AttributeProto attr_double(const std::string& name, double v) {
  return attr(name, [&](wire::AttributeProto& a) { a.set_double_val(v); });
}
inline wire::AttributeProto attr_string(const std::string& name, const std::string& v) {
  return attr(name, [&](wire::AttributeProto& a) { a.set_string_val(v); });
}
inline wire::AttributeProto attr_bool_list(const std::string& name, const std::vector<bool>& v) {
  return attr(name, [&](wire::AttributeProto& a) {
    for (const bool b : v) a.mutable_bool_list()->add_values(b);
  });
}

inline void add_attr(wire::Node& n, wire::AttributeProto a) { *n.add_attr() = std::move(a); }

// The bytes of a varint, and of one message with its varint length prefix.
inline std::string varint(uint64_t v) {
  std::string s;
  do {
    s.push_back(static_cast<char>((v & 0x7f) | (v >= 0x80 ? 0x80 : 0)));
    v >>= 7;
  } while (v != 0);
  return s;
}
inline std::string delimited(const google::protobuf::MessageLite& m) {
  std::string s;
  {
    google::protobuf::io::StringOutputStream out(&s);
    google::protobuf::io::CodedOutputStream coded(&out);
    google::protobuf::util::SerializeDelimitedToCodedStream(m, &coded);
  }
  return s;
}

inline std::string write_bytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
  return path.string();
}

class TraceWriter {
 public:
  wire::GlobalMetadata metadata;
  std::vector<wire::Node> nodes;

  TraceWriter() { metadata.set_version("0.0.4"); }

  // A node with no attributes.
  wire::Node& node(uint64_t id, const std::string& name, wire::NodeType type,
                   const std::vector<uint64_t>& data_deps = {}) {
    wire::Node& n = nodes.emplace_back();
    n.set_id(id);
    n.set_name(name);
    n.set_type(type);
    for (const uint64_t d : data_deps) n.add_data_deps(d);
    return n;
  }

  wire::Node& comp(uint64_t id, const std::string& name, uint64_t duration_us,
                   const std::vector<uint64_t>& data_deps = {}) {
    wire::Node& n = node(id, name, wire::COMP_NODE, data_deps);
    n.set_duration_micros(duration_us);
    add_attr(n, attr_bool("is_cpu_op", false));
    return n;
  }

  wire::Node& coll(uint64_t id, const std::string& name, wire::CollectiveCommType type, int64_t bytes,
                   const std::vector<uint64_t>& data_deps = {}, const std::vector<bool>& involved_dim = {}) {
    wire::Node& n = node(id, name, wire::COMM_COLL_NODE, data_deps);
    add_attr(n, attr_bool("is_cpu_op", false));
    add_attr(n, attr_int64("comm_type", type));
    add_attr(n, attr_int64("comm_size", bytes));
    if (!involved_dim.empty()) add_attr(n, attr_bool_list("involved_dim", involved_dim));
    return n;
  }

  // A send to rank `dst` (comm_src left out, as the own side may be).
  wire::Node& send(uint64_t id, const std::string& name, int32_t dst, int64_t bytes,
                   const std::vector<uint64_t>& data_deps = {}, int32_t tag = 0) {
    wire::Node& n = node(id, name, wire::COMM_SEND_NODE, data_deps);
    add_attr(n, attr_bool("is_cpu_op", false));
    add_attr(n, attr_int32("comm_dst", dst));
    add_attr(n, attr_int64("comm_size", bytes));
    add_attr(n, attr_int32("comm_tag", tag));
    return n;
  }

  // A receive from rank `src` (comm_dst left out).
  wire::Node& recv(uint64_t id, const std::string& name, int32_t src, int64_t bytes,
                   const std::vector<uint64_t>& data_deps = {}, int32_t tag = 0) {
    wire::Node& n = node(id, name, wire::COMM_RECV_NODE, data_deps);
    add_attr(n, attr_bool("is_cpu_op", false));
    add_attr(n, attr_int32("comm_src", src));
    add_attr(n, attr_int64("comm_size", bytes));
    add_attr(n, attr_int32("comm_tag", tag));
    return n;
  }

  // The file's bytes: the metadata, then every node, each length-delimited.
  std::string bytes() const {
    std::string s = delimited(metadata);
    for (const wire::Node& n : nodes) s += delimited(n);
    return s;
  }

  std::string write(const std::filesystem::path& path) const { return write_bytes(path, bytes()); }
};

// Writes dir/name.<r>.et for each rank's writer; returns the prefix dir/name.
inline std::string write_ranks(const std::filesystem::path& dir, const std::string& name,
                               const std::vector<TraceWriter>& ranks) {
  const std::string prefix = (dir / name).string();
  for (std::size_t r = 0; r < ranks.size(); ++r) ranks[r].write(prefix + "." + std::to_string(r) + ".et");
  return prefix;
}

}  // namespace acesim::test::chakra
