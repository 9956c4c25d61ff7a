// Built-in model: DLRM.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "workload/models/model_common.h"
#include "workload/models/model_registry.h"

namespace acesim::models {
namespace {

// Naumov et al. 2019 (arXiv 1906.00091) with MLPerf's Criteo Terabyte
// configuration: 13 dense and 26 sparse features, embedding dimension 128,
// bottom MLP 13-512-256-128, dot interaction, top MLP 479-1024-1024-512-256-1.
Workload build_dlrm(const ModelOptions& opt, const Topology& topo) {
  const Common c = check_common("dlrm", opt, 512);
  auto dd = checked_dims(c.model, "data_dims", opt.data_dims, topo);
  auto md = checked_dims(c.model, "model_dims", opt.model_dims, topo);
  const Group data = make_group(topo, dd.empty() ? all_dims(topo) : dd);
  const Group model = make_group(topo, md.empty() ? all_dims(topo) : md);
  Workload w = start("DLRM", "HYBRID_DLRM", opt);
  const double b = c.batch;
  const double dense = 13, sparse = 26, d = 128;

  {
    // Tables sharded over the model group: each NPU looks up, for the whole
    // group's batch, the rows of its own tables: b * 26 rows on average (one
    // index per feature in Criteo). The all-to-all sends every sample's 26
    // vectors to the NPU that owns the sample (nccl convention: the bytes a
    // rank sends in total, its own share included).
    Layer l;
    l.name = "embedding";
    const double rows = b * sparse * d;  // elements looked up per NPU
    l.forward.compute = kernel(0.0, 2.0 * rows, c.bpe);  // read rows, write the vectors to send
    // Both all-to-alls overlap the bottom MLP (see the interaction below).
    l.forward.comm = comm(CollectiveOp::kAllToAll, rows * c.bpe, model, /*blocking=*/false);
    no_input_grad(l);  // indices
    l.input_grad.comm = comm(CollectiveOp::kAllToAll, rows * c.bpe, model, /*blocking=*/false);
    // Sparse SGD update in place: read the gradient, read-modify-write the
    // row (one multiply-add per element). No all-reduce: the tables are not
    // replicated inside the model group.
    l.weight_grad.compute = kernel(2.0 * rows, 3.0 * rows, c.bpe);
    w.layers.push_back(l);
  }
  auto fc = [&](const std::string& name, double in, double out) {
    const double params = in * out + out;
    w.layers.push_back(weighted_layer(name, 2.0 * in * out * b, params, b * in, b * out, params, data, c.bpe));
  };
  fc("bot_mlp1", dense, 512);
  no_input_grad(w.layers.back());  // dense features
  fc("bot_mlp2", 512, 256);
  fc("bot_mlp3", 256, d);
  {
    // Dot interaction of the 27 vectors (26 embeddings + bottom MLP output):
    // the batched product Z = T T^T (27 x 27 x 128 multiply-adds per sample,
    // as the reference implementation computes it), of which the 351 pairs
    // below the diagonal are kept and concatenated with the bottom MLP
    // output: 351 + 128 = 479. No weights, so no weight-gradient pass.
    const double n = sparse + 1;
    const double out = n * (n - 1) / 2 + d;
    Layer l;
    l.name = "interaction";
    const Kernel k = kernel(2.0 * n * n * d * b, b * n * d + b * out, c.bpe);
    l.forward.compute = k;
    l.input_grad.compute = k;
    w.layers.push_back(l);
    // The embedding vectors are first needed here: the forward all-to-all
    // runs while the bottom MLP computes, and the interaction waits for it.
    // Backward, the embedding gradients are known once the interaction's
    // backward is done: their all-to-all starts then and overlaps the bottom
    // MLP's backward; the next iteration's embedding forward waits for it
    // (as acesim reads ASTRA-sim's HYBRID_DLRM workloads).
    const int interaction = static_cast<int>(w.layers.size()) - 1;
    CommSpec& fwd = w.layers[0].forward.comm;
    CommSpec& bwd = w.layers[0].input_grad.comm;
    if (fwd.op) fwd.wait_before_forward_layer = interaction;
    if (bwd.op) bwd.issue_after_backward_layer = interaction;
  }
  fc("top_mlp1", 479, 1024);
  fc("top_mlp2", 1024, 1024);
  fc("top_mlp3", 1024, 512);
  fc("top_mlp4", 512, 256);
  fc("top_mlp5", 256, 1);  // sigmoid and loss folded
  return w;
}

}  // namespace

void register_dlrm(ModelRegistry& registry) {
  registry.add({{"dlrm", {}, "DLRM: embedding tables model parallel, MLPs data parallel (Naumov et al. 2019)"}, build_dlrm});
}

}  // namespace acesim::models
