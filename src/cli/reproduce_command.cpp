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
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/platform_options.h"
#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/progress_options.h"
#include "config/input_error.h"
#include "registry/quote.h"
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
  std::string calibration;
  long long max_gpus = 0;
  bool no_sensitivity = false;
  bool no_plots = false;
  ProgressOptions progress;
  // Each option as registered: whether it was given.
  std::map<std::string, const CLI::Option*> given;
  bool has(const std::string& name) const { return given.at(name)->count() > 0; }
};

// A comma-separated list, without empty items or an item given twice.
std::vector<std::string> split_list(const std::string& flag, const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) throw InputError(flag + ": empty item in " + quote(text));
    if (std::find(out.begin(), out.end(), item) != out.end()) throw InputError(flag + ": " + quote(item) + " is given twice");
    out.push_back(item);
  }
  if (out.empty() || text.back() == ',') throw InputError(flag + ": " + quote(text) + " is not a comma-separated list");
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

int default_jobs(const Options& o);

int run_llm_runs_study(const Options& o) {
  const std::string out = o.out.empty() ? "llm-runs" : o.out;
  const LlmRunsStudy study = run_llm_runs(o.data, o.runs, o.calibration, default_jobs(o));
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
  if (o.has("jobs")) {
    if (o.jobs < 1 || o.jobs > 1024) throw InputError("--jobs: must be in 1..1024, got " + std::to_string(o.jobs));
    return o.jobs;
  }
  const unsigned cores = std::thread::hardware_concurrency();
  return cores > 0 ? static_cast<int>(cores) : 1;
}

int run_llm_offload_study(const Options& o) {
  OffloadOptions r;
  const std::vector<OffloadWorkload> all = llm_offload_workloads();
  std::vector<std::string> names;
  for (const OffloadWorkload& w : all) names.push_back(w.name);
  if (o.has("workloads")) {
    r.workloads = split_list("--workloads", o.workloads);
    for (const std::string& w : r.workloads) {
      if (std::find(names.begin(), names.end(), w) == names.end()) {
        throw InputError("--workloads: unknown workload " + quote(w) + suggestion(w, names));
      }
    }
  }
  if (o.has("max-gpus")) {
    if (o.max_gpus < 1) throw InputError("--max-gpus: must be at least 1, got " + std::to_string(o.max_gpus));
    // A workload asked for by name that the limit leaves without a size,
    // or no run at all, is refused rather than left out of the report.
    long long smallest = 0;
    for (const OffloadWorkload& w : all) {
      if (!r.workloads.empty() && std::find(r.workloads.begin(), r.workloads.end(), w.name) == r.workloads.end()) continue;
      const long long least = *std::min_element(w.gpus.begin(), w.gpus.end());
      if (!r.workloads.empty() && o.max_gpus < least) {
        throw InputError("--max-gpus: " + std::to_string(o.max_gpus) + " leaves out every size of " + w.name + " (from " +
                         std::to_string(least) + " GPUs)");
      }
      smallest = smallest == 0 ? least : std::min(smallest, least);
    }
    if (o.max_gpus < smallest) {
      throw InputError("--max-gpus: " + std::to_string(o.max_gpus) + " leaves out every size (the smallest is " +
                       std::to_string(smallest) + " GPUs)");
    }
    r.max_gpus = o.max_gpus;
  }
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

int run_ace_isca21_study(const Options& o) {
  ReproOptions r;
  r.out_dir = o.out.empty() ? "ace-isca21" : o.out;
  r.jobs = default_jobs(o);
  if (o.has("sizes")) {
    r.sizes.clear();
    for (const std::string& s : split_list("--sizes", o.sizes)) {
      char* end = nullptr;
      const long v = std::strtol(s.c_str(), &end, 10);
      const std::vector<int>& sizes = ace_isca21_sizes();
      if (*end != '\0' || std::find(sizes.begin(), sizes.end(), v) == sizes.end()) {
        throw InputError("--sizes: " + quote(s) + " is not one of 16, 32, 64, 128");
      }
      r.sizes.push_back(static_cast<int>(v));
    }
  }
  if (o.has("workloads")) {
    r.workloads = split_list("--workloads", o.workloads);
    const std::vector<std::string>& names = ace_isca21_workloads();
    for (const std::string& w : r.workloads) {
      if (std::find(names.begin(), names.end(), w) == names.end()) {
        throw InputError("--workloads: unknown workload " + quote(w) + suggestion(w, names));
      }
    }
  }
  // The sensitivity studies vary ResNet-50 at 64 NPUs: a grid without
  // either has none, and says so.
  const bool sensitivity_grid = std::find(r.sizes.begin(), r.sizes.end(), 64) != r.sizes.end() &&
                                std::find(r.workloads.begin(), r.workloads.end(), "resnet50") != r.workloads.end();
  r.sensitivity = !o.no_sensitivity && sensitivity_grid;
  r.plots = !o.no_plots;
  const std::unique_ptr<ProgressDisplay> display = start_progress(o.progress);
  r.live = display.get();
  r.step_lines = !o.progress.off;  // without a display: a line every tenth of the runs, as before
  run_ace_isca21(r, stderr);
  if (display) display->finish();
  std::printf("wrote %s/results.csv%s and %s/report.md%s\n", r.out_dir.c_str(),
              r.sensitivity ? (", " + r.out_dir + "/sensitivity.csv").c_str() : "", r.out_dir.c_str(),
              !o.no_sensitivity && !sensitivity_grid ? " (no sensitivity studies: they vary resnet50 at 64 NPUs)" : "");
  return kExitOk;
}

// A study and the options it takes (every study takes --out, and
// --no-progress: it asks for nothing a study without progress shows).
struct Study {
  std::string_view name;
  int (*run)(const Options&);
  std::vector<std::string_view> takes;
};

const std::vector<Study>& studies() {
  static const std::vector<Study> all{
      {"ace-isca21", run_ace_isca21_study, {"jobs", "sizes", "workloads", "no-sensitivity", "no-plots", "progress"}},
      {"astra-sim-2.0", run_astra, {"data"}},
      {"nccl-tests", run_nccl_study, {"data"}},
      {"megatron", run_megatron_study, {"data"}},
      {"megatron-h100", run_megatron_h100_study, {"data"}},
      {"llm-runs", run_llm_runs_study, {"data", "runs", "calibration", "jobs"}},
      {"llm-offload", run_llm_offload_study, {"jobs", "workloads", "max-gpus", "no-plots", "progress"}},
      {"offload", run_offload_engines_study, {"no-plots"}},
      {"simai", run_simai_study, {"data"}},
      {"kineto", run_kineto_replays_study, {"data"}},
      {"placement", run_placement_study_command, {}},
  };
  return all;
}

std::vector<std::string> study_names() {
  std::vector<std::string> names;
  for (const Study& s : studies()) names.emplace_back(s.name);
  return names;
}

bool takes(const Study& s, std::string_view option) {
  return std::find(s.takes.begin(), s.takes.end(), option) != s.takes.end();
}

int run(const Options& o) {
  const auto study = std::find_if(studies().begin(), studies().end(), [&](const Study& s) { return s.name == o.study; });
  if (study == studies().end()) throw InputError("unknown study " + quote(o.study) + suggestion(o.study, study_names()));
  // An option the study does not take would be silently ignored: refused,
  // naming the studies that take it.
  for (const auto& [name, option] : o.given) {
    if (option->count() == 0 || name == "out" || name == "no-progress" || takes(*study, name)) continue;
    std::vector<std::string> by;
    for (const Study& s : studies()) {
      if (takes(s, name)) by.emplace_back(s.name);
    }
    throw InputError("--" + name + " applies to " + join_names(by, ", ") + ", not to " + std::string(study->name));
  }
  if (takes(*study, "data")) {
    std::error_code ec;
    if (!std::filesystem::is_directory(o.data, ec)) {
      throw InputError("--data: '" + o.data + "' is not a directory (the repository's tests/data" +
                       (o.has("data") ? ")" : "; run from the repository's root, or give --data DIR)"));
    }
  }
  if (o.has("runs")) (void)split_list("--runs", o.runs);
  return study->run(o);
}

}  // namespace

CommandRunner add_reproduce_command(CLI::App& app) {
  auto o = std::make_shared<Options>();
  const std::string names = join_names(study_names());
  CLI::App* c = app.add_subcommand(
      "reproduce",
      "Reproduce a study: ace-isca21 (docs/reproduction.md), astra-sim-2.0, nccl-tests, megatron, megatron-h100, llm-runs, simai, kineto and placement (docs/cluster.md) "
      "(docs/validation.md), llm-offload (docs/llm-offload.md), offload (docs/reproduction.md)");
  c->add_option("study", o->study, names)->required();
  o->given["out"] = c->add_option("--out", o->out, "output directory (default: the study's name)")->check(output_dir());
  o->given["data"] = c->add_option("--data", o->data, "astra-sim-2.0, nccl-tests, megatron, megatron-h100, llm-runs, simai, kineto: the repository's test data directory")->capture_default_str();
  o->given["runs"] = c->add_option("--runs", o->runs, "llm-runs: the rows to run, by id, comma-separated (default: all)")->check(non_empty());
  o->given["calibration"] =
      c->add_option("--calibration", o->calibration, "llm-runs: price every row in situ with this calibration file, or published-runs (docs/in-situ.md)")
          ->check(non_empty());
  o->given["jobs"] = c->add_option("--jobs", o->jobs, "ace-isca21, llm-runs, llm-offload: simulations run in parallel, 1..1024 (default: all cores)");
  o->given["sizes"] = c->add_option("--sizes", o->sizes, "ace-isca21: NPU counts, from 16,32,64,128 (default: all)");
  o->given["workloads"] = c->add_option("--workloads", o->workloads, "ace-isca21: from resnet50,gnmt,dlrm; llm-offload: from llama3-70b-zero1,llama3-70b-zero3,"
                 "mixtral-8x7b-ep8,llama3-8b-tp8 (default: all)");
  o->given["max-gpus"] = c->add_option("--max-gpus", o->max_gpus, "llm-offload: leave out the sizes above this many GPUs");
  o->given["no-sensitivity"] = c->add_flag("--no-sensitivity", o->no_sensitivity, "ace-isca21: skip the sensitivity studies");
  o->given["no-plots"] = c->add_flag("--no-plots", o->no_plots, "ace-isca21, offload, llm-offload: skip the PNG plots");
  add_progress_options(c, o->progress);
  o->given["progress"] = c->get_option("--progress");
  o->given["no-progress"] = c->get_option("--no-progress");
  return {[o] { return run(*o); }, nullptr, nullptr, nullptr};
}

}  // namespace acesim::cli
