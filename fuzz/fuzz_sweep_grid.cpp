// Sweep grid files (cli/sweep_grid.cpp): the grid's keys and axes, then the
// checks made before any point runs (options of the command, platform keys
// set in their base platforms), and the command lines of the first and the
// last point. No point is simulated.
#include "cli/sweep.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  acesim::fuzz::expect_clean([&] {
    const acesim::cli::sweep::Grid grid = acesim::cli::sweep::parse_grid(acesim::fuzz::text(data, size), "fuzz.yaml");
    const acesim::cli::sweep::Plan plan(grid);
    for (const std::size_t point : {std::size_t{0}, plan.size() - 1}) {
      (void)plan.params(point);
      try {
        (void)plan.invocation(point);
      } catch (const acesim::InputError&) {
        // A point's own error (a platform that cannot be read): its row.
      }
    }
  });
  return 0;
}
