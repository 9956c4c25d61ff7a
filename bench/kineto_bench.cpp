// Reading PyTorch profiler (Kineto) traces: writes a synthetic trace of
// about MB megabytes of JSON (default 100) with a real trace's mix of
// events -- CPU operators, CUDA runtime calls, kernels with templated
// names and their launch flows, copies, NCCL kernels with their collective
// arguments, one ProfilerStep#N per 2,000 kernels -- plain and
// gzip-compressed into a temporary directory, then times
// kineto::read_trace_file on each (the best of 3).
//
//   acesim_bench_kineto [MB]
//
// Prints one tab-separated line per file: file, MB of JSON, MB on disk,
// events, GPU activities, read s (best of 3), MB/s of JSON.
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "workload/formats/kineto_trace.h"

namespace {

std::string synthetic_trace(double megabytes, std::size_t& events) {
  std::string s;
  s.reserve(static_cast<std::size_t>(megabytes * 1.05e6));
  s += R"J({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}], )J"
       R"J("distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 8, "pg_count": 1, )J"
       R"J("pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "pg_size": 8, "ranks": [0, 1, 2, 3, 4, 5, 6, 7]}]}, )J"
       R"J("traceEvents": [)J";
  const char* kernels[] = {
      "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8>(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8::Params)",
      "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3>)",
      "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, c10::BFloat16, float, c10::BFloat16, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, int)",
      "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas"};
  double ts = 1.0e12;
  long long corr = 1;
  std::size_t n = 0;
  bool first = true;
  const auto add = [&](const std::string& e) {
    if (!first) s += ", ";
    first = false;
    s += e;
    ++events;
  };
  long long step = 0;
  while (static_cast<double>(s.size()) < megabytes * 1e6) {
    if (n % 2000 == 0) {
      add(fmt::format(R"J({{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#{}", "pid": 100, "tid": 100, "ts": {:.3f}, "dur": 100000.000, "args": {{"External id": {}}}}})J",
                      step++, ts, corr));
    }
    add(fmt::format(R"J({{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 100, "tid": 100, "ts": {:.3f}, "dur": 12.345, "args": {{"External id": {}, "Record function id": 0, "Ev Idx": {}}}}})J",
                    ts, corr, n));
    add(fmt::format(R"J({{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": 100, "ts": {:.3f}, "dur": 5.125, "args": {{"External id": {}, "cbid": 211, "correlation": {}}}}})J",
                    ts + 2.0, corr, corr));
    add(fmt::format(R"J({{"ph": "s", "id": {}, "pid": 100, "tid": 100, "ts": {:.3f}, "cat": "ac2g", "name": "ac2g"}})J", corr, ts + 2.0));
    const bool nccl = n % 50 == 49;
    const long long stream = nccl ? 40 : 7;
    if (nccl) {
      add(fmt::format(R"J({{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "pid": 0, "tid": 40, "ts": {:.3f}, "dur": 80.500, "args": {{"External id": {}, "queued": 0, "device": 0, "context": 1, "stream": 40, "correlation": {}, "registers per thread": 96, "shared memory": 87568, "grid": [8, 1, 1], "block": [544, 1, 1], "Collective name": "allreduce", "In msg nelems": 1048576, "Out msg nelems": 1048576, "Group size": 8, "dtype": "BFloat16", "In split size": "[]", "Out split size": "[]", "Process Group Name": "0", "Process Group Description": "default_pg", "Process Group Ranks": "[0, 1, 2, 3, 4, 5, 6, 7]"}}}})J",
                      ts + 10.0, corr, corr));
    } else {
      add(fmt::format(R"J({{"ph": "X", "cat": "kernel", "name": "{}", "pid": 0, "tid": {}, "ts": {:.3f}, "dur": 20.250, "args": {{"External id": {}, "queued": 0, "device": 0, "context": 1, "stream": {}, "correlation": {}, "registers per thread": 168, "shared memory": 49152, "blocks per SM": 1.2, "warps per SM": 4.8, "grid": [132, 1, 1], "block": [384, 1, 1], "est. achieved occupancy %": 12}}}})J",
                      kernels[n % 4], stream, ts + 10.0, corr, stream, corr));
    }
    add(fmt::format(R"J({{"ph": "f", "id": {}, "pid": 0, "tid": {}, "ts": {:.3f}, "cat": "ac2g", "name": "ac2g", "bp": "e"}})J", corr, stream,
                    ts + 10.0));
    ts += 100.0;
    ++corr;
    ++n;
  }
  s += "]}";
  return s;
}

double best_read_s(const std::string& path, std::size_t& gpu) {
  double best = 1e300;
  for (int i = 0; i < 3; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const acesim::kineto::Trace t = acesim::kineto::read_trace_file(path);
    const auto t1 = std::chrono::steady_clock::now();
    gpu = t.gpu.size();
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const double mb = argc > 1 ? std::atof(argv[1]) : 100.0;
  if (!(mb > 0.0 && mb <= 4096.0)) {
    std::fprintf(stderr, "usage: acesim_bench_kineto [MB], 0 < MB <= 4096\n");
    return 2;
  }
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / fmt::format("acesim_bench_kineto_{}", ::getpid());
  std::filesystem::create_directories(dir);
  std::size_t events = 0;
  const std::string text = synthetic_trace(mb, events);
  const std::string plain = (dir / "trace.json").string(), gz = (dir / "trace.json.gz").string();
  std::ofstream(plain, std::ios::binary) << text;
  {
    gzFile f = gzopen(gz.c_str(), "wb6");
    gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
    gzclose(f);
  }
  std::printf("file\tJSON MB\tdisk MB\tevents\tGPU activities\tread s (best of 3)\tJSON MB/s\n");
  int rc = 0;
  for (const std::string& p : {plain, gz}) {
    try {
      std::size_t gpu = 0;
      const double s = best_read_s(p, gpu);
      std::printf("%s\t%.1f\t%.1f\t%zu\t%zu\t%.3f\t%.0f\n", std::filesystem::path(p).filename().c_str(), static_cast<double>(text.size()) / 1e6,
                  static_cast<double>(std::filesystem::file_size(p)) / 1e6, events, gpu, s, static_cast<double>(text.size()) / 1e6 / s);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "acesim_bench_kineto: %s\n", e.what());
      rc = 2;
    }
  }
  std::filesystem::remove_all(dir);
  return rc;
}
