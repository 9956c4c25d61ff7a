// Reading CSV files: Debian's fast-cpp-csv-parser (libfccp), RFC 4180
// quoting, a UTF-8 byte-order mark skipped. One place includes it, so that
// every reader gets the same warnings suppressed.
#pragma once

// libfccp copies file names into a fixed buffer with strncpy, which GCC
// flags where it is inlined into our code.
#define CSV_IO_NO_THREAD
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-truncation"
#endif
#include <libfccp/csv.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include <array>
#include <cstddef>
#include <regex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "config/input_error.h"

namespace acesim {

// The CSV reader every table with named columns uses: RFC 4180 quoting
// (a field in double quotes may hold commas, "" is a quote), `#` lines and
// blank lines skipped, a UTF-8 byte-order mark dropped, columns found by
// name in any order and others ignored.
// What the file's header line is: its line (from 1; 0 when there is none)
// and its column names, for a message's column number.
struct CsvHeader {
  int line = 0;
  std::vector<std::string> names;
  // The column number (from 1) of `name`, 0 if absent.
  int number(const std::string& name) const {
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (names[i] == name) return static_cast<int>(i) + 1;
    }
    return 0;
  }
};
// The first line that is neither blank nor a `#` comment; with `lower`,
// that line of `text` is lowered in place (names that match whatever their
// case).
CsvHeader find_csv_header(std::string& text, bool lower = false);

// Inside a catch block around libfccp: the exception as an InputError
// naming the file and line. `needs` lists the columns the header needs.
[[noreturn]] void rethrow_csv_error(const std::string& path, int header_line, const std::string& needs);

// Every row of `text` (the file `path`), its N named fields in `columns`'
// order and its line: fn(line, fields) for each.
template <std::size_t N, typename Fn>
void read_csv_rows(const std::string& path, const std::string& text, int header_line, const std::array<const char*, N>& columns,
                   Fn&& fn) {
  io::CSVReader<N, io::trim_chars<' ', '\t', '\r'>, io::double_quote_escape<',', '"'>, io::throw_on_overflow,
                io::single_and_empty_line_comment<'#'>>
      in(path, text.data(), text.data() + text.size());
  std::array<std::string, N> f;
  std::string needs;
  for (const char* c : columns) needs += (needs.empty() ? "" : ", ") + std::string(c);
  try {
    std::apply([&](auto... c) { in.read_header(io::ignore_extra_column, c...); }, columns);
    while (std::apply([&](auto&... x) { return in.read_row(x...); }, f)) fn(static_cast<int>(in.get_file_line()), f);
  } catch (const io::error::base&) {
    rethrow_csv_error(path, header_line, needs);
  }
}

}  // namespace acesim
