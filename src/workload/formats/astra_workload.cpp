#include "workload/formats/astra_workload.h"

#include <cerrno>
#include <cstdlib>
#include <sstream>
#include <utility>
#include <vector>

#include "config/input_error.h"
#include "config/platform.h"
#include "workload/formats/format_registry.h"
#include "workload/formats/simai_workload.h"
#include "workload/formats/text_columns.h"

namespace acesim {
namespace {

using Token = TextToken;

enum class Parallelism { kData, kModel, kHybridDataModel, kHybridModelData };

const std::vector<std::string> kKeywords = {
    "DATA", "MODEL", "HYBRID_DATA_MODEL", "HYBRID_MODEL_DATA", "HYBRID_CUSTOMIZED", "MICRO",
    "DISTRIBUTED_INFERENCE", "HYBRID_DLRM", "HYBRID_DLRM_ENHANCED", "HYBRID_TRANSFORMER",
    "HYBRID_TRANSFORMER_FWD_IN_BCKWD"};
const std::vector<std::string> kCommTypes = {"NONE", "ALLREDUCE", "ALLGATHER", "REDUCESCATTER", "ALLTOALL"};

class Reader {
 public:
  Reader(const std::string& file, const Topology& topo) : file_(file), topo_(topo) {}

  [[noreturn]] void fail(int line, int column, const std::string& what) const {
    std::string loc = file_ + ":" + std::to_string(line);
    if (column > 0) loc += ":" + std::to_string(column);
    throw InputError(loc + ": " + what);
  }

  long long integer(const Token& t, int line, const std::string& what, long long min) const {
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(t.text.c_str(), &end, 10);
    if (t.text.empty() || *end != '\0' || errno == ERANGE) {
      fail(line, t.column, what + ": expected an integer, got '" + t.text + "'");
    }
    if (v < min) fail(line, t.column, what + ": must be >= " + std::to_string(min) + ", got " + t.text);
    return v;
  }

  std::vector<int> all_dims() const {
    std::vector<int> d;
    for (int i = 0; i < topo_.num_dims(); ++i) d.push_back(i);
    return d;
  }

  // The dimensions whose NPUs make up the first `group` NPUs (a product of
  // leading dimension sizes), and the rest.
  void split_group(long long group, int line, int column, std::vector<int>& model, std::vector<int>& data) const {
    long long n = 1;
    int d = 0;
    while (n < group && d < topo_.num_dims()) n *= topo_.dim(d++).npus;
    if (n != group) {
      std::string sizes;
      for (int i = 0; i < topo_.num_dims(); ++i) sizes += (i ? "x" : "") + std::to_string(topo_.dim(i).npus);
      fail(line, column,
           "model_parallel_NPU_group " + std::to_string(group) + " is not a product of leading dimensions of the " +
               sizes + " topology");
    }
    model.clear();
    data.clear();
    for (int i = 0; i < topo_.num_dims(); ++i) (i < d ? model : data).push_back(i);
  }

  void dims_for(Parallelism p, std::vector<int>& act, std::vector<int>& grad) const {
    std::vector<int> first = {0};
    std::vector<int> rest;
    for (int i = 1; i < topo_.num_dims(); ++i) rest.push_back(i);
    switch (p) {
      case Parallelism::kData: act = {}; grad = all_dims(); break;
      case Parallelism::kModel: act = all_dims(); grad = {}; break;
      case Parallelism::kHybridDataModel: act = first; grad = rest; break;
      case Parallelism::kHybridModelData: act = rest; grad = first; break;
    }
  }

  std::optional<Parallelism> parse_parallelism(const std::string& s) const {
    if (s == "DATA") return Parallelism::kData;
    if (s == "MODEL") return Parallelism::kModel;
    if (s == "HYBRID_DATA_MODEL") return Parallelism::kHybridDataModel;
    if (s == "HYBRID_MODEL_DATA") return Parallelism::kHybridModelData;
    return std::nullopt;
  }

  CommSpec comm(const Token& type, const Token& size, int line, const std::vector<int>* dims, bool blocking,
                const std::string& what) const {
    CommSpec c;
    c.blocking = blocking;
    const long long bytes = integer(size, line, what + " size", 0);
    if (type.text == "NONE") return c;
    CollectiveOp op;
    if (type.text == "ALLREDUCE") {
      op = CollectiveOp::kAllReduce;
    } else if (type.text == "ALLGATHER") {
      op = CollectiveOp::kAllGather;
    } else if (type.text == "REDUCESCATTER") {
      op = CollectiveOp::kReduceScatter;
    } else if (type.text == "ALLTOALL") {
      op = CollectiveOp::kAllToAll;
    } else {
      const std::string hint = type.text.ends_with("_EP")
                                   ? " (a SimAI/AICB group suffix: read the file as SimAI's, --format simai)"
                                   : suggestion(type.text, kCommTypes);
      fail(line, type.column, what + ": unknown communication type '" + type.text + "'" + hint);
    }
    if (dims == nullptr || bytes == 0) return c;  // no group to run it on, or nothing to move
    bool spans = false;
    for (int d : *dims) spans = spans || topo_.dim(d).npus > 1;
    if (!spans && !dims->empty()) return c;
    if (dims->empty()) return c;
    c.op = op;
    c.bytes = static_cast<double>(bytes);
    if (op == CollectiveOp::kAllGather) {
      // ASTRA-sim's size is each rank's input (its ring all-gather sends that
      // much per step); acesim's all-gather size is the gathered output.
      for (int d : *dims) c.bytes *= topo_.dim(d).npus;
    }
    c.dims = *dims;
    return c;
  }

  // The header line's keyword arguments.
  struct Header {
    std::string keyword;
    bool transformer = false;
    long long dlrm_last_bottom = -1;
    std::vector<int> model_dims, data_dims;
    std::vector<long long> checkpoints, initiates;
  };

  Header read_header(const std::vector<Token>& head, int head_line) const {
    Header h;
    const std::string& kw = head[0].text;
    h.keyword = kw;
    long long& dlrm_last_bottom = h.dlrm_last_bottom;
    std::vector<int>& model_dims = h.model_dims;
    std::vector<int>& data_dims = h.data_dims;
    std::vector<long long>& checkpoints = h.checkpoints;
    std::vector<long long>& initiates = h.initiates;
    h.transformer = kw == "HYBRID_TRANSFORMER" || kw == "HYBRID_TRANSFORMER_FWD_IN_BCKWD";
    const bool transformer = h.transformer;
    if (kw == "HYBRID_DLRM" || kw == "HYBRID_DLRM_ENHANCED") {
      if (head.size() < 2) fail(head_line, 0, kw + " needs the index of the last bottom-MLP layer after it");
      dlrm_last_bottom = integer(head[1], head_line, kw + " last bottom layer", 0);
    } else if (transformer) {
      std::size_t i = 1;
      if (i + 1 >= head.size() + 1 || head.size() < 3 || head[1].text != "model_parallel_NPU_group:") {
        fail(head_line, head.size() > 1 ? head[1].column : 0, kw + " needs 'model_parallel_NPU_group: N'");
      }
      for (const Token& t : head) {
        if (is_simai_header_key(t.text)) {
          fail(head_line, t.column, "'" + t.text + "' is a SimAI/AICB header key: read the file as SimAI's (--format simai, or no --format)");
        }
      }
      const long long group = integer(head[2], head_line, "model_parallel_NPU_group", 1);
      split_group(group, head_line, head[2].column, model_dims, data_dims);
      i = 3;
      auto read_list = [&](const char* label, std::vector<long long>& out) {
        if (i >= head.size() || head[i].text != label) fail(head_line, i < head.size() ? head[i].column : 0, kw + " needs '" + label + " k l1 .. lk'");
        ++i;
        if (i >= head.size()) fail(head_line, 0, std::string(label) + " count missing");
        const long long k = integer(head[i], head_line, label, 0);
        ++i;
        for (long long j = 0; j < k; ++j) {
          if (i >= head.size()) fail(head_line, 0, std::string(label) + " lists fewer than " + std::to_string(k) + " layers");
          out.push_back(integer(head[i], head_line, label, 0));
          ++i;
        }
      };
      if (kw == "HYBRID_TRANSFORMER_FWD_IN_BCKWD") {
        read_list("checkpoints:", checkpoints);
        read_list("checkpoint_initiates:", initiates);
      }
      if (i < head.size()) fail(head_line, head[i].column, "unexpected '" + head[i].text + "' after the header");
    } else if (head.size() > 1) {
      fail(head_line, head[1].column, "unexpected '" + head[1].text + "' after " + kw);
    }

    return h;
  }

  // Layer `i` of the table, from its line's columns.
  Layer read_layer(const std::vector<Token>& t, int line, long long i, const Header& h) const {
    const std::string& kw = h.keyword;
    const bool customized = kw == "HYBRID_CUSTOMIZED";
    const bool transformer = h.transformer;
    const long long dlrm_last_bottom = h.dlrm_last_bottom;
    const std::vector<int>& model_dims = h.model_dims;
    const std::vector<int>& data_dims = h.data_dims;
    Layer l;
    if (const std::string why = name_problem(t[0].text); !why.empty()) fail(line, t[0].column, "layer name " + quote(t[0].text) + " " + why);
    l.name = t[0].text;
    const long long fwd = integer(t[2], line, "forward compute time", 0);
    const long long ig = integer(t[5], line, "input-gradient compute time", 0);
    const long long wg = integer(t[8], line, "weight-gradient compute time", 0);
    const long long update = integer(t[11], line, "update delay", 0);
    // Cycles of 1 ns (ASTRA-sim 1.0): ns -> ps.
    l.forward.compute.time_ps = fwd * kPsPerNs;
    l.input_grad.compute.time_ps = ig * kPsPerNs;
    l.weight_grad.compute.time_ps = wg * kPsPerNs;
    l.update_ps = update * kPsPerNs;

    std::vector<int> act, grad;
    if (customized) {
      const auto p = parse_parallelism(t[12].text);
      if (!p) {
        const std::vector<std::string> names = {"DATA", "MODEL", "HYBRID_DATA_MODEL", "HYBRID_MODEL_DATA"};
        fail(line, t[12].column, "unknown layer parallelism '" + t[12].text + "'" + suggestion(t[12].text, names));
      }
      dims_for(*p, act, grad);
    } else if (transformer) {
      act = model_dims;
      grad = data_dims;
    } else if (kw == "MODEL" || kw == "DISTRIBUTED_INFERENCE") {
      dims_for(Parallelism::kModel, act, grad);
    } else if (kw == "HYBRID_DATA_MODEL") {
      dims_for(Parallelism::kHybridDataModel, act, grad);
    } else if (kw == "HYBRID_MODEL_DATA") {
      dims_for(Parallelism::kHybridModelData, act, grad);
    } else {
      dims_for(Parallelism::kData, act, grad);  // DATA, MICRO, HYBRID_DLRM
    }
    if (dlrm_last_bottom >= 0 && i == 0) act = grad = all_dims();  // the embedding: every collective over all NPUs
    // A collective over no dimension has no group: in DATA the forward
    // and input-gradient columns are NONE, and where they are not, they
    // run over all dimensions as ASTRA-sim does.
    const std::vector<int> all = all_dims();
    l.forward.comm = comm(t[3], t[4], line, act.empty() ? &all : &act, true, "forward communication");
    l.input_grad.comm = comm(t[6], t[7], line, act.empty() ? &all : &act, true, "input-gradient communication");
    l.weight_grad.comm = comm(t[9], t[10], line, grad.empty() ? &all : &grad, false, "weight-gradient communication");
    if (dlrm_last_bottom >= 0 && i == 0) {
      // DLRM: the embedding all-to-all overlaps the bottom MLP; the top
      // MLP waits for it. Backward, the embedding gradients' all-to-all
      // starts once the top MLP is done and overlaps the bottom MLP.
      l.forward.comm.blocking = false;
      l.forward.comm.wait_before_forward_layer = static_cast<int>(dlrm_last_bottom) + 1;
      l.input_grad.comm.blocking = false;
      l.input_grad.comm.issue_after_backward_layer = static_cast<int>(dlrm_last_bottom) + 1;
    }
    return l;
  }

  // Forward recomputation: when back-propagation reaches an initiating
  // layer, the forward passes from the nearest checkpoint at or below it
  // run again.
  void add_recomputation(Workload& w, const Header& h, long long count, int head_line) const {
    const std::vector<long long>& checkpoints = h.checkpoints;
    const std::vector<long long>& initiates = h.initiates;
    for (long long c : checkpoints) {
      if (c >= count) fail(head_line, 0, "checkpoint layer " + std::to_string(c) + " does not exist");
    }
    for (long long init : initiates) {
      if (init >= count) fail(head_line, 0, "checkpoint_initiates layer " + std::to_string(init) + " does not exist");
      long long from = 0;
      for (long long c : checkpoints) {
        if (c <= init) from = std::max(from, c);
      }
      std::vector<int>& r = w.layers[static_cast<std::size_t>(init)].recompute_forward;
      for (long long j = from; j <= init; ++j) r.push_back(static_cast<int>(j));
    }
  }

  Workload read(std::string_view text) {
    const std::vector<std::string> lines = split_lines(text);
    std::size_t ln = 0;
    auto next_nonempty = [&](std::vector<Token>& toks) -> int {
      while (ln < lines.size()) {
        toks = split_columns(lines[ln++]);
        if (!toks.empty()) return static_cast<int>(ln);
      }
      return 0;
    };
    std::vector<Token> head;
    const int head_line = next_nonempty(head);
    if (head_line == 0) fail(1, 0, "empty workload file (expected a parallelism keyword such as DATA)");
    Workload w;
    w.name = file_;
    w.parallelism = head[0].text;
    const std::string& kw = head[0].text;
    bool known = false;
    for (const std::string& k : kKeywords) known = known || k == kw;
    if (!known) fail(head_line, head[0].column, "unknown parallelism '" + kw + "'" + suggestion(kw, kKeywords));

    const Header header = read_header(head, head_line);
    const long long dlrm_last_bottom = header.dlrm_last_bottom;
    std::vector<Token> count_line;
    const int count_ln = next_nonempty(count_line);
    if (count_ln == 0) fail(head_line + 1, 0, "missing the number of layers");
    if (count_line.size() != 1) fail(count_ln, count_line.size() > 1 ? count_line[1].column : 0, "expected only the number of layers");
    const long long count = integer(count_line[0], count_ln, "number of layers", 1);
    if (count > 100000) fail(count_ln, count_line[0].column, "more than 100000 layers");

    const bool customized = kw == "HYBRID_CUSTOMIZED";
    const std::size_t columns = customized ? 13 : 12;
    for (long long i = 0; i < count; ++i) {
      std::vector<Token> t;
      const int line = next_nonempty(t);
      if (line == 0) {
        fail(static_cast<int>(lines.size()), 0,
             "the file declares " + std::to_string(count) + " layers but has " + std::to_string(i));
      }
      if (t.size() != columns) {
        fail(line, t.size() > columns ? t[columns].column : 0,
             "expected " + std::to_string(columns) + " columns (name, -1, fwd time, fwd comm, fwd size, ig time, ig "
             "comm, ig size, wg time, wg comm, wg size, update delay" + (customized ? ", parallelism" : "") +
             "), got " + std::to_string(t.size()));
      }
      Layer l = read_layer(t, line, i, header);
      w.layers.push_back(std::move(l));
    }
    std::vector<Token> extra;
    const int extra_line = next_nonempty(extra);
    if (extra_line != 0) {
      fail(extra_line, extra[0].column,
           "the file declares " + std::to_string(count) + " layers but has more lines (starting with '" + extra[0].text + "')");
    }
    if (dlrm_last_bottom >= 0 && dlrm_last_bottom + 1 >= count) {
      fail(head_line, head[1].column, "last bottom-MLP layer " + std::to_string(dlrm_last_bottom) +
                                          " leaves no top MLP in " + std::to_string(count) + " layers");
    }
    if (kw == "DISTRIBUTED_INFERENCE") w.forward_only = true;
    add_recomputation(w, header, count, head_line);
    return w;
  }

 private:
  std::string file_;
  const Topology& topo_;
};

}  // namespace

Workload parse_astra_workload(std::string_view text, const std::string& file, const Topology& topo) {
  return Reader(file, topo).read(text);
}

Workload read_astra_workload(const std::string& path, const Topology& topo) {
  return parse_astra_workload(read_text_file(path), path, topo);
}

void register_astra_text_format(WorkloadFormatRegistry& registry) {
  WorkloadFormatEntry e;
  e.name = "astra-sim-1.0";
  e.aliases = {"astra-sim", "astra"};
  e.help = "ASTRA-sim 1.0 text workload: a layer table, compute in cycles of 1 ns, sizes in bytes";
  e.option = "--workload FILE";
  e.read_table = read_astra_workload;
  registry.add(std::move(e));
}

}  // namespace acesim
