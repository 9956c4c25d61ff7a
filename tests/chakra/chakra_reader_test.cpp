// Chakra execution traces (src/chakra): the ASTRA-sim sample, every
// attribute encoding, every refusal, truncated and corrupted files, and the
// rank files of read_traces.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <sstream>

#include "chakra/chakra_trace.h"
#include "chakra/chakra_writer.h"
#include "config/input_error.h"
#include "scratch_dir.h"
#include "test_data.h"

namespace acesim {
namespace {

using chakra::CommType;
using chakra::NodeType;
using chakra::parse_trace;
using chakra::Trace;
using test::chakra::attr;
using test::chakra::TraceWriter;
namespace wire = test::chakra::wire;

const std::string kSamplePrefix = test::kData + "/chakra-et/all_reduce_8npus_1MB/all_reduce";

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The InputError `f` throws; fails the test when it throws none.
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError";
  return "";
}

void expect_has(const std::string& message, std::initializer_list<std::string_view> parts) {
  for (const auto part : parts) EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' not in: " << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

// The error of parsing `w` as file "t.et".
std::string parse_error(const TraceWriter& w) {
  return error_of([&] { parse_trace(w.bytes(), "traces/t.3.et"); });
}

TEST(ChakraReader, AstraSimSampleParsesToItsValues) {
  const std::vector<Trace> traces = chakra::read_traces(kSamplePrefix, 8);
  ASSERT_EQ(traces.size(), 8u);
  for (int r = 0; r < 8; ++r) {
    const Trace& t = traces[static_cast<std::size_t>(r)];
    EXPECT_EQ(t.file, kSamplePrefix + "." + std::to_string(r) + ".et");
    EXPECT_EQ(t.version, "0.0.4");
    ASSERT_EQ(t.nodes.size(), 1u);
    const chakra::Node& n = t.nodes[0];
    EXPECT_EQ(n.id, static_cast<uint64_t>(r));
    EXPECT_EQ(n.name, "all_reduce_8npus_1MB");
    EXPECT_EQ(n.type, NodeType::kCommColl);
    EXPECT_FALSE(n.is_cpu_op);
    EXPECT_EQ(n.comm_type, CommType::kAllReduce);
    EXPECT_EQ(n.comm_size, 1048576u);
    EXPECT_TRUE(n.data_deps.empty());
    EXPECT_TRUE(n.ctrl_deps.empty());
    EXPECT_EQ(n.duration_micros, 0u);
    EXPECT_TRUE(n.involved_dim.empty());
    EXPECT_FALSE(n.comm_src || n.comm_dst || n.comm_tag || n.num_ops || n.tensor_size);
    EXPECT_EQ(n.pg_name, "");
  }
  // -1: as many ranks as there are files.
  EXPECT_EQ(chakra::read_traces(kSamplePrefix, -1).size(), 8u);
}

TEST(ChakraReader, WriterReproducesTheSampleBytes) {
  // Our .proto and writer encode exactly what ASTRA-sim's sample holds.
  for (int r = 0; r < 8; ++r) {
    TraceWriter w;
    w.coll(static_cast<uint64_t>(r), "all_reduce_8npus_1MB", wire::ALL_REDUCE, 1048576);
    EXPECT_EQ(w.bytes(), read_bytes(kSamplePrefix + "." + std::to_string(r) + ".et")) << "rank " << r;
  }
}

TEST(ChakraReader, NamesOfTypes) {
  EXPECT_EQ(chakra::to_string(NodeType::kComp), "COMP_NODE");
  EXPECT_EQ(chakra::to_string(NodeType::kCommColl), "COMM_COLL_NODE");
  EXPECT_EQ(chakra::to_string(NodeType::kMetadata), "METADATA_NODE");
  EXPECT_EQ(chakra::to_string(CommType::kAllToAll), "ALL_TO_ALL");
  EXPECT_EQ(chakra::to_string(CommType::kReduceScatterBlock), "REDUCE_SCATTER_BLOCK");
  EXPECT_EQ(chakra::to_string(CommType::kBarrier), "BARRIER");
}

TEST(ChakraReader, RoundTripOfNodesAndKnownAttributes) {
  TraceWriter w;
  w.metadata.set_version("0.0.5-test");
  *w.metadata.add_attr() = test::chakra::attr_string("schema", "whatever");
  w.comp(10, "fwd", 250);
  wire::Node& bwd = w.comp(11, "bwd", 500, {10, 10});  // a repeat is dropped
  bwd.add_ctrl_deps(10);
  bwd.set_start_time_micros(12345);
  bwd.mutable_inputs()->set_values("[[1,2]]");
  bwd.mutable_outputs()->set_shapes("[[4]]");
  test::chakra::add_attr(bwd, test::chakra::attr_double("num_ops", 1.5e9));
  test::chakra::add_attr(bwd, test::chakra::attr_uint64("tensor_size", 4096));
  test::chakra::add_attr(bwd, attr("op_schema", [](auto& a) { a.set_string_val("aten::mm"); }));
  test::chakra::add_attr(bwd, attr("rf_id", [](auto& a) { a.set_int64_val(-7); }));
  test::chakra::add_attr(bwd, attr("blob", [](auto& a) { a.mutable_bytes_list()->add_values(std::string("\0\1", 2)); }));
  test::chakra::add_attr(bwd, attr("", [](auto&) {}));  // unknown and empty: ignored
  w.coll(12, "ar", wire::REDUCE_SCATTER, 1 << 20, {11}, {true, false, true});
  wire::Node& cpu = w.node(13, "cpu", wire::COMP_NODE, {12});
  test::chakra::add_attr(cpu, test::chakra::attr_bool("is_cpu_op", true));
  test::chakra::add_attr(cpu, test::chakra::attr_string("pg_name", "7"));
  w.send(14, "s", 3, 64, {13}, -2);
  w.recv(15, "r", 2, 128, {14}, 9);
  w.node(16, "meta", wire::METADATA_NODE);
  w.node(17, "load", wire::MEM_LOAD_NODE);
  w.node(18, "store", wire::MEM_STORE_NODE);

  const Trace t = parse_trace(w.bytes(), "t.et");
  EXPECT_EQ(t.version, "0.0.5-test");
  ASSERT_EQ(t.nodes.size(), 9u);
  EXPECT_EQ(t.nodes[0].id, 10u);
  EXPECT_EQ(t.nodes[0].duration_micros, 250u);
  const chakra::Node& b = t.nodes[1];
  EXPECT_EQ(b.name, "bwd");
  EXPECT_EQ(b.data_deps, std::vector<uint64_t>({10}));
  EXPECT_EQ(b.ctrl_deps, std::vector<uint64_t>({10}));
  EXPECT_EQ(b.duration_micros, 500u);
  EXPECT_EQ(b.num_ops, 1.5e9);
  EXPECT_EQ(b.tensor_size, 4096u);
  const chakra::Node& ar = t.nodes[2];
  EXPECT_EQ(ar.comm_type, CommType::kReduceScatter);
  EXPECT_EQ(ar.comm_size, 1u << 20);
  EXPECT_EQ(ar.involved_dim, std::vector<bool>({true, false, true}));
  EXPECT_TRUE(t.nodes[3].is_cpu_op);
  EXPECT_EQ(t.nodes[3].pg_name, "7");
  const chakra::Node& s = t.nodes[4];
  EXPECT_EQ(s.type, NodeType::kCommSend);
  EXPECT_EQ(s.comm_dst, 3);
  EXPECT_FALSE(s.comm_src.has_value());  // the own side: read_traces fills it in
  EXPECT_EQ(s.comm_tag, -2);
  EXPECT_EQ(s.comm_size, 64u);
  const chakra::Node& r = t.nodes[5];
  EXPECT_EQ(r.type, NodeType::kCommRecv);
  EXPECT_EQ(r.comm_src, 2);
  EXPECT_FALSE(r.comm_dst.has_value());
  EXPECT_EQ(r.comm_tag, 9);
  EXPECT_EQ(t.nodes[6].type, NodeType::kMetadata);
  EXPECT_EQ(t.nodes[7].type, NodeType::kMemLoad);
  EXPECT_EQ(t.nodes[8].type, NodeType::kMemStore);
}

// Every integer encoding the format has, for the integer attributes.
TEST(ChakraReader, EveryIntegerEncodingIsAccepted) {
  using Set = void (*)(wire::AttributeProto&, int64_t);
  const std::vector<std::pair<const char*, Set>> encodings = {
      {"int32", [](wire::AttributeProto& a, int64_t v) { a.set_int32_val(static_cast<int32_t>(v)); }},
      {"int64", [](wire::AttributeProto& a, int64_t v) { a.set_int64_val(v); }},
      {"uint32", [](wire::AttributeProto& a, int64_t v) { a.set_uint32_val(static_cast<uint32_t>(v)); }},
      {"uint64", [](wire::AttributeProto& a, int64_t v) { a.set_uint64_val(static_cast<uint64_t>(v)); }},
      {"sint32", [](wire::AttributeProto& a, int64_t v) { a.set_sint32_val(static_cast<int32_t>(v)); }},
      {"sint64", [](wire::AttributeProto& a, int64_t v) { a.set_sint64_val(v); }},
      {"fixed32", [](wire::AttributeProto& a, int64_t v) { a.set_fixed32_val(static_cast<uint32_t>(v)); }},
      {"fixed64", [](wire::AttributeProto& a, int64_t v) { a.set_fixed64_val(static_cast<uint64_t>(v)); }},
      {"sfixed32", [](wire::AttributeProto& a, int64_t v) { a.set_sfixed32_val(static_cast<int32_t>(v)); }},
      {"sfixed64", [](wire::AttributeProto& a, int64_t v) { a.set_sfixed64_val(v); }},
  };
  for (const auto& encoding : encodings) {
    SCOPED_TRACE(encoding.first);
    const Set set = encoding.second;
    TraceWriter w;
    wire::Node& c = w.node(1, "c", wire::COMM_COLL_NODE);
    test::chakra::add_attr(c, attr("comm_type", [&](auto& a) { set(a, 6); }));
    test::chakra::add_attr(c, attr("comm_size", [&](auto& a) { set(a, 123456); }));
    test::chakra::add_attr(c, attr("is_cpu_op", [&](auto& a) { set(a, 1); }));
    test::chakra::add_attr(c, attr("num_ops", [&](auto& a) { set(a, 1000); }));
    test::chakra::add_attr(c, attr("tensor_size", [&](auto& a) { set(a, 77); }));
    wire::Node& s = w.node(2, "s", wire::COMM_SEND_NODE, {1});
    test::chakra::add_attr(s, attr("comm_src", [&](auto& a) { set(a, 0); }));
    test::chakra::add_attr(s, attr("comm_dst", [&](auto& a) { set(a, 5); }));
    test::chakra::add_attr(s, attr("comm_size", [&](auto& a) { set(a, 8); }));
    test::chakra::add_attr(s, attr("comm_tag", [&](auto& a) { set(a, 31); }));
    const Trace t = parse_trace(w.bytes(), "t.et");
    ASSERT_EQ(t.nodes.size(), 2u);
    EXPECT_EQ(t.nodes[0].comm_type, CommType::kAllToAll);
    EXPECT_EQ(t.nodes[0].comm_size, 123456u);
    EXPECT_TRUE(t.nodes[0].is_cpu_op);
    EXPECT_EQ(t.nodes[0].num_ops, 1000.0);
    EXPECT_EQ(t.nodes[0].tensor_size, 77u);
    EXPECT_EQ(t.nodes[1].comm_src, 0);
    EXPECT_EQ(t.nodes[1].comm_dst, 5);
    EXPECT_EQ(t.nodes[1].comm_size, 8u);
    EXPECT_EQ(t.nodes[1].comm_tag, 31);
  }
}

TEST(ChakraReader, ListAndFloatEncodings) {
  using Fill = void (*)(wire::AttributeProto&);
  const std::vector<std::pair<const char*, Fill>> lists = {
      {"bool_list", [](wire::AttributeProto& a) { for (bool b : {true, false, true}) a.mutable_bool_list()->add_values(b); }},
      {"int32_list", [](wire::AttributeProto& a) { for (int v : {1, 0, 1}) a.mutable_int32_list()->add_values(v); }},
      {"int64_list", [](wire::AttributeProto& a) { for (int v : {1, 0, 1}) a.mutable_int64_list()->add_values(v); }},
      {"uint32_list", [](wire::AttributeProto& a) { for (unsigned v : {1u, 0u, 1u}) a.mutable_uint32_list()->add_values(v); }},
      {"uint64_list", [](wire::AttributeProto& a) { for (unsigned v : {1u, 0u, 1u}) a.mutable_uint64_list()->add_values(v); }},
      {"sint32_list", [](wire::AttributeProto& a) { for (int v : {1, 0, 1}) a.mutable_sint32_list()->add_values(v); }},
      {"sint64_list", [](wire::AttributeProto& a) { for (int v : {1, 0, 1}) a.mutable_sint64_list()->add_values(v); }},
      {"fixed32_list", [](wire::AttributeProto& a) { for (unsigned v : {1u, 0u, 1u}) a.mutable_fixed32_list()->add_values(v); }},
      {"fixed64_list", [](wire::AttributeProto& a) { for (unsigned v : {1u, 0u, 1u}) a.mutable_fixed64_list()->add_values(v); }},
      {"sfixed32_list", [](wire::AttributeProto& a) { for (int v : {1, 0, 1}) a.mutable_sfixed32_list()->add_values(v); }},
      {"sfixed64_list", [](wire::AttributeProto& a) { for (int v : {1, 0, 1}) a.mutable_sfixed64_list()->add_values(v); }},
  };
  for (const auto& list : lists) {
    SCOPED_TRACE(list.first);
    const Fill fill = list.second;
    TraceWriter w;
    test::chakra::add_attr(w.coll(1, "c", wire::ALL_GATHER, 4), attr("involved_dim", fill));
    const Trace t = parse_trace(w.bytes(), "t.et");
    EXPECT_EQ(t.nodes[0].involved_dim, std::vector<bool>({true, false, true}));
  }
  TraceWriter w;
  test::chakra::add_attr(w.comp(1, "f", 1), attr("num_ops", [](auto& a) { a.set_float_val(2.5f); }));
  test::chakra::add_attr(w.comp(2, "d", 1), attr("num_ops", [](auto& a) { a.set_double_val(0.0); }));
  test::chakra::add_attr(w.node(3, "b", wire::COMP_NODE), attr("is_cpu_op", [](auto& a) { a.set_uint32_val(0); }));
  test::chakra::add_attr(w.coll(4, "e", wire::BARRIER, 0), attr("involved_dim", [](auto& a) { a.mutable_bool_list(); }));
  const Trace t = parse_trace(w.bytes(), "t.et");
  EXPECT_EQ(t.nodes[0].num_ops, 2.5);
  EXPECT_EQ(t.nodes[1].num_ops, 0.0);
  EXPECT_FALSE(t.nodes[2].is_cpu_op);
  EXPECT_EQ(t.nodes[3].comm_type, CommType::kBarrier);
  EXPECT_EQ(t.nodes[3].comm_size, 0u);
  EXPECT_TRUE(t.nodes[3].involved_dim.empty());  // an empty list: as if absent
}

TEST(ChakraReader, DependenciesMayPointForwardAndZeroNodesIsValid) {
  TraceWriter w;
  w.comp(2, "late_dep", 1, {5});
  w.comp(5, "defined_later", 1);
  w.comp(0, "id_zero", 1, {2});
  const Trace t = parse_trace(w.bytes(), "t.et");
  ASSERT_EQ(t.nodes.size(), 3u);
  EXPECT_EQ(t.nodes[0].data_deps, std::vector<uint64_t>({5}));
  // Only the metadata: a trace with no nodes.
  EXPECT_TRUE(parse_trace(TraceWriter().bytes(), "t.et").nodes.empty());
}

// --- refusals ---------------------------------------------------------------

TEST(ChakraReader, DependencyErrorsNameFileNodeAndProblem) {
  {
    TraceWriter w;
    w.comp(1, "a", 1);
    w.comp(17, "allreduce_grad", 1, {1, 99});
    expect_has(parse_error(w), {"traces/t.3.et: node 17 (allreduce_grad): data dependency on node 99, which is not in the trace"});
  }
  {
    TraceWriter w;
    w.comp(1, "a", 1).add_ctrl_deps(42);
    expect_has(parse_error(w), {"traces/t.3.et", "node 1 (a)", "control dependency on node 42", "not in the trace"});
  }
  {
    TraceWriter w;
    w.comp(4, "me", 1, {4});
    expect_has(parse_error(w), {"traces/t.3.et", "node 4 (me)", "data dependency on itself"});
  }
  {
    TraceWriter w;
    w.comp(4, "me", 1).add_ctrl_deps(4);
    expect_has(parse_error(w), {"node 4 (me)", "control dependency on itself"});
  }
  {
    TraceWriter w;
    w.comp(5, "a", 1);
    w.comp(5, "b", 1);
    expect_has(parse_error(w), {"traces/t.3.et", "node 5 (b)", "node id 5 is used twice", "node message 1", "a"});
  }
}

TEST(ChakraReader, CyclesAreNamed) {
  {
    TraceWriter w;
    w.comp(1, "root", 1);
    w.comp(3, "x", 1, {1, 5});
    w.comp(5, "y", 1, {3});
    expect_has(parse_error(w), {"traces/t.3.et", "node 3 (x)", "dependency cycle: 3 -> 5 -> 3"});
  }
  {
    // Through a control dependency, over several nodes.
    TraceWriter w;
    w.comp(1, "a", 1, {2});
    w.comp(2, "b", 1, {3});
    w.comp(3, "c", 1).add_ctrl_deps(4);
    w.comp(4, "d", 1, {1});
    expect_has(parse_error(w), {"node 1 (a)", "dependency cycle: 1 -> 2 -> 3 -> 4 -> 1"});
  }
  {
    // A long cycle is shortened.
    TraceWriter w;
    for (uint64_t i = 0; i < 100; ++i) w.comp(i, "n", 1, {(i + 1) % 100});
    const std::string e = parse_error(w);
    expect_has(e, {"dependency cycle: 0 -> 1 -> ", "-> ... (100 nodes) -> 0"});
    EXPECT_LT(e.size(), 300u);
  }
  {
    // A deep chain is no cycle, and no recursion either.
    TraceWriter w;
    for (uint64_t i = 0; i < 200000; ++i) w.comp(i, "", 1, i ? std::vector<uint64_t>{i - 1} : std::vector<uint64_t>{});
    EXPECT_EQ(parse_trace(w.bytes(), "t.et").nodes.size(), 200000u);
  }
}

TEST(ChakraReader, NodeTypeAndRequiredAttributeErrors) {
  {
    TraceWriter w;
    w.node(8, "bad", wire::INVALID_NODE);
    expect_has(parse_error(w), {"traces/t.3.et", "node 8 (bad)", "INVALID_NODE"});
  }
  {
    TraceWriter w;
    w.node(8, "storage", static_cast<wire::NodeType>(8));
    expect_has(parse_error(w), {"node 8 (storage)", "unknown node type 8"});
  }
  {
    TraceWriter w;
    w.node(8, "neg", static_cast<wire::NodeType>(-3));
    expect_has(parse_error(w), {"node 8 (neg)", "unknown node type -3"});
  }
  {
    TraceWriter w;
    test::chakra::add_attr(w.node(2, "ar", wire::COMM_COLL_NODE), test::chakra::attr_int64("comm_size", 8));
    expect_has(parse_error(w), {"traces/t.3.et", "node 2 (ar)", "COMM_COLL_NODE without attribute comm_type"});
  }
  {
    TraceWriter w;
    test::chakra::add_attr(w.node(2, "ar", wire::COMM_COLL_NODE), test::chakra::attr_int64("comm_type", 0));
    expect_has(parse_error(w), {"node 2 (ar)", "COMM_COLL_NODE without attribute comm_size"});
  }
  {
    TraceWriter w;
    test::chakra::add_attr(w.node(3, "s", wire::COMM_SEND_NODE), test::chakra::attr_int64("comm_size", 8));
    expect_has(parse_error(w), {"node 3 (s)", "COMM_SEND_NODE without attribute comm_dst"});
  }
  {
    TraceWriter w;
    test::chakra::add_attr(w.node(3, "s", wire::COMM_SEND_NODE), test::chakra::attr_int32("comm_dst", 1));
    expect_has(parse_error(w), {"node 3 (s)", "COMM_SEND_NODE without attribute comm_size"});
  }
  {
    TraceWriter w;
    test::chakra::add_attr(w.node(3, "r", wire::COMM_RECV_NODE), test::chakra::attr_int64("comm_size", 8));
    expect_has(parse_error(w), {"node 3 (r)", "COMM_RECV_NODE without attribute comm_src"});
  }
  {
    TraceWriter w;
    test::chakra::add_attr(w.send(3, "s", 1, 8), test::chakra::attr_int32("comm_src", 1));
    expect_has(parse_error(w), {"node 3 (s)", "COMM_SEND_NODE from rank 1 to itself"});
  }
}

TEST(ChakraReader, AttributeValueErrors) {
  struct Case {
    const char* attr;
    void (*set)(wire::AttributeProto&);
    const char* problem;
  };
  const std::vector<Case> cases = {
      {"comm_type", [](wire::AttributeProto& a) { a.set_int64_val(10); }, "attribute comm_type: unknown collective type 10"},
      {"comm_type", [](wire::AttributeProto& a) { a.set_sint32_val(-1); }, "attribute comm_type: unknown collective type -1"},
      {"comm_type", [](wire::AttributeProto& a) { a.set_string_val("ALL_REDUCE"); }, "attribute comm_type: expected an integer"},
      {"comm_size", [](wire::AttributeProto& a) { a.set_int64_val(-8); }, "attribute comm_size: must be >= 0, got -8"},
      {"comm_size", [](wire::AttributeProto& a) { a.set_uint64_val(1ULL << 51); }, "attribute comm_size: must be at most 1125899906842624"},
      {"comm_size", [](wire::AttributeProto& a) { a.set_double_val(8.0); }, "attribute comm_size: expected an integer (int32_val, int64_val, uint64_val, ...), got double_val"},
      {"comm_size", [](wire::AttributeProto&) {}, "attribute comm_size: has no value"},
      {"comm_src", [](wire::AttributeProto& a) { a.set_int32_val(-1); }, "attribute comm_src: must be >= 0, got -1"},
      {"comm_dst", [](wire::AttributeProto& a) { a.set_int64_val(1LL << 40); }, "attribute comm_dst: must be at most 16777215"},
      {"comm_tag", [](wire::AttributeProto& a) { a.set_uint64_val(~0ULL); }, "attribute comm_tag: does not fit int64"},
      {"num_ops", [](wire::AttributeProto& a) { a.set_int64_val(-1); }, "attribute num_ops: must be >= 0, got -1"},
      {"num_ops", [](wire::AttributeProto& a) { a.set_double_val(-0.5); }, "attribute num_ops: must be a finite number >= 0"},
      {"num_ops", [](wire::AttributeProto& a) { a.set_double_val(std::nan("")); }, "attribute num_ops: must be a finite number >= 0"},
      {"num_ops", [](wire::AttributeProto& a) { a.set_float_val(std::numeric_limits<float>::infinity()); }, "attribute num_ops: must be a finite"},
      {"num_ops", [](wire::AttributeProto& a) { a.set_bool_val(true); }, "attribute num_ops: expected a number"},
      {"tensor_size", [](wire::AttributeProto& a) { a.set_sfixed64_val(-4); }, "attribute tensor_size: must be >= 0, got -4"},
      {"is_cpu_op", [](wire::AttributeProto& a) { a.set_int32_val(2); }, "attribute is_cpu_op: must be a bool (or the integer 0 or 1), got 2"},
      {"is_cpu_op", [](wire::AttributeProto& a) { a.set_string_val("false"); }, "attribute is_cpu_op: expected bool_val"},
      {"involved_dim", [](wire::AttributeProto& a) { a.mutable_int32_list()->add_values(1); a.mutable_int32_list()->add_values(2); }, "attribute involved_dim: entry 1 must be 0 or 1, got 2"},
      {"involved_dim", [](wire::AttributeProto& a) { a.set_bool_val(true); }, "attribute involved_dim: expected bool_list"},
      {"pg_name", [](wire::AttributeProto& a) { a.set_int32_val(3); }, "attribute pg_name: expected string_val, got int32_val"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.problem);
    TraceWriter w;
    w.comp(1, "a", 1);
    test::chakra::add_attr(w.node(9, "grad", wire::COMP_NODE, {1}), attr(c.attr, c.set));
    expect_has(parse_error(w), {"traces/t.3.et: node 9 (grad): ", c.problem});
  }
  {
    TraceWriter w;
    test::chakra::add_attr(w.coll(9, "grad", wire::ALL_REDUCE, 64), test::chakra::attr_int64("comm_size", 64));
    expect_has(parse_error(w), {"node 9 (grad): attribute comm_size: given twice"});
  }
  {
    TraceWriter w;
    w.comp(6, "slow", 1'000'000'001);
    expect_has(parse_error(w), {"traces/t.3.et: node 6 (slow): duration_micros 1000000001 is more than 1e9 (1000 s)"});
  }
}

TEST(ChakraReader, FileLevelErrors) {
  expect_has(error_of([] { parse_trace("", "x.et"); }), {"x.et: empty file"});
  // A length prefix cut off, and one past the end.
  expect_has(error_of([] { parse_trace("\x85", "x.et"); }),
             {"x.et: byte 0: the global metadata: length prefix cut off by the end of the file"});
  const std::string md = TraceWriter().bytes();
  expect_has(error_of([&] { parse_trace(md + "\x20" + "abc", "x.et"); }),
             {"x.et: byte 8: node message 1: length prefix says 32 bytes, but only 3 remain (truncated file?)"});
  expect_has(error_of([&] { parse_trace(md + test::chakra::varint(1ULL << 40), "x.et"); }),
             {"x.et: byte 8: node message 1: length prefix says 1099511627776 bytes, more than the 64 MiB"});
  expect_has(error_of([&] { parse_trace(md + std::string(11, '\xff'), "x.et"); }),
             {"x.et: byte 8: node message 1: malformed length prefix"});
  // A message that is no protobuf: field 0 / a group never closed.
  expect_has(error_of([&] { parse_trace(md + std::string("\x02\x00\x00", 3), "x.et"); }),
             {"x.et: byte 8: node message 1 (2 bytes) is not valid protobuf data"});
  expect_has(error_of([&] { parse_trace(std::string("\x02\x0b\x00", 3), "x.et"); }),
             {"x.et: byte 0: the global metadata (2 bytes) is not valid protobuf data"});
  // A known field with another wire type: node field 3 (type) as a string.
  expect_has(error_of([&] { parse_trace(md + "\x03\x1a\x01x", "x.et"); }),
             {"x.et: byte 8: node message 1: field 3 (type) has the wrong wire type, length-delimited"});
  // A file that starts with a node (no global metadata, as before Chakra 0.0.4).
  TraceWriter w;
  w.comp(3, "a", 1);
  const std::string no_metadata = test::chakra::delimited(w.nodes[0]);
  expect_has(error_of([&] { parse_trace(no_metadata, "old.et"); }),
             {"old.et: byte 0: the file does not start with Chakra global metadata: its first message reads as a node"});
  // Metadata with its version as a number.
  expect_has(error_of([&] { parse_trace(std::string("\x02\x08\x05", 3), "x.et"); }),
             {"x.et: byte 0: the global metadata: a field has the wrong wire type"});
  // The node message number and offset point at the bad message.
  TraceWriter two;
  two.comp(1, "a", 1);
  two.comp(2, "b", 1);
  std::string bytes = two.bytes();
  bytes.resize(bytes.size() - 1);
  const std::size_t second = md.size() + test::chakra::delimited(two.nodes[0]).size();
  expect_has(error_of([&] { parse_trace(bytes, "x.et"); }),
             {"x.et: byte " + std::to_string(second) + ": node message 2: length prefix says"});
  // A name is one line of UTF-8 text (reports print it in tables, CSV and
  // JSON): a control byte or a byte that is not UTF-8 is refused, shown
  // escaped.
  TraceWriter nl;
  nl.comp(1, "two\nlines", 1, {1});
  expect_has(error_of([&] { parse_trace(nl.bytes(), "x.et"); }),
             {"x.et: node 1: its name 'two\\x0Alines' holds a control character (U+000A) at byte 3"});
  TraceWriter latin1;
  latin1.comp(1, "caf\xe9", 1);
  expect_has(error_of([&] { parse_trace(latin1.bytes(), "x.et"); }),
             {"x.et: node 1: its name 'caf\\xE9' is not UTF-8 text (byte 0xE9 at byte 3)"});
}

class ChakraFiles : public test::ScratchDirTest {};

TEST_F(ChakraFiles, MissingUnreadableAndDirectory) {
  const std::string missing = (dir_ / "nope.0.et").string();
  expect_has(error_of([&] { chakra::read_trace_file(missing); }), {missing, "cannot open"});
  expect_has(error_of([&] { chakra::read_trace_file(dir_.string()); }), {dir_.string(), "is a directory"});
  TraceWriter w;
  w.comp(1, "a", 1, {2});
  const std::string path = w.write(dir_ / "t.0.et");
  expect_has(error_of([&] { chakra::read_trace_file(path); }), {path + ": node 1 (a): data dependency on node 2"});
  w.nodes[0].clear_data_deps();
  w.write(dir_ / "t.0.et");
  EXPECT_EQ(chakra::read_trace_file(path).nodes.size(), 1u);
}

TEST_F(ChakraFiles, RankCountErrors) {
  std::vector<TraceWriter> ranks(4);
  for (uint64_t r = 0; r < 4; ++r) ranks[r].coll(r, "ar", wire::ALL_REDUCE, 1024);
  const std::string prefix = test::chakra::write_ranks(dir_, "t", ranks);
  EXPECT_EQ(chakra::read_traces(prefix, 4).size(), 4u);
  EXPECT_EQ(chakra::read_traces(prefix, -1).size(), 4u);
  expect_has(error_of([&] { chakra::read_traces(prefix, 8); }),
             {prefix + ".4.et: no such file; the topology has 8 NPUs, so the trace needs " + prefix + ".0.et .. " +
              prefix + ".7.et"});
  expect_has(error_of([&] { chakra::read_traces(prefix, 2); }),
             {prefix + ".2.et: trace has more ranks than the topology's 2 NPUs"});
  expect_has(error_of([&] { chakra::read_traces((dir_ / "none").string(), -1); }),
             {(dir_ / "none").string() + ".0.et: no such file"});
  // -1 stops at the first gap.
  std::filesystem::remove(prefix + ".2.et");
  EXPECT_EQ(chakra::read_traces(prefix, -1).size(), 2u);
  expect_has(error_of([&] { chakra::read_traces(prefix, 4); }), {prefix + ".2.et: no such file", "4 NPUs"});
  // A bad file among the ranks is named.
  test::chakra::write_bytes(prefix + ".2.et", "");
  expect_has(error_of([&] { chakra::read_traces(prefix, 4); }), {prefix + ".2.et: empty file"});
}

TEST_F(ChakraFiles, SendsAndReceivesAcrossRanks) {
  std::vector<TraceWriter> ranks(3);
  ranks[0].send(1, "to1", 1, 4096);
  ranks[0].recv(2, "from2", 2, 64, {1}, 5);
  ranks[1].recv(1, "from0", 0, 4096);
  ranks[2].send(7, "to0", 0, 64, {}, 5);
  const std::string prefix = test::chakra::write_ranks(dir_, "p2p", ranks);
  const auto traces = chakra::read_traces(prefix, 3);
  // The own side is filled in with the file's rank.
  EXPECT_EQ(traces[0].nodes[0].comm_src, 0);
  EXPECT_EQ(traces[0].nodes[0].comm_dst, 1);
  EXPECT_EQ(traces[0].nodes[1].comm_dst, 0);
  EXPECT_EQ(traces[0].nodes[1].comm_src, 2);
  EXPECT_EQ(traces[2].nodes[0].comm_src, 2);

  // A peer out of range.
  {
    std::vector<TraceWriter> bad(2);
    bad[0].send(1, "far", 5, 8);
    const std::string p = test::chakra::write_ranks(dir_, "far", bad);
    expect_has(error_of([&] { chakra::read_traces(p, 2); }),
               {p + ".0.et: node 1 (far): comm_dst is rank 5, but the trace has 2 ranks (0..1)"});
  }
  // A given own side that is not the file's rank.
  {
    std::vector<TraceWriter> bad(3);
    test::chakra::add_attr(bad[1].send(4, "wrong", 0, 8), test::chakra::attr_int32("comm_src", 2));
    const std::string p = test::chakra::write_ranks(dir_, "own", bad);
    expect_has(error_of([&] { chakra::read_traces(p, 3); }),
               {p + ".1.et: node 4 (wrong): comm_src is 2, but this is rank 1's trace"});
  }
  // To itself, with the own side left out.
  {
    std::vector<TraceWriter> bad(2);
    bad[1].recv(4, "self", 1, 8);
    const std::string p = test::chakra::write_ranks(dir_, "self", bad);
    expect_has(error_of([&] { chakra::read_traces(p, 2); }),
               {p + ".1.et: node 4 (self): COMM_RECV_NODE from rank 1 to itself"});
  }
  // Unmatched: a send without its receive, a tag that differs.
  {
    std::vector<TraceWriter> bad(2);
    bad[0].send(1, "lonely", 1, 8);
    bad[0].send(2, "tagged", 1, 8, {}, 3);
    bad[1].recv(1, "r", 0, 8, {}, 3);
    const std::string p = test::chakra::write_ranks(dir_, "unmatched", bad);
    expect_has(error_of([&] { chakra::read_traces(p, 2); }),
               {p + ".0.et: node 1 (lonely): 1 send(s) from rank 0 to rank 1 with tag 0 but 0 matching receive(s)"});
  }
}

// Ranks whose files are byte for byte the same are parsed once and copied:
// each copy is its own rank's trace (its file, its own side filled in), and
// a bad file among equal ones is still named, as when each is parsed.
TEST_F(ChakraFiles, EqualRankFilesAreEachTheirRanksTrace) {
  std::vector<TraceWriter> ranks(4);
  for (int r = 0; r < 4; ++r) {
    ranks[static_cast<std::size_t>(r)].comp(1, "fwd", 10);
    ranks[static_cast<std::size_t>(r)].coll(2, "ar", wire::ALL_REDUCE, 1 << 20, {1});
  }
  // Ranks 1 and 3 send to each other: their files differ from 0's and 2's.
  ranks[1].send(3, "to3", 3, 64, {2});
  ranks[1].recv(4, "from3", 3, 64, {3});
  ranks[3].recv(3, "from1", 1, 64, {2});
  ranks[3].send(4, "to1", 1, 64, {3});
  const std::string prefix = test::chakra::write_ranks(dir_, "same", ranks);
  const auto traces = chakra::read_traces(prefix, 4);
  ASSERT_EQ(traces.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    const chakra::Trace& t = traces[static_cast<std::size_t>(r)];
    EXPECT_EQ(t.file, prefix + "." + std::to_string(r) + ".et");
    const chakra::Trace one = chakra::read_trace_file(t.file);
    ASSERT_EQ(t.nodes.size(), one.nodes.size());
    for (std::size_t i = 0; i < one.nodes.size(); ++i) {
      EXPECT_EQ(t.nodes[i].name, one.nodes[i].name);
      EXPECT_EQ(t.nodes[i].duration_micros, one.nodes[i].duration_micros);
      EXPECT_EQ(t.nodes[i].comm_size, one.nodes[i].comm_size);
    }
  }
  EXPECT_EQ(traces[1].nodes[2].comm_src, 1);
  EXPECT_EQ(traces[3].nodes[2].comm_dst, 3);
  // The same send (own side given as rank 0) in every rank's file: rank 0's
  // passes, rank 1's copy is refused under its own name.
  std::vector<TraceWriter> bad(2);
  for (TraceWriter& w : bad) test::chakra::add_attr(w.send(1, "s", 1, 8), test::chakra::attr_int32("comm_src", 0));
  const std::string p = test::chakra::write_ranks(dir_, "copied", bad);
  expect_has(error_of([&] { chakra::read_traces(p, 2); }),
             {p + ".1.et: node 1 (s): comm_src is 0, but this is rank 1's trace"});
}

// --- truncated and corrupted files -------------------------------------------

// A trace with a bit of everything, for cutting and corrupting.
TraceWriter mixed_trace() {
  TraceWriter w;
  w.comp(1, "fwd", 100);
  w.coll(2, "ar", wire::ALL_REDUCE, 1 << 20, {1}, {true, true});
  w.send(3, "s", 1, 4096, {2}, 7);
  w.recv(4, "r", 1, 4096, {3}, 8);
  wire::Node& c = w.comp(5, "bwd", 200, {4});
  c.add_ctrl_deps(1);
  test::chakra::add_attr(c, attr("num_ops", [](auto& a) { a.set_double_val(3e9); }));
  test::chakra::add_attr(c, attr("tensor_size", [](auto& a) { a.set_fixed64_val(1 << 16); }));
  test::chakra::add_attr(c, attr("pg_name", [](auto& a) { a.set_string_val("0"); }));
  return w;
}

// Every cut either parses to a prefix of the whole trace or is refused.
void expect_cuts_are_clean(const std::string& bytes) {
  const Trace whole = parse_trace(bytes, "w.et");
  int parsed = 0;
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    try {
      const Trace t = parse_trace(std::string_view(bytes).substr(0, cut), "cut.et");
      ++parsed;
      ASSERT_LE(t.nodes.size(), whole.nodes.size());
      for (std::size_t i = 0; i < t.nodes.size(); ++i) EXPECT_EQ(t.nodes[i].id, whole.nodes[i].id) << cut;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("cut.et"), std::string::npos);
    }
  }
  EXPECT_GT(parsed, 0);
}

TEST(ChakraReader, EveryCutOfTheSampleIsParsedOrRefused) {
  for (int r = 0; r < 8; ++r) expect_cuts_are_clean(read_bytes(kSamplePrefix + "." + std::to_string(r) + ".et"));
}

TEST(ChakraReader, EveryCutOfAMixedTraceIsParsedOrRefused) { expect_cuts_are_clean(mixed_trace().bytes()); }

TEST(ChakraReader, CorruptBytesAreParsedOrRefused) {
  const std::string bytes = mixed_trace().bytes();
  int refused = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    for (const int v : {0x00, 0x01, 0x7f, 0x80, 0xff, (bytes[i] ^ 0x08) & 0xff}) {
      std::string b = bytes;
      b[i] = static_cast<char>(v);
      try {
        parse_trace(b, "c.et");
      } catch (const InputError&) {
        ++refused;
      }
    }
  }
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace acesim
