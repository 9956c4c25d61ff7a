// Measured kernel times (`--kernel-times FILE`, docs/compute.md): a CSV
// file with the columns kind, gpu, dtype, shape, time_us (any order, more
// columns allowed, `#` lines and blank lines skipped). Where a kernel of
// the run matches a row (its kind, the platform's npu.gpu, its dtype and
// its shape), the row's time replaces the compute model's.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "compute/kernel_desc.h"

namespace acesim {

class KernelTimes {
 public:
  // Throws InputError naming the file, line and column: a missing column,
  // an unknown kind or dtype or GPU (`known_gpus`), a shape that is not
  // the kind's, a time that is not a finite number > 0, a row given twice.
  static KernelTimes read(const std::string& path, const std::vector<std::string>& known_gpus);

  // The measured seconds of `k` on `gpu`, if a row gives them.
  std::optional<double> seconds(const KernelDesc& k, const std::string& gpu) const;
  std::size_t size() const { return rows_.size(); }
  const std::string& path() const { return path_; }

 private:
  using Key = std::tuple<KernelKind, std::string, Dtype, std::string>;  // kind, gpu, dtype, canonical shape
  std::string path_;
  std::map<Key, std::pair<double, int>> rows_;  // seconds, line
};

}  // namespace acesim
