// The built-in model zoo: training workloads generated from a network's
// architecture (docs/models.md has every formula and its source).
//
// A generated workload describes what ONE rank does per iteration: FLOPs and
// HBM bytes of its share of each layer's three passes, and the collectives it
// takes part in (sizes in the nccl-tests convention of docs/model.md).
#pragma once

#include <string>
#include <vector>

#include "topology/topology.h"
#include "workload/workload.h"

namespace acesim {

struct ModelOptions {
  int batch_per_npu = 0;        // samples (sequences for GNMT/GPT) per NPU per iteration; 0 = the model's default
  int bytes_per_element = 2;    // 2 = fp16/bf16, 4 = fp32 (activations, weights and gradients)
  int iterations = 2;
  // Parallel layout, as topology dimensions. Data-parallel dims: weight-gradient all-reduce groups.
  // Empty = all dimensions (for DLRM and GPT see below).
  std::vector<int> data_dims;
  std::vector<int> model_dims;  // GPT: tensor-parallel dims; DLRM: dims the embedding all-to-all spans (empty = all)
  // GPT shape (defaults: a GPT-2-XL/GPT-3-1.3B-like model)
  int gpt_layers = 24, gpt_hidden = 2048, gpt_heads = 16, gpt_seq = 2048, gpt_vocab = 50257;
};

// The registered models' names (model_registry()), in registration order.
std::vector<std::string> model_names();

// Throws std::invalid_argument (unknown name, dims not in the topology, a
// tensor-parallel group that does not divide the hidden size or heads, ...).
Workload build_model(const std::string& name, const ModelOptions& opt, const Topology& topo);

}  // namespace acesim
