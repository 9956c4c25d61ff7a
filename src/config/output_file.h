// Files acesim writes (--csv, --trace, --out, --chakra-out, the sweep and
// study directories). Every writer goes through OutputFile, so a file that
// cannot be written is an error naming it, never a truncated or empty file
// and exit status 0 (docs/robustness.md, "Output files").
#pragma once

#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace acesim {

// "PATH: cannot ...: <strerror>", with the exit status the CLI gives it:
// 2 when the path is unusable (its directory cannot be made, the file cannot
// be opened: the command line named a bad place), 1 when writing failed
// after the file was opened (a full disk, an I/O error).
class OutputError : public std::runtime_error {
 public:
  OutputError(const std::string& what, int status) : std::runtime_error(what), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

class OutputFile {
 public:
  // Opens (truncates) `path` for writing; `option` ("--trace"), when given,
  // begins the messages. Throws OutputError (status 2).
  explicit OutputFile(std::string path, std::string_view option = "", bool binary = false);
  OutputFile(OutputFile&&) = default;
  OutputFile& operator=(OutputFile&&) = default;
  // Closes without checking when close() was not called (an error already
  // in flight).
  ~OutputFile() = default;

  std::ostream& stream() { return f_; }
  template <typename T>
  OutputFile& operator<<(const T& v) {
    f_ << v;
    return *this;
  }
  // Flushes and closes; throws OutputError (status 1) when any write failed.
  void close();
  const std::string& path() const { return path_; }

 private:
  [[noreturn]] void fail(std::string_view what, int status) const;
  std::string path_;
  std::string option_;
  std::ofstream f_;
};

// `text` into `path`, checked as OutputFile does.
void write_output_file(const std::string& path, std::string_view text, std::string_view option = "");

// `dir` and its parents; throws OutputError (status 2) when it cannot be made.
void create_output_directory(const std::string& dir, std::string_view option = "");

}  // namespace acesim
