// Reports of several jobs on one platform (driver/cluster_run.h): text,
// JSON and CSV.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "driver/cluster_run.h"

namespace acesim {

std::string format_cluster(const ClusterReport& r, int top_links = 10);
// `top_links`: the busiest links listed (all: links.csv).
nlohmann::json cluster_json(const ClusterReport& r, int top_links = 32);
// DIR/jobs.csv (a row per job), DIR/iterations.csv (a row per job and
// iteration) and DIR/links.csv (a row per link that carried bytes, with
// each job's). Throws InputError when it cannot.
void write_cluster_csv(const ClusterReport& r, const std::string& dir);
// A Chrome/Perfetto trace: one process per job (its first rank), with
// tracks for its compute, its communication and its iterations.
nlohmann::json cluster_trace(const ClusterReport& r);

}  // namespace acesim
