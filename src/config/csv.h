// The CSV files acesim writes (RFC 4180): a field holding a comma, a quote,
// CR or LF is quoted, its quotes doubled; numbers are written so they read
// back exactly (integers whole, floating point in the shortest text that
// round-trips: 1234567891, 0.1, 1e+20).
#pragma once

#include <concepts>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace acesim {

std::string csv_field(std::string_view text);

// One line of a CSV file, field by field: `CsvLine() << name << 1.5 << 42`.
class CsvLine {
 public:
  CsvLine& operator<<(std::string_view text) {
    next();
    line_ += csv_field(text);
    return *this;
  }
  CsvLine& operator<<(const std::string& text) { return *this << std::string_view(text); }
  CsvLine& operator<<(const char* text) { return *this << std::string_view(text); }
  template <typename T>
    requires(std::integral<T> || std::floating_point<T>) && (!std::same_as<T, bool>) && (!std::same_as<T, char>)
  CsvLine& operator<<(T v) {
    next();
    fmt::format_to(std::back_inserter(line_), "{}", v);
    return *this;
  }
  // The line, with its newline.
  std::string text() const { return line_ + "\n"; }

 private:
  void next() {
    if (started_) line_ += ',';
    started_ = true;
  }
  std::string line_;
  bool started_ = false;
};

}  // namespace acesim
