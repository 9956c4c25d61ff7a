// The Python module's native half, `acesim._acesim` (docs/python.md). It is
// a thin layer over cli/sweep.h: every value crosses as JSON text, which the
// pure-Python package (python/acesim/__init__.py) encodes and decodes, so no
// type is converted by hand; the JSON coming in is read by
// cli/json_input.h, which bounds its depth and its whole numbers whoever
// calls. Simulations run with the GIL released.
#include <pybind11/pybind11.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/invoke.h"
#include "cli/json_input.h"
#include "cli/sweep.h"
#include "config/input_error.h"

namespace py = pybind11;

namespace {

using acesim::cli::CommandError;

// The CLI's failure as a Python exception: ValueError for what the input
// asked (status 2: bad input, 3: a simulation that cannot finish), with the
// exact message the CLI prints after "acesim: error: "; OSError for a file
// that could not be written; RuntimeError for an internal error. The exit
// status the CLI would give is the exception's `status` attribute.
[[noreturn]] void raise(const CommandError& e) {
  py::object type = py::reinterpret_borrow<py::object>(e.internal ? PyExc_RuntimeError
                                                       : e.output ? PyExc_OSError
                                                                  : PyExc_ValueError);
  py::object exc = type(e.message);
  exc.attr("status") = e.status;
  PyErr_SetObject(type.ptr(), exc.ptr());
  throw py::error_already_set();
}

// For the module's tests: raises what a command that failed so raises.
void raise_cli_error(int status, const std::string& message, bool internal, bool output) {
  raise(CommandError{status, message, internal, output});
}

std::string run_once(const std::string& command, const std::string& options_json, const std::string& source) {
  std::optional<CommandError> error;
  std::string report;
  {
    py::gil_scoped_release release;
    try {
      const nlohmann::json options = acesim::cli::parse_json_input(options_json, source + ": options");
      report = acesim::cli::sweep::json_text(acesim::cli::sweep::run_once(command, options, source));
    } catch (const acesim::cli::InvokeError& e) {
      error = e.error();
    } catch (...) {
      error = acesim::cli::current_error();
    }
  }
  if (error) raise(*error);
  return report;
}

// A grid's points run: {"axes": the axes' names in the grid's order,
// "records": every record of the grid (or shard), sorted by point}.
std::string sweep(const std::string& grid_text, const std::string& grid_file, const std::string& out, int jobs,
                  const std::string& shard) {
  std::optional<CommandError> error;
  std::string records;
  {
    py::gil_scoped_release release;
    try {
      acesim::cli::sweep::SweepRequest r;
      r.grid_text = grid_text;
      r.grid_file = grid_file;
      r.out = out;
      r.jobs = jobs;
      r.keep_records = true;
      if (!shard.empty()) r.shard = acesim::cli::sweep::parse_shard(shard);
      const acesim::cli::sweep::SweepSummary s = acesim::cli::sweep::run_sweep(r);
      const acesim::cli::sweep::Grid grid = grid_text.empty() ? acesim::cli::sweep::load_grid(grid_file)
                                                              : acesim::cli::sweep::parse_grid(grid_text, grid_file);
      records = acesim::cli::sweep::json_text(nlohmann::json{{"axes", grid.axis_names()}, {"records", s.records}});
    } catch (...) {
      error = acesim::cli::current_error();
    }
  }
  if (error) raise(*error);
  return records;
}

// results.csv's metric columns of one report: a JSON list of [name, value].
std::string flatten_metrics(const std::string& report_json, const std::string& axes_json) {
  try {
    const nlohmann::json report = acesim::cli::parse_json_input(report_json, "report");
    if (!report.is_object()) {
      throw acesim::InputError("report: a --json report (a map), not " + std::string(report.type_name()));
    }
    const nlohmann::json axes_list = acesim::cli::parse_json_input(axes_json, "axes");
    const bool names =
        axes_list.is_array() && std::all_of(axes_list.begin(), axes_list.end(), [](const auto& a) { return a.is_string(); });
    if (!names) {
      throw acesim::InputError("axes: a list of names (strings), not " + acesim::cli::sweep::json_text(axes_list));
    }
    const std::vector<std::string> axes = axes_list.get<std::vector<std::string>>();
    nlohmann::json pairs = nlohmann::json::array();
    for (auto& [name, value] : acesim::cli::sweep::flatten_metrics(report, axes)) pairs.push_back({name, std::move(value)});
    return acesim::cli::sweep::json_text(pairs);
  } catch (...) {
    raise(acesim::cli::current_error());
  }
}

}  // namespace

PYBIND11_MODULE(_acesim, m) {
  m.doc() =
      "acesim's native half: runs commands and sweeps in-process, exactly as the command line does. Values cross as JSON "
      "text; use the `acesim` package, not this module.";
  m.attr("__version__") = ACESIM_VERSION;
  m.attr("MAX_DEPTH") = acesim::cli::kMaxJsonDepth;
  m.def("run_once", &run_once, py::arg("command"), py::arg("options_json"), py::arg("source"),
        "Runs `command` (collective, run, characterize or cluster) with options given as a JSON map of names to values; returns "
        "its --json report as JSON text. Raises ValueError (bad input, a stuck simulation), OSError (a file it writes, "
        "such as trace= or csv=, could not be written) or RuntimeError (internal error) with the CLI's message; the "
        "exception's `status` is the CLI's exit status.");
  m.def("sweep", &sweep, py::arg("grid_text"), py::arg("grid_file"), py::arg("out"), py::arg("jobs"), py::arg("shard"),
        "Runs a grid (`grid_text`, YAML or JSON, named `grid_file` in messages; or, when empty, the file `grid_file`) "
        "on `jobs` threads (0: every core), writing the directory `out` unless it is empty; `shard` is \"I/N\" or "
        "empty. Returns {\"axes\": the axes' names in the grid's order, \"records\": every record, sorted by point} "
        "as JSON text.");
  m.def("_raise_cli_error", &raise_cli_error, py::arg("status"), py::arg("message"), py::arg("internal"), py::arg("output"),
        "For the module's tests: raises the exception a command failing with this exit status, message and kind raises "
        "(internal: a bug; output: a file that could not be written).");
  m.def("flatten_metrics", &flatten_metrics, py::arg("report_json"), py::arg("axes_json"),
        "A --json report's metrics as results.csv names them: a JSON list of [name, value] pairs, in the report's "
        "order; a metric named like one of the axes (a JSON list of names) is `result.NAME`.");
}
