// A failure model for long runs (docs/goodput.md): how often each kind of
// component fails, where checkpoints go and how long a restart takes. Read
// from a YAML file, or one of the built-in models (presets/failures/*.yaml,
// each derived from a published count of failures; `default` is Meta's
// Llama 3 405B pre-training).
//
// Rates are per component and per 1000 days, in four classes counted on the
// job's platform (driver/goodput.h, job_components): a GPU, a node (its
// host: CPU, memory, power, software), a NIC, and a scale-out link (a NIC's
// cable and its share of the switches above it). A file gives them
// directly (`failures_per_1000_days`) or as the counts observed on a
// cluster over some days (`observed`), from which the rates follow.
// Planned interruptions, if any, are a rate of the whole job.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace acesim {

enum class FailureClass { kGpu, kNode, kNic, kLink };
inline constexpr int kFailureClasses = 4;
inline constexpr std::array<const char*, kFailureClasses> kFailureClassNames = {"gpu", "node", "nic", "link"};

struct FailureCause {
  std::string cause;
  FailureClass cls = FailureClass::kGpu;
  long long count = 0;
};

struct FailureModel {
  std::string name;    // the built-in's name, or the file
  std::string source;  // where its numbers come from
  // Failures per component per 1000 days, by FailureClass.
  std::array<double, kFailureClasses> per_1000_days{};
  // With `observed`: the causes and counts the rates come from.
  std::vector<FailureCause> causes;
  double observed_days = 0.0;
  std::array<long long, kFailureClasses> observed_components{};  // by FailureClass
  // Planned interruptions of the whole job (maintenance, configuration or
  // dataset updates), per day whatever the job's size: the job writes a
  // checkpoint, stops and restarts, and loses no work. From
  // `planned_per_day`, or `observed.planned` over `observed.days`.
  double planned_per_day = 0.0;
  long long observed_planned = -1;  // -1: not given as a count
  // Checkpoints: the storage target's aggregate bandwidths, and the size
  // when the file fixes it (else the job's model state).
  double write_GBps = 0.0;
  double read_GBps = 0.0;
  std::optional<double> checkpoint_GB;
  // Asynchronous checkpoints: training goes on while one is written, and it
  // counts once written (else training waits for the write).
  bool async = false;
  // A restart: the job re-queued (failure detected, nodes replaced, the job
  // scheduled again) and initialised (processes, communicators, data
  // loaders), before the checkpoint is read back.
  double requeue_minutes = 0.0;
  double init_minutes = 0.0;
  // For messages about the rates as a whole: the file and the line of the
  // rates' key.
  std::string file;
  int rates_line = 0;
};

// The names of the built-in models (`default` first).
std::vector<std::string> failure_model_names();
// A built-in model by name, or a YAML file. Throws InputError naming the
// file, line and key of what is wrong; an unknown name that is no file gets
// the built-in names.
FailureModel load_failure_model(const std::string& name_or_file);
// The same from a YAML text (`file` names it in messages).
FailureModel parse_failure_model(const std::string& yaml_text, const std::string& file);

}  // namespace acesim
