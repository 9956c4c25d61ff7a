// LLM training against published runs of several stacks (llm_runs.h).
#include "reproduce/llm_runs.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "config/csv.h"
#include "config/data_table.h"
#include "config/input_error.h"
#include "config/parallel_for.h"
#include "registry/quote.h"

namespace acesim {
namespace {

double geomean_error(const std::vector<const LlmRunRow*>& rows) {
  std::vector<double> errors;
  for (const LlmRunRow* r : rows) errors.push_back(r->error());
  return acesim::geomean_error(errors);
}

std::string s3(TimePs t) { return fmt::format("{:.3f}", static_cast<double>(t) / 1e12); }

}  // namespace

LlmRunsStudy run_llm_runs(const std::string& data_dir, const std::string& only, const std::string& calibration_file, int jobs) {
  LlmRunsFile file = read_llm_runs_file(data_dir + "/llm-runs/runs.csv", only, " (give --data DIR, the repository's tests/data)");
  LlmRunsStudy study;
  std::optional<InSituCalibration> calibration;
  if (!calibration_file.empty()) {
    calibration = load_calibration(calibration_file);
    for (const LlmRunRow& r : file.rows) {
      if (const std::string arch = llm_run_arch(r); !calibration->covers(arch)) {
        throw InputError(fmt::format("--calibration {}: no entry for {}'s architecture {} ({}): a calibration of another GPU does not carry over",
                                     calibration_file, r.id, quote(arch), r.location));
      }
    }
    study.calibration = calibration_file;
  }
  for (const std::string& c : file.comments) {
    if (c.rfind("# source:", 0) == 0) study.sources.push_back(c.substr(10));
  }
  // Each row is its own simulation: on `jobs` threads, the table in the
  // file's order and the first failing row's error, as one thread gives.
  parallel_for(file.rows.size(), jobs,
               [&](std::size_t i) { simulate_llm_run(file.rows[i], file.models_dir, calibration ? &*calibration : nullptr); });
  for (LlmRunRow& r : file.rows) study.rows.push_back(std::move(r));
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
  std::string out;
  if (!study.calibration.empty()) {
    out += fmt::format("In situ: every row priced with the calibration {} (its values for the row's architecture and precision).\n\n",
                       study.calibration);
  }
  out +=
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
