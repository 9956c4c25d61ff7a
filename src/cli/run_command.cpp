// `acesim run`: a training workload on a platform.
#include <cstdio>
#include <filesystem>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/platform_options.h"
#include "cli/progress_options.h"
#include "config/failure_model.h"
#include "config/input_error.h"
#include "config/output_file.h"
#include "config/units.h"
#include "report/chakra_report.h"
#include "report/goodput_report.h"
#include "report/kineto_report.h"
#include "report/llm_report.h"
#include "workload/llm/llm_graph.h"
#include "workload/llm/parallel_plan.h"
#include "report/trace_merge.h"
#include "report/training_report.h"
#include "workload/formats/format_registry.h"
#include "workload/models/models.h"

namespace acesim::cli {
namespace {

struct Options {
  PlatformOptions platform;
  api::TrainingRequest request;
  int batch = 0;
  int iterations = 0;
  bool json = false;
  std::string csv;
  std::string trace;
  int trace_npus = 4;
  ProgressOptions progress;
  CLI::Option* batch_option = nullptr;
  CLI::Option* iterations_option = nullptr;
  CLI::Option* trace_npus_option = nullptr;
};

std::string table_format_names() {
  std::vector<std::string> names;
  for (const WorkloadFormatEntry& f : workload_format_registry().entries()) {
    if (f.option == "--workload FILE") names.push_back(f.name);
  }
  return join_names(names);
}

// --trace FILE: one file, whatever the number of executors (several side
// by side, each its processes: report/trace_merge.h).
template <typename Report, typename ToTrace>
void write_trace(const Options& o, const std::vector<Report>& reports, ToTrace to_trace) {
  if (o.trace.empty()) return;
  std::vector<std::pair<std::string, nlohmann::json>> traces;
  for (const Report& r : reports) traces.emplace_back(r.executor, to_trace(r));
  write_output_file(o.trace, merge_traces(traces).dump() + '\n', "--trace");
}

void write_chakra_files(const Options& o, const std::vector<ChakraReport>& reports) {
  const bool several = reports.size() > 1;
  for (const ChakraReport& r : reports) {
    if (!o.csv.empty()) {
      write_chakra_csv(r, several ? (std::filesystem::path(o.csv) / r.executor).string() : o.csv);
    }
  }
  write_trace(o, reports, [](const ChakraReport& r) { return chakra_trace_events(r); });
}

void write_training_files(const Options& o, const std::vector<TrainReport>& reports) {
  const bool several = reports.size() > 1;
  if (!o.csv.empty()) {
    for (const TrainReport& r : reports) {
      write_training_csv(r, several ? (std::filesystem::path(o.csv) / r.executor).string() : o.csv);
    }
  }
  write_trace(o, reports, [](const TrainReport& r) { return training_trace(r); });
}

void print_training_tables(const api::TrainingRun& run) {
  const std::vector<TrainReport>& reports = run.reports;
  if (reports.size() > 1) {
    std::fputs(format_comparison(reports, run.platform).c_str(), stdout);
  } else {
    std::fputs(format_training(reports[0], run.platform).c_str(), stdout);
  }
  for (std::size_t i = 0; i < run.even_iteration_ps.size(); ++i) {
    const double with = ps_to_us(reports[i].iteration_ps);
    const double without = ps_to_us(run.even_iteration_ps[i]);
    std::printf("stragglers (%s): iteration %.3f us against %.3f us without them (%+.1f%%)\n",
                reports[i].executor.c_str(), with, without, without > 0 ? 100.0 * (with - without) / without : 0.0);
  }
}

// Megatron-LM's plan for transformer models (docs/models.md, "LLM training").
void add_llm_options(CLI::App* c, api::TrainingRequest::Llm& l) {
  const char* group = "LLM plan (transformer models)";
  c->add_option("--tp", l.tp, "tensor-parallel size (default: the first dimension's NPUs when they divide the model)")->group(group);
  c->add_option("--pp", l.pp, "pipeline-parallel stages (default 1)")->group(group);
  c->add_option("--dp", l.dp, "data-parallel replicas (default: the GPUs left); with --kineto: the data-parallel groups' width")->group(group);
  c->add_option("--ep", l.ep, "expert-parallel size, dividing --dp (default 1)")->group(group);
  c->add_option("--expert-tensor-parallel-size", l.expert_tp,
                "routed experts split over this many tensor-parallel ranks: 1 or --tp (default --tp, Megatron's)")
      ->group(group);
  c->add_option("--cp", l.cp, "context-parallel size (default 1)")->group(group);
  c->add_flag("--sequence-parallel", l.sequence_parallel, "sequence parallelism with tensor parallelism")->group(group);
  c->add_option("--zero", l.zero, "ZeRO stage 0-3 (1: distributed optimizer; 3: parameters sharded, FSDP-like)")->group(group);
  c->add_option("--micro-batch", l.micro_batch, "sequences per micro-batch (default 1)")->group(group);
  c->add_option("--global-batch", l.global_batch, "sequences per iteration, all replicas (default: micro-batch x dp)")->group(group);
  c->add_option("--schedule", l.schedule, "pipeline schedule: " + join_names(pipe_schedule_names()) + " (default 1f1b)")
      ->check(non_empty())->group(group);
  c->add_option("--virtual-stages", l.virtual_stages, "model chunks per stage (interleaved schedule)")->group(group);
  c->add_option("--decoder-first-pipeline-num-layers", l.first_stage_layers,
                "layers of the first pipeline stage; the middle stages share the rest evenly (Megatron-LM's flag)")
      ->group(group);
  c->add_option("--decoder-last-pipeline-num-layers", l.last_stage_layers,
                "layers of the last pipeline stage (Megatron-LM's flag)")
      ->group(group);
  c->add_flag("--account-for-embedding-in-pipeline-split", l.embedding_in_split,
              "count the embedding as a layer of the first stage when splitting (Megatron-LM's flag)")
      ->group(group);
  c->add_flag("--account-for-loss-in-pipeline-split", l.loss_in_split,
              "count the loss as a layer of the last stage when splitting (Megatron-LM's flag)")
      ->group(group);
  c->add_option("--recompute", l.recompute, "activation recomputation: " + join_names(recompute_names()) + " (default none)")
      ->check(non_empty())->group(group);
  c->add_option("--attention", l.attention, "attention kernel: " + join_names(attention_kernel_names()) + " (default fused)")
      ->check(non_empty())->group(group);
  c->add_option("--zero3-fetch", l.zero3_fetch,
                "with --zero 3, how parameters are fetched: " + join_names(zero3_fetch_names()) +
                    " (default prefetch: a layer ahead, under the compute; blocking: DeepSpeed ZeRO-3 of 2021, per tensor, device synchronised)")
      ->check(non_empty())->group(group);
  c->add_flag("--overlap-grad-reduce", l.overlap_grad_reduce, "reduce gradients during the last micro-batch's backward (Megatron-LM's flag)")->group(group);
  c->add_flag("--overlap-param-gather", l.overlap_param_gather, "with --zero 1/2: gather parameters under the next forward (Megatron-LM's flag)")->group(group);
  c->add_option("--reshard-after-forward", l.reshard_after_forward,
                "with --zero 3: " + join_names(reshard_after_forward_names()) +
                    " (PyTorch FSDP2's reshard_after_forward as torchtitan names it; default always: gathered again for the backward)")
      ->check(non_empty())->group(group);
  c->add_flag("--tp-comm-overlap", l.tp_comm_overlap,
              "with --sequence-parallel: pipeline each layer's tensor-parallel all-gathers and reduce-scatters with its GEMMs "
              "(Megatron-Core's flag, Transformer Engine's userbuffers)")
      ->group(group);
  c->add_flag("--allow-oom", l.allow_oom, "run a plan whose memory exceeds the GPU's HBM (reported, not refused)")->group(group);
  c->add_option("--chakra-out", l.chakra_out,
                "also write the job (an LLM plan, or a --kineto replay) as Chakra traces PREFIX.<rank>.et and PREFIX.groups.json (at most 4096 ranks)")
      ->check(non_empty())
      ->group(group);
}

// A long run with failures (docs/goodput.md).
void add_goodput_options(CLI::App* c, api::TrainingRequest::Goodput& g) {
  const char* group = "Failures and goodput (a long run)";
  c->add_option("--days", g.days, "simulate a run of this many days with failures, checkpoints and restarts; report its goodput")->group(group);
  c->add_option("--failures", g.failures,
                "failure model: " + join_names(failure_model_names()) + " (Meta's Llama 3 405B run), or a YAML file (docs/goodput.md)")
      ->group(group)
      ->check(non_empty());
  c->add_option("--checkpoint-every", g.checkpoint_every, "iterations between checkpoints, or auto (Daly's interval; the default)")
      ->group(group)
      ->check(non_empty());
  c->add_option("--trials", g.trials, "Monte Carlo trials (default 1000)")->group(group);
  c->add_option("--seed", g.seed, "the trials' random seed (default 1)")->group(group);
  c->add_option("--checkpoint-GB", g.checkpoint_GB, "checkpoint size (default: the model's weights and optimizer states)")->group(group);
  c->add_flag("--checkpoint-async", g.async, "checkpoints written while training goes on (default: training waits for the write)")->group(group);
}

void write_llm_files(const Options& o, const std::vector<LlmReport>& reports) {
  const bool several = reports.size() > 1;
  for (const LlmReport& r : reports) {
    if (!o.csv.empty()) write_llm_csv(r, several ? (std::filesystem::path(o.csv) / r.executor).string() : o.csv);
  }
  write_trace(o, reports, [](const LlmReport& r) { return llm_trace(r); });
}

// One run's report, or {"runs": [...]} for several executors side by side.
template <typename Report, typename ToJson>
nlohmann::json runs_json(const std::vector<Report>& reports, ToJson to_json) {
  if (reports.size() == 1) return to_json(reports[0]);
  nlohmann::json runs = nlohmann::json::array();
  for (const Report& r : reports) runs.push_back(to_json(r));
  return {{"runs", runs}};
}

// Each run's goodput (--days) beside its report.
nlohmann::json with_goodput(nlohmann::json j, const api::TrainingRun& run) {
  if (run.goodput.empty()) return j;
  if (run.goodput.size() == 1) {
    j["goodput"] = goodput_json(run.goodput[0]);
  } else {
    for (std::size_t i = 0; i < run.goodput.size(); ++i) j["runs"][i]["goodput"] = goodput_json(run.goodput[i]);
  }
  return j;
}

nlohmann::json run_json(const api::TrainingRun& run) {
  if (!run.llm.empty()) return with_goodput(runs_json(run.llm, [](const LlmReport& r) { return llm_json(r); }), run);
  if (!run.chakra.empty()) return runs_json(run.chakra, [](const ChakraReport& r) { return chakra_json(r); });
  if (!run.kineto.empty()) return runs_json(run.kineto, [](const KinetoReport& r) { return kineto_json(r); });
  return with_goodput(runs_json(run.reports, [](const TrainReport& r) { return training_json(r); }), run);
}

// Runs the request and writes the files it asks for (--csv, --trace).
api::TrainingRun simulate(Options& o) {
  if (o.trace_npus_option->count() > 0 && o.trace.empty()) throw InputError("--trace-npus applies with --trace FILE");
  if (o.trace_npus_option->count() > 0 && (o.trace_npus < 1 || o.trace_npus > 1024)) {
    throw InputError("--trace-npus: must be in 1..1024, got " + std::to_string(o.trace_npus));
  }
  api::TrainingRequest& r = o.request;
  r.platform = platform_request(o.platform);
  if (o.batch_option->count() > 0) r.batch = o.batch;
  if (o.iterations_option->count() > 0) r.iterations = o.iterations;
  r.trace_ranks = o.trace.empty() ? 0 : o.trace_npus;
  r.trace_ranks_given = o.trace_npus_option->count() > 0;
  const std::unique_ptr<ProgressDisplay> display = start_progress(o.progress);
  r.progress = display.get();
  api::TrainingRun run = api::simulate_training(r);
  if (display) display->finish();
  if (!run.llm.empty()) {
    write_llm_files(o, run.llm);
  } else if (!run.chakra.empty()) {
    write_chakra_files(o, run.chakra);
  } else if (!run.kineto.empty()) {
    const bool several = run.kineto.size() > 1;
    for (const KinetoReport& k : run.kineto) {
      if (!o.csv.empty()) write_kineto_csv(k, several ? (std::filesystem::path(o.csv) / k.executor).string() : o.csv);
    }
    write_trace(o, run.kineto, [](const KinetoReport& k) { return kineto_trace_events(k); });
  } else {
    write_training_files(o, run.reports);
  }
  if (!o.csv.empty()) {
    const bool several = run.goodput.size() > 1;
    for (std::size_t i = 0; i < run.goodput.size(); ++i) {
      const std::string executor = !run.llm.empty() ? run.llm[i].executor : run.reports[i].executor;
      write_goodput_csv(run.goodput[i], several ? (std::filesystem::path(o.csv) / executor).string() : o.csv);
    }
  }
  return run;
}

int run(Options& o) {
  const api::TrainingRun run = simulate(o);
  print_warnings(run.platform.warnings);
  if (o.json) {
    std::printf("%s\n", run_json(run).dump(2).c_str());
  } else if (!run.llm.empty()) {
    std::fputs((run.llm.size() > 1 ? format_llm_comparison(run.llm, run.platform) : format_llm(run.llm[0], run.platform)).c_str(),
               stdout);
  } else if (!run.kineto.empty()) {
    for (std::size_t i = 0; i < run.kineto.size(); ++i) {
      if (run.kineto.size() > 1) std::printf("%s== executor %s\n", i ? "\n" : "", run.kineto[i].executor.c_str());
      std::fputs(format_kineto(run.kineto[i], run.platform).c_str(), stdout);
    }
  } else if (!run.chakra.empty()) {
    for (std::size_t i = 0; i < run.chakra.size(); ++i) {
      if (run.chakra.size() > 1) std::printf("%s== executor %s\n", i ? "\n" : "", run.chakra[i].executor.c_str());
      std::fputs(format_chakra(run.chakra[i], run.platform).c_str(), stdout);
    }
  } else {
    print_training_tables(run);
  }
  if (!o.json) {
    for (std::size_t i = 0; i < run.goodput.size(); ++i) {
      const std::string executor = !run.llm.empty() ? run.llm[i].executor : run.reports[i].executor;
      std::fputs(format_goodput(run.goodput[i], run.goodput.size() > 1 ? executor : "").c_str(), stdout);
    }
  }
  return kExitOk;
}

CommandReport report(Options& o) {
  const api::TrainingRun run = simulate(o);
  return {run_json(run), run.platform.warnings};
}

}  // namespace

CommandRunner add_run_command(CLI::App& app) {
  auto o = std::make_shared<Options>();
  CLI::App* c = app.add_subcommand(
      "run", "Simulate training iterations (default: ResNet-50, data parallel, on the default platform, sm and ace side by side)");
  add_platform_options(c, o->platform);
  c->add_option("--workload", o->request.workload_file, "a layer-table workload file: ASTRA-sim 1.0 text (compute in cycles of 1 ns), or SimAI/AICB's by its header")->check(non_empty());
  c->add_option("--format", o->request.workload_format, "format of --workload FILE: " + table_format_names())->check(non_empty());
  c->add_option("--chakra", o->request.chakra_prefix, "Chakra execution traces PREFIX.<rank>.et, one per NPU (ASTRA-sim 2.0's format)")
      ->check(non_empty());
  c->add_flag("--chakra-flops", o->request.chakra_flops,
              "Chakra compute nodes with num_ops run as FLOPs (and tensor_size HBM bytes) through the NPU model, not their duration");
  c->add_option("--chakra-groups", o->request.chakra_groups,
                "communicator groups of the traces' pg_name, ASTRA-sim's JSON {\"name\": [ranks...]}; each must be whole dimensions")
      ->check(non_empty());
  c->add_option("--kineto", o->request.kineto_path,
                "a PyTorch profiler (Kineto) trace, .json or .json.gz, which every rank of its job replays, or a directory of one "
                "trace per rank; NCCL kernels simulated on the platform (docs/workloads.md)")
      ->check(non_empty());
  c->add_option("--placement", o->request.placement,
                "with --kineto: the job's ranks on the platform's GPUs: packed (in order; default), spread (round robin over "
                "nodes) or a list of GPUs, e.g. 0-3,8-11")
      ->check(non_empty());
  c->add_option("--kineto-comm", o->request.kineto_comm,
                "with --kineto: simulated (NCCL kernels as collectives on the platform; default) or measured (their traced durations)")
      ->check(non_empty());
  c->add_option("--model", o->request.model, "built-in model (" + join_names(model_names()) + ") or a transformer model file (*.yaml)")->check(non_empty());
  o->batch_option = c->add_option("--batch", o->batch, "samples per NPU (built-in models)");
  c->add_option("--precision", o->request.precision, join_names(llm_precision_names()) + " (built-in models; fp8 scales FP8 GEMM inputs by delayed scaling, fp8-cs by current scaling, mxfp8 by blocks of 32 on Blackwell: transformers only)")->check(non_empty());
  c->add_option("--kernel-times", o->request.kernel_times,
                "CSV of measured kernel times (kind, gpu, dtype, shape, time_us) that replace the compute model where a row matches "
                "(transformer models; docs/compute.md)")
      ->check(non_empty());
  c->add_option("--calibration", o->request.calibration,
                "a calibration file of in-situ parameters (acesim calibrate runs writes one) that price kernels as a training "
                "stack runs them, or published-runs: the one fitted to the repository's published runs (transformer models; "
                "docs/in-situ.md)")
      ->check(non_empty());
  o->iterations_option = c->add_option("--iterations", o->iterations, "training iterations to simulate (default 2; with --chakra: passes over the traces, default 1)");
  c->add_option("--compare", o->request.compare, "run several executors side by side, e.g. sm,ace,ideal")->check(non_empty());
  c->add_flag("--json", o->json, "print JSON instead of tables");
  add_progress_options(c, o->progress);
  c->add_option("--csv", o->csv, "write the CSV tables into this directory (layers.csv, collectives.csv, network.csv; with --chakra nodes.csv, network.csv; with --kineto steps.csv)")->check(output_dir());
  c->add_option("--trace", o->trace, "write a Chrome/Perfetto trace (open in ui.perfetto.dev), one file: with several executors (--compare) each executor's processes side by side, named sm: ..., ace: ...; with --kineto, each rank's GPU activities measured and replayed side by side")->check(output_file());
  o->trace_npus_option = c->add_option("--trace-npus", o->trace_npus, "NPUs in the trace, from NPU 0 (default 4)");
  c->add_option("--straggler", o->request.stragglers, "RANK=FACTOR: that NPU computes FACTOR times slower (repeatable)");
  add_llm_options(c, o->request.llm);
  add_goodput_options(c, o->request.goodput);
  return {[o] { return run(*o); }, [o] { return report(*o); }, &o->platform, [o, fresh = *o] { *o = fresh; }};
}

}  // namespace acesim::cli
