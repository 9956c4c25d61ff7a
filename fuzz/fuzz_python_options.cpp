// What the Python module's native half does with a call's options
// (python/acesim_module.cpp, docs/python.md): the JSON text read and checked
// (cli/json_input.h: depth, whole numbers), then everything
// acesim.collective/run/characterize do before simulating -- the options
// turned into command-line arguments, a platform dict and dotted keys
// written as YAML and read by the platform reader (cli/sweep.h's run_once,
// as a one-point Plan). No point is simulated. The input is the options'
// JSON, after an optional first line naming the command (collective, run,
// characterize; collective when absent).
#include <cstdlib>
#include <string_view>

#include <nlohmann/json.hpp>

#include "cli/json_input.h"
#include "cli/sweep.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input = acesim::fuzz::text(data, size);
  std::string command = "collective";
  std::string_view json = input;
  const std::size_t newline = input.find('\n');
  if (newline != std::string::npos) {
    const std::string first = input.substr(0, newline);
    if (first == "collective" || first == "run" || first == "characterize") {
      command = first;
      json.remove_prefix(newline + 1);
    }
  }
  acesim::fuzz::expect_clean([&] {
    const nlohmann::json options = acesim::cli::parse_json_input(json, "fuzz: options");
    // What the checked reader accepts, it reads as nlohmann's parser does.
    if (options != nlohmann::json::parse(json)) std::abort();
    if (!options.is_object()) return;
    acesim::cli::sweep::Grid grid;
    grid.source = "fuzz";
    grid.command = command;
    for (const auto& [name, value] : options.items()) grid.options.push_back({name, value});
    const acesim::cli::sweep::Plan plan(std::move(grid));
    try {
      (void)plan.invocation(0);
    } catch (const acesim::InputError&) {
      // The call's own error (a platform the reader refuses).
    }
  });
  return 0;
}
