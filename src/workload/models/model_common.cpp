#include "workload/models/model_common.h"

#include <stdexcept>
#include <string>
#include <utility>

namespace acesim::models {

// Sizes below are element counts (parameters, activations) as doubles; they
// become bytes through ModelOptions::bytes_per_element.

[[noreturn]] void fail(const std::string& model, const std::string& what) {
  throw std::invalid_argument("model '" + model + "': " + what);
}


Group make_group(const Topology& topo, std::vector<int> dims) {
  Group g;
  for (int d : dims) g.npus *= topo.dim(d).npus;
  g.dims = std::move(dims);
  return g;
}

std::vector<int> all_dims(const Topology& topo) {
  std::vector<int> v;
  for (int d = 0; d < topo.num_dims(); ++d) v.push_back(d);
  return v;
}

std::vector<int> checked_dims(const std::string& model, const char* what, const std::vector<int>& dims,
                              const Topology& topo) {
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= topo.num_dims()) {
      fail(model, std::string(what) + " names dimension " + std::to_string(dims[i]) + "; the topology has " +
                      std::to_string(topo.num_dims()) + " (0.." + std::to_string(topo.num_dims() - 1) + ")");
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (dims[j] == dims[i]) fail(model, std::string(what) + " lists dimension " + std::to_string(dims[i]) + " twice");
    }
  }
  return dims;
}

CommSpec comm(CollectiveOp op, double bytes, const Group& g, bool blocking) {
  CommSpec c;
  if (g.npus <= 1.0 || bytes <= 0.0) return c;
  c.op = op;
  c.bytes = bytes;
  c.dims = g.dims;
  c.blocking = blocking;
  return c;
}

Kernel kernel(double flops, double hbm_elements, double bpe) {
  Kernel k;
  k.flops = flops;
  k.hbm_bytes = hbm_elements * bpe;
  return k;  // time_ps stays -1: FLOP/byte-based
}

Layer weighted_layer(std::string name, double flops, double weights, double in, double out, double params,
                     const Group& data, double bpe) {
  Layer l;
  l.name = std::move(name);
  const Kernel k = kernel(flops, weights + in + out, bpe);
  l.forward.compute = k;
  l.input_grad.compute = k;
  l.weight_grad.compute = k;
  l.weight_grad.comm = comm(CollectiveOp::kAllReduce, params * bpe, data, /*blocking=*/false);
  return l;
}

void no_input_grad(Layer& l) { l.input_grad.compute = Kernel{0.0, 0.0, -1}; }


Common check_common(const std::string& model, const ModelOptions& opt, int default_batch) {
  if (opt.batch_per_npu < 0) fail(model, "batch_per_npu must be >= 0 (0 = the model's default)");
  const int b = opt.bytes_per_element;
  if (b != 1 && b != 2 && b != 4 && b != 8) {
    fail(model, "bytes_per_element must be 1, 2, 4 or 8, not " + std::to_string(b));
  }
  if (opt.iterations < 1) fail(model, "iterations must be >= 1, not " + std::to_string(opt.iterations));
  Common c;
  c.model = model;
  c.bpe = b;
  c.batch = opt.batch_per_npu > 0 ? opt.batch_per_npu : default_batch;
  return c;
}

Group data_parallel_group(const Common& c, const ModelOptions& opt, const Topology& topo) {
  if (!opt.model_dims.empty()) fail(c.model, "is data parallel only; model_dims must be empty");
  const auto dims = checked_dims(c.model, "data_dims", opt.data_dims, topo);
  return make_group(topo, dims.empty() ? all_dims(topo) : dims);
}

Workload start(const std::string& name, const std::string& parallelism, const ModelOptions& opt) {
  Workload w;
  w.name = name;
  w.parallelism = parallelism;
  w.iterations = opt.iterations;
  return w;
}

}  // namespace acesim::models
