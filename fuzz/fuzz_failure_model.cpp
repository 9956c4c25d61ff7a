// Failure model files (config/failure_model.h), then a short long-run
// simulation with the model (driver/goodput.h): a day, two trials, 64 GPUs
// on 8 nodes.
#include "driver/goodput.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  acesim::fuzz::expect_clean([&] {
    const acesim::FailureModel m = acesim::parse_failure_model(acesim::fuzz::text(data, size), "fuzz.yaml");
    acesim::JobComponents c;
    c.count = {64, 8, 64, 64};
    acesim::GoodputOptions o;
    o.days = 1.0;
    o.trials = 2;
    (void)acesim::simulate_goodput(m, c, 1'000'000'000'000, 10e9, "model state", o);
  });
  return 0;
}
