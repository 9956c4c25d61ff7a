#include "reproduce/offload.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "compute/kernel_pricer.h"
#include "config/output_file.h"
#include "config/presets.h"
#include "config/units.h"
#include "driver/characterization.h"
#include "reproduce/plot_script.h"

namespace acesim {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr long long kGpus = 8;  // the mi300x and hgx-h100 presets' one node

// OpenXLA's measured GEMM table for MI300X (gfx942, bf16 x bf16 -> bf16;
// default_matmul_perf_table.txtpb, `key: "gfx942"`): the FLOP rate of each
// shape the ConCCL study runs, the compute-bound shapes of the table from a
// fraction of a wave to four.
struct MeasuredGemm {
  double b, m, n, k;
  double flops_per_s;  // the table's `flops` value
};
constexpr MeasuredGemm kMi300xGemms[] = {
    {1, 256, 4096, 4096, 447.0e12},   // 19.2 us (the table's 447 TFLOP/s, rounded here to 3 digits)
    {1, 4096, 4096, 2048, 546.0e12},  // 125.8 us
    {1, 4096, 4096, 4096, 583.1e12},  // 235.7 us
    {4, 4096, 4096, 4096, 570.7e12},  // 963.3 us
};

// The sizes of the ConCCL study's collectives (nccl-tests convention), from
// shorter than every GEMM to longer than most.
constexpr double kConcclSizes[] = {16 * kMiB, 64 * kMiB, 256 * kMiB};

// Assumption: the GEMMs run hipBLASLt's largest BF16 macro tile on gfx942,
// 256 x 256, one workgroup per CU; their waves are the tiles over the CUs.
constexpr double kTile = 256.0;

// The reservations the partitioned runs try: CUs for the collective in
// powers of two from one per XCD (8 XCDs), as ConCCL's sweep.
constexpr int kReservations[] = {8, 16, 32, 64};

PlatformConfig preset(const char* name) {
  const PlatformPreset* p = preset_registry().find(name);
  if (p == nullptr) throw std::logic_error(std::string("offload study: no preset ") + name);
  return load_preset(*p);
}

PlatformConfig with_executor(PlatformConfig p, const std::string& e) {
  p.npu.executor = e;
  return p;
}

KernelDesc gemm_desc(double b, double m, double n, double k) {
  KernelDesc d;
  d.kind = KernelKind::kGemm;
  d.dtype = Dtype::kBf16;
  d.batch = b;
  d.m = m;
  d.n = n;
  d.k = k;
  d.flops = 2.0 * b * m * n * k;
  d.hbm_bytes = 2.0 * b * (m * k + k * n + m * n);
  return d;
}

CollectiveRequestSpec request(CollectiveOp op) {
  CollectiveRequestSpec r;
  r.op = op;
  return r;
}

OverlapConfigResult run_config(const std::string& name, const PlatformConfig& p, const Kernel& gemm, CollectiveOp op,
                               double bytes, TimePs start_ps, int channels) {
  const OverlapResult o = run_overlap(p, gemm, request(op), static_cast<std::uint64_t>(bytes), start_ps);
  OverlapConfigResult r;
  r.config = name;
  r.channels = channels;
  r.start_ps = start_ps;
  r.kernel_ps = o.kernel_overlapped_ps;
  r.collective_ps = o.collective_overlapped_ps;
  return r;
}

OverlapScenario conccl_scenario(const PlatformConfig& mi300x, const MeasuredGemm& g, CollectiveOp op, double bytes) {
  OverlapScenario s;
  s.gemm = fmt::format("{:g}x{:g}x{:g}x{:g}", g.b, g.m, g.n, g.k);
  s.op = op;
  s.bytes = bytes;
  const KernelDesc d = gemm_desc(g.b, g.m, g.n, g.k);
  const KernelPricer pricer(mi300x.npu, nullptr);
  const Kernel gemm = pricer.kernel(d, d.flops / g.flops_per_s);
  const double tiles = g.b * std::ceil(g.m / kTile) * std::ceil(g.n / kTile);
  s.waves = static_cast<int>(std::ceil(tiles / mi300x.npu.compute_units));

  const PlatformConfig sm = with_executor(mi300x, "sm");
  const int channels = nccl_channels(sm, request(op), static_cast<std::uint64_t>(bytes));
  // Launched together (c3): the collective's workgroups are dispatched after
  // the GEMM's, so it starts with the GEMM's last wave.
  const OverlapResult alone = run_overlap(sm, gemm, request(op), static_cast<std::uint64_t>(bytes));
  s.gemm_ps = alone.kernel_alone_ps;
  s.comm_ps = alone.collective_alone_ps;
  const TimePs last_wave = s.gemm_ps * (s.waves - 1) / s.waves;
  s.configs.push_back(run_config("c3", sm, gemm, op, bytes, last_wave, channels));
  // Prioritized: the collective first, on its channels from the start.
  OverlapConfigResult first;
  first.config = "prioritized";
  first.channels = channels;
  first.kernel_ps = alone.kernel_overlapped_ps;
  first.collective_ps = alone.collective_overlapped_ps;
  s.configs.push_back(first);
  // Partitioned: the best of the reservations.
  OverlapConfigResult best;
  for (int k : kReservations) {
    PlatformConfig p = sm;
    p.collectives.nccl.channels = k;
    OverlapConfigResult r = run_config("partitioned", p, gemm, op, bytes, 0, k);
    if (best.config.empty() || r.end_ps() < best.end_ps()) best = r;
  }
  s.configs.push_back(best);
  s.configs.push_back(run_config("dma", with_executor(mi300x, "dma"), gemm, op, bytes, 0, 0));
  s.configs.push_back(run_config("ace", with_executor(mi300x, "ace"), gemm, op, bytes, 0, 0));
  return s;
}

// PyTorch PR 172714: an 8192^3 fp16 GEMM and an all-gather of 64 MiB per
// rank on 8 H100, priced by the compute model.
OverlapScenario pytorch_scenario() {
  const PlatformConfig h100 = preset("hgx-h100");
  OverlapScenario s;
  s.gemm = "1x8192x8192x8192";
  s.op = CollectiveOp::kAllGather;
  s.bytes = 8 * 64 * kMiB;
  const auto pricer = make_kernel_pricer(h100.npu);
  const auto priced = pricer->price(gemm_desc(1, 8192, 8192, 8192));
  if (!priced) throw std::logic_error("offload study: hgx-h100 has no compute model");
  const Kernel gemm = priced->kernel;
  const PlatformConfig sm = with_executor(h100, "sm");
  const OverlapResult o = run_overlap(sm, gemm, request(s.op), static_cast<std::uint64_t>(s.bytes));
  s.gemm_ps = o.kernel_alone_ps;
  s.comm_ps = o.collective_alone_ps;
  s.waves = static_cast<int>(std::ceil(32.0 * 64.0 / h100.npu.compute_units));  // 128 x 256 tiles
  OverlapConfigResult r;
  r.config = "prioritized";
  r.channels = nccl_channels(sm, request(s.op), static_cast<std::uint64_t>(s.bytes));
  r.kernel_ps = o.kernel_overlapped_ps;
  r.collective_ps = o.collective_overlapped_ps;
  s.configs.push_back(r);
  s.configs.push_back(run_config("dma", with_executor(h100, "dma"), gemm, s.op, s.bytes, 0, 0));
  s.configs.push_back(run_config("ace", with_executor(h100, "ace"), gemm, s.op, s.bytes, 0, 0));
  return s;
}

std::vector<SweepRow> dma_sweep(const PlatformConfig& mi300x) {
  std::vector<SweepRow> rows;
  for (CollectiveOp op : {CollectiveOp::kAllGather, CollectiveOp::kAllToAll}) {
    for (double bytes = 1024.0; bytes <= 1024.0 * kMiB; bytes *= 2.0) {
      SweepRow r;
      r.op = op;
      r.bytes = bytes;
      const auto b = static_cast<std::uint64_t>(bytes);
      const CollectiveResult library = run_collective(with_executor(mi300x, "sm"), request(op), b);
      const CollectiveResult dma = run_collective(with_executor(mi300x, "dma"), request(op), b);
      r.library_ps = library.time_ps;
      r.dma_ps = dma.time_ps;
      r.library_W = library.power_W_per_npu(kGpus).value_or(0.0);
      r.dma_W = dma.power_W_per_npu(kGpus).value_or(0.0);
      r.ace_ps = run_collective(with_executor(mi300x, "ace"), request(op), b).time_ps;
      rows.push_back(r);
    }
  }
  return rows;
}

std::string size_text(double bytes) {
  if (bytes >= kMiB * 1024.0) return fmt::format("{:g} GiB", bytes / kMiB / 1024.0);
  if (bytes >= kMiB) return fmt::format("{:g} MiB", bytes / kMiB);
  return fmt::format("{:g} KiB", bytes / 1024.0);
}

// The papers' averages (ConCCL, arXiv 2412.14335, abstract; the partitioned
// figure is the paper's prioritization-or-partitioning average).
struct PublishedShare {
  const char* config;
  double share;
};
constexpr PublishedShare kConcclPublished[] = {
    {"c3", 0.21}, {"prioritized", 0.42}, {"partitioned", 0.42}, {"dma", 0.72}};

std::string mechanism(const std::string& config) {
  if (config == "c3") return "the collective's workgroups wait for the GEMM's last wave, then take CUs from it";
  if (config == "prioritized") return "the collective holds its channels' CUs from the start; the GEMM runs on the rest";
  if (config == "partitioned") return "the same, with the reservation (8-64 CUs) that ends the pair soonest";
  if (config == "dma") return "the SDMA engines move the data: no CU taken; the two share HBM";
  if (config == "ace") return "ACE moves the data: no CU taken, no HBM staging";
  return "";
}

}  // namespace

std::string OverlapScenario::kind() const {
  if (static_cast<double>(gemm_ps) > 1.15 * static_cast<double>(comm_ps)) return "G-long";
  if (static_cast<double>(comm_ps) > 1.15 * static_cast<double>(gemm_ps)) return "C-long";
  return "GC-equal";
}

const OverlapConfigResult& OverlapScenario::config(const std::string& name) const {
  for (const OverlapConfigResult& c : configs) {
    if (c.config == name) return c;
  }
  throw std::logic_error("offload study: no configuration " + name);
}

double OverlapScenario::share(const std::string& name) const {
  const double serial = static_cast<double>(serial_ps());
  const double ideal_speedup = serial / static_cast<double>(ideal_ps());
  const double speedup = serial / static_cast<double>(config(name).end_ps());
  return (speedup - 1.0) / (ideal_speedup - 1.0);
}

double OffloadStudy::mean_share(const std::string& config) const {
  double sum = 0.0;
  for (const OverlapScenario& s : conccl) sum += s.share(config);
  return conccl.empty() ? 0.0 : sum / static_cast<double>(conccl.size());
}

double OffloadStudy::crossover_bytes(CollectiveOp op) const {
  double from = 0.0;
  const SweepRow* before = nullptr;  // the last size where the DMA one is slower
  for (const SweepRow& r : sweep) {
    if (r.op != op) continue;
    if (r.dma_ps <= r.library_ps) {
      if (from == 0.0) {
        from = r.bytes;
        if (before != nullptr) {
          // log(dma / library) runs from above 0 to at most 0: where it is 0.
          const double a = std::log(before->dma_over_library());
          const double b = std::log(r.dma_over_library());
          const double t = a / (a - b);
          from = std::exp(std::log(before->bytes) + t * (std::log(r.bytes) - std::log(before->bytes)));
        }
      }
    } else {
      from = 0.0;
      before = &r;
    }
  }
  return from;
}

std::vector<std::string> conccl_configs() { return {"c3", "prioritized", "partitioned", "dma", "ace"}; }

OffloadStudy run_offload_study() {
  OffloadStudy s;
  const PlatformConfig mi300x = preset("mi300x");
  for (const MeasuredGemm& g : kMi300xGemms) {
    for (CollectiveOp op : {CollectiveOp::kAllGather, CollectiveOp::kAllToAll}) {
      for (double bytes : kConcclSizes) s.conccl.push_back(conccl_scenario(mi300x, g, op, bytes));
    }
  }
  s.pytorch = pytorch_scenario();
  s.sweep = dma_sweep(mi300x);
  return s;
}

std::string offload_tables(const OffloadStudy& s) {
  std::ostringstream out;
  out << "ConCCL (arXiv 2412.14335), 8 MI300X: the mean share of the ideal speedup over "
      << s.conccl.size() << " GEMM + collective pairs:\n\n"
      << "| configuration | measured | acesim | difference | what in acesim makes it |\n|---|---:|---:|---:|---|\n";
  for (const std::string& c : conccl_configs()) {
    std::string measured = "-";
    std::string diff = "-";
    for (const PublishedShare& p : kConcclPublished) {
      if (c == p.config) {
        measured = fmt::format("{:.0f}%", 100.0 * p.share);
        diff = fmt::format("{:+.0f} pt", 100.0 * (s.mean_share(c) - p.share));
      }
    }
    out << fmt::format("| {} | {} | {:.0f}% | {} | {} |\n", c, measured, 100.0 * s.mean_share(c), diff, mechanism(c));
  }
  out << "\nEach pair (times in us; share of the ideal speedup per configuration):\n\n"
      << "| GEMM (b x m x n x k) | waves | collective | size | kind | GEMM | collective | serial | ideal |";
  for (const std::string& c : conccl_configs()) out << " " << c << " |";
  out << "\n|---|---:|---|---:|---|---:|---:|---:|---:|";
  for (std::size_t i = 0; i < conccl_configs().size(); ++i) out << "---:|";
  out << "\n";
  for (const OverlapScenario& sc : s.conccl) {
    out << fmt::format("| {} | {} | {} | {} | {} | {:.1f} | {:.1f} | {:.1f} | {:.1f} |", sc.gemm, sc.waves, to_string(sc.op),
                       size_text(sc.bytes), sc.kind(), ps_to_us(sc.gemm_ps), ps_to_us(sc.comm_ps),
                       ps_to_us(sc.serial_ps()), ps_to_us(sc.ideal_ps()));
    for (const std::string& c : conccl_configs()) out << fmt::format(" {:.0f}% |", 100.0 * sc.share(c));
    out << "\n";
  }
  const OverlapScenario& p = s.pytorch;
  out << "\nPyTorch PR 172714, 8 H100: an 8192^3 GEMM beside an all-gather of 64 MiB per rank (ms):\n\n"
      << "| run | measured | acesim | error |\n|---|---:|---:|---:|\n";
  const double serial_ms = ps_to_us(p.serial_ps()) / 1e3;
  out << fmt::format("| one after the other | 2.96 | {:.2f} | {:+.1f}% |\n", serial_ms, 100.0 * (serial_ms / 2.96 - 1.0));
  const double sm_ms = ps_to_us(p.config("prioritized").end_ps()) / 1e3;
  out << fmt::format("| overlapped, NCCL's kernels | 2.02 | {:.2f} | {:+.1f}% |\n", sm_ms, 100.0 * (sm_ms / 2.02 - 1.0));
  const double ce_ms = ps_to_us(p.config("dma").end_ps()) / 1e3;
  out << fmt::format("| overlapped, NCCL's copy engines | 1.77 | {:.2f} | {:+.1f}% |\n", ce_ms, 100.0 * (ce_ms / 1.77 - 1.0));
  out << fmt::format("| overlapped, ACE | - | {:.2f} | - |\n", ps_to_us(p.config("ace").end_ps()) / 1e3);
  out << fmt::format("\n(acesim: the GEMM alone {:.2f} ms, the all-gather alone {:.2f} ms on {} channels.)\n",
                     ps_to_us(p.gemm_ps) / 1e3, ps_to_us(p.comm_ps) / 1e3, p.config("prioritized").channels);
  out << "\nDMA-Latte (arXiv 2511.06605), 8 MI300X: the SDMA collectives against RCCL's (times in us):\n\n"
      << "| collective | size | RCCL (sm) | dma | dma / RCCL | ace | RCCL W/GPU | dma W/GPU |\n"
      << "|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const SweepRow& r : s.sweep) {
    out << fmt::format("| {} | {} | {:.1f} | {:.1f} | {:.2f} | {:.1f} | {:.0f} | {:.0f} |\n", to_string(r.op),
                       size_text(r.bytes), ps_to_us(r.library_ps), ps_to_us(r.dma_ps), r.dma_over_library(),
                       ps_to_us(r.ace_ps), r.library_W, r.dma_W);
  }
  out << "\n| claim (v1 abstract) | measured | acesim |\n|---|---:|---:|\n";
  auto row_at = [&](CollectiveOp op, double bytes) -> const SweepRow& {
    for (const SweepRow& r : s.sweep) {
      if (r.op == op && r.bytes == bytes) return r;
    }
    throw std::logic_error("offload study: size not swept");
  };
  out << fmt::format("| all-gather, small sizes (1 KiB): dma / RCCL | 4.5 | {:.2f} |\n",
                     row_at(CollectiveOp::kAllGather, 1024.0).dma_over_library());
  out << fmt::format("| all-to-all, small sizes (1 KiB): dma / RCCL | 2.5 | {:.2f} |\n",
                     row_at(CollectiveOp::kAllToAll, 1024.0).dma_over_library());
  out << fmt::format("| all-gather, 1 GiB: dma / RCCL | 0.86 (16% better) | {:.2f} |\n",
                     row_at(CollectiveOp::kAllGather, 1024.0 * kMiB).dma_over_library());
  out << fmt::format("| all-to-all, 1 GiB: dma / RCCL | 0.86 (16% better) | {:.2f} |\n",
                     row_at(CollectiveOp::kAllToAll, 1024.0 * kMiB).dma_over_library());
  const SweepRow& large = row_at(CollectiveOp::kAllGather, 1024.0 * kMiB);
  out << fmt::format("| all-gather, 1 GiB: power, dma below RCCL | 32% | {:.0f}% |\n",
                     100.0 * (1.0 - large.dma_W / large.library_W));
  for (CollectiveOp op : {CollectiveOp::kAllGather, CollectiveOp::kAllToAll}) {
    const double x = s.crossover_bytes(op);
    out << fmt::format("| {}: dma at least as fast from | 10s of MB | {} |\n", to_string(op),
                       x > 0.0 ? size_text(std::round(x / kMiB * 10.0) / 10.0 * kMiB) : std::string("never"));
  }
  return out.str();
}

bool write_offload(const OffloadStudy& s, const std::string& out_dir, bool plots, std::FILE* log) {
  create_output_directory(out_dir, "--out");
  const std::filesystem::path dir(out_dir);
  {
    OutputFile csv((dir / "results.csv").string(), "--out");
    csv << "study,gemm,collective,bytes,config,channels,gemm_alone_ns,collective_alone_ns,start_ns,gemm_end_ns,"
           "collective_end_ns,share_of_ideal\n";
    auto scenario = [&](const char* study, const OverlapScenario& sc) {
      for (const OverlapConfigResult& c : sc.configs) {
        csv << fmt::format("{},{},{},{:.0f},{},{},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.4f}\n", study, sc.gemm,
                           to_string(sc.op), sc.bytes, c.config, c.channels, ps_to_ns(sc.gemm_ps), ps_to_ns(sc.comm_ps),
                           ps_to_ns(c.start_ps), ps_to_ns(c.kernel_ps), ps_to_ns(c.collective_ps), sc.share(c.config));
      }
    };
    for (const OverlapScenario& sc : s.conccl) scenario("conccl", sc);
    scenario("pytorch", s.pytorch);
    csv.close();
    OutputFile sweep((dir / "dma-sweep.csv").string(), "--out");
    sweep << "collective,bytes,rccl_ns,dma_ns,ace_ns,rccl_W_per_gpu,dma_W_per_gpu\n";
    for (const SweepRow& r : s.sweep) {
      sweep << fmt::format("{},{:.0f},{:.3f},{:.3f},{:.3f},{:.2f},{:.2f}\n", to_string(r.op), r.bytes, ps_to_ns(r.library_ps),
                           ps_to_ns(r.dma_ps), ps_to_ns(r.ace_ps), r.library_W, r.dma_W);
    }
    sweep.close();
  }
  const bool made = plots && run_plot_script(out_dir, "scripts/plot_offload.py", log);
  OutputFile md((dir / "report.md").string(), "--out");
  md << "# Offload engines as they ship (acesim reproduce offload)\n\n" << offload_tables(s);
  if (made) {
    md << "\n![Share of the ideal speedup per configuration](shares.png)\n\n![DMA against RCCL by size](dma-sweep.png)\n";
  } else if (plots) {
    md << "\n(Plots were not made: python3 with matplotlib was not found; install Debian's python3-matplotlib.)\n";
  }
  md.close();
  return made;
}

}  // namespace acesim
