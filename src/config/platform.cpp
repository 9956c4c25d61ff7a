#include "config/platform.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

#include <fmt/format.h>

#include "config/input_error.h"
#include "config/limits.h"

namespace acesim {

namespace {

// Byte-order marks of the encodings acesim does not read.
constexpr std::pair<std::string_view, std::string_view> kOtherEncodings[] = {
    {std::string_view("\x00\x00\xFE\xFF", 4), "UTF-32"},
    {std::string_view("\xFF\xFE\x00\x00", 4), "UTF-32"},
    {"\xFE\xFF", "UTF-16"},
    {"\xFF\xFE", "UTF-16"},
};

std::string mib(std::uint64_t bytes) { return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20)); }

}  // namespace

std::string read_text_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(path + ": cannot open: " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st{};
  if (::fstat(fd, &st) != 0) throw InputError(path + ": cannot read: " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw InputError(path + ": is a directory, expected a file");
  constexpr std::uint64_t kMax = limits::kMaxInputFileBytes;
  if (S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > kMax) {
    throw InputError(fmt::format("{}: {}, larger than an input file may be ({}): not an input file", path,
                                 mib(static_cast<std::uint64_t>(st.st_size)), mib(kMax)));
  }
  std::string text;
  if (S_ISREG(st.st_mode)) text.reserve(static_cast<std::size_t>(st.st_size));
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputError(path + ": cannot read: " + std::strerror(errno));
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > kMax) throw InputError(fmt::format("{}: more than {} of bytes: not an input file", path, mib(kMax)));
  }
  for (const auto& [bom, encoding] : kOtherEncodings) {
    if (text.starts_with(bom)) {
      throw InputError(fmt::format("{}: {} text (its byte-order mark says so); acesim reads UTF-8: save the file as UTF-8", path, encoding));
    }
  }
  if (const std::size_t nul = text.find('\0'); nul != std::string::npos) {
    const long line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(nul), '\n');
    throw InputError(fmt::format("{}:{}: a NUL byte (byte {}): not a text file (UTF-16 text without a byte-order mark, or binary)", path, line, nul));
  }
  if (text.starts_with("\xEF\xBB\xBF")) text.erase(0, 3);  // a UTF-8 byte-order mark (Excel's "CSV UTF-8")
  return text;
}

PlatformConfig default_platform() { return parse_platform_yaml(default_platform_yaml(), "presets/default.yaml"); }

}  // namespace acesim
