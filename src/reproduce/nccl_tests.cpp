#include "reproduce/nccl_tests.h"

#include <algorithm>
#include <cmath>
#include <fstream>

#include <fmt/format.h>

#include "collective/nccl_model.h"
#include "config/input_error.h"
#include "config/platform.h"
#include "config/presets.h"
#include "driver/collective_run.h"
#include "config/csv.h"
#include "config/data_table.h"

namespace acesim {
namespace {

// nccl-tests' bus bandwidth factor for n ranks.
double bus_factor(CollectiveOp op, double n) {
  return op == CollectiveOp::kAllReduce ? 2.0 * (n - 1) / n : (n - 1) / n;
}

// The table's rows: bus bandwidth from its time where it prints one (more
// digits than its rounded busbw column at small sizes), else its busbw.
void read_table(NcclTestsTable& t, const std::string& path, CollectiveOp op, double ranks) {
  const DataTable table = read_data_table(path);  // size_bytes,time_us,algbw_GBps,busbw_GBps
  for (const std::string& c : table.comments) {
    if (c.rfind("# source:", 0) == 0) t.source = c.substr(10);
  }
  for (const DataTable::Row& row : table.rows) {
    const std::vector<std::string>& f = row.fields;
    const std::string where = fmt::format("{}:{}", path, row.line);
    if (f.size() != 4) throw InputError(where + ": expected 4 fields (size_bytes,time_us,algbw_GBps,busbw_GBps)");
    NcclTestsRow r;
    r.bytes = data_number(f[0], where);
    if (!f[1].empty() && data_number(f[1], where) > 0.0) {
      r.measured_busbw_GBps = r.bytes / (data_number(f[1], where) * 1e3) * bus_factor(op, ranks);
    } else if (!f[3].empty()) {
      r.measured_busbw_GBps = data_number(f[3], where);
    }
    if (r.measured_busbw_GBps > 0.0) t.rows.push_back(r);
  }
  if (t.rows.empty()) throw InputError(path + ": no rows with a bus bandwidth");
}

PlatformConfig platform_for(const NcclTestsTable& t, const std::string& where, int channels) {
  const PlatformPreset* preset = preset_registry().find(t.platform);
  if (preset == nullptr) throw InputError(where + ": unknown preset '" + t.platform + "'");
  PlatformConfig p = load_preset(*preset);
  set_nodes(p, t.nodes, where + ": nodes");
  if (t.algo != "auto") {
    if (!p.collectives.nccl.enabled) throw InputError(where + ": preset '" + t.platform + "' does not run NCCL's model");
    p.collectives.nccl.algo = parse_nccl_algo(t.algo);
    if (!p.collectives.nccl.algo) throw InputError(where + ": unknown NCCL algorithm '" + t.algo + "'");
  }
  if (channels > 0) p.collectives.nccl.channels = channels;
  return p;
}

NcclTestsTable run_table(const std::vector<std::string>& f, const std::string& dir, const std::string& where) {
  NcclTestsTable t;
  t.file = f[0];
  t.title = f[1];
  t.platform = f[2];
  t.nodes = static_cast<long long>(data_number(f[3], where));
  t.op = f[4];
  t.algo = f[5];
  const int channels = static_cast<int>(data_number(f[6], where));
  const std::optional<CollectiveOp> op = parse_collective_op(t.op);
  if (!op) throw InputError(where + ": unknown collective '" + t.op + "'");
  const PlatformConfig p = platform_for(t, where, channels);
  double ranks = 1;
  for (const DimensionSpec& d : p.dims) ranks *= d.npus;
  read_table(t, dir + "/" + t.file, *op, ranks);
  CollectiveRequestSpec spec;
  spec.op = *op;
  for (NcclTestsRow& r : t.rows) {
    const CollectiveResult res = run_collective(p, spec, static_cast<std::uint64_t>(r.bytes));
    r.acesim_busbw_GBps = res.busbw_GBps;
    r.algorithm = res.algorithm;
    r.protocol = res.protocol;
  }
  return t;
}

std::string size_text(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 4) {
    bytes /= 1024.0;
    ++u;
  }
  return fmt::format("{:g} {}", bytes, units[u]);
}

}  // namespace

double NcclTestsTable::geomean_error(double min_bytes) const {
  double sum = 0.0;
  for (const NcclTestsRow& r : rows) {
    if (r.bytes >= min_bytes) sum += std::abs(std::log(r.acesim_busbw_GBps / r.measured_busbw_GBps));
  }
  const int n = rows_from(min_bytes);
  return n == 0 ? 0.0 : std::exp(sum / n) - 1.0;
}

int NcclTestsTable::rows_from(double min_bytes) const {
  return static_cast<int>(std::count_if(rows.begin(), rows.end(), [&](const NcclTestsRow& r) { return r.bytes >= min_bytes; }));
}

std::vector<NcclTestsTable> run_nccl_tests(const std::string& data_dir) {
  const std::string dir = data_dir + "/nccl-tests";
  const std::string index = dir + "/index.csv";  // file,table,platform,nodes,op,algo,channels
  const DataTable table = read_data_table(index, " (give --data DIR, the repository's tests/data)");
  std::vector<NcclTestsTable> out;
  for (const DataTable::Row& row : table.rows) {
    const std::string where = fmt::format("{}:{}", index, row.line);
    if (row.fields.size() != 7) throw InputError(where + ": expected 7 fields (file,table,platform,nodes,op,algo,channels)");
    out.push_back(run_table(row.fields, dir, where));
  }
  if (out.empty()) throw InputError(index + ": no tables");
  return out;
}

std::string nccl_tests_tables(const std::vector<NcclTestsTable>& tables) {
  // From 64 MiB on, the links and the algorithm set the time; below, the
  // launch and synchronisation latency, which varies with the harness.
  constexpr double kLarge = 64.0 * 1048576.0;
  std::string out =
      "| published table | acesim | sizes | geomean error | sizes >= 64 MiB | geomean error >= 64 MiB |\n"
      "|---|---|---:|---:|---:|---:|\n";
  for (const NcclTestsTable& t : tables) {
    std::string how = fmt::format("`--platform {} --nodes {}", t.platform, t.nodes);
    if (t.algo != "auto") how += " --algo " + t.algo;
    how += "`";
    const int large = t.rows_from(kLarge);
    const std::string large_error = large > 0 ? fmt::format("{:.1f}%", 100.0 * t.geomean_error(kLarge)) : "-";
    out += fmt::format("| {} | {} | {} | {:.1f}% | {} | {} |\n", t.title, how, t.rows.size(), 100.0 * t.geomean_error(),
                       large, large_error);
  }
  for (const NcclTestsTable& t : tables) {
    out += fmt::format("\n**{}** ({}; `tests/data/nccl-tests/{}`)\n\n", t.title, t.source, t.file);
    out += "| size | measured busbw (GB/s) | acesim busbw (GB/s) | acesim ran | error |\n|---:|---:|---:|---|---:|\n";
    for (const NcclTestsRow& r : t.rows) {
      const std::string ran = r.algorithm.empty() ? "platform plan" : r.algorithm + "/" + r.protocol;
      out += fmt::format("| {} | {:.2f} | {:.2f} | {} | {:+.1f}% |\n", size_text(r.bytes), r.measured_busbw_GBps,
                         r.acesim_busbw_GBps, ran, 100.0 * r.error());
    }
  }
  return out;
}

void write_nccl_tests(const std::vector<NcclTestsTable>& tables, const std::string& out_dir) {
  OutputFile csv = open_study_file(out_dir, "results.csv");
  csv << "table,platform,nodes,op,algo,size_bytes,measured_busbw_GBps,acesim_busbw_GBps,acesim_algorithm,"
         "acesim_protocol,error\n";
  for (const NcclTestsTable& t : tables) {
    for (const NcclTestsRow& r : t.rows) {
      csv << fmt::format("{},{},{},{},{},{:.0f},{:.4f},{:.4f},{},{},{:.5f}\n", csv_field(t.title), t.platform, t.nodes, t.op,
                         t.algo, r.bytes, r.measured_busbw_GBps, r.acesim_busbw_GBps, r.algorithm, r.protocol,
                         r.error());
    }
  }
  OutputFile md = open_study_file(out_dir, "report.md");
  md << "# acesim against published nccl-tests measurements\n\n" << nccl_tests_tables(tables);
  csv.close();
  md.close();
}

}  // namespace acesim
