// LLM training against published runs of several stacks (llm_runs.h).
#include "reproduce/llm_runs.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "compute/kernel_pricer.h"
#include "config/csv.h"
#include "config/data_table.h"
#include "config/input_error.h"
#include "config/platform.h"
#include "config/presets.h"
#include "config/units.h"
#include "driver/llm_run.h"
#include "registry/quote.h"
#include "topology/topology.h"
#include "workload/llm/llm_graph.h"
#include "workload/models/models.h"

namespace acesim {
namespace {

constexpr int kGpusPerNode = 8;
constexpr std::array<const char*, 27> kColumns = {
    "id",   "stack",     "platform", "gpus",  "model",   "seq",       "tp",        "pp",    "cp",   "ep",      "vp",     "mbs",
    "gbs",  "sp",        "recompute", "zero", "fetch",   "overlap",   "tpoverlap", "precision", "attention", "first", "last",
    "account", "step_s", "published", "where"};

class Fields {
 public:
  Fields(const DataTable& t, const DataTable::Row& r, const std::string& path) : row_(r), path_(path) {
    for (std::size_t c = 0; c < kColumns.size(); ++c) {
      const auto it = std::find(t.header.begin(), t.header.end(), kColumns[c]);
      if (it == t.header.end()) throw InputError(fmt::format("{}: missing column '{}'", path, kColumns[c]));
      col_[kColumns[c]] = static_cast<std::size_t>(it - t.header.begin());
    }
  }
  const std::string& text(const char* name) const { return row_.fields[col_.at(name)]; }
  [[noreturn]] void fail(const char* name, const std::string& why) const {
    throw InputError(fmt::format("{}:{}: column {} ({}): {}", path_, row_.line, col_.at(name) + 1, name, why));
  }
  int integer(const char* name, int min, int fallback = -1) const {
    const std::string& t = text(name);
    if (t.empty() && fallback >= 0) return fallback;
    double v = 0.0;
    try {
      v = data_number(t, "");
    } catch (const InputError&) {
      fail(name, fmt::format("'{}' is not a whole number", t));
    }
    if (v != std::floor(v) || v < min || v > 1e9) fail(name, fmt::format("must be a whole number >= {}, got '{}'", min, t));
    return static_cast<int>(v);
  }
  bool yes_no(const char* name) const {
    const std::string& t = text(name);
    if (t == "yes") return true;
    if (t == "no" || t.empty()) return false;
    fail(name, fmt::format("yes or no, got '{}'", t));
  }
  std::string where() const { return fmt::format("{}:{}", path_, row_.line); }

 private:
  const DataTable::Row& row_;
  std::string path_;
  std::map<std::string, std::size_t> col_;
};

LlmRunRow read_row(const Fields& f) {
  LlmRunRow r;
  r.id = f.text("id");
  r.stack = f.text("stack");
  r.platform = f.text("platform");
  if (preset_registry().find(r.platform) == nullptr) f.fail("platform", fmt::format("no preset '{}'", r.platform));
  r.gpus = f.integer("gpus", kGpusPerNode);
  if (r.gpus % kGpusPerNode != 0) f.fail("gpus", fmt::format("{} GPUs are not whole nodes of {}", r.gpus, kGpusPerNode));
  r.model = f.text("model");
  r.seq = f.integer("seq", 1, 0);
  r.tp = f.integer("tp", 1);
  r.pp = f.integer("pp", 1);
  r.cp = f.integer("cp", 1);
  r.ep = f.integer("ep", 1);
  r.vp = f.integer("vp", 1);
  r.micro_batch = f.integer("mbs", 1);
  r.global_batch = f.integer("gbs", 1);
  r.sequence_parallel = f.yes_no("sp");
  r.recompute = f.text("recompute");
  r.zero = f.integer("zero", 0);
  r.fetch = f.text("fetch");
  r.overlap = f.yes_no("overlap");
  r.tp_comm_overlap = f.yes_no("tpoverlap");
  r.precision = f.text("precision");
  r.attention = f.text("attention");
  r.first = f.integer("first", 1, 0);
  r.last = f.integer("last", 1, 0);
  r.account = f.yes_no("account");
  try {
    r.step_s = data_number(f.text("step_s"), "");
  } catch (const InputError&) {
    f.fail("step_s", fmt::format("'{}' is not a number", f.text("step_s")));
  }
  if (!(r.step_s > 0.0)) f.fail("step_s", "must be a time in seconds > 0");
  r.published = f.text("published");
  r.where = f.text("where");
  const long long mp = static_cast<long long>(r.tp) * r.pp * r.cp;
  if (r.gpus % mp != 0) f.fail("gpus", fmt::format("{} GPUs do not split into tp {} x pp {} x cp {}", r.gpus, r.tp, r.pp, r.cp));
  r.dp = static_cast<int>(r.gpus / mp);
  return r;
}

ParallelPlan plan_of(const LlmRunRow& r, const std::string& where) {
  ParallelPlan p;
  p.tp = r.tp;
  p.pp = r.pp;
  p.cp = r.cp;
  p.dp = r.dp;
  p.ep = r.ep;
  p.sequence_parallel = r.sequence_parallel;
  p.zero = r.zero;
  p.micro_batch = r.micro_batch;
  p.global_batch = r.global_batch;
  p.schedule = r.vp > 1 ? PipeSchedule::kInterleaved : PipeSchedule::k1F1B;
  p.virtual_stages = r.vp;
  p.recompute = parse_recompute(where + ": recompute", r.recompute);
  p.attention = parse_attention_kernel(where + ": attention", r.attention);
  if (!r.fetch.empty()) p.zero3_fetch = parse_zero3_fetch(where + ": fetch", r.fetch);
  p.overlap_grad_reduce = r.overlap && r.zero <= 1;  // ZeRO 2 reduces every micro-batch's gradients anyway
  p.overlap_param_gather = r.overlap && r.zero >= 1 && r.zero <= 2;
  p.tp_comm_overlap = r.tp_comm_overlap;
  p.first_stage_layers = r.first;
  p.last_stage_layers = r.last;
  p.embedding_in_split = r.account;
  p.loss_in_split = r.account;
  return p;
}

TransformerShape shape_of(const LlmRunRow& r, const std::string& dir, const std::string& where) {
  TransformerShape s;
  if (const TransformerShape* b = find_transformer_shape(r.model)) {
    s = *b;
  } else if (r.model.ends_with(".yaml")) {
    s = read_transformer_file(dir + "/" + r.model);
  } else {
    throw InputError(where + ": model '" + r.model + "' is neither a built-in transformer nor a model file (models/NAME.yaml)");
  }
  if (r.seq > 0) s.seq = r.seq;
  return s;
}

void simulate(LlmRunRow& r, const std::string& dir, const std::string& where) {
  PlatformConfig platform = load_preset(*preset_registry().find(r.platform));
  set_nodes(platform, r.gpus / kGpusPerNode, where + ": nodes");
  const Topology topo(platform.dims);
  LlmOptions options;
  const std::optional<int> bytes = parse_precision(r.precision);
  if (!bytes) throw InputError(where + ": unknown precision '" + r.precision + "'");
  if (const std::string why = precision_unsupported(platform.npu, *bytes); !why.empty()) throw InputError(where + ": " + why);
  options.bytes_per_element = *bytes;
  options.iterations = 2;
  options.pricer = make_kernel_pricer(platform.npu);
  const LlmJob job(shape_of(r, dir, where), plan_of(r, where), topo, options);
  LlmRunOptions ro;
  ro.allow_oom = true;  // the memory is reported beside the row
  const LlmReport rep = run_llm(platform, job, ro);
  r.iteration_ps = rep.iteration_ps;
  r.mfu = rep.mfu;
  r.compute_ps = rep.compute_ps;
  r.bubble_ps = rep.pipeline_bubble_ps;
  for (TimePs e : rep.exposed_ps) r.exposed_ps += e;
  r.memory_GB = rep.memory ? rep.memory->total_bytes() / 1e9 : 0.0;
  r.model_flops_per_gpu = job.model_flops_per_gpu();
}

// exp(mean |ln(measured / acesim)|) - 1: the typical error, either sign.
double geomean_error(const std::vector<const LlmRunRow*>& rows) {
  double sum = 0.0;
  for (const LlmRunRow* r : rows) sum += std::abs(std::log1p(r->error()));
  return rows.empty() ? 0.0 : std::expm1(sum / static_cast<double>(rows.size()));
}

std::string s3(TimePs t) { return fmt::format("{:.3f}", static_cast<double>(t) / 1e12); }

}  // namespace

LlmRunsStudy run_llm_runs(const std::string& data_dir, const std::string& only) {
  const std::string dir = data_dir + "/llm-runs";
  const std::string path = dir + "/runs.csv";
  const DataTable table = read_data_table(path, " (give --data DIR, the repository's tests/data)");
  std::set<std::string> wanted;
  std::stringstream ss(only);
  for (std::string id; std::getline(ss, id, ',');) {
    if (!id.empty()) wanted.insert(id);
  }
  LlmRunsStudy study;
  for (const std::string& c : table.comments) {
    if (c.rfind("# source:", 0) == 0) study.sources.push_back(c.substr(10));
  }
  // Every row read, and the ids asked for found, before any is simulated.
  std::set<std::string> ids;
  std::vector<std::pair<LlmRunRow, std::string>> rows;  // with where the row is, for messages
  for (const DataTable::Row& row : table.rows) {
    const Fields f(table, row, path);
    LlmRunRow r = read_row(f);
    if (!ids.insert(r.id).second) f.fail("id", fmt::format("{} is given twice", quote(r.id)));
    if (!wanted.empty() && !wanted.count(r.id)) continue;
    rows.emplace_back(std::move(r), f.where());
  }
  for (const std::string& id : wanted) {
    if (!ids.count(id)) throw InputError(fmt::format("--runs: {}: no row {}", path, quote(id)));
  }
  for (auto& [r, where] : rows) {
    simulate(r, dir, where);
    study.rows.push_back(std::move(r));
  }
  return study;
}

std::vector<std::vector<const LlmRunRow*>> llm_runs_series(const LlmRunsStudy& study) {
  std::map<std::string, std::vector<const LlmRunRow*>> by_key;
  std::vector<std::string> order;
  for (const LlmRunRow& r : study.rows) {
    const std::string key = fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", r.stack, r.platform, r.model, r.seq, r.precision,
                                        r.tp, r.pp, r.cp, r.ep, r.vp, r.zero, r.fetch, r.recompute);
    if (!by_key.count(key)) order.push_back(key);
    by_key[key].push_back(&r);
  }
  std::vector<std::vector<const LlmRunRow*>> out;
  for (const std::string& key : order) {
    std::vector<const LlmRunRow*> rows = by_key[key];
    std::stable_sort(rows.begin(), rows.end(), [](const LlmRunRow* a, const LlmRunRow* b) { return a->gpus < b->gpus; });
    if (rows.size() >= 2 && rows.front()->gpus != rows.back()->gpus) out.push_back(std::move(rows));
  }
  return out;
}

std::string llm_runs_tables(const LlmRunsStudy& study) {
  std::string out =
      "| run | stack | GPU | GPUs | model | plan | precision | measured step (s) | acesim step (s) | error | acesim MFU | "
      "compute (s) | bubble (s) | exposed comm (s) | memory per GPU (GB) |\n"
      "|---|---|---|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  std::map<std::string, std::vector<const LlmRunRow*>> by_stack;
  std::vector<const LlmRunRow*> all;
  for (const LlmRunRow& r : study.rows) {
    std::string plan = fmt::format("tp {} pp {}", r.tp, r.pp);
    if (r.vp > 1) plan += fmt::format(" vp {}", r.vp);
    if (r.cp > 1) plan += fmt::format(" cp {}", r.cp);
    if (r.ep > 1) plan += fmt::format(" ep {}", r.ep);
    plan += fmt::format(" dp {}, mbs {} gbs {}", r.dp, r.micro_batch, r.global_batch);
    if (r.zero > 0) plan += fmt::format(", zero {}", r.zero);
    if (!r.fetch.empty() && r.fetch != "prefetch") plan += fmt::format(" ({} fetch)", r.fetch);
    if (r.tp_comm_overlap) plan += ", tp-comm-overlap";
    if (r.recompute != "none") plan += ", recompute " + r.recompute;
    if (r.first > 0 || r.last > 0) plan += fmt::format(", first {} last {}", r.first, r.last);
    if (r.account) plan += ", embedding and loss in the split";
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {:.3f} | {} | {:+.1f}% | {:.1f}% | {} | {} | {} | {:.1f} |\n", r.id, r.stack,
                       r.platform, r.gpus, r.model, plan, r.precision, r.step_s, s3(r.iteration_ps), 100.0 * r.error(),
                       100.0 * r.mfu, s3(r.compute_ps), s3(r.bubble_ps), s3(r.exposed_ps), r.memory_GB);
    by_stack[r.stack].push_back(&r);
    all.push_back(&r);
  }
  if (all.empty()) return out;
  out += "\n| stack | runs | geomean error | range | acesim faster / slower | within 15% |\n|---|---:|---:|---|---|---:|\n";
  auto summary = [&](const std::string& name, const std::vector<const LlmRunRow*>& rows) {
    double lo = 1e9, hi = -1e9;
    int fast = 0, within = 0;
    for (const LlmRunRow* r : rows) {
      lo = std::min(lo, r->error());
      hi = std::max(hi, r->error());
      fast += r->error() > 0.0 ? 1 : 0;
      within += std::abs(r->error()) <= 0.15 ? 1 : 0;
    }
    out += fmt::format("| {} | {} | {:.1f}% | {:+.1f}% to {:+.1f}% | {} / {} | {} |\n", name, rows.size(), 100.0 * geomean_error(rows),
                       100.0 * lo, 100.0 * hi, fast, static_cast<int>(rows.size()) - fast, within);
  };
  for (const auto& [stack, rows] : by_stack) summary(stack, rows);
  summary("all", all);
  out += "\nError: measured / acesim step time - 1 (positive: acesim faster); geomean error: exp(mean |ln(measured / acesim)|) - 1.\n";
  const auto series = llm_runs_series(study);
  if (series.empty()) return out;
  out += "\n| scaling series | GPUs | global batch | measured TFLOP/s per GPU | acesim TFLOP/s per GPU | measured vs the first | "
         "acesim vs the first |\n|---|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& rows : series) {
    const LlmRunRow& first = *rows.front();
    for (const LlmRunRow* r : rows) {
      out += fmt::format("| {} | {} | {} | {:.1f} | {:.1f} | {:.2f} | {:.2f} |\n", r->id, r->gpus, r->global_batch, r->measured_tflops(),
                         r->acesim_tflops(), r->measured_tflops() / first.measured_tflops(),
                         r->acesim_tflops() / first.acesim_tflops());
    }
  }
  out += "\nScaling series: rows of one stack, model, precision and plan but for the data-parallel size (and the batch), by GPUs; "
         "TFLOP/s by Megatron-LM's eq. 3 (recomputation included) over the step time.\n";
  return out;
}

void write_llm_runs(const LlmRunsStudy& study, const std::string& out_dir) {
  OutputFile csv = open_study_file(out_dir, "results.csv");
  csv << "id,stack,platform,gpus,model,tp,pp,cp,ep,vp,dp,mbs,gbs,precision,measured_step_s,acesim_step_s,error,acesim_mfu,"
         "compute_s,bubble_s,exposed_comm_s,memory_per_gpu_GB\n";
  for (const LlmRunRow& r : study.rows) {
    csv << (CsvLine() << r.id << r.stack << r.platform << r.gpus << r.model << r.tp << r.pp << r.cp << r.ep << r.vp << r.dp
                      << r.micro_batch << r.global_batch << r.precision << r.step_s << static_cast<double>(r.iteration_ps) / 1e12
                      << r.error() << r.mfu << static_cast<double>(r.compute_ps) / 1e12 << static_cast<double>(r.bubble_ps) / 1e12
                      << static_cast<double>(r.exposed_ps) / 1e12 << r.memory_GB)
               .text();
  }
  OutputFile md = open_study_file(out_dir, "report.md");
  md << "# acesim against published LLM training runs\n\nSources:\n";
  for (const std::string& s : study.sources) md << "- " << s << "\n";
  md << "\n" << llm_runs_tables(study);
  csv.close();
  md.close();
}

}  // namespace acesim
