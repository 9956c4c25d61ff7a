// SimAI / AICB training workloads (simai_workload.h).
#include "workload/formats/simai_workload.h"

#include <cerrno>
#include <cstdlib>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "config/input_error.h"
#include "config/limits.h"
#include "config/platform.h"
#include "registry/registry.h"
#include "workload/formats/format_registry.h"
#include "workload/formats/text_columns.h"

namespace acesim {
namespace {

constexpr std::string_view kKeyword = "HYBRID_TRANSFORMER_FWD_IN_BCKWD";
// Compute entries, and their sum over the file, above 10,000 s are typos;
// the cap keeps 100 iterations' picoseconds far inside int64.
constexpr long long kMaxComputeNs = 10'000'000'000'000LL;
constexpr long long kMaxRows = 1'000'000;
constexpr long long kMaxPlanSize = 1LL << 24;

const std::vector<std::string> kHeaderKeys = {"model_parallel_NPU_group:", "ep:", "pp:", "vpp:", "ga:", "all_gpus:",
                                              "checkpoints:", "checkpoint_initiates:", "pp_comm:"};
const std::vector<std::string> kCommNames = {
    "NONE",         "ALLREDUCE",         "ALLGATHER",         "REDUCESCATTER",         "ALLTOALL",
    "ALLREDUCE_EP", "ALLGATHER_EP",      "REDUCESCATTER_EP",  "ALLTOALL_EP",           "ALLREDUCE_DP_EP",
    "ALLGATHER_DP_EP", "REDUCESCATTER_DP_EP", "ALLTOALL_DP_EP"};

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(int line, int column, const std::string& what) const {
    std::string loc = file_ + ":" + std::to_string(line);
    if (column > 0) loc += ":" + std::to_string(column);
    throw InputError(loc + ": " + what);
  }

  long long integer(const TextToken& t, int line, const std::string& what, long long min, long long max) const {
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(t.text.c_str(), &end, 10);
    if (t.text.empty() || *end != '\0' || errno == ERANGE) {
      fail(line, t.column, what + ": expected an integer, got '" + t.text + "'");
    }
    if (v < min || v > max) {
      fail(line, t.column, what + ": must be in " + std::to_string(min) + ".." + std::to_string(max) + ", got " + t.text);
    }
    return v;
  }

  // AICB divides pp_comm by tp with sequence parallelism and writes the
  // quotient as Python prints a float ("25165824.0"); SimAI reads its
  // integer part (std::stoi), and so does acesim.
  double pp_comm(const TextToken& v, int line) const {
    char* end = nullptr;
    errno = 0;
    const double d = std::strtod(v.text.c_str(), &end);
    if (v.text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(d) || v.text.find_first_of("xXpPnN") != std::string::npos) {
      fail(line, v.column, "pp_comm: expected a number of bytes, got '" + v.text + "'");
    }
    if (d < 0.0 || d > static_cast<double>(limits::kMaxCollectiveBytes)) {
      fail(line, v.column, "pp_comm: must be in 0.." + std::to_string(limits::kMaxCollectiveBytes) + ", got " + v.text);
    }
    return std::floor(d);
  }

  void read_header(const std::vector<TextToken>& head, int line, SimaiWorkload& w) const {
    if (head[0].text != kKeyword) {
      fail(line, head[0].column,
           "a SimAI training workload starts with " + std::string(kKeyword) + ", not '" + head[0].text + "'");
    }
    bool tp_given = false;
    std::vector<std::string> seen;
    for (std::size_t i = 1; i < head.size(); i += 2) {
      std::string key = head[i].text;
      if (key == "pp_comm") key = "pp_comm:";  // SimAI takes both spellings
      bool known = false;
      for (const std::string& k : kHeaderKeys) known = known || k == key;
      if (!known) fail(line, head[i].column, "unknown header key '" + head[i].text + "'" + suggestion(key, kHeaderKeys));
      if (std::find(seen.begin(), seen.end(), key) != seen.end()) fail(line, head[i].column, head[i].text + " is given twice");
      seen.push_back(key);
      if (i + 1 >= head.size()) fail(line, head[i].column, head[i].text + " needs a value");
      const TextToken& v = head[i + 1];
      if (key == "model_parallel_NPU_group:") {
        w.tp = static_cast<int>(integer(v, line, "model_parallel_NPU_group", 1, kMaxPlanSize));
        tp_given = true;
      } else if (key == "ep:") {
        w.ep = static_cast<int>(integer(v, line, "ep", 1, kMaxPlanSize));
      } else if (key == "pp:") {
        w.pp = static_cast<int>(integer(v, line, "pp", 1, kMaxPlanSize));
      } else if (key == "vpp:") {
        w.vpp = integer(v, line, "vpp", 0, kMaxRows);
      } else if (key == "ga:") {
        w.ga = static_cast<int>(integer(v, line, "ga", 1, kMaxRows));
      } else if (key == "all_gpus:") {
        w.all_gpus = integer(v, line, "all_gpus", 1, limits::kMaxNpus);
      } else if (key == "pp_comm:") {
        w.pp_comm_bytes = pp_comm(v, line);
      } else if (integer(v, line, key.substr(0, key.size() - 1), 0, kMaxRows) != 0) {
        // SimAI never acts on these lists (its recomputation path is not
        // reached) and AICB writes 0: recomputation is in the compute times.
        fail(line, v.column, key + " " + v.text + ": lists of recomputed layers are not run (SimAI ignores them and AICB writes 0; "
                                                   "--format astra-sim-1.0 runs ASTRA-sim 1.0's recomputation)");
      }
    }
    if (!tp_given) fail(line, head[0].column, std::string(kKeyword) + " needs 'model_parallel_NPU_group: N'");
    if (w.pp > 1 && w.pp_comm_bytes <= 0.0) {
      fail(line, head[0].column, "pp " + std::to_string(w.pp) + " needs 'pp_comm: BYTES', the size of the messages between stages");
    }
  }

  SimaiComm comm(const TextToken& type, const TextToken& size, int line, SimaiPass pass) const {
    static const char* const kColumn[] = {"forward", "input-gradient", "weight-gradient"};
    const std::string what = std::string(kColumn[static_cast<int>(pass)]) + " communication";
    SimaiComm c;
    c.bytes = static_cast<double>(integer(size, line, what + " size", 0, static_cast<long long>(limits::kMaxCollectiveBytes)));
    std::string name = type.text;
    if (name == "NONE") {
      c.bytes = 0.0;
      return c;
    }
    c.group = pass == SimaiPass::kWeightGrad ? SimaiGroup::kDp : SimaiGroup::kTp;
    if (name.ends_with("_DP_EP")) {
      c.group = SimaiGroup::kDpEp;
      name.resize(name.size() - 6);
    } else if (name.ends_with("_EP")) {
      c.group = SimaiGroup::kEp;
      name.resize(name.size() - 3);
    }
    if (name == "ALLREDUCE") {
      c.op = CollectiveOp::kAllReduce;
    } else if (name == "ALLGATHER") {
      c.op = CollectiveOp::kAllGather;
    } else if (name == "REDUCESCATTER") {
      c.op = CollectiveOp::kReduceScatter;
    } else if (name == "ALLTOALL") {
      c.op = CollectiveOp::kAllToAll;
    } else if (name == "BROADCAST" || name.starts_with("ALLREDUCEALLTOALL")) {
      fail(line, type.column, what + ": " + type.text + " is not a collective SimAI runs (it gives it no group); write NONE");
    } else {
      fail(line, type.column, what + ": unknown collective '" + type.text + "'" + suggestion(type.text, kCommNames));
    }
    return c;
  }

  SimaiRow read_row(const std::vector<TextToken>& t, int line) const {
    SimaiRow r;
    if (const std::string why = name_problem(t[0].text); !why.empty()) fail(line, t[0].column, "layer name " + quote(t[0].text) + " " + why);
    r.name = t[0].text;
    r.line = line;
    integer(t[1], line, "dependency", -1, kMaxRows);
    static const char* const kTime[] = {"forward compute time", "input-gradient compute time", "weight-gradient compute time"};
    for (int p = 0; p < 3; ++p) {
      const auto pass = static_cast<std::size_t>(p);
      r.compute_ps[pass] = integer(t[2 + 3 * pass], line, kTime[p], 0, kMaxComputeNs) * kPsPerNs;
      r.comm[pass] = comm(t[3 + 3 * pass], t[4 + 3 * pass], line, static_cast<SimaiPass>(p));
    }
    r.update_ps = integer(t[11], line, "update delay", 0, kMaxComputeNs) * kPsPerNs;
    return r;
  }

  // The rows as AICB writes them: unique rows, then ga blocks that name the
  // same collectives in the same order (one per micro-batch), then the
  // rest. The first start (within kMaxPreamble rows) at which ga blocks
  // fit, with the longest such block: with each row's shape as a symbol,
  // a block length b fits at p when the symbols from p repeat with period
  // b for (ga - 1) b symbols (a Z-array, linear per start).
  static constexpr std::size_t kMaxPreamble = 256;
  void find_micro_batches(SimaiWorkload& w, int count_line) const {
    const std::size_t n = w.rows.size();
    const auto ga = static_cast<std::size_t>(w.ga);
    if (ga == 1) {
      w.preamble = 0;
      w.block = n;
      return;
    }
    std::map<std::string, int> shapes;
    std::vector<int> sym(n);
    for (std::size_t i = 0; i < n; ++i) {
      std::string key = w.rows[i].name;
      for (const SimaiComm& c : w.rows[i].comm) {
        key += fmt::format("|{}/{}/{}", c.op ? static_cast<int>(*c.op) : -1, static_cast<int>(c.group), c.bytes);
      }
      sym[i] = shapes.emplace(key, static_cast<int>(shapes.size())).first->second;
    }
    std::vector<std::size_t> z;
    for (std::size_t p = 0; p < std::min(n, kMaxPreamble) && p + ga <= n; ++p) {
      const std::size_t m = n - p;
      z.assign(m, 0);
      for (std::size_t k = 1, l = 0, r = 0; k < m; ++k) {
        if (k < r) z[k] = std::min(r - k, z[k - l]);
        while (k + z[k] < m && sym[p + z[k]] == sym[p + k + z[k]]) ++z[k];
        if (k + z[k] > r) {
          l = k;
          r = k + z[k];
        }
      }
      for (std::size_t b = m / ga; b >= 1; --b) {
        if (z[b] >= (ga - 1) * b) {
          // The rows after the ga blocks must not go on as one more: a
          // file with more micro-batches than its header's ga (or ga
          // blocks of a different length) would run some of them as rows
          // after the micro-batches, once.
          if (z[b] > (ga - 1) * b) {
            fail(count_line, 0, fmt::format("ga {} disagrees with the rows: after {} blocks of {} rows (from row {}) the rows "
                                            "go on as another block for {} more; AICB writes one block per micro-batch",
                                            w.ga, w.ga, b, p + 1, z[b] - (ga - 1) * b));
          }
          w.preamble = p;
          w.block = b;
          return;
        }
      }
    }
    fail(count_line, 0, "the rows hold no " + std::to_string(w.ga) +
                            " consecutive blocks with the same collectives within their first " + std::to_string(kMaxPreamble) +
                            " rows (ga: one block per micro-batch, as AICB writes them)");
  }

  SimaiWorkload read(std::string_view text) {
    const std::vector<std::string> lines = split_lines(text);
    std::size_t ln = 0;
    auto next_nonempty = [&](std::vector<TextToken>& toks) -> int {
      while (ln < lines.size()) {
        toks = split_columns(lines[ln++]);
        if (!toks.empty()) return static_cast<int>(ln);
      }
      return 0;
    };
    SimaiWorkload w;
    w.file = file_;
    std::vector<TextToken> head;
    const int head_line = next_nonempty(head);
    if (head_line == 0) fail(1, 0, "empty workload file (expected " + std::string(kKeyword) + ")");
    read_header(head, head_line, w);
    std::vector<TextToken> count_tokens;
    const int count_line = next_nonempty(count_tokens);
    if (count_line == 0) fail(head_line + 1, 0, "missing the number of rows");
    if (count_tokens.size() != 1) fail(count_line, count_tokens.size() > 1 ? count_tokens[1].column : 0, "expected only the number of rows");
    const long long count = integer(count_tokens[0], count_line, "number of rows", 1, kMaxRows);
    TimePs total_ps = 0;
    for (long long i = 0; i < count; ++i) {
      std::vector<TextToken> t;
      const int line = next_nonempty(t);
      if (line == 0) {
        fail(static_cast<int>(lines.size()), 0, "the file declares " + std::to_string(count) + " rows but has " + std::to_string(i));
      }
      if (t.size() != 12) {
        fail(line, t.size() > 12 ? t[12].column : 0,
             "expected 12 columns (name, -1, fwd time, fwd comm, fwd size, ig time, ig comm, ig size, wg time, wg comm, "
             "wg size, update delay), got " + std::to_string(t.size()));
      }
      w.rows.push_back(read_row(t, line));
      for (TimePs c : w.rows.back().compute_ps) total_ps += c;
      if (total_ps > kMaxComputeNs * kPsPerNs) fail(line, 0, "the compute times add up to more than 10000 s");
    }
    std::vector<TextToken> extra;
    const int extra_line = next_nonempty(extra);
    if (extra_line != 0) {
      fail(extra_line, extra[0].column, "the file declares " + std::to_string(count) + " rows but has more lines (starting with '" +
                                            extra[0].text + "')");
    }
    find_micro_batches(w, count_line);
    return w;
  }

 private:
  std::string file_;
};

}  // namespace

std::string_view to_string(SimaiGroup g) {
  switch (g) {
    case SimaiGroup::kTp: return "TP";
    case SimaiGroup::kEp: return "EP";
    case SimaiGroup::kDpEp: return "DP_EP";
    case SimaiGroup::kDp: return "DP";
  }
  return "?";
}

bool is_simai_header_key(std::string_view k) {
  return k == "ep:" || k == "pp:" || k == "vpp:" || k == "ga:" || k == "all_gpus:" || k == "pp_comm" || k == "pp_comm:";
}

bool is_simai_header(std::string_view first_line) {
  const std::vector<TextToken> t = split_columns(std::string(first_line));
  if (t.empty() || t[0].text != kKeyword) return false;
  for (std::size_t i = 1; i < t.size(); ++i) {
    if (is_simai_header_key(t[i].text)) return true;
  }
  return false;
}

bool looks_like_simai(const std::string& path) {
  // Read through the one capped reader, so that a huge file or /dev/zero is
  // refused before a line of it is looked at.
  const std::string text = read_text_file(path);
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::string line = text.substr(at, end - at);
    if (!split_columns(line).empty()) return is_simai_header(line);
    at = end + 1;
  }
  return false;
}

SimaiWorkload parse_simai_workload(std::string_view text, const std::string& file) { return Reader(file).read(text); }

SimaiWorkload read_simai_workload(const std::string& path) { return parse_simai_workload(read_text_file(path), path); }

void register_simai_format(WorkloadFormatRegistry& registry) {
  WorkloadFormatEntry e;
  e.name = "simai";
  e.aliases = {"aicb"};
  e.help = "SimAI/AICB training workload: ASTRA-sim 1.0's fwd-in-bckwd table with tp, ep, pp, ga and all_gpus in the header, "
           "one pipeline stage's rows, compute in ns (chosen by its header)";
  e.option = "--workload FILE";
  registry.add(std::move(e));
}

}  // namespace acesim
