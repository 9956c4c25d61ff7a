// gpu-characterize: what communication kernels cost compute on one NVIDIA GPU.
//
// Calibrates acesim's `sm` executor (collectives run as kernels on SMs) and
// `ace` executor (an offload engine; here the copy engines stand in for it).
// Five experiments, all on one device:
//   comm_alone      copy / bf16-reduce kernels on exactly K SMs (one CTA per SM)
//   memcpy_alone    cudaMemcpyAsync D2D (and cudaMemcpyBatchAsync preferring
//                   the copy engines, "memcpy_ce", where the runtime has it)
//   gemm_alone      a batch of cuBLAS bf16 GEMMs
//   gemm_sm_target  the same GEMMs told to use S-K SMs (cublasSetSmCountTarget)
//   gemm_with_comm  the GEMMs while a persistent copy/reduce kernel holds K SMs,
//                   or while memcpys stream on another stream
// Output: DIR/measurements.csv and DIR/gpu.json (schema in README.md), a
// progress log on stderr, a summary table on stdout.
//
// Every CUDA/cuBLAS call is checked; every wait has a timeout; any failure
// prints file:line and exits 1 (rows already measured stay in the CSV).

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <sys/stat.h>
#include <sys/types.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <optional>
#include <string>
#include <thread>
#include <vector>

// ---------------------------------------------------------------------------
// Error handling
// ---------------------------------------------------------------------------

[[noreturn]] static void die() {
  std::fflush(nullptr);
  // _Exit: no atexit handlers, so a teardown can never wait on a stuck kernel;
  // the driver kills the context when the process goes.
  std::_Exit(1);
}

#define CUDA_CHECK(call)                                                              \
  do {                                                                                \
    const cudaError_t err_ = (call);                                                  \
    if (err_ != cudaSuccess) {                                                        \
      std::fprintf(stderr, "%s:%d: CUDA error %s (%s) in %s\n", __FILE__, __LINE__,   \
                   cudaGetErrorName(err_), cudaGetErrorString(err_), #call);          \
      die();                                                                          \
    }                                                                                 \
  } while (0)

#define CUBLAS_CHECK(call)                                                            \
  do {                                                                                \
    const cublasStatus_t st_ = (call);                                                \
    if (st_ != CUBLAS_STATUS_SUCCESS) {                                               \
      std::fprintf(stderr, "%s:%d: cuBLAS error %d (%s) in %s\n", __FILE__, __LINE__, \
                   static_cast<int>(st_), cublasGetStatusString(st_), #call);         \
      die();                                                                          \
    }                                                                                 \
  } while (0)

// After every <<<>>> launch.
#define LAUNCH_CHECK() CUDA_CHECK(cudaGetLastError())

#define FATAL(...)                                                \
  do {                                                            \
    std::fprintf(stderr, "%s:%d: error: ", __FILE__, __LINE__);   \
    std::fprintf(stderr, __VA_ARGS__);                            \
    std::fprintf(stderr, "\n");                                   \
    die();                                                        \
  } while (0)

// ---------------------------------------------------------------------------
// Device code
// ---------------------------------------------------------------------------

constexpr int kThreads = 512;  // threads per CTA of the communication kernels
constexpr int kUnroll = 8;     // uint4 loads in flight per thread (per operand)

// Control block of the persistent kernels (device global memory).
struct CommCtl {
  unsigned long long bytes;    // payload bytes moved (output bytes)
  unsigned long long t_start;  // min %globaltimer at CTA start (ns)
  unsigned long long t_end;    // max %globaltimer at CTA exit (ns)
  unsigned int stop;           // set nonzero by set_stop_kernel
  unsigned int timed_out;      // set by a CTA that hit its own deadline
};

__device__ __forceinline__ unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Two bf16 packed in 32 bits, added as __nv_bfloat162.
__device__ __forceinline__ unsigned int add_bf16x2(unsigned int x, unsigned int y) {
  const __nv_bfloat162 a = __halves2bfloat162(
      __ushort_as_bfloat16(static_cast<unsigned short>(x & 0xffffu)),
      __ushort_as_bfloat16(static_cast<unsigned short>(x >> 16)));
  const __nv_bfloat162 b = __halves2bfloat162(
      __ushort_as_bfloat16(static_cast<unsigned short>(y & 0xffffu)),
      __ushort_as_bfloat16(static_cast<unsigned short>(y >> 16)));
  const __nv_bfloat162 r = __hadd2(a, b);
  return static_cast<unsigned int>(__bfloat16_as_ushort(__low2bfloat16(r))) |
         (static_cast<unsigned int>(__bfloat16_as_ushort(__high2bfloat16(r))) << 16);
}

// Eight bf16 in a uint4.
__device__ __forceinline__ uint4 add_bf16x8(uint4 x, uint4 y) {
  uint4 r;
  r.x = add_bf16x2(x.x, y.x);
  r.y = add_bf16x2(x.y, y.y);
  r.z = add_bf16x2(x.z, y.z);
  r.w = add_bf16x2(x.w, y.w);
  return r;
}

// kUnroll vectors at i, i+stride, ...: all loads issued before any store.
template <bool kReduce>
__device__ __forceinline__ void move_chunk(const uint4* __restrict__ a, const uint4* __restrict__ b,
                                           uint4* __restrict__ dst, size_t i, size_t stride) {
  uint4 va[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) va[u] = a[i + static_cast<size_t>(u) * stride];
  if constexpr (kReduce) {
    uint4 vb[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) vb[u] = b[i + static_cast<size_t>(u) * stride];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) va[u] = add_bf16x8(va[u], vb[u]);
  }
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) dst[i + static_cast<size_t>(u) * stride] = va[u];
}

template <bool kReduce>
__device__ __forceinline__ void move_one(const uint4* __restrict__ a, const uint4* __restrict__ b,
                                         uint4* __restrict__ dst, size_t i) {
  if constexpr (kReduce) {
    dst[i] = add_bf16x8(a[i], b[i]);
  } else {
    dst[i] = a[i];
  }
}

// One pass over n uint4: dst = a (copy) or dst = a + b (reduce), grid-stride.
template <bool kReduce>
__global__ void __launch_bounds__(kThreads, 1)
    comm_pass_kernel(const uint4* __restrict__ a, const uint4* __restrict__ b,
                     uint4* __restrict__ dst, size_t n) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < n; i += kUnroll * stride) move_chunk<kReduce>(a, b, dst, i, stride);
  for (; i < n; i += stride) move_one<kReduce>(a, b, dst, i);
}

// Pass after pass until ctl->stop becomes nonzero (checked before every chunk of
// kUnroll*stride vectors: 64 KiB per CTA) or until deadline_ns has elapsed
// (a backstop: it then sets ctl->timed_out). Each CTA first reports itself
// resident in ready[blockIdx.x] (mapped pinned host memory).
template <bool kReduce>
__global__ void __launch_bounds__(kThreads, 1)
    comm_persistent_kernel(const uint4* __restrict__ a, const uint4* __restrict__ b,
                           uint4* __restrict__ dst, size_t n, CommCtl* ctl, unsigned int* ready,
                           unsigned long long deadline_ns) {
  const unsigned long long t0 = global_timer_ns();
  if (threadIdx.x == 0) {
    atomicMin(&ctl->t_start, t0);
    *reinterpret_cast<volatile unsigned int*>(&ready[blockIdx.x]) = 1u;
    __threadfence_system();
  }
  const volatile unsigned int* stop = &ctl->stop;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  const size_t first = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned long long moved = 0;  // uint4 vectors written by this thread
  bool done = false;
  bool expired = false;
  while (!done) {
    size_t i = first;
    for (; i + (kUnroll - 1) * stride < n; i += kUnroll * stride) {
      if (*stop != 0u) {
        done = true;
        break;
      }
      move_chunk<kReduce>(a, b, dst, i, stride);
      moved += kUnroll;
    }
    if (done) break;
    for (; i < n; i += stride) {
      move_one<kReduce>(a, b, dst, i);
      moved += 1;
    }
    if (*stop != 0u) {
      done = true;
    } else if (global_timer_ns() - t0 > deadline_ns) {
      done = true;
      expired = true;
    }
  }
  if (expired) atomicExch(&ctl->timed_out, 1u);
  __syncthreads();
  unsigned long long bytes = moved * sizeof(uint4);
  for (int offset = 16; offset > 0; offset /= 2) bytes += __shfl_down_sync(0xffffffffu, bytes, offset);
  if ((threadIdx.x & 31u) == 0u) atomicAdd(&ctl->bytes, bytes);
  __syncthreads();
  if (threadIdx.x == 0) atomicMax(&ctl->t_end, global_timer_ns());
}

__global__ void reset_ctl_kernel(CommCtl* ctl) {
  ctl->bytes = 0ull;
  ctl->t_start = ~0ull;
  ctl->t_end = 0ull;
  ctl->stop = 0u;
  ctl->timed_out = 0u;
  __threadfence();
}

__global__ void set_stop_kernel(CommCtl* ctl) {
  atomicExch(&ctl->stop, 1u);
  __threadfence();
}

// p[i] = (i % 64) + add, exactly representable in bf16.
__global__ void fill_pattern_kernel(__nv_bfloat16* p, size_t n, float add, int constant) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float v = constant ? add : static_cast<float>(i % 64u) + add;
    p[i] = __float2bfloat16(v);
  }
}

// Pseudo-random values in [-1, 1) (GEMM operands: not zeros, which run cooler).
__global__ void fill_random_kernel(__nv_bfloat16* p, size_t n, unsigned int seed) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    unsigned int h = static_cast<unsigned int>(i) * 2654435761u ^ static_cast<unsigned int>(i >> 32) ^ seed;
    h ^= h >> 16;
    h *= 0x7feb352du;
    h ^= h >> 15;
    h *= 0x846ca68bu;
    h ^= h >> 16;
    p[i] = __float2bfloat16(static_cast<float>(static_cast<int>(h & 0xffffu) - 32768) / 32768.0f);
  }
}

// Counts elements of dst that differ from (i % 64) + add.
__global__ void check_pattern_kernel(const __nv_bfloat16* dst, size_t n, float add,
                                     unsigned long long* bad) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  unsigned long long local = 0;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const unsigned short want = __bfloat16_as_ushort(__float2bfloat16(static_cast<float>(i % 64u) + add));
    if (__bfloat16_as_ushort(dst[i]) != want) ++local;
  }
  if (local != 0ull) atomicAdd(bad, local);
}

// ---------------------------------------------------------------------------
// Host utilities
// ---------------------------------------------------------------------------

namespace {

using Clock = std::chrono::steady_clock;
const Clock::time_point g_start = Clock::now();

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

void progress(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void progress(const char* fmt, ...) {
  std::fprintf(stderr, "[%7.2fs] ", seconds_since(g_start));
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(stderr, fmt, ap);
  va_end(ap);
  std::fprintf(stderr, "\n");
  std::fflush(stderr);
}

double median(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return (v.size() % 2 == 1) ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// Polls the stream until it is idle; a kernel error or the timeout is fatal.
void wait_stream(cudaStream_t s, double timeout_s, const char* what) {
  const Clock::time_point t0 = Clock::now();
  for (;;) {
    const cudaError_t e = cudaStreamQuery(s);
    if (e == cudaSuccess) return;
    if (e != cudaErrorNotReady) {
      std::fprintf(stderr, "error: while waiting for %s: CUDA error %s (%s)\n", what,
                   cudaGetErrorName(e), cudaGetErrorString(e));
      die();
    }
    if (seconds_since(t0) > timeout_s) {
      std::fprintf(stderr, "error: timeout: %s did not finish within %.0f s\n", what, timeout_s);
      die();
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

float elapsed_ms(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0.0f;
  CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
  return ms;
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned int>(u));
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

std::string version_string(int v) {  // 13000 -> "13.0"
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

void mkdir_p(const std::string& dir) {
  std::string path;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    path = dir.substr(0, pos);
    if (path.empty()) continue;
    if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
      FATAL("cannot create directory %s: %s", path.c_str(), std::strerror(errno));
    }
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) FATAL("%s is not a directory", dir.c_str());
}

// ---------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------

struct Options {
  size_t bytes = size_t{512} << 20;
  int repeats = 5;
  int batch = 20;
  int m = 8192, n = 8192, k = 8192;
  std::string out = ".";
  int device = 0;
  bool quick = false;
};

void usage(FILE* f) {
  std::fprintf(f,
               "usage: gpu-characterize [--quick] [--bytes SIZE] [--gemm M,N,K] [--repeats R]\n"
               "                        [--batch G] [--out DIR] [--device N]\n"
               "  --bytes SIZE  payload per pass, bytes; suffix K/M/G = KiB/MiB/GiB (default 512M)\n"
               "  --gemm M,N,K  bf16 GEMM shape (default 8192,8192,8192)\n"
               "  --repeats R   timed repeats per case, medians reported (default 5)\n"
               "  --batch G     GEMMs per timed batch (default 20)\n"
               "  --out DIR     where measurements.csv and gpu.json go (default .)\n"
               "  --device N    CUDA device (default 0)\n"
               "  --quick       smoke run: 64M, R=3, G=5, GEMM 4096 (explicit flags still win)\n");
}

unsigned long long parse_size(const char* s, const char* flag) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(s, &end, 10);
  // strtoull accepts a sign ("-1" wraps to a huge value): digits only.
  if (errno != 0 || end == s || *s < '0' || *s > '9') FATAL("bad value for %s: '%s'", flag, s);
  unsigned long long mult = 1;
  if (*end == 'K' || *end == 'k') mult = 1ull << 10, ++end;
  else if (*end == 'M' || *end == 'm') mult = 1ull << 20, ++end;
  else if (*end == 'G' || *end == 'g') mult = 1ull << 30, ++end;
  if (*end == 'i' && end[1] == 'B') end += 2;
  if (*end != '\0' || v > ~0ull / mult) FATAL("bad value for %s: '%s'", flag, s);
  return v * mult;
}

int parse_int(const char* s, const char* flag, long lo, long hi) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) {
    FATAL("bad value for %s: '%s' (expected an integer in [%ld, %ld])", flag, s, lo, hi);
  }
  return static_cast<int>(v);
}

Options parse_options(int argc, char** argv) {
  std::optional<unsigned long long> bytes;
  std::optional<int> repeats, batch, m, n, k, device;
  std::optional<std::string> out;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) FATAL("%s needs a value", a.c_str());
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      usage(stdout);
      std::exit(0);
    } else if (a == "--quick") {
      quick = true;
    } else if (a == "--bytes") {
      bytes = parse_size(value(), "--bytes");
    } else if (a == "--repeats") {
      repeats = parse_int(value(), "--repeats", 1, 1000);
    } else if (a == "--batch") {
      batch = parse_int(value(), "--batch", 1, 100000);
    } else if (a == "--device") {
      device = parse_int(value(), "--device", 0, 1023);
    } else if (a == "--out") {
      out = value();
    } else if (a == "--gemm") {
      const std::string v = value();
      const size_t c1 = v.find(',');
      const size_t c2 = (c1 == std::string::npos) ? std::string::npos : v.find(',', c1 + 1);
      if (c1 == std::string::npos || c2 == std::string::npos) FATAL("--gemm expects M,N,K, got '%s'", v.c_str());
      m = parse_int(v.substr(0, c1).c_str(), "--gemm M", 1, 1 << 20);
      n = parse_int(v.substr(c1 + 1, c2 - c1 - 1).c_str(), "--gemm N", 1, 1 << 20);
      k = parse_int(v.substr(c2 + 1).c_str(), "--gemm K", 1, 1 << 20);
    } else {
      usage(stderr);
      FATAL("unknown argument '%s'", a.c_str());
    }
  }
  Options o;
  if (quick) {
    o.quick = true;
    o.bytes = size_t{64} << 20;
    o.repeats = 3;
    o.batch = 5;
    o.m = o.n = o.k = 4096;
  }
  if (bytes) o.bytes = static_cast<size_t>(*bytes);
  if (repeats) o.repeats = *repeats;
  if (batch) o.batch = *batch;
  if (m) o.m = *m;
  if (n) o.n = *n;
  if (k) o.k = *k;
  if (device) o.device = *device;
  if (out) o.out = *out;
  if (o.bytes < (size_t{1} << 20) || o.bytes % 16 != 0) {
    FATAL("--bytes must be at least 1 MiB and a multiple of 16 (got %zu)", o.bytes);
  }
  if (o.out.empty()) o.out = ".";
  return o;
}

// ---------------------------------------------------------------------------
// CSV rows
// ---------------------------------------------------------------------------

struct Row {
  std::string experiment;
  std::string kernel;
  int ctas = 0;
  std::optional<unsigned long long> bytes;
  int repeats = 0;
  double time_us = 0.0;
  std::optional<double> payload_GBps, hbm_GBps, gemm_us, gemm_alone_us, gemm_slowdown, gemm_TFLOPS;
};

const char* kCsvHeader =
    "experiment,kernel,ctas,bytes,repeats,time_us,payload_GBps,hbm_GBps,gemm_us,gemm_alone_us,"
    "gemm_slowdown,gemm_TFLOPS\n";

void put_opt(FILE* f, const std::optional<double>& v) {
  std::fputc(',', f);
  if (v && std::isfinite(*v)) std::fprintf(f, "%.9g", *v);
}

class Csv {
 public:
  explicit Csv(const std::string& path) : path_(path) {
    f_ = std::fopen(path.c_str(), "w");
    if (f_ == nullptr) FATAL("cannot write %s: %s", path.c_str(), std::strerror(errno));
    std::fputs(kCsvHeader, f_);
    std::fflush(f_);
  }
  ~Csv() {
    if (f_ != nullptr) std::fclose(f_);
  }
  Csv(const Csv&) = delete;
  Csv& operator=(const Csv&) = delete;

  // Written and flushed at once: a later failure keeps the rows measured so far.
  void add(const Row& r) {
    std::fprintf(f_, "%s,%s,%d,", r.experiment.c_str(), r.kernel.c_str(), r.ctas);
    if (r.bytes) std::fprintf(f_, "%llu", *r.bytes);
    std::fprintf(f_, ",%d,%.9g", r.repeats, r.time_us);
    put_opt(f_, r.payload_GBps);
    put_opt(f_, r.hbm_GBps);
    put_opt(f_, r.gemm_us);
    put_opt(f_, r.gemm_alone_us);
    put_opt(f_, r.gemm_slowdown);
    put_opt(f_, r.gemm_TFLOPS);
    std::fputc('\n', f_);
    if (std::fflush(f_) != 0 || std::ferror(f_)) FATAL("write error on %s", path_.c_str());
    rows_.push_back(r);
  }

  void print_summary(FILE* f) const {
    auto num = [](const std::optional<double>& v, const char* fmt, char* buf, size_t len) {
      if (v && std::isfinite(*v)) {
        std::snprintf(buf, len, fmt, *v);
      } else {
        std::snprintf(buf, len, "-");
      }
      return buf;
    };
    std::fprintf(f, "%-15s %-9s %5s %12s %13s %10s %10s %11s %9s %8s\n", "experiment", "kernel", "ctas",
                 "MB", "time_us", "payload", "hbm_GB/s", "gemm_us", "slowdown", "TFLOPS");
    for (const Row& r : rows_) {
      char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32];
      std::optional<double> mb;
      if (r.bytes) mb = static_cast<double>(*r.bytes) / 1e6;
      std::optional<double> slow;
      if (r.gemm_slowdown) slow = *r.gemm_slowdown * 100.0;
      std::fprintf(f, "%-15s %-9s %5d %12s %13.2f %10s %10s %11s %9s %8s\n", r.experiment.c_str(),
                   r.kernel.c_str(), r.ctas, num(mb, "%.1f", b1, sizeof b1), r.time_us,
                   num(r.payload_GBps, "%.1f", b2, sizeof b2), num(r.hbm_GBps, "%.1f", b3, sizeof b3),
                   num(r.gemm_us, "%.2f", b4, sizeof b4), num(slow, "%.1f%%", b5, sizeof b5),
                   num(r.gemm_TFLOPS, "%.1f", b6, sizeof b6));
    }
  }

 private:
  std::string path_;
  FILE* f_ = nullptr;
  std::vector<Row> rows_;
};

// ---------------------------------------------------------------------------
// The suite
// ---------------------------------------------------------------------------

constexpr double kAloneTimeoutS = 60.0;      // any single wait outside gemm_with_comm
constexpr double kHandshakeTimeoutS = 10.0;  // comm kernel resident on all K SMs
constexpr double kWithCommTimeoutS = 30.0;   // watchdog over one gemm_with_comm run
constexpr unsigned long long kPersistentDeadlineNs = 20ull * 1000 * 1000 * 1000;  // kernel backstop
constexpr size_t kWorkspaceBytes = size_t{64} << 20;
constexpr double kMemcpyCoverage = 2.0;  // gemm_with_comm memcpy: copies for 2x the GEMM batch alone
constexpr int kMaxCopies = 4096;         // ... at most (one event each)

struct Suite {
  Options opt;
  int dev = 0;
  int sm_count = 0;
  int smem_per_sm = 0;
  int smem_optin = 0;
  int comm_smem = 0;  // dynamic shared memory per comm CTA: forces one CTA per SM
  size_t n_vec = 0;   // payload in uint4

  cudaStream_t sa = nullptr;  // GEMMs
  cudaStream_t sb = nullptr;  // communication
  cublasHandle_t handle = nullptr;

  uint4* buf_a = nullptr;
  uint4* buf_b = nullptr;
  uint4* buf_dst = nullptr;
  __nv_bfloat16* gemm_a = nullptr;
  __nv_bfloat16* gemm_b = nullptr;
  __nv_bfloat16* gemm_c = nullptr;
  void* workspace = nullptr;
  CommCtl* ctl = nullptr;
  unsigned long long* d_bad = nullptr;
  unsigned int* ready_host = nullptr;  // mapped pinned, one slot per CTA
  unsigned int* ready_dev = nullptr;

  std::vector<cudaEvent_t> ev0, ev1;  // one pair per timed repeat
  cudaEvent_t ev_b0 = nullptr, ev_b1 = nullptr;

  bool ce_available = false;
  double memcpy_alone_us = 0.0;
  double memcpy_ce_alone_us = 0.0;
  double gemm_alone_us = 0.0;

  Csv* csv = nullptr;

  double gemm_flop() const { return 2.0 * opt.m * static_cast<double>(opt.n) * opt.k; }
  double tflops(double us) const { return gemm_flop() / (us * 1e-6) / 1e12; }

  // ----- setup -----

  void setup_device() {
    int count = 0;
    CUDA_CHECK(cudaGetDeviceCount(&count));
    if (opt.device >= count) FATAL("--device %d: only %d CUDA device(s)", opt.device, count);
    dev = opt.device;
    CUDA_CHECK(cudaSetDevice(dev));
    CUDA_CHECK(cudaFree(nullptr));  // create the context now
    CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&smem_per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    int can_map = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&can_map, cudaDevAttrCanMapHostMemory, dev));
    if (!can_map) FATAL("device %d cannot map host memory (needed for the residency handshake)", dev);
    if (sm_count < 2) FATAL("need at least 2 SMs, device has %d", sm_count);
    // Any request over half the SM's shared memory leaves room for one CTA per SM;
    // the largest request also leaves no room for any other kernel's CTA.
    comm_smem = smem_optin;
    if (2 * comm_smem <= smem_per_sm) {
      FATAL("cannot force one CTA per SM: max dynamic shared memory per block %d <= half of %d per SM",
            smem_optin, smem_per_sm);
    }
    n_vec = opt.bytes / sizeof(uint4);
  }

  void write_gpu_json() {
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    int cc_major = 0, cc_minor = 0, l2 = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&cc_major, cudaDevAttrComputeCapabilityMajor, dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&cc_minor, cudaDevAttrComputeCapabilityMinor, dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    int clock_khz = 0;
    const bool have_clock = cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev) == cudaSuccess &&
                            clock_khz > 0;
    (void)cudaGetLastError();  // clear a failed optional query
    int rt = 0, drv = 0;
    CUDA_CHECK(cudaRuntimeGetVersion(&rt));
    CUDA_CHECK(cudaDriverGetVersion(&drv));
    int cb_major = 0, cb_minor = 0, cb_patch = 0;
    CUBLAS_CHECK(cublasGetProperty(MAJOR_VERSION, &cb_major));
    CUBLAS_CHECK(cublasGetProperty(MINOR_VERSION, &cb_minor));
    CUBLAS_CHECK(cublasGetProperty(PATCH_LEVEL, &cb_patch));
    char date[64];
    const std::time_t now = std::time(nullptr);
    struct tm tm_utc;
    if (gmtime_r(&now, &tm_utc) == nullptr || std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm_utc) == 0) {
      std::snprintf(date, sizeof date, "unknown");
    }
    prop.name[sizeof prop.name - 1] = '\0';
    const std::string path = opt.out + "/gpu.json";
    FILE* f = std::fopen(path.c_str(), "w");
    if (f == nullptr) FATAL("cannot write %s: %s", path.c_str(), std::strerror(errno));
    std::fprintf(f, "{\n");
    std::fprintf(f, "  \"name\": \"%s\",\n", json_escape(prop.name).c_str());
    std::fprintf(f, "  \"compute_capability\": \"%d.%d\",\n", cc_major, cc_minor);
    std::fprintf(f, "  \"sm_count\": %d,\n", sm_count);
    std::fprintf(f, "  \"l2_bytes\": %d,\n", l2);
    std::fprintf(f, "  \"memory_bytes\": %zu,\n", prop.totalGlobalMem);
    std::fprintf(f, "  \"smem_per_sm_bytes\": %d,\n", smem_per_sm);
    if (have_clock) std::fprintf(f, "  \"clock_khz\": %d,\n", clock_khz);
    std::fprintf(f, "  \"cuda_runtime\": \"%s\",\n", version_string(rt).c_str());
    std::fprintf(f, "  \"cuda_driver\": \"%s\",\n", version_string(drv).c_str());
    std::fprintf(f, "  \"cublas_version\": \"%d.%d.%d\",\n", cb_major, cb_minor, cb_patch);
    std::fprintf(f, "  \"date_utc\": \"%s\",\n", date);
    std::fprintf(f, "  \"gemm\": {\"m\": %d, \"n\": %d, \"k\": %d, \"dtype\": \"bf16\", \"batch\": %d},\n", opt.m,
                 opt.n, opt.k, opt.batch);
    std::fprintf(f, "  \"payload_bytes\": %zu,\n", opt.bytes);
    std::fprintf(f, "  \"threads_per_cta\": %d,\n", kThreads);
    std::fprintf(f, "  \"repeats\": %d\n", opt.repeats);
    std::fprintf(f, "}\n");
    if (std::fclose(f) != 0) FATAL("write error on %s", path.c_str());
    progress("device %d: %s, cc %d.%d, %d SMs, %d B smem/SM (%d opt-in/block), L2 %d B, HBM %zu B, "
             "runtime %s, driver %s, cuBLAS %d.%d.%d",
             dev, prop.name, cc_major, cc_minor, sm_count, smem_per_sm, smem_optin, l2, prop.totalGlobalMem,
             version_string(rt).c_str(), version_string(drv).c_str(), cb_major, cb_minor, cb_patch);
    if (cc_major != 9) progress("warning: built for sm_90; this device is cc %d.%d", cc_major, cc_minor);
  }

  template <typename K>
  void prepare_comm_kernel(K kernel, const char* name) {
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, comm_smem));
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                    static_cast<int>(cudaSharedmemCarveoutMaxShared)));
    cudaFuncAttributes attr;
    CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));  // also loads the module (lazy loading)
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, comm_smem));
    progress("%s: %d regs/thread, %d B dynamic smem/CTA, %d CTA(s)/SM", name, attr.numRegs, comm_smem, per_sm);
    if (per_sm != 1) FATAL("%s: expected exactly 1 resident CTA per SM, occupancy says %d", name, per_sm);
  }

  template <typename K>
  static void preload(K kernel) {
    cudaFuncAttributes attr;
    CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
  }

  void setup_resources() {
    CUDA_CHECK(cudaStreamCreateWithFlags(&sa, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&sb, cudaStreamNonBlocking));

    CUDA_CHECK(cudaMalloc(&buf_a, opt.bytes));
    CUDA_CHECK(cudaMalloc(&buf_b, opt.bytes));
    CUDA_CHECK(cudaMalloc(&buf_dst, opt.bytes));
    const size_t a_elems = static_cast<size_t>(opt.m) * opt.k;
    const size_t b_elems = static_cast<size_t>(opt.k) * opt.n;
    const size_t c_elems = static_cast<size_t>(opt.m) * opt.n;
    CUDA_CHECK(cudaMalloc(&gemm_a, a_elems * sizeof(__nv_bfloat16)));
    CUDA_CHECK(cudaMalloc(&gemm_b, b_elems * sizeof(__nv_bfloat16)));
    CUDA_CHECK(cudaMalloc(&gemm_c, c_elems * sizeof(__nv_bfloat16)));
    CUDA_CHECK(cudaMalloc(&workspace, kWorkspaceBytes));
    CUDA_CHECK(cudaMalloc(&ctl, sizeof(CommCtl)));
    CUDA_CHECK(cudaMalloc(&d_bad, sizeof(unsigned long long)));
    CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&ready_host), sizeof(unsigned int) * sm_count,
                             cudaHostAllocMapped));
    CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&ready_dev), ready_host, 0));
    for (int i = 0; i < sm_count; ++i) ready_host[i] = 0u;

    ev0.resize(opt.repeats);
    ev1.resize(opt.repeats);
    for (int r = 0; r < opt.repeats; ++r) {
      CUDA_CHECK(cudaEventCreate(&ev0[r]));
      CUDA_CHECK(cudaEventCreate(&ev1[r]));
    }
    CUDA_CHECK(cudaEventCreate(&ev_b0));
    CUDA_CHECK(cudaEventCreate(&ev_b1));

    // cublasSetStream resets the workspace: set the stream first.
    CUBLAS_CHECK(cublasSetStream(handle, sa));
    CUBLAS_CHECK(cublasSetWorkspace(handle, workspace, kWorkspaceBytes));

    prepare_comm_kernel(comm_pass_kernel<false>, "copy kernel");
    prepare_comm_kernel(comm_pass_kernel<true>, "reduce kernel");
    prepare_comm_kernel(comm_persistent_kernel<false>, "persistent copy kernel");
    prepare_comm_kernel(comm_persistent_kernel<true>, "persistent reduce kernel");
    preload(reset_ctl_kernel);
    preload(set_stop_kernel);
    preload(fill_pattern_kernel);
    preload(fill_random_kernel);
    preload(check_pattern_kernel);

    const size_t n_elems = opt.bytes / sizeof(__nv_bfloat16);
    const int fill_grid = sm_count * 8;
    fill_pattern_kernel<<<fill_grid, 256, 0, sb>>>(reinterpret_cast<__nv_bfloat16*>(buf_a), n_elems, 0.0f, 0);
    LAUNCH_CHECK();
    fill_pattern_kernel<<<fill_grid, 256, 0, sb>>>(reinterpret_cast<__nv_bfloat16*>(buf_b), n_elems, 1.0f, 1);
    LAUNCH_CHECK();
    CUDA_CHECK(cudaMemsetAsync(buf_dst, 0, opt.bytes, sb));
    fill_random_kernel<<<fill_grid, 256, 0, sb>>>(gemm_a, a_elems, 0x1234u);
    LAUNCH_CHECK();
    fill_random_kernel<<<fill_grid, 256, 0, sb>>>(gemm_b, b_elems, 0xabcdu);
    LAUNCH_CHECK();
    CUDA_CHECK(cudaMemsetAsync(gemm_c, 0, c_elems * sizeof(__nv_bfloat16), sb));
    // The stop/reset kernels once, on a quiet GPU, before they ever run next to a persistent kernel.
    reset_ctl_kernel<<<1, 1, 0, sb>>>(ctl);
    LAUNCH_CHECK();
    set_stop_kernel<<<1, 1, 0, sb>>>(ctl);
    LAUNCH_CHECK();
    wait_stream(sb, kAloneTimeoutS, "buffer initialization");
    progress("buffers: 3 x %zu B payload, GEMM %dx%dx%d bf16, %zu B cuBLAS workspace", opt.bytes, opt.m, opt.n,
             opt.k, kWorkspaceBytes);
  }

  // ----- communication kernels -----

  void launch_pass(bool reduce, int ctas, cudaStream_t s) {
    if (reduce) {
      comm_pass_kernel<true><<<ctas, kThreads, comm_smem, s>>>(buf_a, buf_b, buf_dst, n_vec);
    } else {
      comm_pass_kernel<false><<<ctas, kThreads, comm_smem, s>>>(buf_a, buf_b, buf_dst, n_vec);
    }
    LAUNCH_CHECK();
  }

  // Full-buffer check of one pass (catches an indexing bug before it skews a bandwidth).
  void validate(bool reduce, int ctas) {
    CUDA_CHECK(cudaMemsetAsync(buf_dst, 0, opt.bytes, sb));
    launch_pass(reduce, ctas, sb);
    CUDA_CHECK(cudaMemsetAsync(d_bad, 0, sizeof(unsigned long long), sb));
    check_pattern_kernel<<<sm_count * 8, 256, 0, sb>>>(reinterpret_cast<const __nv_bfloat16*>(buf_dst),
                                                        opt.bytes / sizeof(__nv_bfloat16), reduce ? 1.0f : 0.0f,
                                                        d_bad);
    LAUNCH_CHECK();
    wait_stream(sb, kAloneTimeoutS, "validation");
    unsigned long long bad = 0;
    CUDA_CHECK(cudaMemcpy(&bad, d_bad, sizeof bad, cudaMemcpyDeviceToHost));
    if (bad != 0) {
      progress("WARNING: validation of %s with %d CTAs: %llu of %zu bf16 elements wrong",
               reduce ? "reduce" : "copy", ctas, bad, opt.bytes / sizeof(__nv_bfloat16));
    } else {
      progress("validation of %s with %d CTAs: ok", reduce ? "reduce" : "copy", ctas);
    }
  }

  void comm_alone(bool reduce, const std::vector<int>& sweep) {
    const char* name = reduce ? "reduce" : "copy";
    const double traffic = reduce ? 3.0 : 2.0;
    for (const int k : sweep) {
      launch_pass(reduce, k, sb);  // warm-up
      for (int r = 0; r < opt.repeats; ++r) {
        CUDA_CHECK(cudaEventRecord(ev0[r], sb));
        launch_pass(reduce, k, sb);
        CUDA_CHECK(cudaEventRecord(ev1[r], sb));
      }
      wait_stream(sb, kAloneTimeoutS, "comm_alone");
      std::vector<double> us;
      for (int r = 0; r < opt.repeats; ++r) us.push_back(1000.0 * elapsed_ms(ev0[r], ev1[r]));
      const double t = median(us);
      Row row;
      row.experiment = "comm_alone";
      row.kernel = name;
      row.ctas = k;
      row.bytes = opt.bytes;
      row.repeats = opt.repeats;
      row.time_us = t;
      row.payload_GBps = static_cast<double>(opt.bytes) / (t * 1e-6) / 1e9;
      row.hbm_GBps = traffic * *row.payload_GBps;
      csv->add(row);
      progress("comm_alone %-6s K=%3d: %10.1f us  %8.1f GB/s payload  %8.1f GB/s HBM", name, k, t,
               *row.payload_GBps, *row.hbm_GBps);
    }
  }

  // ----- copy engines -----

  // cudaMemcpyBatchAsync with one copy, preferring to overlap with compute.
  cudaError_t memcpy_ce_async(void* dst, const void* src, size_t bytes, cudaStream_t s) {
#if defined(CUDART_VERSION) && CUDART_VERSION >= 12080
    void* dsts[1] = {dst};
    void* srcs[1] = {const_cast<void*>(src)};
    size_t sizes[1] = {bytes};
    cudaMemcpyAttributes attrs[1];
    std::memset(attrs, 0, sizeof attrs);
    attrs[0].srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    attrs[0].srcLocHint.type = cudaMemLocationTypeDevice;
    attrs[0].srcLocHint.id = dev;
    attrs[0].dstLocHint.type = cudaMemLocationTypeDevice;
    attrs[0].dstLocHint.id = dev;
    attrs[0].flags = cudaMemcpyFlagPreferOverlapWithCompute;
    size_t attr_idx[1] = {0};
#if CUDART_VERSION >= 13000
    return cudaMemcpyBatchAsync(dsts, srcs, sizes, 1, attrs, attr_idx, 1, s);
#else
    size_t fail_idx = 0;
    return cudaMemcpyBatchAsync(dsts, srcs, sizes, 1, attrs, attr_idx, 1, &fail_idx, s);
#endif
#else
    (void)dst;
    (void)src;
    (void)bytes;
    (void)s;
    return cudaErrorNotSupported;
#endif
  }

  void enqueue_memcpy(bool ce, cudaStream_t s) {
    if (ce) {
      CUDA_CHECK(memcpy_ce_async(buf_dst, buf_a, opt.bytes, s));
    } else {
      CUDA_CHECK(cudaMemcpyAsync(buf_dst, buf_a, opt.bytes, cudaMemcpyDeviceToDevice, s));
    }
  }

  void memcpy_alone(bool ce) {
    const char* name = ce ? "memcpy_ce" : "memcpy";
    if (ce) {
      // Warm-up doubles as the availability probe.
      const cudaError_t e = memcpy_ce_async(buf_dst, buf_a, opt.bytes, sb);
      if (e != cudaSuccess) {
        (void)cudaGetLastError();
        progress("warning: cudaMemcpyBatchAsync unavailable (%s: %s); skipping memcpy_ce rows", cudaGetErrorName(e),
                 cudaGetErrorString(e));
        ce_available = false;
        return;
      }
      ce_available = true;
    } else {
      enqueue_memcpy(false, sb);
    }
    for (int r = 0; r < opt.repeats; ++r) {
      CUDA_CHECK(cudaEventRecord(ev0[r], sb));
      enqueue_memcpy(ce, sb);
      CUDA_CHECK(cudaEventRecord(ev1[r], sb));
    }
    wait_stream(sb, kAloneTimeoutS, name);
    std::vector<double> us;
    for (int r = 0; r < opt.repeats; ++r) us.push_back(1000.0 * elapsed_ms(ev0[r], ev1[r]));
    const double t = median(us);
    (ce ? memcpy_ce_alone_us : memcpy_alone_us) = t;
    Row row;
    row.experiment = "memcpy_alone";
    row.kernel = name;
    row.ctas = 0;
    row.bytes = opt.bytes;
    row.repeats = opt.repeats;
    row.time_us = t;
    row.payload_GBps = static_cast<double>(opt.bytes) / (t * 1e-6) / 1e9;
    row.hbm_GBps = 2.0 * *row.payload_GBps;
    csv->add(row);
    progress("memcpy_alone %-9s: %10.1f us  %8.1f GB/s payload  %8.1f GB/s HBM", name, t, *row.payload_GBps,
             *row.hbm_GBps);
  }

  // ----- GEMM -----

  void enqueue_gemms() {
    const float alpha = 1.0f;
    const float beta = 0.0f;
    for (int g = 0; g < opt.batch; ++g) {
      CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, opt.m, opt.n, opt.k, &alpha, gemm_a, CUDA_R_16BF,
                                opt.m, gemm_b, CUDA_R_16BF, opt.k, &beta, gemm_c, CUDA_R_16BF, opt.m,
                                CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    }
  }

  // Median per-GEMM time (us) over R batches, after one warm-up batch.
  double time_gemm_batches(const char* what) {
    enqueue_gemms();  // warm-up
    for (int r = 0; r < opt.repeats; ++r) {
      CUDA_CHECK(cudaEventRecord(ev0[r], sa));
      enqueue_gemms();
      CUDA_CHECK(cudaEventRecord(ev1[r], sa));
    }
    wait_stream(sa, kAloneTimeoutS, what);
    std::vector<double> us;
    for (int r = 0; r < opt.repeats; ++r) us.push_back(1000.0 * elapsed_ms(ev0[r], ev1[r]) / opt.batch);
    return median(us);
  }

  Row gemm_row(const char* experiment, int ctas, double gemm_us) const {
    Row row;
    row.experiment = experiment;
    row.kernel = "gemm";
    row.ctas = ctas;
    row.repeats = opt.repeats;
    row.time_us = gemm_us;
    row.gemm_us = gemm_us;
    row.gemm_alone_us = gemm_alone_us;
    row.gemm_slowdown = gemm_us / gemm_alone_us - 1.0;
    row.gemm_TFLOPS = tflops(gemm_us);
    return row;
  }

  void gemm_alone() {
    CUBLAS_CHECK(cublasSetSmCountTarget(handle, 0));
    gemm_alone_us = time_gemm_batches("gemm_alone");
    Row row = gemm_row("gemm_alone", 0, gemm_alone_us);
    row.gemm_slowdown = 0.0;
    csv->add(row);
    progress("gemm_alone: %10.1f us/GEMM  %7.1f TFLOPS  (batch of %d: %.1f ms)", gemm_alone_us, tflops(gemm_alone_us),
             opt.batch, gemm_alone_us * opt.batch / 1000.0);
    if (gemm_alone_us * opt.batch > 10e6) {
      progress("warning: a GEMM batch takes over 10 s; gemm_with_comm's 20 s kernel deadline may cut it");
    }
  }

  void gemm_sm_target(const std::vector<int>& sweep) {
    for (const int k : sweep) {
      if (k <= 0 || sm_count - k < 1) continue;
      CUBLAS_CHECK(cublasSetSmCountTarget(handle, sm_count - k));
      const double t = time_gemm_batches("gemm_sm_target");
      csv->add(gemm_row("gemm_sm_target", k, t));
      progress("gemm_sm_target K=%3d (GEMM on %3d SMs): %10.1f us/GEMM  %7.1f TFLOPS  %+6.1f%%", k, sm_count - k, t,
               tflops(t), 100.0 * (t / gemm_alone_us - 1.0));
    }
    CUBLAS_CHECK(cublasSetSmCountTarget(handle, 0));
  }

  // ----- GEMM with communication -----

  struct OverlapRun {
    double window_us;
    double gemm_us;  // per GEMM
    unsigned long long bytes;
    double covered = 1.0;  // memcpy runs: share of the GEMM batch the copies overlapped
  };

  OverlapRun run_persistent_once(bool reduce, int k, const char* case_name) {
    for (int i = 0; i < sm_count; ++i) reinterpret_cast<volatile unsigned int*>(ready_host)[i] = 0u;
    reset_ctl_kernel<<<1, 1, 0, sb>>>(ctl);
    LAUNCH_CHECK();
    if (reduce) {
      comm_persistent_kernel<true><<<k, kThreads, comm_smem, sb>>>(buf_a, buf_b, buf_dst, n_vec, ctl, ready_dev,
                                                                    kPersistentDeadlineNs);
    } else {
      comm_persistent_kernel<false><<<k, kThreads, comm_smem, sb>>>(buf_a, buf_b, buf_dst, n_vec, ctl, ready_dev,
                                                                     kPersistentDeadlineNs);
    }
    LAUNCH_CHECK();

    // Handshake: every CTA resident before the first GEMM is enqueued.
    const Clock::time_point t0 = Clock::now();
    for (;;) {
      int resident = 0;
      for (int i = 0; i < k; ++i) resident += reinterpret_cast<volatile unsigned int*>(ready_host)[i] != 0u ? 1 : 0;
      if (resident >= k) break;
      const cudaError_t q = cudaStreamQuery(sb);  // also makes sure the launch is submitted
      if (q != cudaErrorNotReady) {
        if (q == cudaSuccess) {
          FATAL("%s: communication kernel finished before all %d CTAs reported resident (%d did)", case_name, k,
                resident);
        }
        FATAL("%s: communication kernel failed: %s (%s)", case_name, cudaGetErrorName(q), cudaGetErrorString(q));
      }
      if (seconds_since(t0) > kHandshakeTimeoutS) {
        FATAL("%s: handshake timeout: only %d of %d communication CTAs resident after %.0f s", case_name, resident,
              k, kHandshakeTimeoutS);
      }
      std::this_thread::yield();  // spin: the GEMMs should follow residency closely
    }

    CUDA_CHECK(cudaEventRecord(ev_b0, sa));
    enqueue_gemms();
    CUDA_CHECK(cudaEventRecord(ev_b1, sa));
    set_stop_kernel<<<1, 1, 0, sa>>>(ctl);
    LAUNCH_CHECK();

    const Clock::time_point w0 = Clock::now();
    wait_stream(sa, kWithCommTimeoutS, case_name);
    wait_stream(sb, std::max(1.0, kWithCommTimeoutS - seconds_since(w0)), case_name);

    CommCtl h;
    CUDA_CHECK(cudaMemcpy(&h, ctl, sizeof h, cudaMemcpyDeviceToHost));
    if (h.timed_out != 0u) {
      FATAL("%s: the communication kernel hit its %.0f s deadline before the stop flag", case_name,
            static_cast<double>(kPersistentDeadlineNs) * 1e-9);
    }
    if (h.t_end <= h.t_start || h.bytes == 0ull) {
      FATAL("%s: implausible window (start %llu ns, end %llu ns, %llu bytes)", case_name, h.t_start, h.t_end, h.bytes);
    }
    OverlapRun run;
    run.window_us = static_cast<double>(h.t_end - h.t_start) / 1000.0;
    run.gemm_us = 1000.0 * elapsed_ms(ev_b0, ev_b1) / opt.batch;
    run.bytes = h.bytes;
    return run;
  }

  // The copies and the GEMM batch overlap only in part (the copies start first
  // and may end before or after the GEMMs), so bytes and window count only the
  // copies' share inside the GEMM batch: one event after each copy, the copy's
  // bytes spread evenly over its duration. window_us <= 0: no overlap at all.
  OverlapRun run_memcpy_once(bool ce, const std::vector<cudaEvent_t>& ev_copy, const char* case_name) {
    CUDA_CHECK(cudaEventRecord(ev0[0], sb));
    for (const cudaEvent_t e : ev_copy) {
      enqueue_memcpy(ce, sb);
      CUDA_CHECK(cudaEventRecord(e, sb));
    }
    CUDA_CHECK(cudaEventRecord(ev_b0, sa));
    enqueue_gemms();
    CUDA_CHECK(cudaEventRecord(ev_b1, sa));
    const Clock::time_point w0 = Clock::now();
    wait_stream(sa, kWithCommTimeoutS, case_name);
    wait_stream(sb, std::max(1.0, kWithCommTimeoutS - seconds_since(w0)), case_name);
    // Milliseconds from the start of the copies (ev0[0] completes first: both streams were idle).
    const double g0 = elapsed_ms(ev0[0], ev_b0);
    const double g1 = elapsed_ms(ev0[0], ev_b1);
    double prev = 0.0;
    double moved = 0.0;
    for (const cudaEvent_t e : ev_copy) {
      const double c = elapsed_ms(ev0[0], e);
      const double lo = std::max(prev, g0);
      const double hi = std::min(c, g1);
      if (hi > lo && c > prev) moved += static_cast<double>(opt.bytes) * (hi - lo) / (c - prev);
      prev = std::max(prev, c);
    }
    OverlapRun run;
    run.window_us = 1000.0 * (std::min(prev, g1) - g0);
    run.gemm_us = 1000.0 * elapsed_ms(ev_b0, ev_b1) / opt.batch;
    run.bytes = static_cast<unsigned long long>(std::llround(moved));
    run.covered = (g1 > g0) ? std::max(0.0, std::min(prev, g1) - g0) / (g1 - g0) : 0.0;
    return run;
  }

  void add_overlap_row(const char* kernel, int ctas, double traffic, const std::vector<OverlapRun>& runs) {
    std::vector<double> window, gemm, bytes, rate;
    for (const OverlapRun& r : runs) {
      window.push_back(r.window_us);
      gemm.push_back(r.gemm_us);
      bytes.push_back(static_cast<double>(r.bytes));
      rate.push_back(static_cast<double>(r.bytes) / (r.window_us * 1e-6) / 1e9);
    }
    Row row = gemm_row("gemm_with_comm", ctas, median(gemm));
    row.kernel = kernel;
    row.bytes = static_cast<unsigned long long>(std::llround(median(bytes)));
    row.time_us = median(window);
    row.payload_GBps = median(rate);
    row.hbm_GBps = traffic * *row.payload_GBps;
    csv->add(row);
    progress("gemm_with_comm %-9s K=%3d: GEMM %10.1f us (%+6.1f%%)  comm %8.1f GB/s payload  %8.1f GB/s HBM "
             "over %.1f ms",
             kernel, ctas, *row.gemm_us, 100.0 * *row.gemm_slowdown, *row.payload_GBps, *row.hbm_GBps,
             row.time_us / 1000.0);
  }

  void gemm_with_persistent(bool reduce, const std::vector<int>& sweep) {
    const char* name = reduce ? "reduce" : "copy";
    for (const int k : sweep) {
      char case_name[96];
      std::snprintf(case_name, sizeof case_name, "gemm_with_comm %s K=%d", name, k);
      (void)run_persistent_once(reduce, k, case_name);  // warm-up
      std::vector<OverlapRun> runs;
      for (int r = 0; r < opt.repeats; ++r) runs.push_back(run_persistent_once(reduce, k, case_name));
      add_overlap_row(name, k, reduce ? 3.0 : 2.0, runs);
    }
  }

  void gemm_with_memcpy(bool ce) {
    const char* name = ce ? "memcpy_ce" : "memcpy";
    const double alone = ce ? memcpy_ce_alone_us : memcpy_alone_us;
    const double want = kMemcpyCoverage * gemm_alone_us * opt.batch / alone;
    const int copies = static_cast<int>(std::min(static_cast<double>(kMaxCopies), std::max(1.0, std::ceil(want))));
    if (copies < want) progress("warning: gemm_with_comm %s capped at %d copies (%.0f wanted)", name, copies, want);
    std::vector<cudaEvent_t> ev_copy(static_cast<size_t>(copies));
    for (cudaEvent_t& e : ev_copy) CUDA_CHECK(cudaEventCreate(&e));
    char case_name[96];
    std::snprintf(case_name, sizeof case_name, "gemm_with_comm %s (%d copies)", name, copies);
    (void)run_memcpy_once(ce, ev_copy, case_name);  // warm-up
    std::vector<OverlapRun> runs;
    double min_covered = 1.0;
    for (int r = 0; r < opt.repeats; ++r) {
      const OverlapRun run = run_memcpy_once(ce, ev_copy, case_name);
      min_covered = std::min(min_covered, run.covered);
      if (run.window_us > 0.0 && run.bytes > 0ull) runs.push_back(run);
    }
    for (const cudaEvent_t e : ev_copy) CUDA_CHECK(cudaEventDestroy(e));
    if (min_covered < 0.999) {
      progress("warning: %s: the copies overlapped only %.0f%% of the GEMM batch in some run (GEMM slowdown "
               "understated)", case_name, 100.0 * min_covered);
    }
    if (runs.size() * 2 <= static_cast<size_t>(opt.repeats)) {
      progress("warning: %s: the copies and the GEMMs did not overlap in most runs; no row", case_name);
      return;
    }
    add_overlap_row(name, 0, 2.0, runs);
  }
};

std::vector<int> sweep_of(std::initializer_list<int> candidates, int sm_count, bool include_all) {
  std::vector<int> out;
  for (const int k : candidates) {
    if (k < sm_count || (include_all && k == sm_count)) out.push_back(k);
  }
  if (include_all && (out.empty() || out.back() != sm_count)) out.push_back(sm_count);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Suite s;
  s.opt = parse_options(argc, argv);
  mkdir_p(s.opt.out);
  progress("gpu-characterize: payload %zu B, %d repeats, GEMM %d,%d,%d x %d per batch%s, output in %s", s.opt.bytes,
           s.opt.repeats, s.opt.m, s.opt.n, s.opt.k, s.opt.batch, s.opt.quick ? " (quick)" : "", s.opt.out.c_str());

  s.setup_device();
  CUBLAS_CHECK(cublasCreate(&s.handle));
  s.write_gpu_json();
  Csv csv(s.opt.out + "/measurements.csv");
  s.csv = &csv;
  s.setup_resources();

  const std::vector<int> comm_sweep = sweep_of({1, 2, 4, 8, 16, 24, 32, 48, 64, 96}, s.sm_count, true);
  const std::vector<int> overlap_sweep = sweep_of({1, 2, 4, 8, 16, 32, 64}, s.sm_count, false);

  s.validate(false, s.sm_count);
  s.validate(true, s.sm_count);
  s.validate(false, 1);
  s.validate(true, 1);

  Clock::time_point t = Clock::now();
  s.comm_alone(false, comm_sweep);
  s.comm_alone(true, comm_sweep);
  progress("comm_alone done in %.1f s", seconds_since(t));

  t = Clock::now();
  s.memcpy_alone(false);
  s.memcpy_alone(true);
  progress("memcpy_alone done in %.1f s", seconds_since(t));

  t = Clock::now();
  s.gemm_alone();
  s.gemm_sm_target(comm_sweep);
  progress("gemm_alone/gemm_sm_target done in %.1f s", seconds_since(t));

  t = Clock::now();
  // The copy-engine cases first: they cannot hang; the persistent kernels are the riskier part.
  s.gemm_with_memcpy(false);
  if (s.ce_available) s.gemm_with_memcpy(true);
  s.gemm_with_persistent(false, overlap_sweep);
  s.gemm_with_persistent(true, overlap_sweep);
  progress("gemm_with_comm done in %.1f s", seconds_since(t));

  CUDA_CHECK(cudaDeviceSynchronize());
  std::printf("# gpu-characterize: %s/measurements.csv\n", s.opt.out.c_str());
  csv.print_summary(stdout);
  std::fflush(stdout);
  progress("all done in %.1f s", seconds_since(g_start));
  CUBLAS_CHECK(cublasDestroy(s.handle));
  return 0;
}
