#include "report/kineto_report.h"

#include <cmath>
#include <filesystem>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "config/csv.h"
#include "config/output_file.h"
#include "report/collective_sweep.h"

namespace acesim {
namespace {

double ms(TimePs t) { return static_cast<double>(t) / 1e9; }

std::string comm_line(const KinetoReport& r) {
  const KinetoReplay& c = r.counts;
  std::string s = fmt::format("{} NCCL kernels: {} simulated as collectives on the platform, {} at their measured duration",
                              c.collectives_simulated + c.collectives_measured, c.collectives_simulated, c.collectives_measured);
  for (const auto& [why, n] : c.measured_why) s += fmt::format("\n#   {} measured: {}", n, why);
  return s;
}

std::string counted(long long n, const char* one, const char* many) { return fmt::format("{} {}", n, n == 1 ? one : many); }

// What the reader repaired in the traces (kineto::Repairs), one line; empty
// when nothing was.
std::string repairs_line(const kineto::Repairs& f) {
  std::string s;
  const auto part = [&](const std::string& p) { s += (s.empty() ? "# repaired: " : "; ") + p; };
  if (f.duplicates() > 0) {
    std::string kinds;
    const auto kind = [&](long long n, const char* one, const char* many) {
      if (n > 0) kinds += (kinds.empty() ? "" : ", ") + counted(n, one, many);
    };
    kind(f.duplicate_activities, "GPU activity", "GPU activities");
    kind(f.duplicate_calls, "runtime call", "runtime calls");
    kind(f.duplicate_steps, "ProfilerStep", "ProfilerSteps");
    kind(f.duplicate_waits, "Stream Wait Event", "Stream Wait Events");
    part(fmt::format("{} written twice, the copies dropped ({})", counted(f.duplicates(), "event", "events"), kinds));
  }
  if (f.overlapping > 0) {
    part(fmt::format("{} before the work ahead on {} stream ended (by up to {:.3f} us), replayed after it",
                     counted(f.overlapping, "activity started", "activities started"), f.overlapping == 1 ? "its" : "their",
                     static_cast<double>(f.largest_overlap) / 1e3));
  }
  if (f.unlaunched > 0) {
    part(fmt::format("{} whose launch is not in the trace, replayed from {} traced start",
                     counted(f.unlaunched, "GPU activity", "GPU activities"), f.unlaunched == 1 ? "its" : "their"));
  }
  return s.empty() ? s : s + "\n";
}

// How several ranks' clocks were aligned, and each one's offset; empty for
// one trace.
std::string clocks_line(const KinetoReport& r) {
  if (r.ranks.size() < 2) return "";
  std::string s = fmt::format("# clocks: the ranks' replays aligned at their {}{}; each clock against rank {}'s:", r.clock_alignment,
                              r.clock_alignment == "first ProfilerStep" && !r.steps.empty() ? fmt::format(" (#{})", r.steps.front().number) : "",
                              r.ranks.front().rank);
  constexpr std::size_t kListed = 8;
  const KinetoRankRecord* largest = &r.ranks[1];
  for (std::size_t k = 1; k < r.ranks.size(); ++k) {
    const KinetoRankRecord& rr = r.ranks[k];
    if (std::abs(rr.clock_offset_ns) > std::abs(largest->clock_offset_ns)) largest = &rr;
    if (k <= kListed) s += fmt::format("{} rank {} {:+.3f} ms", k > 1 ? "," : "", rr.rank, static_cast<double>(rr.clock_offset_ns) / 1e6);
  }
  if (r.ranks.size() - 1 > kListed) {
    s += fmt::format(" and {} more (the largest: rank {} {:+.3f} ms)", r.ranks.size() - 1 - kListed, largest->rank,
                     static_cast<double>(largest->clock_offset_ns) / 1e6);
  }
  return s + "\n";
}

nlohmann::json repairs_json(const kineto::Repairs& f) {
  return {{"duplicate_gpu_activities", f.duplicate_activities}, {"duplicate_calls", f.duplicate_calls},
          {"duplicate_steps", f.duplicate_steps}, {"duplicate_stream_waits", f.duplicate_waits},
          {"overlapping_activities", f.overlapping}, {"largest_overlap_ns", f.largest_overlap},
          {"activities_without_launch", f.unlaunched}};
}

}  // namespace

std::string format_kineto(const KinetoReport& r, const PlatformConfig& platform) {
  const KinetoReplay& c = r.counts;
  std::string out;
  if (r.ranks.size() == 1) {
    out = fmt::format("# acesim run: PyTorch profiler trace {}{}: rank {} of a {}-rank job on {} GPUs{}\n", r.file,
                      r.device.empty() ? "" : " (" + r.device + ")", r.ranks[0].rank, r.job_ranks, r.npus,
                      r.job_ranks > 1 ? " (its trace stands for every rank)" : "");
  } else {
    out = fmt::format("# acesim run: {} PyTorch profiler traces{}, one per rank, of a {}-rank job on {} GPUs\n", r.ranks.size(),
                      r.device.empty() ? "" : " (" + r.device + ")", r.job_ranks, r.npus);
  }
  if (r.job_ranks > static_cast<long long>(r.ranks.size())) {
    out += fmt::format("# simulated: {} of {} ranks, the traced one{}; every group {} in runs whole on its links, groups of no "
                       "traced rank are taken to run alike on links of their own\n",
                       r.ranks.size(), r.job_ranks, r.ranks.size() > 1 ? "s" : "", r.ranks.size() > 1 ? "they are" : "it is");
  }
  out += fmt::format("# placement: {}\n", r.placement);
  for (const std::string& a : r.assumptions) out += "# " + a + "\n";
  out += fmt::format("# platform: {} ({}); executor {}\n", describe_platform(platform), platform.source, r.executor);
  out += fmt::format("# GPU work: {} kernels, {} copies, {} sets on {} streams (compute stream {}; {} on other streams, as measured)\n",
                     c.kernels, c.copies, c.sets, c.streams, c.main_stream, c.side_stream_activities);
  out += fmt::format("# CPU: {} launches, {} synchronisations; median launch latency {:.3f} us\n", c.launches, c.syncs,
                     static_cast<double>(c.median_launch_latency) / 1e3);
  out += repairs_line(c.repairs);
  out += clocks_line(r);
  out += c.stream_waits > 0 ? fmt::format("# across streams: {} waits on recorded events (cuda_sync{})\n", c.stream_waits,
                                          c.stream_waits_dropped > 0 ? fmt::format("; {} Stream Wait Events naming no record in the trace left out",
                                                                                   c.stream_waits_dropped)
                                                                     : "")
                            : fmt::format("# across streams (inferred{}): {} waits for a collective after work.wait(), "
                                          "{} at a step's start for the steps' collectives\n",
                                          c.stream_waits_dropped > 0
                                              ? fmt::format("; the trace's {} Stream Wait Events name no record in it", c.stream_waits_dropped)
                                              : "; no cuda_sync events",
                                          c.compute_waits, c.step_waits);
  out += "# " + comm_line(r) + "\n";
  if (c.collectives_simulated + c.collectives_measured > 0) {
    out += fmt::format("# the traced ranks' NCCL kernels: {:.3f} ms traced, {:.3f} ms replayed (the whole trace)\n", ms(r.comm_measured_ps),
                       ms(r.comm_replayed_ps));
  }
  out += fmt::format("# the traced ranks' GPU activities starting within 1 us of their measured start: {} of {} (largest gap {:.3f} us)\n",
                     r.activities_on_time, r.activities, ps_to_us(r.largest_start_gap_ps));
  out += fmt::format("{:>12} {:>14} {:>14} {:>9}\n", "step", "measured (ms)", "replayed (ms)", "error");
  TimePs measured = 0, replayed = 0;
  for (const KinetoStepRecord& s : r.steps) {
    out += fmt::format("{:>12} {:>14.3f} {:>14.3f} {:>+8.2f}%\n", s.number, ms(s.measured_ps), ms(s.replayed_ps), 100.0 * s.error());
    measured += s.measured_ps;
    replayed += s.replayed_ps;
  }
  if (r.ranks.size() > 1) {
    out += fmt::format("# each step: the slowest of the {} traced ranks ({}), measured and replayed\n", r.ranks.size(),
                       [&] {
                         std::string s;
                         for (const KinetoRankRecord& k : r.ranks) s += fmt::format("{}rank {} on GPU {}", s.empty() ? "" : ", ", k.rank, k.gpu);
                         return s;
                       }());
  }
  if (r.steps.size() > 1) {
    const double n = static_cast<double>(r.steps.size());
    out += fmt::format("{:>12} {:>14.3f} {:>14.3f} {:>+8.2f}%\n", "mean", ms(measured) / n, ms(replayed) / n,
                       measured > 0 ? 100.0 * (static_cast<double>(replayed) / static_cast<double>(measured) - 1.0) : 0.0);
  }
  return out;
}

nlohmann::json kineto_json(const KinetoReport& r) {
  const KinetoReplay& c = r.counts;
  nlohmann::json steps = nlohmann::json::array(), times = nlohmann::json::array();
  for (const KinetoStepRecord& s : r.steps) {
    steps.push_back({{"step", s.number}, {"measured_ns", s.measured_ps / 1000}, {"replayed_ns", s.replayed_ps / 1000}, {"error", s.error()}});
    times.push_back(s.replayed_ps / 1000);
  }
  nlohmann::json ranks = nlohmann::json::array();
  for (const KinetoRankRecord& k : r.ranks) {
    nlohmann::json st = nlohmann::json::array();
    for (const KinetoStepRecord& s : k.steps) {
      st.push_back({{"step", s.number}, {"measured_ns", s.measured_ps / 1000}, {"replayed_ns", s.replayed_ps / 1000}, {"error", s.error()}});
    }
    ranks.push_back({{"kineto", k.file}, {"rank", k.rank}, {"gpu", k.gpu}, {"clock_offset_ns", k.clock_offset_ns}, {"steps", st},
                     {"repairs", repairs_json(k.counts.repairs)}});
  }
  nlohmann::json why = nlohmann::json::object();
  for (const auto& [w, n] : c.measured_why) why[w] = n;
  return {{"kineto", r.file},
          {"device", r.device},
          {"platform", r.platform},
          {"executor", r.executor},
          {"job_ranks", r.job_ranks},
          {"traced_job_ranks", r.traced_world},
          {"one_trace_for_every_rank", r.ranks.size() == 1 && r.job_ranks > 1},
          {"placement", r.placement},
          {"assumptions", r.assumptions},
          {"clock_alignment", r.clock_alignment.empty() ? "one trace" : r.clock_alignment},
          {"ranks", ranks},
          {"npus", r.npus},
          {"communication", r.simulate_comm ? "simulated" : "measured"},
          {"iteration_times_ns", times},
          {"steps", steps},
          {"gpu", {{"kernels", c.kernels}, {"copies", c.copies}, {"sets", c.sets}, {"streams", c.streams},
                   {"compute_stream", c.main_stream}, {"side_stream_activities", c.side_stream_activities}}},
          {"cpu", {{"launches", c.launches}, {"synchronisations", c.syncs}, {"median_launch_latency_ns", c.median_launch_latency},
                   {"compute_waits_for_collectives", c.compute_waits}, {"stream_waits_on_recorded_events", c.stream_waits},
                   {"stream_wait_events_without_record", c.stream_waits_dropped}, {"queued_gaps", c.gaps},
                   {"step_waits_for_collectives", c.step_waits}}},
          {"collectives", {{"simulated", c.collectives_simulated}, {"measured", c.collectives_measured}, {"measured_why", why}}},
          {"repairs", repairs_json(c.repairs)},
          {"activities", r.activities},
          {"activities_on_time", r.activities_on_time},
          {"largest_start_gap_ns", r.largest_start_gap_ps / 1000},
          {"communication_ns", {{"traced", r.comm_measured_ps / 1000}, {"replayed", r.comm_replayed_ps / 1000}}},
          {"total_ns", r.total_ps / 1000},
          {"events", r.events}};
}

void write_kineto_csv(const KinetoReport& r, const std::string& dir) {
  std::string text = "step,measured_ns,replayed_ns,error\n";
  for (const KinetoStepRecord& s : r.steps) {
    text += (CsvLine() << s.number << s.measured_ps / 1000 << s.replayed_ps / 1000 << s.error()).text();
  }
  create_output_directory(dir, "--csv");
  write_output_file((std::filesystem::path(dir) / "steps.csv").string(), text, "--csv");
  if (r.ranks.size() > 1) {
    std::string per = "rank,gpu,step,measured_ns,replayed_ns,error\n";
    for (const KinetoRankRecord& k : r.ranks) {
      for (const KinetoStepRecord& s : k.steps) {
        per += (CsvLine() << k.rank << k.gpu << s.number << s.measured_ps / 1000 << s.replayed_ps / 1000 << s.error()).text();
      }
    }
    write_output_file((std::filesystem::path(dir) / "rank_steps.csv").string(), per, "--csv");
  }
  std::string ranks =
      "rank,gpu,file,clock_offset_ns,duplicate_gpu_activities,duplicate_calls,duplicate_steps,duplicate_stream_waits,overlapping_activities,"
      "largest_overlap_ns,activities_without_launch\n";
  for (const KinetoRankRecord& k : r.ranks) {
    const kineto::Repairs& f = k.counts.repairs;
    ranks += (CsvLine() << k.rank << k.gpu << k.file << k.clock_offset_ns << f.duplicate_activities << f.duplicate_calls << f.duplicate_steps
                        << f.duplicate_waits << f.overlapping << f.largest_overlap << f.unlaunched)
                 .text();
  }
  write_output_file((std::filesystem::path(dir) / "ranks.csv").string(), ranks, "--csv");
}

nlohmann::json kineto_trace_events(const KinetoReport& r) {
  nlohmann::json events = nlohmann::json::array();
  long long pid = 0;
  for (const KinetoTimeline& tl : r.timelines) {
    for (const bool replayed : {false, true}) {
      ++pid;
      events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pid},
                        {"args", {{"name", fmt::format("rank {} (GPU {}) {}", tl.rank, tl.gpu, replayed ? "replayed" : "measured")}}}});
      events.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", pid}, {"args", {{"sort_index", pid}}}});
      events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid}, {"tid", 0}, {"args", {{"name", "ProfilerStep"}}}});
      const std::vector<TimePs>& anchors = replayed ? tl.replayed_anchors : tl.measured_anchors;
      for (std::size_t k = 0; k + 1 < anchors.size(); ++k) {
        events.push_back({{"ph", "X"}, {"cat", "step"}, {"name", fmt::format("ProfilerStep#{}", tl.step_numbers[k])}, {"pid", pid},
                          {"tid", 0}, {"ts", ps_to_us(anchors[k])}, {"dur", ps_to_us(anchors[k + 1] - anchors[k])}});
      }
      // A thread per (device, stream), numbered from 1 (0: the steps).
      std::map<std::pair<int, long long>, long long> tids;
      for (const KinetoSpan& s : tl.spans) {
        const auto [it, fresh] = tids.try_emplace({s.device, s.stream}, static_cast<long long>(tids.size()) + 1);
        if (fresh) {
          events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid}, {"tid", it->second},
                            {"args", {{"name", fmt::format("device {} stream {}", s.device, s.stream)}}}});
        }
        const TimePs b = replayed ? s.replayed_start : s.measured_start;
        const TimePs e = replayed ? s.replayed_end : s.measured_end;
        events.push_back({{"ph", "X"}, {"cat", s.nccl ? "communication" : "gpu"}, {"name", tl.names[s.name]}, {"pid", pid},
                          {"tid", it->second}, {"ts", ps_to_us(b)}, {"dur", ps_to_us(e - b)}});
      }
    }
  }
  return {{"displayTimeUnit", "ns"}, {"traceEvents", events}};
}

}  // namespace acesim
