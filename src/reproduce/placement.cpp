// The placement study (placement.h).
#include "reproduce/placement.h"

#include <chrono>
#include <filesystem>

#include <fmt/format.h>

#include "config/csv.h"
#include "config/platform.h"
#include "config/output_file.h"
#include "config/presets.h"
#include "config/units.h"
#include "driver/cluster_run.h"
#include "engine/random.h"

namespace acesim {
namespace {

constexpr int kNodes = 32;      // 256 GPUs
constexpr int kJobNodes = 16;   // each job: 128 GPUs, half the cluster
constexpr int kLeafNodes = 8;   // 8 nodes (one GPU of each on this rail) per leaf: 4 leaves
constexpr int kIterations = 12;
constexpr double kBytes = 1024.0 * 1024.0 * 1024.0;
// Each iteration computes about as long as the all-reduce takes alone
// (7.2 ms packed), so that one job's communication can hide under the
// other's compute.
constexpr double kComputeMs = 6.0;
constexpr double kOversubscriptions[] = {1.0, 2.0, 4.0};
constexpr const char* kPlacements[] = {"packed", "spread", "random"};
constexpr double kShifts[] = {0.0, 0.25, 0.5};
constexpr std::uint64_t kSeed = 1;

ClusterSpec cluster(double oversubscription, const std::string& placement) {
  ClusterSpec spec;
  spec.source = "acesim reproduce placement";
  spec.platform = load_preset(*preset_registry().find("hgx-h100"));
  set_fat_tree_nodes(spec.platform, {{"leaf_size", kLeafNodes}, {"oversubscription", oversubscription}});
  set_nodes(spec.platform, kNodes, "placement study");
  spec.nodes = kNodes;
  spec.gpus_per_node = spec.platform.dims[0].npus;
  std::vector<bool> used(kNodes, false);
  for (int j = 0; j < 2; ++j) {
    ClusterJobSpec job;
    job.name = j == 0 ? "a" : "b";
    job.nodes = choose_nodes(placement, kJobNodes, used, kLeafNodes, kSeed ^ splitmix64(static_cast<std::uint64_t>(j)));
    for (long long n : job.nodes) used[static_cast<std::size_t>(n)] = true;
    job.placement = placement;
    job.iterations = kIterations;
    ClusterJobSpec::Loop loop;
    loop.bytes = kBytes;
    loop.compute_ps = ns_to_ps(kComputeMs * 1e6);
    job.loop = loop;
    job.what = fmt::format("all-reduce of 1 GiB over {} GPUs after {:g} ms of compute", kJobNodes * spec.gpus_per_node, kComputeMs);
    spec.jobs.push_back(std::move(job));
  }
  return spec;
}

double shared_bytes(const ClusterReport& r) {
  double b = 0.0;
  for (const ClusterLinkReport& l : r.links) {
    if (l.bytes_by_job[0] > 0.0 && l.bytes_by_job[1] > 0.0) b += l.bytes_by_job[0] + l.bytes_by_job[1];
  }
  return b;
}

double ms(TimePs t) { return ps_to_us(t) / 1e3; }

// One NPU per node on a two-tier fat-tree of 2 nodes per leaf, 2:1
// oversubscribed: each leaf one 50 GB/s uplink; no latency.
constexpr const char* kBottleneck = R"(topology:
  - {kind: fat-tree, npus: 4, nodes: true, bandwidth_GBps: 50, latency_ns: 0, leaf_size: 2, oversubscription: 2}
collectives: {chunks: 1, endpoint_delay_ns: 0}
communication: {executor: ideal}
)";

// Jobs a (nodes 0 and 2) and b (1 and 3): each all-reduces 1 GB over its 2
// GPUs across the leaves' one uplink, 20 ms alone (each GPU sends 1e9 B at
// 50 GB/s); `compute_ms` before each, b started `shift_ms` later.
ClosedFormCase bottleneck(const std::string& name, double compute_ms, double shift_ms, double expected_slowdown, double expected_ms) {
  ClusterSpec spec;
  spec.source = "acesim reproduce placement";
  spec.platform = parse_platform_yaml(kBottleneck, "placement study: bottleneck");
  spec.nodes = 4;
  spec.gpus_per_node = 1;
  for (int j = 0; j < 2; ++j) {
    ClusterJobSpec job;
    job.name = j == 0 ? "a" : "b";
    job.nodes = {j, j + 2};
    job.iterations = 4;
    job.start_ps = j == 1 ? ns_to_ps(shift_ms * 1e6) : 0;
    ClusterJobSpec::Loop loop;
    loop.bytes = 1e9;
    loop.compute_ps = ns_to_ps(compute_ms * 1e6);
    job.loop = loop;
    spec.jobs.push_back(std::move(job));
  }
  const ClusterReport r = run_cluster(spec);
  return {name, expected_slowdown, r.jobs[0].slowdown, ns_to_ps(expected_ms * 1e6), r.jobs[0].iteration_ps};
}

}  // namespace

PlacementStudy run_placement_study() {
  const auto began = std::chrono::steady_clock::now();
  PlacementStudy s;
  s.nodes = kNodes;
  s.job_nodes = kJobNodes;
  s.leaf_nodes = kLeafNodes;
  s.compute_ms = kComputeMs;
  for (double o : kOversubscriptions) {
    for (const char* placement : kPlacements) {
      ClusterSpec spec = cluster(o, placement);
      s.collective = spec.jobs[0].what;
      TimePs alone[2] = {};
      for (double shift : kShifts) {
        ClusterRunOptions ro;
        ro.alone = shift == 0.0;  // the same nodes alone, whatever the shift
        if (shift > 0.0) spec.jobs[1].start_ps = static_cast<TimePs>(shift * static_cast<double>(alone[0]));
        const ClusterReport r = run_cluster(spec, ro);
        PlacementPoint p;
        p.oversubscription = o;
        p.placement = placement;
        p.shift = shift;
        for (int j = 0; j < 2; ++j) {
          if (shift == 0.0) alone[j] = r.jobs[static_cast<std::size_t>(j)].alone_iteration_ps;
          p.together_ps[j] = r.jobs[static_cast<std::size_t>(j)].iteration_ps;
          p.slowdown[j] = static_cast<double>(p.together_ps[j]) / static_cast<double>(alone[j]);
        }
        p.alone_ps = (alone[0] + alone[1]) / 2;
        p.shared_bytes = shared_bytes(r);
        s.points.push_back(p);
      }
    }
  }
  // The closed forms: while both send, each gets half of the uplink.
  s.closed_forms.push_back(bottleneck("all-reduce only, together: each gets half", 0.0, 0.0, 2.0, 40.0));
  s.closed_forms.push_back(bottleneck("20 ms compute, then the all-reduce; together (the all-reduce 40 ms)", 20.0, 0.0, 1.5, 60.0));
  s.closed_forms.push_back(bottleneck("the same, b 20 ms later: each all-reduces while the other computes", 20.0, 20.0, 1.0, 40.0));
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  return s;
}

std::string placement_tables(const PlacementStudy& s) {
  std::string t = fmt::format(
      "Two jobs of {} nodes ({} GPUs each; {}) on {} HGX H100 nodes; each rail a two-tier fat-tree of {} nodes per leaf.\n"
      "Slowdown: a job's iteration beside the other over the same job alone on its nodes (a / b). Shift: job b starts that share of "
      "job a's iteration (alone) later.\n\n",
      s.job_nodes, s.job_nodes * 8, s.collective, s.nodes, s.leaf_nodes);
  t += "| oversubscription | placement | alone (ms) | shift 0 | shift 1/4 | shift 1/2 | bytes on shared links, shift 0 (GB) |\n";
  t += "|---:|---|---:|---:|---:|---:|---:|\n";
  for (std::size_t i = 0; i + 2 < s.points.size(); i += 3) {
    const PlacementPoint& p = s.points[i];
    t += fmt::format("| {:g}:1 | {} | {:.3f} |", p.oversubscription, p.placement, ms(p.alone_ps));
    for (std::size_t k = 0; k < 3; ++k) {
      const PlacementPoint& q = s.points[i + k];
      t += fmt::format(" {:.3f} / {:.3f} |", q.slowdown[0], q.slowdown[1]);
    }
    t += fmt::format(" {:.1f} |\n", p.shared_bytes / 1e9);
  }
  t += "\nClosed forms: two jobs, each on a node of each of two leaves whose one 50 GB/s uplink they share; all-reduce of 1 GB over 2 GPUs (20 ms alone).\n\n";
  t += "| case | iteration expected (ms) | acesim (ms) | slowdown expected | acesim |\n|---|---:|---:|---:|---:|\n";
  for (const ClosedFormCase& c : s.closed_forms) {
    t += fmt::format("| {} | {:.3f} | {:.3f} | {:.3f} | {:.3f} |\n", c.name, ms(c.expected_ps), ms(c.iteration_ps), c.expected_slowdown, c.slowdown);
  }
  return t;
}

void write_placement(const PlacementStudy& s, const std::string& dir) {
  create_output_directory(dir, "--out");
  std::string csv = "oversubscription,placement,shift,job,alone_iteration_ms,iteration_ms,slowdown,shared_link_bytes\n";
  for (const PlacementPoint& p : s.points) {
    for (int j = 0; j < 2; ++j) {
      csv += (CsvLine() << p.oversubscription << p.placement << p.shift << (j == 0 ? "a" : "b") << ms(p.alone_ps) << ms(p.together_ps[j])
                        << p.slowdown[j] << p.shared_bytes)
                 .text();
    }
  }
  write_output_file((std::filesystem::path(dir) / "results.csv").string(), csv, "--out");
  const std::string md = "# Placement and time shift on an oversubscribed fat-tree\n\n"
                         "`acesim reproduce placement` (docs/cluster.md, \"Placement study\").\n\n" +
                         placement_tables(s);
  write_output_file((std::filesystem::path(dir) / "report.md").string(), md, "--out");
}

}  // namespace acesim
