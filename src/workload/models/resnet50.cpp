// Built-in model: ResNet-50.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "workload/models/model_common.h"
#include "workload/models/model_registry.h"

namespace acesim::models {
namespace {

// He et al. 2016 (arXiv 1512.03385), Table 1, 50-layer column, with the
// stride of a downsampling block on its 3x3 convolution (torchvision's and
// MLPerf's "v1.5"). Batch-norm scale and shift (2 per output channel) are
// counted as parameters of the convolution before them; BN, ReLU, pooling
// and residual additions are not counted as FLOPs (< 1% of the total).
Workload build_resnet50(const ModelOptions& opt, const Topology& topo) {
  const Common c = check_common("resnet50", opt, 32);
  const Group data = data_parallel_group(c, opt, topo);
  Workload w = start("ResNet-50", "DATA", opt);
  const double b = c.batch;

  // A k x k convolution, cin -> cout channels, input hin x hin, given stride, padding "same".
  auto conv = [&](const std::string& name, int k, double cin, double cout, double hin, int stride) {
    const double hout = hin / stride;
    const double weights = double(k) * k * cin * cout;
    const double params = weights + 2.0 * cout;  // + BN gamma, beta
    const double flops = 2.0 * weights * hout * hout * b;
    w.layers.push_back(
        weighted_layer(name, flops, params, b * cin * hin * hin, b * cout * hout * hout, params, data, c.bpe));
    return hout;
  };

  double h = conv("conv1", 7, 3, 64, 224, 2);  // 224 -> 112
  no_input_grad(w.layers.back());
  h /= 2;  // 3x3 max pool, stride 2: 112 -> 56
  struct Stage {
    int blocks;
    double mid, out;
    int stride;
  };
  const Stage stages[4] = {{3, 64, 256, 1}, {4, 128, 512, 2}, {6, 256, 1024, 2}, {3, 512, 2048, 2}};
  double cin = 64;
  for (int s = 0; s < 4; ++s) {
    const Stage& st = stages[s];
    for (int j = 0; j < st.blocks; ++j) {
      const std::string p = "res" + std::to_string(s + 2) + std::string(1, char('a' + j)) + "_branch";
      const int stride = j == 0 ? st.stride : 1;
      if (j == 0) conv(p + "1", 1, cin, st.out, h, stride);  // projection shortcut
      conv(p + "2a", 1, cin, st.mid, h, 1);
      const double hout = conv(p + "2b", 3, st.mid, st.mid, h, stride);
      conv(p + "2c", 1, st.mid, st.out, hout, 1);
      h = hout;
      cin = st.out;
    }
  }
  // Global average pool (7x7 -> 1, folded), then the 2048 -> 1000 classifier with bias.
  const double fc = 2048.0 * 1000.0 + 1000.0;
  w.layers.push_back(weighted_layer("fc1000", 2.0 * 2048.0 * 1000.0 * b, fc, b * 2048.0, b * 1000.0, fc, data, c.bpe));
  return w;
}

}  // namespace

void register_resnet50(ModelRegistry& registry) {
  registry.add({{"resnet50", {}, "ResNet-50, data parallel (He et al. 2016)"}, build_resnet50});
}

}  // namespace acesim::models
