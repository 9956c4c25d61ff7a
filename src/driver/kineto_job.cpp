#include "driver/kineto_job.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/input_error.h"

namespace acesim {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// A process group that names data parallelism (Megatron-LM's and NeMo's
// descriptions, torch DeviceMesh's dimension names): 2 exactly
// (DATA_PARALLEL_GROUP, "dp"), 1 in part but not a product with another
// dimension (TENSOR_AND_DATA_PARALLEL_GROUP, DATA_PARALLEL_GROUP_WITH_CP,
// dp_shard_cp are not), else 0.
int names_data_parallel(const kineto::ProcessGroup& g) {
  int best = 0;
  for (const std::string& s : {lower(g.description), lower(g.name)}) {
    if (s == "data_parallel_group" || s == "dp") return 2;
    const bool dp = s.find("data_parallel") != std::string::npos || s.find("data parallel") != std::string::npos ||
                    s.starts_with("dp_") || s.ends_with("_dp");
    bool product = false;
    for (const char* other : {"tensor", "expert", "context", "pipeline", "model", "_cp", "cp_"}) {
      product = product || s.find(other) != std::string::npos;
    }
    if (dp && !product) best = 1;
  }
  return best;
}

bool names_pipeline(const kineto::ProcessGroup& g) {
  for (const std::string& s : {lower(g.description), lower(g.name)}) {
    if (s == "pipeline_model_parallel_group" || s == "pp" || s == "pipeline_parallel_group") return true;
  }
  return false;
}

std::string group_label(const kineto::ProcessGroup& g) {
  return g.description.empty() ? fmt::format("'{}'", g.name) : fmt::format("'{}' ({})", g.name, g.description);
}

std::optional<long long> whole_number(std::string_view s) {
  long long v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

}  // namespace

std::vector<Rank> parse_gpu_list(const std::string& flag, const std::string& text, long long npus) {
  std::vector<Rank> out;
  std::set<Rank> seen;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    const std::size_t dash = item.find('-', 1);
    const std::optional<long long> a = whole_number(item.substr(0, dash));
    const std::optional<long long> b = dash == std::string::npos ? a : whole_number(item.substr(dash + 1));
    if (!a || !b || *a < 0 || *b < *a) {
      throw InputError(fmt::format("{}: '{}' is not a GPU or a range of GPUs A-B (in '{}')", flag, item, text));
    }
    if (*b >= npus) throw InputError(fmt::format("{}: GPU {} is not on the platform, which has GPUs 0-{}", flag, *b, npus - 1));
    for (long long g = *a; g <= *b; ++g) {
      if (!seen.insert(static_cast<Rank>(g)).second) throw InputError(fmt::format("{}: GPU {} is named twice", flag, g));
      out.push_back(static_cast<Rank>(g));
    }
    pos = comma + 1;
  }
  return out;
}

KinetoJob::KinetoJob(const std::vector<kineto::Trace>& traces, const PlatformConfig& platform, const KinetoJobOptions& o) {
  if (traces.empty()) throw std::logic_error("KinetoJob: no trace");
  const kineto::Trace& first = traces.front();
  traced_world_ = std::max(1, first.world_size);
  one_for_all_ = traces.size() == 1;
  groups_ = first.groups;
  std::map<int, const kineto::Trace*> by_rank;
  for (const kineto::Trace& t : traces) {
    if (std::max(1, t.world_size) != traced_world_) {
      throw InputError(fmt::format("{}: distributedInfo.world_size is {}, but {}'s is {}: the traces are of different jobs", t.file,
                                   std::max(1, t.world_size), first.file, traced_world_));
    }
    if (traces.size() > 1) {
      if (t.rank < 0 || t.world_size <= 0) {
        throw InputError(t.file + ": no distributedInfo.rank and world_size: with several traces, each must say whose it is");
      }
      const auto [it, fresh] = by_rank.emplace(t.rank, &t);
      if (!fresh) throw InputError(fmt::format("{}: rank {} is traced twice (also in {})", t.file, t.rank, it->second->file));
    }
    // Every rank runs the same steps.
    for (std::size_t k = 0; k < std::max(t.steps.size(), first.steps.size()); ++k) {
      if (k < t.steps.size() && k < first.steps.size() && t.steps[k].number == first.steps[k].number) continue;
      if (k < t.steps.size()) {
        throw InputError(fmt::format("{}: event 'ProfilerStep#{}' at ts {:.3f}: {} has {} there: the ranks' traces hold different steps",
                                     t.file, t.steps[k].number, static_cast<double>(t.steps[k].ts) / 1e3, first.file,
                                     k < first.steps.size() ? fmt::format("ProfilerStep#{}", first.steps[k].number) : "no step"));
      }
      throw InputError(fmt::format("{}: ends after {} steps, where {} has ProfilerStep#{} (at ts {:.3f}): the ranks' traces hold different steps",
                                   t.file, t.steps.size(), first.file, first.steps[k].number,
                                   static_cast<double>(first.steps[k].ts) / 1e3));
    }
  }

  // --dp N: the data-parallel group.
  world_ = traced_world_;
  if (o.dp < 0) throw InputError(fmt::format("--dp: {} is not a number of ranks", o.dp));
  if (o.dp > 0) {
    std::vector<int> ranks;
    std::string label;
    int best = 0;  // names_data_parallel: the exact name first, then the smallest group
    for (const kineto::ProcessGroup& g : first.groups) {
      const int score = names_data_parallel(g);
      if (score > 0 && (score > best || (score == best && g.ranks.size() < ranks.size()))) {
        best = score;
        ranks = g.ranks;
        label = "process group " + group_label(g);
      }
    }
    if (ranks.empty()) {
      for (int r = 0; r < traced_world_; ++r) ranks.push_back(r);
      label = "the whole job (no process group of the trace names data parallelism)";
    }
    std::sort(ranks.begin(), ranks.end());
    dp_size_ = static_cast<long long>(ranks.size());
    dp_stride_ = dp_size_ > 1 ? ranks[1] - ranks[0] : traced_world_;
    if (dp_size_ == 1) {
      // No data parallelism traced: the new dimension goes where Megatron-LM
      // has it, inside the pipeline stages (outermost without them).
      for (const kineto::ProcessGroup& g : first.groups) {
        if (names_pipeline(g) && !g.ranks.empty() && traced_world_ % static_cast<long long>(g.ranks.size()) == 0) {
          dp_stride_ = traced_world_ / static_cast<long long>(g.ranks.size());
        }
      }
    }
    bool regular = dp_stride_ > 0 && traced_world_ % (dp_stride_ * dp_size_) == 0 && ranks[0] % (dp_stride_ * dp_size_) < dp_stride_;
    for (std::size_t i = 1; i < ranks.size() && regular; ++i) regular = ranks[i] - ranks[i - 1] == dp_stride_;
    if (!regular) {
      throw InputError(fmt::format("--dp: the data-parallel group, {}, has ranks [{}], which are not every {}-th rank of a block of the job: "
                                   "its groups cannot be widened", label, fmt::join(ranks, ", "), dp_stride_));
    }
    dp_new_ = o.dp;
    dp_changed_ = dp_new_ != dp_size_;
    world_ = traced_world_ / dp_size_ * dp_new_;
    if (world_ > kineto::kMaxRanks) throw InputError(fmt::format("--dp: a job of {} ranks is too large (at most {})", world_, kineto::kMaxRanks));
    assumptions_.push_back(fmt::format("--dp {}: the data-parallel group, {}, {} ranks{}, made {} wide: a job of {} ranks; every rank's "
                                       "compute and each collective's bytes as traced",
                                       dp_new_, label, dp_size_, dp_stride_ > 1 ? fmt::format(" {} apart", dp_stride_) : "", dp_new_, world_));
  }
  for (const kineto::Trace& t : traces) {
    const long long r = map_rank(t.world_size > 0 ? std::max(0, t.rank) : 0);
    if (traces.size() > 1) {
      for (std::size_t i = 0; i < job_rank_.size(); ++i) {
        if (job_rank_[i] == r) {
          throw InputError(fmt::format("--dp {}: {} and {} both become rank {} of the narrower job: give one of them", dp_new_, traces[i].file,
                                       t.file, r));
        }
      }
    }
    job_rank_.push_back(r);
  }

  long long npus = 1;
  for (const DimensionSpec& d : platform.dims) npus *= d.npus;
  npus_ = static_cast<std::size_t>(npus);
  if (npus < world_) {
    throw InputError(fmt::format("{}: the job has {} ranks ({}), but the platform has {} GPUs", first.file, world_,
                                 dp_changed_ ? fmt::format("with --dp {}", dp_new_) : "distributedInfo.world_size", npus));
  }

  // Placement.
  gpu_of_.resize(static_cast<std::size_t>(world_));
  const std::string& p = o.placement;
  if (p.empty() || p == "packed") {
    for (long long j = 0; j < world_; ++j) gpu_of_[static_cast<std::size_t>(j)] = static_cast<Rank>(j);
  } else if (p == "spread") {
    const long long per_node = platform.dims.empty() ? 1 : platform.dims.front().npus;
    const long long nodes = npus / per_node;
    for (long long j = 0; j < world_; ++j) gpu_of_[static_cast<std::size_t>(j)] = static_cast<Rank>((j % nodes) * per_node + j / nodes);
    placement_ = fmt::format("spread (rank j on node j mod {}, {} GPUs a node)", nodes, per_node);
  } else {
    if (p.find_first_not_of("0123456789,- ") != std::string::npos) {
      throw InputError("--placement: '" + p + "' is not packed, spread or a list of GPUs like 0-3,8-11");
    }
    std::string list = p;
    std::erase(list, ' ');
    const std::vector<Rank> gpus = parse_gpu_list("--placement", list, npus);
    if (static_cast<long long>(gpus.size()) != world_) {
      throw InputError(fmt::format("--placement: {} GPUs listed for a job of {} ranks", gpus.size(), world_));
    }
    gpu_of_ = gpus;
    placement_ = "GPUs " + p;
  }
}

long long KinetoJob::map_rank(long long r) const {
  if (!dp_changed_) return r;
  const long long low = r % dp_stride_, d = (r / dp_stride_) % dp_size_, high = r / (dp_stride_ * dp_size_);
  return low + dp_stride_ * (d % dp_new_ + dp_new_ * high);
}

std::vector<Rank> KinetoJob::group_gpus(const std::vector<int>& trace_ranks, const std::string& name) const {
  std::vector<Rank> out;
  for (Rank r : group_ranks(trace_ranks, name)) out.push_back(gpu_of_[static_cast<std::size_t>(r)]);
  std::sort(out.begin(), out.end());
  return out;
}

bool KinetoJob::default_group(const std::string& name) const {
  for (const kineto::ProcessGroup& g : groups_) {
    if (g.name == name) return g.description == "default_pg";
  }
  return name == "0";  // PyTorch's name for the default group
}

std::vector<Rank> KinetoJob::group_ranks(const std::vector<int>& trace_ranks, const std::string& name) const {
  std::vector<Rank> ranks;
  std::vector<int> sorted = trace_ranks;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  const auto is_dp_group = [&] {
    if (static_cast<long long>(sorted.size()) != dp_size_) return false;
    const long long r = sorted.front();
    const long long base = (r / (dp_stride_ * dp_size_)) * (dp_stride_ * dp_size_) + r % dp_stride_;
    for (long long i = 0; i < dp_size_; ++i) {
      if (sorted[static_cast<std::size_t>(i)] != base + i * dp_stride_) return false;
    }
    return true;
  };
  if (!dp_changed_) {
    for (int r : sorted) ranks.push_back(static_cast<Rank>(r));
  } else if (static_cast<long long>(sorted.size()) == traced_world_ && (dp_size_ > 1 || default_group(name))) {
    // The whole job (with no data parallelism traced, a group of every rank
    // is the whole job only by name: it may be the tensor-parallel group).
    for (long long r = 0; r < world_; ++r) ranks.push_back(static_cast<Rank>(r));
  } else if (is_dp_group()) {
    const long long r = sorted.front();
    const long long low = r % dp_stride_, high = r / (dp_stride_ * dp_size_);
    for (long long i = 0; i < dp_new_; ++i) ranks.push_back(static_cast<Rank>(low + dp_stride_ * (i + dp_new_ * high)));
  } else {
    for (int r : sorted) ranks.push_back(static_cast<Rank>(map_rank(r)));
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}

}  // namespace acesim
