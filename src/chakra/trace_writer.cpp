#include "chakra/trace_writer.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/util/delimited_message_util.h>

#include "chakra/et_def.pb.h"
#include "config/output_file.h"

namespace acesim::chakra {
namespace {

using Attr = wire::AttributeProto;

Attr& add(wire::Node& w, const char* name) {
  Attr& a = *w.add_attr();
  a.set_name(name);
  return a;
}

wire::Node to_wire(const Node& n) {
  wire::Node w;
  w.set_id(n.id);
  w.set_name(n.name);
  w.set_type(static_cast<wire::NodeType>(static_cast<int>(n.type)));
  for (const uint64_t d : n.data_deps) w.add_data_deps(d);
  for (const uint64_t d : n.ctrl_deps) w.add_ctrl_deps(d);
  w.set_duration_micros(n.duration_micros);
  if (n.type != NodeType::kMetadata) add(w, "is_cpu_op").set_bool_val(n.is_cpu_op);
  if (n.num_ops) add(w, "num_ops").set_double_val(*n.num_ops);
  if (n.tensor_size) add(w, "tensor_size").set_uint64_val(*n.tensor_size);
  if (n.comm_type) add(w, "comm_type").set_int64_val(static_cast<int64_t>(*n.comm_type));
  if (n.comm_size) add(w, "comm_size").set_int64_val(static_cast<int64_t>(*n.comm_size));
  if (n.comm_src) add(w, "comm_src").set_int64_val(*n.comm_src);
  if (n.comm_dst) add(w, "comm_dst").set_int64_val(*n.comm_dst);
  if (n.comm_tag) add(w, "comm_tag").set_int64_val(*n.comm_tag);
  if (n.comm_root) add(w, "comm_root").set_int64_val(*n.comm_root);
  if (!n.involved_dim.empty()) {
    Attr& a = add(w, "involved_dim");
    for (const bool b : n.involved_dim) a.mutable_bool_list()->add_values(b);
  }
  if (!n.pg_name.empty()) add(w, "pg_name").set_string_val(n.pg_name);
  return w;
}

// Streams the trace: a rank's graph may hold millions of nodes.
bool write_to(const Trace& t, google::protobuf::io::ZeroCopyOutputStream& out) {
  google::protobuf::io::CodedOutputStream coded(&out);
  wire::GlobalMetadata md;
  md.set_version(t.version.empty() ? "0.0.4" : t.version);
  if (!google::protobuf::util::SerializeDelimitedToCodedStream(md, &coded)) return false;
  for (const Node& n : t.nodes) {
    if (!google::protobuf::util::SerializeDelimitedToCodedStream(to_wire(n), &coded)) return false;
  }
  return !coded.HadError();
}

}  // namespace

std::string trace_bytes(const Trace& t) {
  std::string s;
  {
    google::protobuf::io::StringOutputStream out(&s);
    write_to(t, out);
  }
  return s;
}

void write_trace_file(const Trace& t, const std::string& path) {
  OutputFile f(path, "--chakra-out", true);
  bool ok = true;
  {
    google::protobuf::io::OstreamOutputStream out(&f.stream());
    ok = write_to(t, out);
  }
  f.close();
  if (!ok) throw OutputError(path + ": cannot write the trace", 1);
}

}  // namespace acesim::chakra
