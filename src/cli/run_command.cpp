// `acesim run`: a training workload on a platform.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/platform_options.h"
#include "config/input_error.h"
#include "config/units.h"
#include "report/training_report.h"
#include "chakra/chakra_trace.h"
#include "workload/formats/astra_workload.h"
#include "driver/chakra_run.h"
#include "workload/models/model_registry.h"

namespace acesim::cli {
namespace {

struct Options {
  PlatformOptions platform;
  std::string workload;  // ASTRA-sim 1.0 text file
  std::string chakra;    // Chakra trace prefix
  bool chakra_flops = false;
  std::string chakra_groups;
  std::string model;
  int batch = 0;
  std::string precision;
  int iterations = 0;
  std::string compare;
  bool json = false;
  std::string csv;
  std::string trace;
  int trace_npus = 4;
  std::vector<std::string> stragglers;
  CLI::Option* batch_option = nullptr;
  CLI::Option* iterations_option = nullptr;
  CLI::Option* trace_npus_option = nullptr;
};

std::vector<ExecutorKind> parse_compare(const std::string& text) {
  std::vector<ExecutorKind> out;
  std::stringstream ss(text);
  std::string item;
  const auto names = executor_names();
  while (std::getline(ss, item, ',')) {
    const auto e = parse_executor(item);
    if (!e) throw InputError("--compare: unknown executor '" + item + "'" + suggestion(item, names));
    out.push_back(*e);
  }
  if (out.empty()) throw InputError("--compare: give executors like sm,ace");
  return out;
}

Workload load_workload(const Options& o, const PlatformConfig& platform, const Topology& topo) {
  if (!o.workload.empty() && !o.model.empty()) throw InputError("--workload and --model cannot be combined");
  WorkloadConfig wc = platform.workload;
  if (!o.workload.empty()) {
    wc = WorkloadConfig{};
    wc.file = o.workload;
  } else if (!o.model.empty()) {
    wc = WorkloadConfig{};
    wc.model = o.model;
  } else if (!wc.given) {
    wc.model = "resnet50";  // the embedded default
  }
  if (o.batch_option->count() > 0) {
    if (o.batch < 1 || o.batch > 1'000'000) throw InputError("--batch: must be in 1..1000000, got " + std::to_string(o.batch));
    wc.batch_per_npu = o.batch;
  }
  if (!o.precision.empty()) {
    const auto bytes = parse_precision(o.precision);
    if (!bytes) {
      const auto names = precision_names();
      throw InputError("--precision: unknown precision '" + o.precision + "'" + suggestion(o.precision, names));
    }
    wc.bytes_per_element = *bytes;
  }
  if (o.iterations_option->count() > 0) {
    if (o.iterations < 1 || o.iterations > 10'000) throw InputError("--iterations: must be in 1..10000, got " + std::to_string(o.iterations));
    wc.iterations = o.iterations;
  }
  Workload w;
  if (!wc.file.empty()) {
    if (!wc.model.empty()) throw InputError("workload: give either a model or a file");
    if (o.batch_option->count() > 0 || !o.precision.empty()) {
      throw InputError("--batch/--precision apply to built-in models; an ASTRA-sim workload file fixes its own sizes");
    }
    w = read_astra_workload(wc.file, topo);
  } else {
    if (find_model(wc.model) == nullptr) {
      const auto names = model_registry().names();
      throw InputError("unknown model '" + wc.model + "'" + suggestion(wc.model, names));
    }
    ModelOptions mo;
    mo.batch_per_npu = wc.batch_per_npu;
    mo.bytes_per_element = wc.bytes_per_element;
    mo.iterations = wc.iterations;
    mo.data_dims = wc.data_dims;
    mo.model_dims = wc.model_dims;
    w = build_model(wc.model, mo, topo);
  }
  w.iterations = wc.iterations;
  return w;
}

std::vector<std::pair<Rank, double>> parse_stragglers(const std::vector<std::string>& items, const Topology& topo) {
  std::vector<std::pair<Rank, double>> out;
  for (const std::string& s : items) {
    const std::size_t eq = s.find('=');
    const std::string rank_text = eq == std::string::npos ? std::string() : s.substr(0, eq);
    const std::string factor_text = eq == std::string::npos ? std::string() : s.substr(eq + 1);
    char* end1 = nullptr;
    char* end2 = nullptr;
    const long rank = std::strtol(rank_text.c_str(), &end1, 10);
    const double factor = std::strtod(factor_text.c_str(), &end2);
    if (rank_text.empty() || factor_text.empty() || *end1 != '\0' || *end2 != '\0') {
      throw InputError("--straggler: '" + s + "' is not RANK=FACTOR (e.g. 3=1.5)");
    }
    if (rank < 0 || rank >= topo.num_npus()) {
      throw InputError("--straggler: rank " + std::to_string(rank) + " does not exist (0.." + std::to_string(topo.num_npus() - 1) + ")");
    }
    if (!(factor > 0.0 && factor <= 1000.0)) throw InputError("--straggler: factor must be in (0, 1000], got '" + factor_text + "'");
    out.emplace_back(static_cast<Rank>(rank), factor);
  }
  return out;
}

std::string with_executor_suffix(const std::string& path, ExecutorKind e, bool several) {
  if (!several) return path;
  const std::filesystem::path p(path);
  return (p.parent_path() / (p.stem().string() + "." + std::string(to_string(e)) + p.extension().string())).string();
}

// `--chakra PREFIX`: the traces PREFIX.<rank>.et, one per NPU.
int run_chakra_traces(const Options& o, const PlatformConfig& platform, const std::vector<ExecutorKind>& executors,
                      const Topology& topo) {
  if (!o.workload.empty() || !o.model.empty()) throw InputError("--chakra cannot be combined with --workload or --model");
  if (o.batch_option->count() > 0 || !o.precision.empty() || o.iterations_option->count() > 0) {
    throw InputError("--batch/--precision/--iterations apply to built-in models and ASTRA-sim tables; a Chakra trace fixes its own");
  }
  const std::vector<chakra::Trace> traces = chakra::read_traces(o.chakra, static_cast<int>(topo.num_npus()));
  ChakraGroups groups;
  if (!o.chakra_groups.empty()) groups = read_chakra_groups(o.chakra_groups, topo);
  ChakraRunOptions co;
  co.groups = o.chakra_groups.empty() ? nullptr : &groups;
  co.full = o.platform.full;
  co.roofline = o.chakra_flops;
  co.trace_ranks = o.trace.empty() ? 0 : o.trace_npus;
  co.stragglers = parse_stragglers(o.stragglers, topo);
  std::vector<ChakraReport> reports;
  for (ExecutorKind e : executors) {
    PlatformConfig p = platform;
    p.npu.executor = e;
    reports.push_back(run_chakra(p, traces, o.chakra, co));
  }
  for (const std::string& warning : platform.warnings) std::fprintf(stderr, "acesim: warning: %s\n", warning.c_str());
  const bool several = reports.size() > 1;
  for (const ChakraReport& r : reports) {
    if (!o.csv.empty()) {
      write_chakra_csv(r, several ? (std::filesystem::path(o.csv) / std::string(to_string(r.executor))).string() : o.csv);
    }
    if (!o.trace.empty()) {
      const std::string path = with_executor_suffix(o.trace, r.executor, several);
      std::ofstream f(path);
      if (!f) throw InputError("--trace: cannot write " + path);
      f << chakra_trace_events(r).dump() << '\n';
    }
  }
  if (o.json) {
    nlohmann::json runs = nlohmann::json::array();
    for (const ChakraReport& r : reports) runs.push_back(chakra_json(r));
    std::printf("%s\n", (several ? nlohmann::json{{"runs", runs}} : runs[0]).dump(2).c_str());
    return kExitOk;
  }
  for (std::size_t i = 0; i < reports.size(); ++i) {
    if (several) std::printf("%s== executor %s\n", i ? "\n" : "", std::string(to_string(reports[i].executor)).c_str());
    std::fputs(format_chakra(reports[i], platform).c_str(), stdout);
  }
  return kExitOk;
}

int run(const Options& o) {
  PlatformConfig platform = load_platform(o.platform);
  const bool astra = !o.platform.network.empty();
  const bool executor_given = !o.platform.executor.empty();
  if (astra && !executor_given) {
    // ASTRA-sim's endpoint: compute times as given, communication free.
    platform.npu.executor = ExecutorKind::kIdeal;
    platform.npu.fixed_kernel_times = true;
  }
  const bool nothing_given = o.platform.platform.empty() && !astra && o.workload.empty() && o.model.empty() && o.chakra.empty() &&
                             !executor_given && o.compare.empty();
  std::vector<ExecutorKind> executors;
  if (!o.compare.empty()) {
    if (executor_given) throw InputError("--compare and --executor cannot be combined");
    executors = parse_compare(o.compare);
  } else if (nothing_given) {
    executors = {ExecutorKind::kSm, ExecutorKind::kAce};  // the default: baseline and ACE side by side
  } else {
    executors = {platform.npu.executor};
  }
  if (o.trace_npus_option->count() > 0 && (o.trace_npus < 1 || o.trace_npus > 1024)) {
    throw InputError("--trace-npus: must be in 1..1024, got " + std::to_string(o.trace_npus));
  }
  const Topology topo(platform.dims);
  if (!o.chakra.empty()) return run_chakra_traces(o, platform, executors, topo);
  if (o.chakra_flops || !o.chakra_groups.empty()) throw InputError("--chakra-flops and --chakra-groups apply to --chakra traces");
  const Workload workload = load_workload(o, platform, topo);
  TrainOptions to;
  to.trace_ranks = o.trace.empty() ? 0 : o.trace_npus;
  to.full = o.platform.full;
  to.stragglers = parse_stragglers(o.stragglers, topo);
  std::vector<TrainReport> reports;
  std::vector<TimePs> even_iteration;  // the same run without stragglers
  for (ExecutorKind e : executors) {
    PlatformConfig p = platform;
    p.npu.executor = e;
    reports.push_back(run_training(p, workload, to));
    if (!to.stragglers.empty()) {
      TrainOptions even = to;
      even.stragglers.clear();
      even.trace_ranks = 0;
      even_iteration.push_back(run_training(p, workload, even).iteration_ps);
    }
  }
  for (const std::string& warning : platform.warnings) std::fprintf(stderr, "acesim: warning: %s\n", warning.c_str());
  const bool several = reports.size() > 1;
  auto suffixed = [&](const std::string& path, ExecutorKind e) { return with_executor_suffix(path, e, several); };
  if (!o.csv.empty()) {
    for (const TrainReport& r : reports) {
      write_training_csv(r, several ? (std::filesystem::path(o.csv) / std::string(to_string(r.executor))).string() : o.csv);
    }
  }
  if (!o.trace.empty()) {
    for (const TrainReport& r : reports) {
      const std::string path = suffixed(o.trace, r.executor);
      std::ofstream f(path);
      if (!f) throw InputError("--trace: cannot write " + path);
      f << training_trace(r).dump() << '\n';
    }
  }
  if (o.json) {
    if (several) {
      nlohmann::json runs = nlohmann::json::array();
      for (const TrainReport& r : reports) runs.push_back(training_json(r));
      std::printf("%s\n", nlohmann::json{{"runs", runs}}.dump(2).c_str());
    } else {
      std::printf("%s\n", training_json(reports[0]).dump(2).c_str());
    }
  } else if (several) {
    std::fputs(format_comparison(reports, platform).c_str(), stdout);
  } else {
    std::fputs(format_training(reports[0], platform).c_str(), stdout);
  }
  if (!even_iteration.empty() && !o.json) {
    for (std::size_t i = 0; i < reports.size(); ++i) {
      const double with = ps_to_us(reports[i].iteration_ps);
      const double without = ps_to_us(even_iteration[i]);
      std::printf("stragglers (%s): iteration %.3f us against %.3f us without them (%+.1f%%)\n",
                  std::string(to_string(reports[i].executor)).c_str(), with, without,
                  without > 0 ? 100.0 * (with - without) / without : 0.0);
    }
  }
  return kExitOk;
}

}  // namespace

std::function<int()> add_run_command(CLI::App& app) {
  auto o = std::make_shared<Options>();
  CLI::App* c = app.add_subcommand(
      "run", "Simulate training iterations (default: ResNet-50, data parallel, on the default platform, sm and ace side by side)");
  add_platform_options(c, o->platform);
  c->add_option("--workload", o->workload, "ASTRA-sim 1.0 text workload (compute in cycles of 1 ns)")->check(non_empty());
  c->add_option("--chakra", o->chakra, "Chakra execution traces PREFIX.<rank>.et, one per NPU (ASTRA-sim 2.0's format)")
      ->check(non_empty());
  c->add_flag("--chakra-flops", o->chakra_flops,
              "Chakra compute nodes with num_ops run as FLOPs (and tensor_size HBM bytes) through the NPU model, not their duration");
  c->add_option("--chakra-groups", o->chakra_groups,
                "communicator groups of the traces' pg_name, ASTRA-sim's JSON {\"name\": [ranks...]}; each must be whole dimensions")
      ->check(non_empty());
  c->add_option("--model", o->model, "built-in model: " + model_registry().choices())->check(non_empty());
  o->batch_option = c->add_option("--batch", o->batch, "samples per NPU (built-in models)");
  c->add_option("--precision", o->precision, "fp16 | bf16 | fp32 | fp8 (built-in models)")->check(non_empty());
  o->iterations_option = c->add_option("--iterations", o->iterations, "training iterations to simulate (default 2)");
  c->add_option("--compare", o->compare, "run several executors side by side, e.g. sm,ace,ideal")->check(non_empty());
  c->add_flag("--json", o->json, "print JSON instead of tables");
  c->add_option("--csv", o->csv, "write layers.csv and collectives.csv into this directory")->check(non_empty());
  c->add_option("--trace", o->trace, "write a Chrome/Perfetto trace (open in ui.perfetto.dev)")->check(non_empty());
  o->trace_npus_option = c->add_option("--trace-npus", o->trace_npus, "NPUs in the trace, from NPU 0 (default 4)");
  c->add_option("--straggler", o->stragglers, "RANK=FACTOR: that NPU computes FACTOR times slower (repeatable)");
  return [o] { return run(*o); };
}

}  // namespace acesim::cli
