// LLM training requests (api.h, TrainingRequest::Llm): which models run
// through the LLM generator, the plan's defaults, and the runs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/api.h"
#include "config/platform.h"
#include "workload/workload.h"
#include "topology/topology.h"
#include "workload/models/models.h"

namespace acesim::api {

// The transformer shape `model` names when the request runs it as an LLM:
// a built-in LLM, a model file, or `gpt` with a plan option given; none
// otherwise. Throws InputError for plan options on a model that is not a
// transformer.
std::optional<TransformerShape> llm_shape(const TrainingRequest& request, const std::string& model);

// The plan: options as given; tp defaults to the first topology
// dimension's size when it divides the model (else 1), dp to what the
// GPUs leave. Throws InputError naming the option.
ParallelPlan llm_plan(const TrainingRequest::Llm& options, const TransformerShape& shape, const Topology& topo);

void run_llm_request(const TrainingRequest& request, const TransformerShape& shape,
                     const std::vector<std::string>& executors, const Topology& topo, TrainingRun& run);

// The layer-table workload a request names (a built-in model, a model file
// or an ASTRA-sim table), else the platform file's, else ResNet-50; with
// its --batch, --precision and --iterations. Throws InputError.
Workload load_workload(const TrainingRequest& request, const PlatformConfig& platform, const Topology& topo);

// Whether `--workload FILE` is a SimAI/AICB file: `--format simai`, or no
// --format and a SimAI header (workload/formats/simai_workload.h).
bool is_simai_request(const TrainingRequest& request);
// A SimAI/AICB workload file as a pipelined job (workload/llm/simai_job.h):
// --schedule and --iterations apply; the file fixes the rest of the plan.
void run_simai_request(const TrainingRequest& request, const std::vector<std::string>& executors, const Topology& topo,
                       TrainingRun& run);

}  // namespace acesim::api
