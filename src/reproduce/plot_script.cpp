#include "reproduce/plot_script.h"

#include <filesystem>

#include "config/embedded.h"
#include "config/output_file.h"

namespace acesim {

namespace {

std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Debian's interpreter: that is where python3-matplotlib is installed.
std::string python() { return std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3"; }

}  // namespace

int run_embedded_script(const std::string& dir, std::string_view script, const std::vector<std::string>& args,
                        std::string& output) {
  const std::string path = (std::filesystem::path(dir) / std::filesystem::path(script).filename()).string();
  write_output_file(path, embedded_file(script));
  std::string cmd = python() + " " + quoted(path);
  for (const std::string& a : args) cmd += " " + quoted(a);
  cmd += " 2>&1";
  std::FILE* pipe = ::popen(cmd.c_str(), "r");
  if (pipe == nullptr) {
    output = "cannot start " + python();
    return 1;
  }
  output.clear();
  char buf[256];
  while (std::fgets(buf, sizeof buf, pipe) != nullptr) output += buf;
  return ::pclose(pipe);
}

bool run_plot_script(const std::string& dir, std::string_view script, std::FILE* progress) {
  std::string out;
  const int rc = run_embedded_script(dir, script, {dir}, out);
  if (rc != 0 && progress != nullptr) {
    std::fprintf(progress, "reproduce: warning: plots not made (%s): %s", python().c_str(), out.c_str());
  }
  return rc == 0;
}

}  // namespace acesim
