// Goodput reports (goodput_report.h).
#include "report/goodput_report.h"

#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "config/csv.h"
#include "config/output_file.h"

namespace acesim {
namespace {

// JSON has no infinity or NaN: those are null.
nlohmann::json number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

std::string duration(double s) {
  if (!std::isfinite(s)) return "never";
  if (s < 120.0) return fmt::format("{:.3g} s", s);
  if (s < 7200.0) return fmt::format("{:.3g} min", s / 60.0);
  if (s < 172800.0) return fmt::format("{:.3g} h", s / 3600.0);
  return fmt::format("{:.3g} days", s / 86400.0);
}

nlohmann::json percentiles_json(const Percentiles& p) {
  return {{"mean", p.mean}, {"p5", p.p5}, {"p50", p.p50}, {"p95", p.p95}, {"min", p.min}, {"max", p.max}};
}

}  // namespace

std::string format_goodput(const GoodputReport& r, const std::string& run) {
  std::string s;
  const auto& n = r.components.count;
  s += fmt::format("\nfailures and goodput{} over {:g} day{} ({} trials, seed {}; docs/goodput.md)\n", run.empty() ? "" : " of the " + run + " run",
                   r.days, r.days == 1.0 ? "" : "s", r.trials, r.seed);
  s += fmt::format("  failure model      {}{}\n", r.failure_model, r.source.empty() ? "" : " (" + r.source + ")");
  s += fmt::format("  components         {} GPUs, {} nodes, {} NICs, {} scale-out links\n", n[0], n[1], n[2], n[3]);
  s += fmt::format("  failures a day     {:.3g} (gpu {:.3g}, node {:.3g}, nic {:.3g}, link {:.3g}); one every {}\n",
                   r.failures_per_day[0] + r.failures_per_day[1] + r.failures_per_day[2] + r.failures_per_day[3],
                   r.failures_per_day[0], r.failures_per_day[1], r.failures_per_day[2], r.failures_per_day[3], duration(r.mtbf_s));
  if (r.planned_per_day > 0.0) {
    s += fmt::format("  planned a day      {:.3g} (the job writes a checkpoint, stops and restarts; no work lost)\n", r.planned_per_day);
  }
  s += fmt::format("  checkpoint         {:.4g} GB ({}), {} write {}, read {}\n", r.checkpoint_GB, r.checkpoint_size_from,
                   r.async ? "asynchronous" : "blocking", duration(r.write_s), duration(r.read_s));
  s += fmt::format("  restart            {} (re-queue, initialisation, checkpoint read)\n", duration(r.restart_s));
  s += fmt::format("  checkpoint every   {} iterations = {}{}; Young {}, Daly {}\n", r.every, duration(r.interval_s),
                   r.every_auto ? " (auto: Daly's interval)" : "",
                   duration(r.young_s), duration(r.daly_s));
  s += fmt::format("  interruptions      {:.1f} mean (p5 {:.0f}, p95 {:.0f}); gpu {:.1f}, node {:.1f}, nic {:.1f}, link {:.1f}\n",
                   r.failures.mean, r.failures.p5, r.failures.p95, r.failures_by_class[0], r.failures_by_class[1],
                   r.failures_by_class[2], r.failures_by_class[3]);
  if (r.planned_per_day > 0.0) {
    s += fmt::format("  planned            {:.1f} mean; {:.1f} interruptions in all\n", r.planned, r.planned + r.failures.mean);
  }
  const double wall = r.productive_h + r.checkpoint_h + r.lost_h + r.restart_h;
  const auto share = [wall](double h) { return wall > 0.0 ? 100.0 * h / wall : 0.0; };
  s += fmt::format("  goodput (ETTR)     {:.2f}% mean (p5 {:.2f}%, p95 {:.2f}%)", 100.0 * r.ettr.mean, 100.0 * r.ettr.p5, 100.0 * r.ettr.p95);
  if (!r.closed_forms_note.empty()) {
    s += fmt::format("; closed forms n/a ({})\n", r.closed_forms_note);
  } else {
    if (std::isfinite(r.daly_ettr)) s += fmt::format("; Daly's closed form {:.2f}%", 100.0 * r.daly_ettr);
    s += fmt::format("; first order {:.2f}%{}\n", 100.0 * r.first_order_ettr, r.planned_per_day > 0.0 ? " (both: failures only)" : "");
  }
  s += fmt::format("  wall time          productive {:.1f} h ({:.1f}%), checkpointing {:.1f} h ({:.1f}%), lost work {:.1f} h ({:.1f}%), "
                   "restarting {:.1f} h ({:.1f}%)\n",
                   r.productive_h, share(r.productive_h), r.checkpoint_h, share(r.checkpoint_h), r.lost_h, share(r.lost_h),
                   r.restart_h, share(r.restart_h));
  s += fmt::format("  iterations kept    {:.0f} mean, of {:.0f} without failures or checkpoints\n", r.iterations,
                   r.days * 86400.0 / r.iteration_s);
  return s;
}

nlohmann::json goodput_json(const GoodputReport& r) {
  nlohmann::json classes = nlohmann::json::object(), per_day = nlohmann::json::object(), by_class = nlohmann::json::object();
  for (int c = 0; c < kFailureClasses; ++c) {
    const auto k = static_cast<std::size_t>(c);
    classes[kFailureClassNames[k]] = r.components.count[k];
    per_day[kFailureClassNames[k]] = r.failures_per_day[k];
    by_class[kFailureClassNames[k]] = r.failures_by_class[k];
  }
  nlohmann::json j = {{"failure_model", r.failure_model},
          {"source", r.source},
          {"days", r.days},
          {"trials", r.trials},
          {"seed", r.seed},
          {"iteration_s", r.iteration_s},
          {"components", classes},
          {"failures_per_day", per_day},
          {"mtbf_s", number(r.mtbf_s)},
          {"checkpoint", {{"size_GB", r.checkpoint_GB},
                          {"size_from", r.checkpoint_size_from},
                          {"async", r.async},
                          {"write_s", r.write_s},
                          {"read_s", r.read_s},
                          {"every_iterations", r.every},
                          {"auto", r.every_auto},
                          {"interval_s", r.interval_s},
                          {"young_s", number(r.young_s)},
                          {"daly_s", number(r.daly_s)}}},
          {"restart_s", r.restart_s},
          {"interruptions", percentiles_json(r.failures)},
          {"interruptions_by_class", by_class},
          {"planned_per_day", r.planned_per_day},
          {"planned_interruptions", r.planned},
          {"ettr", percentiles_json(r.ettr)},
          {"daly_ettr", number(r.daly_ettr)},
          {"first_order_ettr", number(r.first_order_ettr)},
          {"hours", {{"productive", r.productive_h}, {"checkpointing", r.checkpoint_h}, {"lost", r.lost_h}, {"restarting", r.restart_h}}},
          {"iterations", r.iterations}};
  if (!r.closed_forms_note.empty()) j["closed_forms_note"] = r.closed_forms_note;
  return j;
}

void write_goodput_csv(const GoodputReport& r, const std::string& dir) {
  create_output_directory(dir, "--csv");
  std::string text = "trial,interruptions";
  for (const char* c : kFailureClassNames) text += fmt::format(",{}_failures", c);
  text += ",iterations,checkpoints,productive_s,checkpointing_s,lost_s,restarting_s,ettr,planned\n";
  for (std::size_t i = 0; i < r.per_trial.size(); ++i) {
    const GoodputTrial& t = r.per_trial[i];
    CsvLine row;
    row << i << t.failures;
    for (long long c : t.by_class) row << c;
    row << t.iterations << t.checkpoints << static_cast<double>(t.productive_ns) / 1e9 << static_cast<double>(t.checkpoint_ns) / 1e9
        << static_cast<double>(t.lost_ns) / 1e9 << static_cast<double>(t.restart_ns) / 1e9 << t.ettr() << t.planned;
    text += row.text();
  }
  write_output_file((std::filesystem::path(dir) / "goodput.csv").string(), text, "--csv");
}

}  // namespace acesim
