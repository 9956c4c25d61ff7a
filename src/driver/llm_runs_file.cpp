// Measured LLM training runs in a CSV (llm_runs_file.h).
#include "driver/llm_runs_file.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "compute/kernel_pricer.h"
#include "config/csv_reader.h"
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

// One row's fields, by column name; a message names the file, line and the
// column's number in the file.
class Fields {
 public:
  Fields(const std::array<std::string, kColumns.size()>& values, int line, const CsvHeader& header, const std::string& path)
      : values_(values), line_(line), header_(header), path_(path) {}
  const std::string& text(const char* name) const { return values_[index(name)]; }
  [[noreturn]] void fail(const char* name, const std::string& why) const {
    throw InputError(fmt::format("{}:{}: column {} ({}): {}", path_, line_, header_.number(name), name, why));
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
  std::string where() const { return fmt::format("{}:{}", path_, line_); }

 private:
  static std::size_t index(const char* name) {
    for (std::size_t c = 0; c < kColumns.size(); ++c) {
      if (std::string_view(kColumns[c]) == name) return c;
    }
    throw std::logic_error(std::string("no runs-file column ") + name);
  }
  const std::array<std::string, kColumns.size()>& values_;
  int line_;
  const CsvHeader& header_;
  const std::string& path_;
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

// The row's preset on its GPUs. A job smaller than, or not a multiple of,
// a node's scale-up domain (64 GPUs of a GB200 NVL72 rack's 72, 256 as four
// racks of 64) takes the largest multiple of 8 GPUs that divides it and fits
// in the domain from each node: its NVLink domain is that size.
PlatformConfig row_platform(const LlmRunRow& r) {
  PlatformConfig platform = load_preset(*preset_registry().find(r.platform));
  long long per_node = 1;
  int scale_up = -1;
  for (std::size_t d = 0; d < platform.dims.size(); ++d) {
    if (static_cast<int>(d) == platform.nodes_dim) continue;
    per_node *= platform.dims[d].npus;
    scale_up = scale_up < 0 ? static_cast<int>(d) : -2;  // -2: more than one
  }
  if (r.gpus % per_node != 0 && scale_up >= 0) {
    long long domain = kGpusPerNode;
    for (long long g = kGpusPerNode; g <= per_node; g += kGpusPerNode) {
      if (r.gpus % g == 0) domain = g;
    }
    set_gpus_per_node(platform, domain, r.location + ": gpus");
    per_node = domain;
  }
  if (r.gpus % per_node != 0) {
    throw InputError(fmt::format("{}: {} GPUs are not whole nodes of {} ({})", r.location, r.gpus, per_node, r.platform));
  }
  set_nodes(platform, r.gpus / per_node, r.location + ": nodes");
  return platform;
}

void simulate(LlmRunRow& r, const std::string& dir, const InSituCalibration* calibration) {
  const std::string& where = r.location;
  const PlatformConfig platform = row_platform(r);
  const Topology topo(platform.dims);
  LlmOptions options;
  if (const std::string why = set_llm_precision(options, r.precision, platform.npu); !why.empty()) throw InputError(where + ": " + why);
  options.iterations = 2;
  InSituSetting in_situ;
  in_situ.gpus = r.gpus;
  if (calibration != nullptr) {
    in_situ.values = calibration->resolve(platform.npu.arch, options.bytes_per_element == 1 ? "fp8" : "bf16");
    in_situ.file = calibration->file.empty() ? std::string("(fitted)") : calibration->file;
  }
  options.pricer = make_kernel_pricer(platform.npu, nullptr, in_situ);
  const LlmJob job(shape_of(r, dir, where), plan_of(r, where), topo, options);
  LlmRunOptions ro;
  ro.allow_oom = true;  // the memory is reported beside the row
  const LlmReport rep = run_llm(platform, job, ro);
  r.iteration_ps = rep.iteration_ps;
  r.mfu = rep.mfu;
  r.compute_ps = rep.compute_ps;
  r.compute_tensor_ps = 0;
  if (!rep.compute_by_kind_ps.empty()) {
    for (KernelKind k : {KernelKind::kGemm, KernelKind::kAttentionForward, KernelKind::kAttentionBackward}) {
      r.compute_tensor_ps += rep.compute_by_kind_ps[static_cast<std::size_t>(k)];
    }
  }
  r.bubble_ps = rep.pipeline_bubble_ps;
  for (TimePs e : rep.exposed_ps) r.exposed_ps += e;
  r.memory_GB = rep.memory ? rep.memory->total_bytes() / 1e9 : 0.0;
  r.model_flops_per_gpu = job.model_flops_per_gpu();
}

}  // namespace

LlmRunsFile read_llm_runs_file(const std::string& path, const std::string& only, const std::string& hint) {
  std::string text;
  try {
    text = read_text_file(path);
  } catch (const InputError& e) {
    throw InputError(e.what() + hint);
  }
  std::set<std::string> wanted;
  std::stringstream ss(only);
  for (std::string id; std::getline(ss, id, ',');) {
    if (!id.empty()) wanted.insert(id);
  }
  LlmRunsFile out;
  out.path = path;
  const std::size_t slash = path.find_last_of('/');
  out.models_dir = slash == std::string::npos ? "." : path.substr(0, slash);
  // The comment lines, as written (a report repeats the sources they give).
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty() && line[0] == '#') out.comments.push_back(line);
  }
  const CsvHeader header = find_csv_header(text);
  if (header.line == 0) throw InputError(path + ": no rows");
  // Every row read, and the ids asked for found, before any is simulated.
  std::set<std::string> ids;
  read_csv_rows(path, text, header.line, kColumns, [&](int line, const std::array<std::string, kColumns.size()>& values) {
    const Fields f(values, line, header, path);
    LlmRunRow r = read_row(f);
    if (!ids.insert(r.id).second) f.fail("id", fmt::format("{} is given twice", quote(r.id)));
    if (!wanted.empty() && !wanted.count(r.id)) return;
    r.location = f.where();
    out.rows.push_back(std::move(r));
  });
  if (ids.empty()) throw InputError(path + ": no rows");
  for (const std::string& id : wanted) {
    if (!ids.count(id)) throw InputError(fmt::format("--runs: {}: no row {}", path, quote(id)));
  }
  return out;
}

void simulate_llm_run(LlmRunRow& row, const std::string& models_dir, const InSituCalibration* calibration) {
  simulate(row, models_dir, calibration);
}

double geomean_error(const std::vector<double>& errors) {
  double sum = 0.0;
  for (double e : errors) sum += std::abs(std::log1p(e));
  return errors.empty() ? 0.0 : std::expm1(sum / static_cast<double>(errors.size()));
}

std::string llm_run_arch(const LlmRunRow& row) { return row_platform(row).npu.arch; }

}  // namespace acesim
