// LLM training reports (llm_report.h).
#include "report/llm_report.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "config/output_file.h"
#include "config/units.h"
#include "report/collective_sweep.h"
#include "config/csv.h"

namespace acesim {
namespace {

double ms(TimePs t) { return ps_to_us(t) / 1000.0; }
double ns(TimePs t) { return static_cast<double>(t) / 1000.0; }
std::string pct(TimePs part, TimePs whole) {
  return whole > 0 ? fmt::format("{:.1f}%", 100.0 * static_cast<double>(part) / static_cast<double>(whole)) : "-";
}
constexpr LlmComm kKinds[] = {LlmComm::kTp, LlmComm::kCp, LlmComm::kEp, LlmComm::kPp, LlmComm::kDp};
TimePs exposed(const TimePs (&e)[kLlmCommKinds], LlmComm k) { return e[static_cast<int>(k)]; }
// A FLOP-based figure, or null where the workload counts no FLOPs.
nlohmann::json counted(double v) { return v > 0.0 ? nlohmann::json(v) : nlohmann::json(nullptr); }

// The in-situ parameters: null when not calibrated.
nlohmann::json calibration_json(const LlmReport& r) {
  if (r.calibration.empty()) return nullptr;
  nlohmann::json values = nlohmann::json::object();
  for (const InSituParamInfo& p : in_situ_params()) values[p.name] = r.in_situ[p.param];
  return {{"file", r.calibration},
          {"values", values},
          {"straggler_factor", 1.0 + r.in_situ[InSituParam::kStragglerCv] * expected_max_normal(r.npus)}};
}

}  // namespace

std::string format_kernel_sources(const LlmReport& r) {
  if (r.kernels_measured + r.kernels_modelled == 0) return {};
  std::string out = "# kernels: ";
  if (r.kernels_measured > 0) out += fmt::format("{} from {}, ", r.kernels_measured, r.kernel_times);
  out += fmt::format("{} from the {} compute model", r.kernels_modelled, r.compute_model.empty() ? "no" : r.compute_model);
  if (r.kernels_constant > 0) out += fmt::format(", {} at constant efficiencies", r.kernels_constant);
  out += "\n";
  // Whether the step is the isolated kernels' or calibrated in situ.
  if (r.calibration.empty()) {
    out += "# in situ: not calibrated (kernels as isolated benchmarks time them; --calibration FILE, docs/in-situ.md)\n";
  } else {
    out += fmt::format("# in situ: calibrated by {}: {}\n", r.calibration, in_situ_text(r.in_situ, r.npus));
  }
  return out;
}

std::string format_compute_by_kind(const LlmReport& r) {
  if (r.compute_by_kind_ps.empty()) return {};
  std::vector<int> kinds;
  for (int k = 0; k < kKernelKinds; ++k) {
    if (r.compute_by_kind_ps[static_cast<std::size_t>(k)] > 0) kinds.push_back(k);
  }
  // Largest first; the kinds' order breaks ties.
  std::stable_sort(kinds.begin(), kinds.end(), [&r](int a, int b) {
    return r.compute_by_kind_ps[static_cast<std::size_t>(a)] > r.compute_by_kind_ps[static_cast<std::size_t>(b)];
  });
  std::string out;
  for (int k : kinds) {
    const TimePs t = r.compute_by_kind_ps[static_cast<std::size_t>(k)];
    out += fmt::format("  {:<20}{:>12.3f} ms  {:>6} of compute\n", to_string(static_cast<KernelKind>(k)), ms(t), pct(t, r.compute_ps));
  }
  return out;
}

std::string format_llm(const LlmReport& r, const PlatformConfig& platform) {
  std::string out;
  out += fmt::format("# acesim run: {} on {} GPUs: {}\n", r.model, r.npus, r.plan);
  out += fmt::format("# platform: {} ({}), executor {}\n", describe_platform(platform), platform.source, r.executor);
  out += fmt::format("# simulated {} of {} ranks: {}\n", r.simulated_ranks, r.npus, r.simulation);
  out += format_kernel_sources(r);
  out += fmt::format("iteration time        {:>12.3f} ms\n", ms(r.iteration_ps));
  // The parts are means over the stages, each of its own iteration.
  const TimePs it = r.stage_iteration_ps;
  if (r.model_flops_per_gpu > 0.0) {
    out += fmt::format("model TFLOP/s per GPU {:>12.1f}      MFU {:.1f}%, HFU {:.1f}% (TFLOP/s and HFU: Megatron-LM's count; MFU: without recomputation)\n",
                       r.tflops_per_gpu, 100.0 * r.mfu, 100.0 * r.hfu);
  } else {
    out += "model TFLOP/s per GPU            -      (the workload gives times, not FLOPs)\n";
  }
  if (r.energy_J && r.total_ps > 0 && r.npus > 0) {
    out += fmt::format("energy                {:>12.4g} J   over the run ({} iterations): {:.0f} W per GPU (the platform's energy model)\n",
                       *r.energy_J, r.iterations, *r.energy_J / ps_to_seconds(r.total_ps) / static_cast<double>(r.npus));
  }
  out += fmt::format("compute               {:>12.3f} ms  {:>6}\n", ms(r.compute_ps), pct(r.compute_ps, it));
  out += fmt::format("pipeline bubble       {:>12.3f} ms  {:>6}\n", ms(r.pipeline_bubble_ps), pct(r.pipeline_bubble_ps, it));
  for (LlmComm k : kKinds) {
    out += fmt::format("exposed {:<2} comm       {:>12.3f} ms  {:>6}\n", to_string(k), ms(exposed(r.exposed_ps, k)),
                       pct(exposed(r.exposed_ps, k), it));
  }
  out += fmt::format("other idle            {:>12.3f} ms  {:>6}\n", ms(r.other_idle_ps), pct(r.other_idle_ps, it));
  out += format_compute_by_kind(r);
  out += fmt::format("memory per GPU        {}\n",
                     r.memory ? format_memory(*r.memory, r.hbm_capacity_GB) : std::string("not modelled (the workload gives none)"));
  out += "\n# per pipeline stage (its first rank), measured iteration, ms; memory per GPU, GB\n";
  out += fmt::format("# {:>5} {:>6} {:>10} {:>10} {:>9}", "stage", "rank", "iteration", "compute", "bubble");
  for (LlmComm k : kKinds) out += fmt::format(" {:>8}", fmt::format("{} comm", to_string(k)));
  out += fmt::format(" {:>8} {:>8}\n", "other", "memory");
  for (const LlmStageReport& s : r.stages) {
    out += fmt::format("  {:>5} {:>6} {:>10.3f} {:>10.3f} {:>9.3f}", s.stage, s.rank, ms(s.iteration_ps), ms(s.compute_ps),
                       ms(s.bubble_ps));
    for (LlmComm k : kKinds) out += fmt::format(" {:>8.3f}", ms(exposed(s.exposed_ps, k)));
    out += fmt::format(" {:>8.3f} {:>8}\n", ms(s.other_idle_ps), s.memory ? fmt::format("{:.1f}", s.memory->total_bytes() / 1e9) : "-");
  }
  out += fmt::format("\n# {} collectives, {} messages, {} events, {} iteration(s) of {} micro-batch(es)\n", r.collectives,
                     r.messages, r.events, r.iterations, r.micro_batches);
  return out;
}

std::string format_llm_comparison(const std::vector<LlmReport>& runs, const PlatformConfig& platform) {
  std::string out;
  if (runs.empty()) return out;
  out += fmt::format("# acesim run: {} on {} GPUs: {}\n", runs[0].model, runs[0].npus, runs[0].plan);
  out += fmt::format("# platform: {} ({})\n", describe_platform(platform), platform.source);
  out += fmt::format("# simulated {} of {} ranks: {}\n", runs[0].simulated_ranks, runs[0].npus, runs[0].simulation);
  out += format_kernel_sources(runs[0]);
  out += fmt::format("# {:<26}", "");
  for (const LlmReport& r : runs) out += fmt::format(" {:>12}", r.executor);
  out += "\n";
  const auto row = [&](const std::string& name, auto value) {
    out += fmt::format("  {:<26}", name);
    for (const LlmReport& r : runs) out += fmt::format(" {:>12}", value(r));
    out += "\n";
  };
  row("iteration time (ms)", [](const LlmReport& r) { return fmt::format("{:.3f}", ms(r.iteration_ps)); });
  if (runs[0].model_flops_per_gpu > 0.0) {
    row("TFLOP/s per GPU", [](const LlmReport& r) { return fmt::format("{:.1f}", r.tflops_per_gpu); });
    row("MFU", [](const LlmReport& r) { return fmt::format("{:.1f}%", 100.0 * r.mfu); });
    row("HFU", [](const LlmReport& r) { return fmt::format("{:.1f}%", 100.0 * r.hfu); });
  }
  row("compute (ms)", [](const LlmReport& r) { return fmt::format("{:.3f}", ms(r.compute_ps)); });
  row("pipeline bubble (ms)", [](const LlmReport& r) { return fmt::format("{:.3f}", ms(r.pipeline_bubble_ps)); });
  for (LlmComm k : kKinds) {
    row(fmt::format("exposed {} comm (ms)", to_string(k)),
        [k](const LlmReport& r) { return fmt::format("{:.3f}", ms(exposed(r.exposed_ps, k))); });
  }
  row("speedup vs first", [&runs](const LlmReport& r) {
    return fmt::format("{:.3f}x", r.iteration_ps > 0 ? static_cast<double>(runs[0].iteration_ps) / static_cast<double>(r.iteration_ps) : 0.0);
  });
  return out;
}

nlohmann::json memory_json(const LlmReport& r) {
  if (!r.memory) return nullptr;
  const MemoryBreakdown& m = *r.memory;
  return {{"stage", m.stage},
          {"weights_bytes", m.weights_bytes},
          {"gradients_bytes", m.gradients_bytes},
          {"optimizer_bytes", m.optimizer_bytes},
          {"activations_bytes", m.activations_bytes},
          {"micro_batches_in_flight", m.micro_batches_in_flight},
          {"hbm_capacity_bytes", r.hbm_capacity_GB * 1e9},
          {"fits", r.fits}};
}

// Compute time by kernel kind, or null where the workload does not say.
nlohmann::json by_kind_json(const std::vector<TimePs>& by_kind) {
  if (by_kind.empty()) return nullptr;
  nlohmann::json out = nlohmann::json::object();
  for (int k = 0; k < kKernelKinds; ++k) out[std::string(to_string(static_cast<KernelKind>(k)))] = ns(by_kind[static_cast<std::size_t>(k)]);
  return out;
}

nlohmann::json llm_json(const LlmReport& r) {
  nlohmann::json exposed_ns = nlohmann::json::object();
  for (LlmComm k : kKinds) exposed_ns[std::string(to_string(k))] = ns(exposed(r.exposed_ps, k));
  nlohmann::json stages = nlohmann::json::array();
  for (const LlmStageReport& s : r.stages) {
    nlohmann::json e = nlohmann::json::object();
    for (LlmComm k : kKinds) e[std::string(to_string(k))] = ns(exposed(s.exposed_ps, k));
    stages.push_back({{"stage", s.stage},
                      {"rank", s.rank},
                      {"iteration_time_ns", ns(s.iteration_ps)},
                      {"compute_ns", ns(s.compute_ps)},
                      {"pipeline_bubble_ns", ns(s.bubble_ps)},
                      {"exposed_comm_ns", e},
                      {"other_idle_ns", ns(s.other_idle_ps)},
                      {"compute_by_kernel_ns", by_kind_json(s.compute_by_kind_ps)},
                      {"memory_per_gpu_bytes", s.memory ? nlohmann::json(s.memory->total_bytes()) : nlohmann::json(nullptr)}});
  }
  std::vector<double> ends;
  for (TimePs t : r.iteration_end_ps) ends.push_back(ns(t));
  return {{"model", r.model},
          {"platform", r.platform},
          {"executor", r.executor},
          {"plan", r.plan},
          {"npus", r.npus},
          {"simulated_ranks", r.simulated_ranks},
          {"simulation", r.simulation},
          {"iterations", r.iterations},
          {"micro_batches", r.micro_batches},
          {"iteration_end_ns", ends},
          {"iteration_time_ns", ns(r.iteration_ps)},
          {"total_time_ns", ns(r.total_ps)},
          {"model_flops_per_gpu", counted(r.model_flops_per_gpu)},
          {"model_flops_no_recompute_per_gpu", counted(r.model_flops_no_recompute_per_gpu)},
          {"tflops_per_gpu", counted(r.tflops_per_gpu)},
          {"mfu", counted(r.mfu)},
          {"hfu", counted(r.hfu)},
          {"compute_ns", ns(r.compute_ps)},
          {"pipeline_bubble_ns", ns(r.pipeline_bubble_ps)},
          {"exposed_comm_ns", exposed_ns},
          {"other_idle_ns", ns(r.other_idle_ps)},
          {"compute_by_kernel_ns", by_kind_json(r.compute_by_kind_ps)},
          {"stage_iteration_time_ns", ns(r.stage_iteration_ps)},
          {"memory_per_gpu_bytes", r.memory ? nlohmann::json(r.memory->total_bytes()) : nlohmann::json(nullptr)},
          {"memory", memory_json(r)},
          {"stages", stages},
          {"collectives", r.collectives},
          {"messages", r.messages},
          {"events", r.events},
          {"energy_J", r.energy_J ? nlohmann::json(*r.energy_J) : nlohmann::json(nullptr)},
          {"kernels",
           {{"measured", r.kernels_measured},
            {"modelled", r.kernels_modelled},
            {"constant", r.kernels_constant},
            {"compute_model", r.compute_model},
            {"kernel_times", r.kernel_times}}},
          {"calibration", calibration_json(r)}};
}

void write_llm_csv(const LlmReport& r, const std::string& dir) {
  create_output_directory(dir, "--csv");
  std::string stages = "stage,rank,iteration_time_ns,compute_ns,pipeline_bubble_ns";
  for (LlmComm k : kKinds) stages += fmt::format(",exposed_{}_ns", to_string(k));
  stages += ",other_idle_ns,memory_per_gpu_bytes,weights_bytes,gradients_bytes,optimizer_bytes,activations_bytes\n";
  for (const LlmStageReport& s : r.stages) {
    CsvLine row;
    row << s.stage << s.rank << ns(s.iteration_ps) << ns(s.compute_ps) << ns(s.bubble_ps);
    for (LlmComm k : kKinds) row << ns(exposed(s.exposed_ps, k));
    row << ns(s.other_idle_ps);
    if (const std::optional<MemoryBreakdown>& m = s.memory) {
      row << m->total_bytes() << m->weights_bytes << m->gradients_bytes << m->optimizer_bytes << m->activations_bytes;
    } else {
      row << "" << "" << "" << "" << "";  // not modelled
    }
    stages += row.text();
  }
  write_output_file((std::filesystem::path(dir) / "stages.csv").string(), stages, "--csv");
  if (!r.compute_by_kind_ps.empty()) {
    std::string kernels = "stage,rank,kind,compute_ns\n";
    for (const LlmStageReport& s : r.stages) {
      for (int k = 0; k < kKernelKinds; ++k) {
        kernels += (CsvLine() << s.stage << s.rank << to_string(static_cast<KernelKind>(k))
                              << ns(s.compute_by_kind_ps[static_cast<std::size_t>(k)]))
                       .text();
      }
    }
    write_output_file((std::filesystem::path(dir) / "kernels.csv").string(), kernels, "--csv");
  }
  if (r.spans.empty()) return;
  std::string timeline = "stage,iteration,pass,chunk,micro_batch,layer,kind,what,begin_ns,end_ns\n";
  for (const LlmSpan& s : r.spans) {
    timeline += (CsvLine() << s.stage << s.tag.iteration << to_string(s.tag.pass) << s.tag.chunk << s.tag.micro_batch
                          << s.tag.layer << (s.compute ? std::string_view("compute") : to_string(s.tag.comm)) << s.what
                          << ns(s.begin) << ns(s.end))
                    .text();
  }
  write_output_file((std::filesystem::path(dir) / "timeline.csv").string(), timeline, "--csv");
}

nlohmann::json llm_trace(const LlmReport& r) {
  nlohmann::json events = nlohmann::json::array();
  for (const LlmStageReport& s : r.stages) {
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", s.stage},
                      {"args", {{"name", fmt::format("stage {} (rank {})", s.stage, s.rank)}}}});
    events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", s.stage}, {"tid", 0}, {"args", {{"name", "compute"}}}});
    for (LlmComm k : kKinds) {
      events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", s.stage}, {"tid", static_cast<int>(k)},
                        {"args", {{"name", fmt::format("{} communication", to_string(k))}}}});
    }
  }
  long long next_id = 1;
  for (const LlmSpan& s : r.spans) {
    std::string name = std::string(to_string(s.tag.pass));
    if (s.tag.layer >= 0) name += fmt::format(" layer {}", s.tag.layer);
    if (s.tag.micro_batch >= 0) name += fmt::format(" mb {}", s.tag.micro_batch);
    const nlohmann::json args = {{"iteration", s.tag.iteration}, {"what", s.what}, {"chunk", s.tag.chunk}};
    if (s.compute) {
      events.push_back({{"ph", "X"}, {"cat", "compute"}, {"name", name}, {"pid", s.stage}, {"tid", 0},
                        {"ts", ps_to_us(s.begin)}, {"dur", ps_to_us(s.end - s.begin)}, {"args", args}});
      continue;
    }
    // Communication overlaps on a track: async slices.
    const std::string id = fmt::format("0x{:x}", next_id++);
    const int tid = static_cast<int>(s.tag.comm);
    const std::string cname = fmt::format("{} {}", to_string(s.tag.comm), name);
    events.push_back({{"ph", "b"}, {"cat", "communication"}, {"name", cname}, {"pid", s.stage}, {"tid", tid}, {"id", id},
                      {"ts", ps_to_us(s.begin)}, {"args", args}});
    events.push_back({{"ph", "e"}, {"cat", "communication"}, {"name", cname}, {"pid", s.stage}, {"tid", tid}, {"id", id},
                      {"ts", ps_to_us(s.end)}});
  }
  return {{"displayTimeUnit", "ns"}, {"traceEvents", events}};
}

}  // namespace acesim
