// Measured kernel times (`--kernel-times FILE`, docs/compute.md): a CSV
// file with the columns kind, gpu, dtype, shape, time_us (any order, more
// columns allowed, `#` lines and blank lines skipped). Where a kernel of
// the run matches a row (its kind, the platform's npu.gpu, its dtype and
// its shape), the row's time replaces the compute model's.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "compute/kernel_desc.h"

namespace acesim {

class KernelTimes {
 public:
  // Throws InputError naming the file, line and column: a missing column
  // or one given twice, a row of more or fewer fields than the header, an
  // unknown kind or dtype or GPU (`known_gpus`), a shape that is not the
  // kind's, a time that is not a number of microseconds in (0, 1e9], a row
  // given twice. Fields may be quoted (RFC 4180); a UTF-8 byte-order mark
  // is skipped (Excel's "CSV UTF-8").
  static constexpr double kMaxTimeUs = 1e9;
  static KernelTimes read(const std::string& path, const std::vector<std::string>& known_gpus);

  // The measured seconds of `k` on `gpu`, if a row gives them.
  std::optional<double> seconds(const KernelDesc& k, const std::string& gpu) const;
  std::size_t size() const { return rows_.size(); }
  const std::string& path() const { return path_; }

 private:
  using Key = std::tuple<KernelKind, std::string, Dtype, std::string>;  // kind, gpu, dtype, canonical shape
  std::string path_;
  std::map<Key, std::pair<double, int>> rows_;  // seconds, line
  void add_row(const std::string& path, int line, const std::array<std::string, 5>& fields, const std::vector<std::string>& known_gpus);
};

}  // namespace acesim
