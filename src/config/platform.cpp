#include "config/platform.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

#include "config/input_error.h"

namespace acesim {

std::string read_text_file(const std::string& path) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) throw InputError(path + ": cannot open: " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw InputError(path + ": is a directory, expected a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open: " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

PlatformConfig default_platform() { return parse_platform_yaml(default_platform_yaml(), "presets/default.yaml"); }

}  // namespace acesim
