#include "config/platform.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <sys/stat.h>

#include "config/input_error.h"

namespace acesim {

std::string read_text_file(const std::string& path) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) throw InputError(path + ": cannot open: " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw InputError(path + ": is a directory, expected a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open: " + std::strerror(errno));
  // Input files are small; a cap keeps /dev/zero or a wrong huge file from
  // eating all memory.
  constexpr std::size_t kMaxBytes = 64u << 20;
  std::string text;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxBytes) throw InputError(path + ": larger than 64 MiB, not an input file");
  }
  if (in.bad()) throw InputError(path + ": cannot read: " + std::strerror(errno));
  return text;
}

PlatformConfig default_platform() { return parse_platform_yaml(default_platform_yaml(), "presets/default.yaml"); }

}  // namespace acesim
