// The layers of docs/architecture.md, enforced: a folder of src/ includes
// only folders of lower layers (and config's leaf headers, which any layer
// may use). A new folder must be given its layer here and in the doc.
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>

#include <gtest/gtest.h>

#include "test_paths.h"

namespace acesim {
namespace {

namespace fs = std::filesystem;

// Bottom (0) to top; the same table as docs/architecture.md.
const std::map<std::string, int> kLayer = {
    {"engine", 0},     {"registry", 0},  {"topology", 1}, {"chakra", 1},    {"algorithm", 2},
    {"network", 3},    {"endpoint", 4},  {"collective", 5}, {"config", 6},  {"platform", 7}, {"compute", 7},
    {"workload", 8},   {"driver", 9},    {"report", 10},  {"calibrate", 10}, {"reproduce", 10},
    {"api", 11},       {"cli", 12},
};

// Utilities in config/ with no dependency on any model: usable anywhere.
bool leaf_header(const std::string& path) {
  return path == "config/units.h" || path == "config/limits.h" || path == "config/input_error.h" ||
         path == "config/embedded.h" || path == "config/output_file.h" || path == "config/csv.h";
}

TEST(Architecture, EveryFolderIncludesOnlyLowerLayers) {
  const fs::path src = fs::path(test::source_dir()) / "src";
  const std::regex include_re(R"re(^\s*#include\s+"([a-z_]+)/([^"]+)")re");
  int files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(src)) {
    const std::string ext = entry.path().extension().string();
    if (ext != ".h" && ext != ".cpp") continue;
    ++files;
    const std::string folder = fs::relative(entry.path(), src).begin()->string();
    const auto me = kLayer.find(folder);
    ASSERT_NE(me, kLayer.end()) << "src/" << folder << " has no layer: add it to docs/architecture.md and this test";
    std::ifstream in(entry.path());
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
      ++n;
      std::smatch m;
      if (!std::regex_search(line, m, include_re)) continue;
      const std::string dep = m[1].str();
      if (dep == folder || leaf_header(dep + "/" + m[2].str())) continue;
      const auto it = kLayer.find(dep);
      if (it == kLayer.end()) continue;  // generated headers (chakra/et_def.pb.h is under the build tree)
      EXPECT_LT(it->second, me->second) << fs::relative(entry.path(), src).string() << ":" << n << " includes " << dep
                                        << "/ (layer " << it->second << ") from layer " << me->second;
    }
  }
  EXPECT_GT(files, 100);
}

}  // namespace
}  // namespace acesim
