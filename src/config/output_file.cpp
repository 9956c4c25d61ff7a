#include "config/output_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace acesim {

OutputFile::OutputFile(std::string path, std::string_view option, bool binary) : path_(std::move(path)), option_(option) {
  errno = 0;
  f_.open(path_, std::ios::out | std::ios::trunc | (binary ? std::ios::binary : std::ios::openmode{}));
  if (!f_) fail("cannot open for writing", 2);
  // A write that fails sets errno, which close() reports: a write fails
  // when the stream's buffer fills, long before close() flushes it.
  errno = 0;
}

void OutputFile::close() {
  f_.flush();
  if (!f_) fail("cannot write", 1);
  f_.close();
  if (!f_) fail("cannot write", 1);
}

void OutputFile::fail(std::string_view what, int status) const {
  const int e = errno;
  std::string m = option_.empty() ? "" : option_ + ": ";
  m += path_ + ": " + std::string(what) + ": " + (e != 0 ? std::strerror(e) : "an I/O error (disk full?)");
  throw OutputError(m, status);
}

void write_output_file(const std::string& path, std::string_view text, std::string_view option) {
  OutputFile f(path, option, true);
  f.stream().write(text.data(), static_cast<std::streamsize>(text.size()));
  f.close();
}

void create_output_directory(const std::string& dir, std::string_view option) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir)) {
    std::string m = option.empty() ? "" : std::string(option) + ": ";
    m += dir + ": cannot create the directory" + (ec ? ": " + ec.message() : ": a file of that name is in the way");
    throw OutputError(m, 2);
  }
}

}  // namespace acesim
