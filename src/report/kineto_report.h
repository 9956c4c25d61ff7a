// `acesim run --kineto`'s report: text, JSON and steps.csv of what
// driver/kineto_run.h replayed.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "driver/kineto_run.h"

namespace acesim {

std::string format_kineto(const KinetoReport& r, const PlatformConfig& platform);
nlohmann::json kineto_json(const KinetoReport& r);
// DIR/steps.csv: one row per ProfilerStep, measured and replayed (the
// slowest traced rank's); with several traced ranks also DIR/rank_steps.csv,
// one row per rank and step; DIR/ranks.csv, one row per traced rank: its
// trace, its clock's offset and what the reader repaired in it.
void write_kineto_csv(const KinetoReport& r, const std::string& dir);
// The Perfetto trace of --trace: per kept rank, one process of its GPU
// activities as measured and one as replayed, a thread per CUDA stream and
// one of ProfilerStep spans; the same time origin (the trace's first launch).
nlohmann::json kineto_trace_events(const KinetoReport& r);

}  // namespace acesim
