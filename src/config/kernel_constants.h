// The compute model's constants by GPU architecture, read from the data
// file the binary embeds (tests/data/compute/kernel-model.yaml, each number
// with its source). The model that uses them is compute/compute_model.h;
// they live here so that platform files can check npu.arch.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace acesim {

// One architecture's constants (the data file's `architectures.NAME`).
struct ArchConstants {
  std::string name;
  std::vector<std::string> gpus;  // the GPUs of the architecture, by the names presets give (npu.gpu)
  // GEMM
  std::vector<std::array<int, 2>> tiles;  // output tile shapes (m x n) the library picks from
  std::vector<int> split_k;               // split-K factors tried when the tiles leave SMs idle
  double k_overhead = 0.0;                // a tile's cost outside its main loop, in elements of k
  double gemm_efficiency_bf16 = 1.0;      // main loop, of the peak at the clock it is quoted at
  double gemm_efficiency_fp8 = 0.0;       // 0: no FP8 tensor cores
  // A GPU's own measurement where it differs from the architecture's
  // (gemm.by_gpu): the same die at the same power runs its GEMMs at the
  // clock its board allows.
  struct GemmEfficiency {
    std::string gpu;
    double bf16 = 1.0;
    double fp8 = 0.0;
  };
  std::vector<GemmEfficiency> gemm_by_gpu;
  // The main-loop efficiency of `gpu` (npu.gpu) at BF16 or FP8.
  double gemm_efficiency(std::string_view gpu, bool fp8) const;
  // Attention: efficiency(s, d) = peak x (s / (s + half_seq)) x head-dim
  // factor, s the keys per query row (half the keys with a causal mask).
  std::string attention_kernel;
  struct Curve {
    double efficiency = 1.0;  // of the peak, long sequences, head dimension 128
    double half_seq = 0.0;    // keys per row at which it reaches half of that
    double half_head_dim = 0.0;  // head dimension at which it would reach half (d / (d + h), normalised at 128)
  };
  Curve attention_forward;
  Curve attention_backward;
  // Other kernels' curves (attention.fa2, attention.cudnn), or the
  // architecture's own where it is that kernel; `known` false: no figures.
  struct Curves {
    bool known = false;
    Curve forward, backward;
  };
  Curves fa2, cudnn;
  // Memory-bound kernels.
  double memory_efficiency = 1.0;  // of the peak HBM bandwidth
  double launch_floor_us = 0.0;    // the least time a kernel takes
};

// The architectures the data file knows, and their names.
const ArchConstants* find_arch(std::string_view name);
std::vector<std::string> arch_names();

}  // namespace acesim
