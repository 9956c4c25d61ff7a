#include "compute/kernel_times.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "config/data_table.h"
#include "config/input_error.h"
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
  const DataTable t = read_data_table(path, " (--kernel-times)");
  constexpr std::array<const char*, 5> kColumns = {"kind", "gpu", "dtype", "shape", "time_us"};
  std::array<std::size_t, 5> col{};
  for (std::size_t c = 0; c < kColumns.size(); ++c) {
    std::size_t i = 0;
    while (i < t.header.size() && lower(trim(t.header[i])) != kColumns[c]) ++i;
    if (i == t.header.size()) {
      throw InputError(fmt::format("{}: missing column '{}' (the header needs kind, gpu, dtype, shape, time_us)", path, kColumns[c]));
    }
    col[c] = i;
  }
  KernelTimes out;
  out.path_ = path;
  for (const DataTable::Row& r : t.rows) {
    auto field = [&](std::size_t c) { return trim(r.fields[col[c]]); };
    auto fail = [&](std::size_t c, const std::string& why) {
      throw InputError(fmt::format("{}:{}: column {} ({}): {}", path, r.line, col[c] + 1, kColumns[c], why));
    };
    const std::optional<KernelKind> kind = parse_kernel_kind(field(0));
    if (!kind) fail(0, fmt::format("unknown kernel kind '{}' (one of {})", field(0), names(kernel_kind_names())));
    const std::string gpu = lower(field(1));
    if (std::find(known_gpus.begin(), known_gpus.end(), gpu) == known_gpus.end()) {
      fail(1, fmt::format("unknown GPU '{}' (one of {})", field(1), names(known_gpus)));
    }
    const std::optional<Dtype> dtype = parse_dtype(field(2));
    if (!dtype) fail(2, fmt::format("unknown dtype '{}' (one of {})", field(2), names(dtype_names())));
    std::string why;
    const std::optional<KernelDesc> shape = parse_shape(*kind, field(3), why);
    if (!shape) fail(3, fmt::format("'{}': {}", field(3), why));
    const std::string time = field(4);
    double us = 0.0;
    try {
      std::size_t used = 0;
      us = std::stod(time, &used);
      if (used != time.size()) us = -1.0;
    } catch (const std::exception&) {
      us = -1.0;
    }
    if (!(us > 0.0) || !std::isfinite(us)) fail(4, fmt::format("a time must be a finite number of microseconds > 0, got '{}'", time));
    const Key key{*kind, gpu, *dtype, shape->shape_text()};
    const auto [it, added] = out.rows_.emplace(key, std::pair<double, int>{us * 1e-6, r.line});
    if (!added) fail(3, fmt::format("{} {} {} {} is given twice (first on line {})", field(0), field(1), field(2), field(3), it->second.second));
  }
  return out;
}

std::optional<double> KernelTimes::seconds(const KernelDesc& k, const std::string& gpu) const {
  const auto it = rows_.find(Key{k.kind, gpu, k.dtype, k.shape_text()});
  if (it == rows_.end()) return std::nullopt;
  return it->second.first;
}

}  // namespace acesim
