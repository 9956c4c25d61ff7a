// Calibration files of in-situ parameters (compute/in_situ.h): parsed,
// resolved for an architecture and precision, written back and read again.
#include "compute/in_situ.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  acesim::fuzz::expect_clean([&] {
    const acesim::InSituCalibration c = acesim::parse_calibration(acesim::fuzz::text(data, size), "fuzz.yaml");
    const acesim::InSitu v = c.resolve("hopper", "fp8");
    (void)acesim::in_situ_text(v, 16384);
    (void)acesim::parse_calibration(acesim::calibration_yaml(c), "again.yaml");
  });
  return 0;
}
