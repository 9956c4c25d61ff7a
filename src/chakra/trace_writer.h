// Writes Chakra execution traces (the reader's model, chakra_trace.h, back
// to the wire format): what `acesim run --model ... --chakra-out PREFIX`
// exports. Attributes are encoded as Chakra's own tools encode them
// (is_cpu_op as bool_val, comm_type and comm_size as int64_val, num_ops as
// double_val, tensor_size as uint64_val, involved_dim as bool_list, pg_name
// as string_val); comm_src, comm_dst, comm_tag and comm_root as int64_val,
// since tags may exceed 32 bits. read_trace_file reads back what this writes.
#pragma once

#include <string>

#include "chakra/chakra_trace.h"

namespace acesim::chakra {

// The global metadata (t.version, "0.0.4" when empty), then every node, each
// length-delimited. Node ids and dependencies are written as given.
std::string trace_bytes(const Trace& t);

// Writes trace_bytes(t) to `path`; throws OutputError naming the path when
// the file cannot be written.
void write_trace_file(const Trace& t, const std::string& path);

}  // namespace acesim::chakra
