#include "reproduce/plot_script.h"

#include <filesystem>
#include <fstream>

#include "config/embedded.h"

namespace acesim {

bool run_plot_script(const std::string& dir, std::string_view script, std::FILE* progress) {
  const std::string path = (std::filesystem::path(dir) / std::filesystem::path(script).filename()).string();
  {
    std::ofstream f(path);
    if (!f) return false;
    f << embedded_file(script);
  }
  // Debian's interpreter: that is where python3-matplotlib is installed.
  const std::string python = std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  const std::string cmd = python + " '" + path + "' '" + dir + "' 2>&1";
  std::FILE* pipe = ::popen(cmd.c_str(), "r");
  if (pipe == nullptr) return false;
  std::string out;
  char buf[256];
  while (std::fgets(buf, sizeof buf, pipe) != nullptr) out += buf;
  const int rc = ::pclose(pipe);
  if (rc != 0 && progress != nullptr) {
    std::fprintf(progress, "reproduce: warning: plots not made (%s): %s", python.c_str(), out.c_str());
  }
  return rc == 0;
}

}  // namespace acesim
