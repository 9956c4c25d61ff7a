#include "compute/kernel_times.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <regex>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "config/csv_reader.h"
#include "config/input_error.h"
#include "config/platform.h"
#include "config/units.h"

namespace acesim {
namespace {

std::string trim(const std::string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string names(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

KernelTimes KernelTimes::read(const std::string& path, const std::vector<std::string>& known_gpus) {
  constexpr std::array<const char*, 5> kColumns = {"kind", "gpu", "dtype", "shape", "time_us"};
  std::string text;
  try {
    text = read_text_file(path);
  } catch (const InputError& e) {
    throw InputError(std::string(e.what()) + " (--kernel-times)");
  }
  // Column names match whatever their case: the header line (the first
  // that is neither blank nor a # comment) is read in lower case.
  int header_line = 0;
  for (std::size_t at = 0, line = 1; at < text.size(); ++line) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::string trimmed = trim(text.substr(at, end - at));
    if (!trimmed.empty() && trimmed[0] != '#') {
      for (std::size_t i = at; i < end; ++i) text[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
      header_line = static_cast<int>(line);
      break;
    }
    at = end + 1;
  }
  KernelTimes out;
  out.path_ = path;
  io::CSVReader<5, io::trim_chars<' ', '\t', '\r'>, io::double_quote_escape<',', '"'>, io::throw_on_overflow,
                io::single_and_empty_line_comment<'#'>>
      in(path, text.data(), text.data() + text.size());
  std::array<std::string, 5> f;
  int line = header_line;
  try {
    in.read_header(io::ignore_extra_column, kColumns[0], kColumns[1], kColumns[2], kColumns[3], kColumns[4]);
    while (in.read_row(f[0], f[1], f[2], f[3], f[4])) {
      line = static_cast<int>(in.get_file_line());
      out.add_row(path, line, f, known_gpus);
    }
  } catch (const io::error::header_missing&) {
    throw InputError(path + ": no header line (the header needs kind, gpu, dtype, shape, time_us)");
  } catch (const io::error::missing_column_in_header& e) {
    throw InputError(fmt::format("{}:{}: missing column '{}' (the header needs kind, gpu, dtype, shape, time_us)", path, header_line,
                                 e.column_name));
  } catch (const io::error::duplicated_column_in_header& e) {
    throw InputError(fmt::format("{}:{}: column '{}' is given twice in the header", path, header_line, e.column_name));
  } catch (const io::error::too_few_columns& e) {
    throw InputError(fmt::format("{}:{}: fewer fields than the header has columns", path, e.file_line));
  } catch (const io::error::too_many_columns& e) {
    throw InputError(fmt::format("{}:{}: more fields than the header has columns", path, e.file_line));
  } catch (const io::error::escaped_string_not_closed& e) {
    throw InputError(fmt::format("{}:{}: a quoted field is not closed", path, e.file_line));
  } catch (const io::error::base& e) {
    // Any other problem the library finds (a line over its 16 MiB limit).
    static const std::regex kFileName(R"( (in|of) file "[^"]*")");
    throw InputError(fmt::format("{}: {}", path, std::regex_replace(e.what(), kFileName, "")));
  }
  if (out.rows_.empty()) throw InputError(path + ": no rows (--kernel-times)");
  return out;
}

void KernelTimes::add_row(const std::string& path, int line, const std::array<std::string, 5>& f,
                          const std::vector<std::string>& known_gpus) {
  constexpr std::array<const char*, 5> kColumns = {"kind", "gpu", "dtype", "shape", "time_us"};
  auto fail = [&](std::size_t c, const std::string& why) {
    throw InputError(fmt::format("{}:{}: {}: {}", path, line, kColumns[c], why));
  };
  for (std::size_t c = 0; c < f.size(); ++c) {
    if (const std::string why = name_problem(f[c]); !why.empty()) fail(c, why);
  }
  const std::optional<KernelKind> kind = parse_kernel_kind(f[0]);
  if (!kind) fail(0, fmt::format("unknown kernel kind '{}' (one of {})", shortened(f[0]), names(kernel_kind_names())));
  const std::string gpu = lower(f[1]);
  if (std::find(known_gpus.begin(), known_gpus.end(), gpu) == known_gpus.end()) {
    fail(1, fmt::format("unknown GPU '{}' (one of {})", shortened(f[1]), names(known_gpus)));
  }
  const std::optional<Dtype> dtype = parse_dtype(f[2]);
  if (!dtype) fail(2, fmt::format("unknown dtype '{}' (one of {})", shortened(f[2]), names(dtype_names())));
  std::string why;
  const std::optional<KernelDesc> shape = parse_shape(*kind, f[3], why);
  if (!shape) fail(3, fmt::format("'{}': {}", shortened(f[3]), why));
  double us = 0.0;
  const auto [end, ec] = std::from_chars(f[4].data(), f[4].data() + f[4].size(), us);
  if (ec != std::errc() || end != f[4].data() + f[4].size() || !std::isfinite(us) || !(us > 0.0) || us > kMaxTimeUs) {
    fail(4, fmt::format("a time must be a number of microseconds above 0 and at most {:g} (1000 s), got '{}'", kMaxTimeUs,
                        shortened(f[4])));
  }
  const Key key{*kind, gpu, *dtype, shape->shape_text()};
  const auto [it, added] = rows_.emplace(key, std::pair<double, int>{us * 1e-6, line});
  if (!added) fail(3, fmt::format("{} {} {} {} is given twice (first on line {})", f[0], f[1], f[2], f[3], it->second.second));
}

std::optional<double> KernelTimes::seconds(const KernelDesc& k, const std::string& gpu) const {
  const auto it = rows_.find(Key{k.kind, gpu, k.dtype, k.shape_text()});
  if (it == rows_.end()) return std::nullopt;
  return it->second.first;
}

}  // namespace acesim
