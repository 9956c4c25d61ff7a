// `acesim reproduce STUDY`: ace-isca21 (the ACE paper's evaluation, on all
// cores), astra-sim-2.0 (ASTRA-sim's example microbenchmarks side by side)
// nccl-tests (the GPU presets against published nccl-tests tables) or
// megatron (LLM training against Megatron-LM's DGX A100 throughput),
// megatron-h100 (against NeMo / Megatron-Core's DGX H100 step times) or
// llm-offload (what ACE buys for LLM training on hgx-h100 clusters),
// offload (offload engines as they ship: ConCCL, PyTorch's copy-engine
// all-gather, DMA-Latte, beside ACE),
// llm-runs (published LLM training runs of several stacks) or
// simai (SimAI / AICB workload files against SimAI-Analytical and acesim's model).
#include <algorithm>
#include <cstdio>
#include <memory>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/platform_options.h"
#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/progress_options.h"
#include "config/input_error.h"
#include "reproduce/ace_isca21.h"
#include "reproduce/astra_microbenchmarks.h"
#include "reproduce/llm_offload.h"
#include "reproduce/megatron.h"
#include "reproduce/llm_runs.h"
#include "reproduce/kineto_replays.h"
#include "reproduce/megatron_h100.h"
#include "reproduce/nccl_tests.h"
#include "reproduce/offload.h"
#include "reproduce/placement.h"
#include "reproduce/simai.h"

namespace acesim::cli {
namespace {

struct Options {
  std::string study;
  std::string out;
  std::string data = "tests/data";
  int jobs = 0;
  std::string sizes;
  std::string workloads;
  std::string runs;
  long long max_gpus = 0;
  bool no_sensitivity = false;
  bool no_plots = false;
  CLI::Option* jobs_option = nullptr;
  ProgressOptions progress;
};

std::vector<std::string> split_list(const std::string& flag, const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) throw InputError(flag + ": empty item in '" + text + "'");
    out.push_back(item);
  }
  if (out.empty() || text.back() == ',') throw InputError(flag + ": '" + text + "' is not a comma-separated list");
  return out;
}

int run_astra(const Options& o) {
  const std::string out = o.out.empty() ? "astra-sim-2.0" : o.out;
  const std::vector<AstraMicrobenchmark> rows = run_astra_microbenchmarks(o.data);
  write_astra_microbenchmarks(rows, out);
  std::printf("%s", astra_microbenchmark_tables(rows).c_str());
  std::printf("wrote %s/results.csv and %s/report.md\n", out.c_str(), out.c_str());
  return kExitOk;
}

int run_nccl_study(const Options& o) {
  const std::string out = o.out.empty() ? "nccl-tests" : o.out;
  const std::vector<NcclTestsTable> tables = run_nccl_tests(o.data);
  write_nccl_tests(tables, out);
  std::printf("%s", nccl_tests_tables(tables).c_str());
  std::printf("wrote %s/results.csv and %s/report.md\n", out.c_str(), out.c_str());
  return kExitOk;
}

int run_megatron_study(const Options& o) {
  const std::string out = o.out.empty() ? "megatron" : o.out;
  const MegatronStudy study = run_megatron(o.data);
  write_megatron(study, out);
  std::printf("%s", megatron_tables(study).c_str());
  std::printf("wrote %s/results.csv and %s/report.md\n", out.c_str(), out.c_str());
  return kExitOk;
}

int run_megatron_h100_study(const Options& o) {
  const std::string out = o.out.empty() ? "megatron-h100" : o.out;
  const H100Study study = run_megatron_h100(o.data);
  write_megatron_h100(study, out);
  std::printf("%s", megatron_h100_tables(study).c_str());
  std::printf("wrote %s/results.csv and %s/report.md\n", out.c_str(), out.c_str());
  return kExitOk;
}

int run_llm_runs_study(const Options& o) {
  const std::string out = o.out.empty() ? "llm-runs" : o.out;
  const LlmRunsStudy study = run_llm_runs(o.data, o.runs);
  write_llm_runs(study, out);
  std::printf("%s", llm_runs_tables(study).c_str());
  std::printf("wrote %s/results.csv and %s/report.md\n", out.c_str(), out.c_str());
  return kExitOk;
}

int run_offload_engines_study(const Options& o) {
  const std::string out = o.out.empty() ? "offload" : o.out;
  const OffloadStudy study = acesim::run_offload_study();
  const bool plots = write_offload(study, out, !o.no_plots, stderr);
  std::printf("%s", offload_tables(study).c_str());
  std::printf("wrote %s/results.csv, %s/dma-sweep.csv and %s/report.md%s\n", out.c_str(), out.c_str(), out.c_str(),
              plots ? " with plots" : "");
  return kExitOk;
}

int run_placement_study_command(const Options& o) {
  const std::string out = o.out.empty() ? "placement" : o.out;
  const PlacementStudy study = run_placement_study();
  write_placement(study, out);
  std::printf("%s", placement_tables(study).c_str());
  std::printf("wrote %s/results.csv and %s/report.md\n", out.c_str(), out.c_str());
  return kExitOk;
}

int run_kineto_replays_study(const Options& o) {
  const std::string out = o.out.empty() ? "kineto" : o.out;
  const KinetoStudy study = run_kineto_study(o.data);
  write_kineto_study(study, out);
  std::printf("%s", kineto_study_tables(study).c_str());
  std::printf("wrote %s/results.csv and %s/report.md\n", out.c_str(), out.c_str());
  return kExitOk;
}

int run_simai_study(const Options& o) {
  const std::string out = o.out.empty() ? "simai" : o.out;
  const SimaiStudy study = run_simai(o.data);
  write_simai(study, out);
  std::printf("%s", simai_tables(study).c_str());
  for (const SimaiCase& c : study.cases) std::printf("simulated %s (sm) in %.2f s\n", c.file.c_str(), c.seconds);
  std::printf("wrote %s/results.csv, %s/census.csv and %s/report.md\n", out.c_str(), out.c_str(), out.c_str());
  return kExitOk;
}

int default_jobs(const Options& o) {
  if (o.jobs_option->count() > 0) {
    if (o.jobs < 1 || o.jobs > 1024) throw InputError("--jobs: must be in 1..1024, got " + std::to_string(o.jobs));
    return o.jobs;
  }
  const unsigned cores = std::thread::hardware_concurrency();
  return cores > 0 ? static_cast<int>(cores) : 1;
}

int run_llm_offload_study(const Options& o) {
  OffloadOptions r;
  if (!o.workloads.empty()) r.workloads = split_list("--workloads", o.workloads);
  if (o.max_gpus < 0) throw InputError("--max-gpus: must be positive, got " + std::to_string(o.max_gpus));
  r.max_gpus = o.max_gpus;
  r.jobs = default_jobs(o);
  r.progress = o.progress.off ? nullptr : stderr;
  const std::string out = o.out.empty() ? "llm-offload" : o.out;
  const std::vector<OffloadPoint> points = run_llm_offload(r);
  const bool plots = write_llm_offload(points, out, !o.no_plots, stderr);
  std::printf("%s", llm_offload_tables(points).c_str());
  std::printf("wrote %s/results.csv, %s/report.md%s\n", out.c_str(), out.c_str(),
              plots ? (", " + out + "/speedup.png and " + out + "/breakdown.png").c_str() : "");
  return kExitOk;
}

int run(const Options& o) {
  if (!o.runs.empty() && o.study != "llm-runs") throw InputError("--runs applies to the llm-runs study");
  if (o.study == "astra-sim-2.0") return run_astra(o);
  if (o.study == "llm-offload") return run_llm_offload_study(o);
  if (o.study == "offload") return run_offload_engines_study(o);
  if (o.study == "nccl-tests") return run_nccl_study(o);
  if (o.study == "megatron") return run_megatron_study(o);
  if (o.study == "llm-runs") return run_llm_runs_study(o);
  if (o.study == "simai") return run_simai_study(o);
  if (o.study == "kineto") return run_kineto_replays_study(o);
  if (o.study == "placement") return run_placement_study_command(o);
  if (o.study == "megatron-h100") return run_megatron_h100_study(o);
  if (o.study != "ace-isca21") {
    const std::vector<std::string> names = {"ace-isca21", "astra-sim-2.0", "nccl-tests", "megatron", "megatron-h100", "llm-offload", "offload", "llm-runs", "simai", "kineto", "placement"};
    throw InputError("unknown study '" + o.study + "'" + suggestion(o.study, names));
  }
  ReproOptions r;
  r.out_dir = o.out.empty() ? "ace-isca21" : o.out;
  r.jobs = default_jobs(o);
  if (!o.sizes.empty()) {
    r.sizes.clear();
    for (const std::string& s : split_list("--sizes", o.sizes)) {
      char* end = nullptr;
      const long v = std::strtol(s.c_str(), &end, 10);
      if (*end != '\0' || (v != 16 && v != 32 && v != 64 && v != 128)) {
        throw InputError("--sizes: '" + s + "' is not one of 16, 32, 64, 128");
      }
      r.sizes.push_back(static_cast<int>(v));
    }
  }
  if (!o.workloads.empty()) r.workloads = split_list("--workloads", o.workloads);
  r.sensitivity = !o.no_sensitivity && std::find(r.sizes.begin(), r.sizes.end(), 64) != r.sizes.end() &&
                  std::find(r.workloads.begin(), r.workloads.end(), "resnet50") != r.workloads.end();
  r.plots = !o.no_plots;
  const std::unique_ptr<ProgressDisplay> display = start_progress(o.progress);
  r.live = display.get();
  r.step_lines = !o.progress.off;  // without a display: a line every tenth of the runs, as before
  run_ace_isca21(r, stderr);
  if (display) display->finish();
  std::printf("wrote %s/results.csv%s and %s/report.md\n", r.out_dir.c_str(),
              r.sensitivity ? (", " + r.out_dir + "/sensitivity.csv").c_str() : "", r.out_dir.c_str());
  return kExitOk;
}

}  // namespace

CommandRunner add_reproduce_command(CLI::App& app) {
  auto o = std::make_shared<Options>();
  CLI::App* c = app.add_subcommand(
      "reproduce",
      "Reproduce a study: ace-isca21 (docs/reproduction.md), astra-sim-2.0, nccl-tests, megatron, megatron-h100, llm-runs, simai, kineto and placement (docs/cluster.md) "
      "(docs/validation.md), llm-offload (docs/llm-offload.md), offload (docs/reproduction.md)");
  c->add_option("study", o->study, "ace-isca21 | astra-sim-2.0 | nccl-tests | megatron | megatron-h100 | llm-runs | llm-offload | offload | simai | kineto | placement")->required();
  c->add_option("--out", o->out, "output directory (default: the study's name)")->check(output_dir());
  c->add_option("--data", o->data, "astra-sim-2.0, nccl-tests, megatron, megatron-h100, llm-runs, simai, kineto: the repository's test data directory")->capture_default_str();
  c->add_option("--runs", o->runs, "llm-runs: the rows to run, by id, comma-separated (default: all)")->check(non_empty());
  o->jobs_option = c->add_option("--jobs", o->jobs, "simulations run in parallel (default: all cores)");
  c->add_option("--sizes", o->sizes, "NPU counts, from 16,32,64,128 (default: all)");
  c->add_option("--workloads", o->workloads, "ace-isca21: from resnet50,gnmt,dlrm; llm-offload: from llama3-70b-zero1,llama3-70b-zero3,"
                 "mixtral-8x7b-ep8,llama3-8b-tp8 (default: all)");
  c->add_option("--max-gpus", o->max_gpus, "llm-offload: leave out the sizes above this many GPUs");
  c->add_flag("--no-sensitivity", o->no_sensitivity, "skip the sensitivity studies");
  c->add_flag("--no-plots", o->no_plots, "skip the PNG plots");
  add_progress_options(c, o->progress);
  return {[o] { return run(*o); }, nullptr, nullptr, nullptr};
}

}  // namespace acesim::cli
