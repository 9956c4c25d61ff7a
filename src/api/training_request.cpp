// Training runs as users ask for them (api/api.h).
#include <algorithm>
#include <charconv>
#include <filesystem>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "api/api.h"
#include "api/llm_request.h"
#include "api/per_executor.h"
#include "chakra/chakra_trace.h"
#include "config/failure_model.h"
#include "config/input_error.h"
#include "driver/kineto_chakra.h"
#include "config/units.h"
#include "endpoint/executor_registry.h"
#include "workload/formats/format_registry.h"
#include "workload/models/model_registry.h"

namespace acesim::api {
namespace {

constexpr const char* kChakraOutApplies =
    "--chakra-out applies to LLM plans (a transformer --model) and --kineto replays: they are what it writes as Chakra traces";

std::vector<std::string> parse_compare(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const ExecutorEntry* e = executor_registry().find(item);
    if (e == nullptr) throw InputError("--compare: " + executor_registry().unknown(item));
    if (std::find(out.begin(), out.end(), e->name) != out.end()) {
      throw InputError("--compare: " + e->name + " is given twice (each executor runs once)");
    }
    out.push_back(e->name);
  }
  if (out.empty()) throw InputError("--compare: give executors like sm,ace");
  return out;
}

// A layer-table format by name (astra-sim-1.0 unless the request says).
const WorkloadFormatEntry& table_format(const std::string& name) {
  const std::string n = name.empty() ? "astra-sim-1.0" : name;
  const WorkloadFormatEntry* f = workload_format_registry().find(n);
  if (f == nullptr) throw InputError("--format: " + workload_format_registry().unknown(n));
  if (!f->read_table) throw InputError("--format: " + f->name + " is not a layer table (use " + f->option + ")");
  return *f;
}

// The workload a request names, else the platform file's, else ResNet-50.
WorkloadConfig workload_config(const TrainingRequest& o, const PlatformConfig& platform) {
  if (!o.workload_file.empty() && !o.model.empty()) throw InputError("--workload and --model cannot be combined");
  WorkloadConfig wc = platform.workload;
  if (!o.workload_file.empty()) {
    wc = WorkloadConfig{};
    wc.file = o.workload_file;
  } else if (!o.model.empty()) {
    wc = WorkloadConfig{};
    wc.model = o.model;
  } else if (!wc.given) {
    wc.model = "resnet50";  // the embedded default
  }
  if (o.batch) {
    if (*o.batch < 1 || *o.batch > 1'000'000) throw InputError("--batch: must be in 1..1000000, got " + std::to_string(*o.batch));
    wc.batch_per_npu = *o.batch;
  }
  // FP8 recipes are the LLM builder's (set_llm_precision); a layer table
  // refuses them below.
  if (!o.precision.empty() && !llm_only_precision(o.precision)) {
    const auto bytes = parse_precision(o.precision);
    if (!bytes) throw InputError("--precision: unknown precision '" + o.precision + "'" + suggestion(o.precision, llm_precision_names()));
    if (const std::string why = precision_unsupported(platform.npu, *bytes); !why.empty()) throw InputError("--precision: " + why);
    wc.bytes_per_element = *bytes;
  }
  if (o.iterations) {
    if (*o.iterations < 1 || *o.iterations > 10'000) {
      throw InputError("--iterations: must be in 1..10000, got " + std::to_string(*o.iterations));
    }
    wc.iterations = *o.iterations;
  }
  return wc;
}

}  // namespace

Workload load_workload(const TrainingRequest& o, const PlatformConfig& platform, const Topology& topo) {
  const WorkloadConfig wc = workload_config(o, platform);
  Workload w;
  if (!wc.file.empty()) {
    if (!wc.model.empty()) throw InputError("workload: give either a model or a file");
    if (o.batch || !o.precision.empty()) {
      throw InputError("--batch/--precision apply to built-in models; an ASTRA-sim workload file fixes its own sizes");
    }
    w = table_format(o.workload_format).read_table(wc.file, topo);
  } else {
    const ModelEntry* model = find_model(wc.model);
    const bool file = wc.model.ends_with(".yaml") || wc.model.ends_with(".yml");
    if (model == nullptr && !file) {
      throw InputError("unknown model '" + wc.model + "'" + suggestion(wc.model, model_names()) +
                       " (or a model file, *.yaml)");
    }
    ModelOptions mo;
    mo.batch_per_npu = wc.batch_per_npu;
    mo.bytes_per_element = wc.bytes_per_element;
    mo.iterations = wc.iterations;
    mo.data_dims = wc.data_dims;
    mo.model_dims = wc.model_dims;
    w = model != nullptr ? model->build(mo, topo) : build_transformer(read_transformer_file(wc.model), mo, topo);
  }
  w.iterations = wc.iterations;
  return w;
}

namespace {

void run_chakra_traces(const TrainingRequest& o, const std::vector<std::string>& executors, const Topology& topo,
                       TrainingRun& run) {
  if (!o.workload_file.empty() || !o.model.empty()) throw InputError("--chakra cannot be combined with --workload or --model");
  if (o.batch || !o.precision.empty()) {
    throw InputError("--batch/--precision apply to built-in models; a Chakra trace fixes its own sizes");
  }
  if (o.iterations && (*o.iterations < 1 || *o.iterations > 10'000)) {
    throw InputError("--iterations: must be in 1..10000, got " + std::to_string(*o.iterations));
  }
  const std::vector<chakra::Trace> traces = chakra::read_traces(o.chakra_prefix, static_cast<int>(topo.num_npus()));
  ChakraGroups groups;
  if (!o.chakra_groups.empty()) groups = read_chakra_groups(o.chakra_groups, topo);
  ChakraRunOptions co;
  co.groups = o.chakra_groups.empty() ? nullptr : &groups;
  co.full = o.platform.full;
  co.roofline = o.chakra_flops;
  co.trace_ranks = o.trace_ranks;
  co.stragglers = parse_stragglers(o.stragglers, topo.num_npus());
  co.iterations = o.iterations.value_or(1);  // one pass over the traces unless asked
  per_executor(run.platform, executors, o.progress, run.chakra, [&](const PlatformConfig& p, const Progress& progress) {
    co.progress = progress;
    return run_chakra(p, traces, o.chakra_prefix, co);
  });
}

void run_kineto_trace(const TrainingRequest& o, const std::vector<std::string>& executors, TrainingRun& run) {
  if (!o.workload_file.empty() || !o.model.empty() || !o.chakra_prefix.empty()) {
    throw InputError("--kineto cannot be combined with --workload, --model or --chakra");
  }
  if (!o.workload_format.empty()) throw InputError("--format applies to --workload FILE, not to --kineto traces");
  if (o.chakra_flops || !o.chakra_groups.empty()) throw InputError("--chakra-flops and --chakra-groups apply to --chakra traces, not to --kineto");
  if (o.platform.full) {
    throw InputError("--full does not apply to --kineto: the replay runs each traced rank's own trace (the report's 'simulated' line)");
  }
  if (o.kineto_comm == "measured") {
    // Every activity keeps its traced time: nothing of the platform's
    // communication applies.
    const PlatformRequest& p = o.platform;
    const char* given = !o.compare.empty() ? "--compare" : !p.executor.empty() ? "--executor" : !p.backend.empty() ? "--backend"
                      : !p.granularity.empty() ? "--granularity" : p.chunks ? "--chunks" : !o.placement.empty() ? "--placement"
                      : nullptr;
    if (given != nullptr) {
      throw InputError(std::string(given) + " has no effect with --kineto-comm measured: every activity, communication included, "
                       "keeps its traced time; simulate communication (--kineto-comm simulated) to change it");
    }
  }
  TrainingRequest::Llm others = o.llm;
  others.dp.reset();
  others.chakra_out.clear();
  if (others.given()) {
    throw InputError("--tp/--pp/--zero/... apply to transformer models (--model); a PyTorch profiler trace takes --dp N (its data-parallel width)");
  }
  if (o.batch || !o.precision.empty() || o.iterations || !o.stragglers.empty()) {
    throw InputError("--batch, --precision, --iterations and --straggler do not apply to --kineto: the trace fixes its work and steps");
  }
  KinetoRunOptions ko;
  if (o.kineto_comm.empty() || o.kineto_comm == "simulated") {
    ko.simulate_comm = true;
  } else if (o.kineto_comm == "measured") {
    ko.simulate_comm = false;
  } else {
    throw InputError("--kineto-comm: '" + o.kineto_comm + "' is not simulated or measured");
  }
  if (o.llm.dp && *o.llm.dp < 1) throw InputError(fmt::format("--dp: must be at least 1, got {}", *o.llm.dp));
  if (o.llm.dp && !ko.simulate_comm) {
    throw InputError("--dp has no effect with --kineto-comm measured: communication then takes its traced time, whatever the "
                     "data-parallel width; simulate it (--kineto-comm simulated) to change the width");
  }
  ko.job.dp = o.llm.dp.value_or(0);
  ko.job.placement = o.placement;
  ko.timeline_ranks = o.trace_ranks;
  const std::vector<kineto::Trace> traces = read_kineto_traces(o.kineto_path);
  if (!o.llm.chakra_out.empty()) export_kineto_chakra(traces, run.platform, ko, o.llm.chakra_out);
  per_executor(run.platform, executors, o.progress, run.kineto, [&](const PlatformConfig& p, const Progress& progress) {
    ko.progress = progress;
    return run_kineto(p, traces, ko);
  });
}

}  // namespace

namespace {

// --days: each run's long-run goodput (driver/goodput.h).
void add_goodput(const TrainingRequest& o, TrainingRun& run) {
  const TrainingRequest::Goodput& g = o.goodput;
  if (!g.given()) return;
  if (!g.days) throw InputError("--failures/--checkpoint-every/--trials/--seed/--checkpoint-GB/--checkpoint-async apply with --days");
  if (!run.chakra.empty() || !run.kineto.empty()) {
    throw InputError("--days applies to LLM plans and layer-table training runs, not to Chakra or profiler traces");
  }
  const FailureModel model = load_failure_model(g.failures.empty() ? "default" : g.failures);
  GoodputOptions go;
  go.days = *g.days;
  if (g.trials) go.trials = *g.trials;
  if (g.seed) {
    if (*g.seed < 0) throw InputError("--seed: must be at least 0, got " + std::to_string(*g.seed));
    go.seed = static_cast<std::uint64_t>(*g.seed);
  }
  if (!g.checkpoint_every.empty() && g.checkpoint_every != "auto") {
    const std::string& t = g.checkpoint_every;
    long long v = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || end != t.data() + t.size()) {
      throw InputError("--checkpoint-every: expected 'auto' or a number of iterations, got '" + t + "'");
    }
    go.checkpoint_every = v;
  }
  if (g.checkpoint_GB) {
    if (!(*g.checkpoint_GB > 0.0 && *g.checkpoint_GB <= 1e9)) {
      throw InputError(fmt::format("--checkpoint-GB: must be above 0 and at most 1e9, got {:g}", *g.checkpoint_GB));
    }
    go.checkpoint_GB = g.checkpoint_GB;
  }
  go.async = g.async;
  const JobComponents components = job_components(run.platform);
  for (const LlmReport& r : run.llm) {
    run.goodput.push_back(simulate_goodput(model, components, r.iteration_ps, r.model_state_bytes, r.model_state_text, go));
  }
  for (const TrainReport& r : run.reports) {
    run.goodput.push_back(simulate_goodput(model, components, r.iteration_ps, 0.0, "", go));
  }
}

TrainingRun simulate_runs(const TrainingRequest& o) {
  TrainingRun run;
  run.platform = load_platform(o.platform);
  const bool astra = o.platform.astra();
  const bool executor_given = !o.platform.executor.empty();
  if (astra && !executor_given) {
    // ASTRA-sim's endpoint: compute times as given, communication free.
    run.platform.npu.executor = "ideal";
    run.platform.npu.fixed_kernel_times = true;
  }
  const bool nothing_given = !o.platform.given() && !astra && o.workload_file.empty() && o.model.empty() &&
                             o.chakra_prefix.empty() && o.kineto_path.empty() && !executor_given && o.compare.empty();
  std::vector<std::string> executors;
  if (!o.compare.empty()) {
    if (executor_given) throw InputError("--compare and --executor cannot be combined");
    executors = parse_compare(o.compare);
  } else if (nothing_given) {
    executors = {"sm", "ace"};  // the default: baseline and ACE side by side
  } else {
    executors = {run.platform.npu.executor};
  }
  const Topology topo(run.platform.dims);
  if (!o.kineto_comm.empty() && o.kineto_path.empty()) throw InputError("--kineto-comm applies to --kineto traces");
  if (!o.placement.empty() && o.kineto_path.empty()) throw InputError("--placement applies to --kineto traces");
  if (!o.kernel_times.empty() && (!o.chakra_prefix.empty() || !o.kineto_path.empty() || is_simai_request(o) || !o.workload_file.empty())) {
    throw InputError("--kernel-times applies to transformer models (--model); traces and workload files give their own kernel times");
  }
  if (!o.calibration.empty() && (!o.chakra_prefix.empty() || !o.kineto_path.empty() || is_simai_request(o) || !o.workload_file.empty())) {
    throw InputError("--calibration applies to transformer models (--model); traces and workload files give their own kernel times");
  }
  if (!o.kineto_path.empty()) {
    run_kineto_trace(o, executors, run);
    return run;
  }
  if (!o.chakra_prefix.empty()) {
    if (!o.workload_format.empty()) throw InputError("--format applies to --workload FILE, not to --chakra traces");
    if (!o.llm.chakra_out.empty()) throw InputError(kChakraOutApplies);
    if (o.llm.given()) throw InputError("--tp/--pp/--dp/... apply to transformer models (--model), not to Chakra traces");
    run_chakra_traces(o, executors, topo, run);
    return run;
  }
  if (o.chakra_flops || !o.chakra_groups.empty()) throw InputError("--chakra-flops and --chakra-groups apply to --chakra traces");
  if (!o.workload_format.empty() && o.workload_file.empty()) throw InputError("--format applies to --workload FILE");
  if (is_simai_request(o)) {
    if (!o.model.empty()) throw InputError("--workload and --model cannot be combined");
    if (!o.llm.chakra_out.empty()) throw InputError(kChakraOutApplies);
    run_simai_request(o, executors, topo, run);
    return run;
  }
  if (o.workload_file.empty()) {
    const WorkloadConfig wc = workload_config(o, run.platform);
    if (wc.file.empty()) {
      if (const std::optional<TransformerShape> shape = llm_shape(o, wc.model)) {
        run_llm_request(o, *shape, executors, topo, run);
        return run;
      }
    }
  }
  if (!o.llm.chakra_out.empty()) throw InputError(kChakraOutApplies);
  if (llm_only_precision(o.precision)) {
    throw InputError("--precision: " + o.precision + " is an FP8 recipe of transformer models (--model); layer tables take " +
                     join_names(precision_names(), ", "));
  }
  if (o.llm.given()) throw InputError("--tp/--pp/--dp/... apply to transformer models (--model), not to workload files");
  if (!o.kernel_times.empty()) throw InputError("--kernel-times applies to transformer models (--model), not to the layer-table models");
  if (!o.calibration.empty()) throw InputError("--calibration applies to transformer models (--model), not to the layer-table models");
  const Workload workload = load_workload(o, run.platform, topo);
  TrainOptions to;
  to.trace_ranks = o.trace_ranks;
  to.full = o.platform.full;
  to.stragglers = parse_stragglers(o.stragglers, topo.num_npus());
  // Each executor's run, and with stragglers its run without them: equal shares.
  const std::size_t per = to.stragglers.empty() ? 1 : 2;
  const std::size_t shares = executors.size() * per;
  const Progress progress(o.progress);
  for (std::size_t i = 0; i < executors.size(); ++i) {
    const std::string& e = executors[i];
    PlatformConfig p = run.platform;
    p.npu.executor = e;
    to.progress = progress.part(i * per, shares, executors.size() > 1 ? e : "");
    run.reports.push_back(run_training(p, workload, to));
    if (!to.stragglers.empty()) {
      TrainOptions even = to;
      even.stragglers.clear();
      even.trace_ranks = 0;
      even.progress = progress.part(i * per + 1, shares, executors.size() > 1 ? e + " without stragglers" : "without stragglers");
      run.even_iteration_ps.push_back(run_training(p, workload, even).iteration_ps);
    }
  }
  return run;
}

}  // namespace

TrainingRun simulate_training(const TrainingRequest& o) {
  if (o.goodput.given() && !o.goodput.days) {
    throw InputError("--failures/--checkpoint-every/--trials/--seed/--checkpoint-GB/--checkpoint-async apply with --days");
  }
  // A failure model's errors before the simulation.
  if (o.goodput.days) (void)load_failure_model(o.goodput.failures.empty() ? "default" : o.goodput.failures);
  TrainingRun run = simulate_runs(o);
  add_goodput(o, run);
  return run;
}

}  // namespace acesim::api
