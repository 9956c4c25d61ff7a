// Running a sweep's points on local threads (cli/sweep.h).
#include <atomic>
#include <exception>
#include <mutex>
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "cli/sweep.h"
#include "config/input_error.h"

namespace acesim::cli::sweep {

Resume resume_of(const SweepRequest& request, const Plan& plan) {
  Resume r;
  r.keep_records = request.keep_records;
  r.retry_errors = request.retry_errors;
  r.rerun_changed = request.rerun_changed;
  r.reads = [&plan](std::size_t point, const std::set<std::string>& names) { return plan.reads_any(point, names); };
  return r;
}

SweepSummary run_sweep(const SweepRequest& request) {
  const auto start = std::chrono::steady_clock::now();
  const Plan plan(request.grid_text.empty() ? load_grid(request.grid_file) : parse_grid(request.grid_text, request.grid_file));
  Output out(request.out, sweep_meta(plan, request.shard), resume_of(request, plan));
  SweepSummary summary;
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    if (request.shard && !request.shard->owns(i)) continue;
    ++summary.points;
    if (out.done(i)) {
      ++summary.resumed;
    } else {
      todo.push_back(i);
    }
  }
  unsigned jobs = request.jobs > 0 ? static_cast<unsigned>(request.jobs) : std::max(1u, std::thread::hardware_concurrency());
  jobs = static_cast<unsigned>(std::min<std::size_t>(jobs, std::max<std::size_t>(todo.size(), 1)));
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> done{0};
  std::atomic<std::size_t> errors{0};
  // A point's failure is its record; a failure to write one (a full disk)
  // stops the sweep, from whichever thread it happens on.
  std::mutex failed_mu;
  std::exception_ptr failed;
  auto worker = [&] {
    for (;;) {
      const std::size_t k = next.fetch_add(1);
      if (k >= todo.size()) return;
      nlohmann::json record = run_point(plan, todo[k]);
      if (record.contains("error")) errors.fetch_add(1);
      try {
        out.add(std::move(record));
      } catch (...) {
        const std::lock_guard<std::mutex> lock(failed_mu);
        if (!failed) failed = std::current_exception();
        next.store(todo.size());
        return;
      }
      const std::size_t d = done.fetch_add(1) + 1;
      if (request.progress != nullptr) {
        const std::string stage = fmt::format("sweep: {}/{} points, {} errors", d + summary.resumed, summary.points, errors.load());
        request.progress->progress({stage, -1, 0, static_cast<double>(d) / static_cast<double>(todo.size())});
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < jobs; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  if (failed) std::rethrow_exception(failed);
  out.finish();
  summary.run = todo.size();
  summary.errors = out.errors();
  summary.first_error = out.first_error();
  summary.first_error_status = out.first_error_status();
  if (request.keep_records) summary.records = out.sorted_records();
  summary.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

}  // namespace acesim::cli::sweep

namespace acesim::cli::sweep {

nlohmann::json run_once(const std::string& command, const nlohmann::json& options, const std::string& source) {
  Grid g;
  try {
    if (!options.is_object()) throw InputError(source + ": options must be a map of names to values");
    g.source = source;
    g.command = command;
    for (const auto& [name, value] : options.items()) g.options.push_back({name, value});
    const Plan plan(std::move(g));
    // invoke() throws the CLI's error whole: its status and whether it is
    // a write failure or an internal error (each its own Python exception).
    return invoke(plan.invocation(0)).json;
  } catch (const InvokeError&) {
    throw;
  } catch (...) {
    throw InvokeError(current_error());
  }
}

}  // namespace acesim::cli::sweep
