#include "workload/workload.h"

namespace acesim {

std::string_view to_string(PassKind p) {
  switch (p) {
    case PassKind::kForward: return "forward";
    case PassKind::kInputGrad: return "input-grad";
    case PassKind::kWeightGrad: return "weight-grad";
  }
  return "?";
}

WorkloadTotals totals(const Workload& w) {
  WorkloadTotals t;
  for (const Layer& l : w.layers) {
    const Pass* passes[3] = {&l.forward, &l.input_grad, &l.weight_grad};
    TimePs* times[3] = {&t.forward_ps, &t.input_grad_ps, &t.weight_grad_ps};
    for (int i = 0; i < 3; ++i) {
      const Pass& p = *passes[i];
      if (p.compute.time_ps >= 0) *times[i] += p.compute.time_ps;
      t.flops += p.compute.flops;
      if (p.comm.op) {
        t.comm_bytes[static_cast<int>(*p.comm.op)] += p.comm.bytes;
        ++t.collectives;
      }
    }
  }
  return t;
}

}  // namespace acesim
