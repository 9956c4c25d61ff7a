// A sweep directory read back (cli/sweep_output.cpp): resuming a sweep, with
// or without --retry-errors and --rerun-changed, and merging it, from a
// sweep.json and a results.jsonl as a killed, edited or foreign sweep may
// have left them (torn lines, records of other points, bad types). The input
// is sweep.json, a NUL byte, then results.jsonl; without a NUL byte it is
// results.jsonl beside the sweep.json of the grid below. No point runs.
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "cli/sweep.h"
#include "fuzz_common.h"

namespace {

namespace fs = std::filesystem;
using namespace acesim::cli::sweep;

const Plan& plan() {
  static const Plan p(parse_grid("command: collective\noptions: {platform: hgx-h100}\ngrid:\n  bytes: [1KiB, 2KiB, 4KiB]\n", "fuzz.yaml"));
  return p;
}

const fs::path& scratch() {
  static const fs::path dir = [] {
    std::string t = (fs::temp_directory_path() / "fuzz_sweep_resume.XXXXXX").string();
    if (::mkdtemp(t.data()) == nullptr) std::abort();
    return fs::path(t);
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input = acesim::fuzz::text(data, size);
  const std::size_t nul = input.find('\0');
  const nlohmann::json meta = sweep_meta(plan(), std::nullopt);
  const fs::path dir = scratch() / "sweep";
  fs::remove_all(scratch() / "sweep");
  fs::remove_all(scratch() / "merged");
  fs::create_directories(dir);
  std::ofstream(dir / "sweep.json", std::ios::binary) << (nul == std::string::npos ? json_text(meta, 2) : input.substr(0, nul));
  std::ofstream(dir / "results.jsonl", std::ios::binary) << (nul == std::string::npos ? input : input.substr(nul + 1));
  const bool retry = size > 0 && (data[0] & 1) != 0;
  acesim::fuzz::expect_clean([&] {
    Resume r;
    r.retry_errors = retry;
    r.rerun_changed = !retry;
    r.reads = [](std::size_t point, const std::set<std::string>&) { return point % 2 == 0; };
    Output out(dir.string(), meta, r);
    for (std::size_t p = 0; p < plan().size(); ++p) {
      if (!out.done(p)) out.add({{"point", p}, {"params", plan().params(p)}, {"error", "not run"}, {"status", 2}});
    }
    out.finish();
  });
  acesim::fuzz::expect_clean([&] { (void)merge({dir.string()}, (scratch() / "merged").string()); });
  return 0;
}
