// The acesim executable's start-up (docs/performance.md §5): with its C++
// libraries linked statically it loads only the C library, and never a C++
// library beside its own static runtime (two runtimes in one process).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "test_paths.h"

namespace {

class Startup : public acesim::test::CliTest {
 protected:
  // The shared objects the binary names as NEEDED (readelf -d).
  std::vector<std::string> needed() {
    const std::string out = (dir_ / "dynamic.txt").string();
    const std::string cmd = "readelf -d " + acesim::test::shell_quote(acesim::test::acesim_binary()) + " >" +
                            acesim::test::shell_quote(out);
    if (std::system(cmd.c_str()) != 0) return {};
    std::vector<std::string> libs;
    const std::string text = acesim::test::slurp(out);
    for (std::size_t p = text.find("Shared library: ["); p != std::string::npos;
         p = text.find("Shared library: [", p + 1)) {
      const std::size_t start = p + 17;
      libs.push_back(text.substr(start, text.find(']', start) - start));
    }
    return libs;
  }
};

TEST_F(Startup, LoadsNoCxxLibraryBesideItsRuntime) {
  const std::vector<std::string> libs = needed();
  ASSERT_FALSE(libs.empty()) << "readelf -d found no NEEDED entries";
  bool shared_runtime = false;
  for (const std::string& l : libs) shared_runtime = shared_runtime || l.rfind("libstdc++", 0) == 0;
#if ACESIM_STATIC_DEPS_USED
  EXPECT_FALSE(shared_runtime) << "the executable should link the C++ runtime statically";
#endif
  if (shared_runtime) return;  // the shared build: every C++ library shared
  for (const std::string& l : libs) {
    EXPECT_TRUE(l == "libc.so.6" || l == "libm.so.6" || l.rfind("ld-linux", 0) == 0)
        << l << ": a shared library beside the static C++ runtime";
  }
}

}  // namespace
