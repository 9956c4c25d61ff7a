// What the built-in models share: groups of a parallel layout, layers with
// weights, checks of the options (docs/models.md). One model per file in
// this folder; each registers itself in model_registry.cpp.
#pragma once

#include <string>
#include <vector>

#include "topology/topology.h"
#include "workload/models/models.h"
#include "workload/workload.h"

namespace acesim::models {

// Sizes are element counts (parameters, activations) as doubles; they
// become bytes through ModelOptions::bytes_per_element.

// The groups of a layout: dimension lists and the NPUs in each group.
struct Group {
  std::vector<int> dims;
  double npus = 1.0;  // product of the dims' sizes; 1 = nothing to communicate
};

struct Common {
  std::string model;
  double bpe = 2.0;
  double batch = 0.0;
};

[[noreturn]] void fail(const std::string& model, const std::string& what);

Group make_group(const Topology& topo, std::vector<int> dims);

std::vector<int> all_dims(const Topology& topo);

// Checks a list of dimensions against the topology; empty stays empty.
std::vector<int> checked_dims(const std::string& model, const char* what, const std::vector<int>& dims,
                              const Topology& topo);

// A collective, or none when its group is a single NPU (nothing to exchange).
CommSpec comm(CollectiveOp op, double bytes, const Group& g, bool blocking);

Kernel kernel(double flops, double hbm_elements, double bpe);

// A layer with weights: forward F FLOPs, input-gradient and weight-gradient
// each ~F. Every pass moves weights + input + output activations through
// HBM (forward: read weights and input, write output; input-grad: read
// weights and output gradients, write input gradients; weight-grad: read
// input and output gradients, write weight gradients). The weight-gradient
// all-reduce carries `params` (per rank) over the data-parallel group.
Layer weighted_layer(std::string name, double flops, double weights, double in, double out, double params,
                     const Group& data, double bpe);

// The first layer of a network (or any layer whose input is not a
// differentiable tensor: raw images, token ids, dense features) computes no
// input gradient.
void no_input_grad(Layer& l);

Common check_common(const std::string& model, const ModelOptions& opt, int default_batch);

// Data-parallel models: weight gradients all-reduced over data_dims (empty:
// all); no model-parallel dimensions.
Group data_parallel_group(const Common& c, const ModelOptions& opt, const Topology& topo);

Workload start(const std::string& name, const std::string& parallelism, const ModelOptions& opt);

}  // namespace acesim::models
