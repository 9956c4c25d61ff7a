#include "compute/kernel_times.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "config/csv_reader.h"
#include "config/input_error.h"
#include "config/platform.h"
#include "config/units.h"

namespace acesim {
namespace {

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
  // Column names match whatever their case: the header line is read in lower case.
  const int header_line = find_csv_header(text, true).line;
  KernelTimes out;
  out.path_ = path;
  if (header_line == 0) throw InputError(path + ": no header line (the header needs kind, gpu, dtype, shape, time_us)");
  read_csv_rows(path, text, header_line, kColumns,
                [&](int line, const std::array<std::string, 5>& f) { out.add_row(path, line, f, known_gpus); });
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
