// The library facade: a request (where the platform comes from, what to run,
// options) in, a report out. It owns every decision the command line used to
// make (ASTRA-sim input semantics, which executors to compare, sizes,
// dimensions and stragglers as users write them), so the CLI, the tests and
// a Python module get the same answers from the same code. The reports are
// the drivers' own (report/collective_sweep.h, driver/training_run.h,
// driver/chakra_run.h); formatting them is report/'s job.
//
// Every function throws InputError for bad input (one line naming the flag
// or file and the problem) and SimulationStuck when a run cannot finish.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/platform.h"
#include "engine/progress.h"
#include "report/collective_sweep.h"
#include "driver/chakra_run.h"
#include "driver/cluster_run.h"
#include "driver/goodput.h"
#include "driver/kineto_run.h"
#include "driver/llm_run.h"
#include "driver/training_run.h"

namespace acesim::api {

// A platform given as its YAML text rather than a file (sweeps, the Python
// module): the text, what it is called in messages and reports, the folder
// its relative paths (workload.file) are relative to, and, when set, the
// platform already read from it (a sweep reads each distinct one once).
struct PlatformText {
  std::string yaml;
  std::string source;
  std::string folder;
  std::shared_ptr<const PlatformConfig> parsed;
};

// Where the platform comes from and what the request changes in it. Strings
// are as a user types them; empty means "as the platform says".
struct PlatformRequest {
  std::string file;           // acesim platform YAML or a preset's name; none: the built-in default
  std::string astra_network;  // or ASTRA-sim 2.0 analytical inputs, as a pair
  std::string astra_system;
  std::string backend;
  std::string granularity;
  std::string executor;
  std::optional<int> chunks;  // taken as given: max_chunk_bytes no longer applies
  std::optional<long long> nodes;  // the node dimension's size (node-based platforms only)
  std::optional<long long> gpus_per_node;  // the GPUs a job takes of each node (node-based platforms only)
  bool full = false;          // simulate every rank even when one could stand for all
  bool check = false;         // check expensive invariants while running
  // Or the platform as text, in place of `file` (the overrides above apply
  // to it as to a file).
  std::optional<PlatformText> text;
  bool given() const { return !file.empty() || text.has_value(); }
  bool astra() const { return !astra_network.empty(); }
};
PlatformConfig load_platform(const PlatformRequest& request);

// Values as users write them; `flag` names the option in errors.
CollectiveOp parse_op(const std::string& flag, const std::string& text);
// A size (e.g. 64MiB), at most the 1 PiB a collective may move.
std::uint64_t parse_size(const std::string& flag, const std::string& text);
// A list of dimensions like "0,2", each of the platform's, none twice.
std::vector<int> parse_dims(const std::string& flag, const std::string& text, int num_dims);
// "RANK=FACTOR" items, ranks of a topology of `npus`.
std::vector<std::pair<Rank, double>> parse_stragglers(const std::vector<std::string>& items, Rank npus);

// One collective at one size, or a sweep of sizes (nccl-tests' -b/-e/-f).
struct CollectiveRequest {
  PlatformRequest platform;
  std::string op = "all-reduce";
  std::optional<std::string> bytes;  // one size; or a sweep:
  std::optional<std::string> min_bytes;  // default 64KiB
  std::optional<std::string> max_bytes;  // default 256MiB (or min_bytes when larger)
  long long step_factor = 2;
  bool step_factor_given = false;  // --step-factor given: refused with --bytes (one size, no sweep)
  std::optional<std::string> dims;  // default: all
  std::vector<std::string> stragglers;  // "RANK=FACTOR": that NPU's links are FACTOR times slower
  std::optional<long long> root;  // rooted operations: the root rank (default 0)
  // NCCL's model (docs/model.md, "NCCL collectives"): "nccl" or "acesim"
  // (the platform's plans), and what NCCL_ALGO / NCCL_PROTO would force.
  std::optional<std::string> library;
  std::optional<std::string> algo;   // auto, ring, tree, nvls, nvls-tree, collnet-direct, collnet-chain, p2p
  std::optional<std::string> proto;  // auto, simple, ll, ll128
  std::optional<int> channels;
  ProgressSink* progress = nullptr;     // told how far the sizes are, or none
};
struct CollectiveRun {
  PlatformConfig platform;
  CollectiveRequestSpec spec;
  std::vector<CollectiveResult> results;  // one per size
};
CollectiveRun simulate_collectives(const CollectiveRequest& request);

// Training iterations of a built-in model, an ASTRA-sim 1.0 table or Chakra
// traces, on one executor or several side by side.
struct TrainingRequest {
  PlatformRequest platform;
  std::string workload_file;  // a layer table: ASTRA-sim 1.0 text unless workload_format says
  std::string workload_format;  // a layer-table format of workload_format_registry()
  std::string model;          // a built-in model
  std::string chakra_prefix;  // Chakra traces PREFIX.<rank>.et
  bool chakra_flops = false;  // Chakra compute nodes through the NPU roofline
  std::string chakra_groups;  // communicator groups file (pg_name)
  std::string kineto_path;    // a PyTorch profiler trace (driver/kineto_run.h)
  std::string kineto_comm;    // simulated (default) | measured
  std::string placement;      // --kineto: the job's ranks on the platform's GPUs (driver/kineto_job.h)
  std::optional<int> batch;   // built-in models
  std::string precision;      // built-in models
  std::string kernel_times;   // transformer models: measured kernel times (compute/kernel_times.h)
  std::string calibration;    // transformer models: in-situ parameters (compute/in_situ.h); empty: none
  std::optional<int> iterations;  // default 2; Chakra traces: passes over them, default 1
  std::string compare;        // executors side by side, e.g. "sm,ace"
  int trace_ranks = 0;        // keep timelines of ranks 0 .. trace_ranks-1
  bool trace_ranks_given = false;  // --trace-npus given: refused where the trace follows its own ranks (LLM plans, SimAI)
  std::vector<std::string> stragglers;  // "RANK=FACTOR"
  ProgressSink* progress = nullptr;     // told how far the runs are, or none
  // LLM training (docs/models.md, "LLM training"): Megatron-LM's plan. A
  // transformer model (a built-in LLM or a model file; `gpt` when any of
  // these is given) runs through the LLM generator; unset values take the
  // defaults there.
  struct Llm {
    std::optional<int> tp, pp, dp, ep, cp, zero, micro_batch, global_batch, virtual_stages;
    std::optional<int> expert_tp;  // --expert-tensor-parallel-size
    // Uneven pipeline stages (Megatron-LM's flags of the same names).
    std::optional<int> first_stage_layers, last_stage_layers;
    bool embedding_in_split = false, loss_in_split = false;
    bool sequence_parallel = false;
    std::string schedule;   // 1f1b | interleaved | gpipe
    std::string recompute;  // none | selective | full
    std::string attention;  // fused | unfused
    std::string zero3_fetch;  // prefetch | blocking
    std::string reshard_after_forward;  // always | never
    bool overlap_grad_reduce = false;
    bool overlap_param_gather = false;
    bool tp_comm_overlap = false;
    bool allow_oom = false;
    // Also write the job as Chakra traces PREFIX.<rank>.et and
    // PREFIX.groups.json (workload/llm/llm_chakra.h).
    std::string chakra_out;
    bool given() const {
      return tp || pp || dp || ep || expert_tp || cp || zero || micro_batch || global_batch || virtual_stages || first_stage_layers ||
             last_stage_layers || embedding_in_split || loss_in_split || sequence_parallel ||
             !schedule.empty() || !recompute.empty() || !attention.empty() || !zero3_fetch.empty() || !reshard_after_forward.empty() || overlap_grad_reduce ||
             overlap_param_gather || tp_comm_overlap || allow_oom || !chakra_out.empty();
    }
  } llm;
  // A long run with failures, checkpoints and restarts (driver/goodput.h):
  // with `days`, each run's iteration time is the rate of progress.
  struct Goodput {
    std::optional<double> days;
    std::string failures;           // a built-in failure model or a file (default: `default`)
    std::string checkpoint_every;   // iterations, or auto (default: Daly's interval)
    std::optional<int> trials;      // default 1000
    std::optional<long long> seed;  // default 1
    std::optional<double> checkpoint_GB;  // default: the job's model state
    bool async = false;             // asynchronous checkpoint writes
    bool given() const { return days || !failures.empty() || !checkpoint_every.empty() || trials || seed || checkpoint_GB || async; }
  } goodput;
};
struct TrainingRun {
  PlatformConfig platform;
  // Built-in models and ASTRA-sim tables: one report per executor, and,
  // with stragglers, each executor's iteration without them.
  std::vector<TrainReport> reports;
  std::vector<TimePs> even_iteration_ps;
  // Chakra traces: one report per executor.
  std::vector<ChakraReport> chakra;
  // LLM training: one report per executor.
  std::vector<LlmReport> llm;
  // PyTorch profiler traces replayed: one report per executor.
  std::vector<KinetoReport> kineto;
  // With TrainingRequest::goodput: one per run of `llm` or `reports`, in order.
  std::vector<GoodputReport> goodput;
  std::size_t runs() const { return reports.size() + chakra.size() + llm.size() + kineto.size(); }
};
// Nothing given at all (no platform, workload or executor) runs the default:
// ResNet-50 on the default platform, sm and ace side by side.
TrainingRun simulate_training(const TrainingRequest& request);

// Several jobs on one platform (driver/cluster_run.h), as a cluster file
// describes them (docs/cluster.md).
struct ClusterRequest {
  std::string file;
  bool alone = true;  // also run each job alone on its nodes (its slowdown)
  bool trace = false;  // keep each job's first rank's spans
  ProgressSink* progress = nullptr;
};
struct ClusterRun {
  ClusterSpec spec;
  ClusterReport report;
};
ClusterRun simulate_cluster(const ClusterRequest& request);
// The cluster file's text read, checked and its jobs placed (nothing
// simulated); `path` names it in messages and anchors its relative paths.
// With `files`, every file the cluster file names (its platform, model,
// SimAI, Chakra and groups files, as found beside it; a Chakra prefix as
// the prefix) is appended there as it is met, also when reading stops at
// an error (what a sweep fingerprints, docs/sweeps.md).
ClusterSpec read_cluster(const std::string& path, const std::string& text, std::vector<std::string>* files = nullptr);

}  // namespace acesim::api
