// PyTorch profiler (Kineto) trace reader (kineto_trace.h).
#include "workload/formats/kineto_trace.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <cstdlib>
#include <new>
#include <cmath>
#include <map>
#include <numeric>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>
#include <zlib.h>

#include "config/input_error.h"

namespace acesim::kineto {
namespace {

std::optional<long long> parse_int(std::string_view s) {
  long long v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// "[0, 1, 2]" (how PyTorch writes "Process Group Ranks") as ranks.
std::optional<std::vector<int>> parse_rank_list(std::string_view s) {
  std::vector<int> out;
  std::size_t i = 0;
  const auto skip = [&] {
    while (i < s.size() && (s[i] == ' ' || s[i] == '[' || s[i] == ']' || s[i] == ',')) ++i;
  };
  skip();
  while (i < s.size()) {
    std::size_t j = i;
    while (j < s.size() && s[j] != ',' && s[j] != ']' && s[j] != ' ') ++j;
    const std::optional<long long> v = parse_int(s.substr(i, j - i));
    if (!v || *v < 0 || *v >= kMaxRanks) return std::nullopt;
    out.push_back(static_cast<int>(*v));
    i = j;
    skip();
  }
  return out;
}

bool is_nccl_kernel(std::string_view name) {
  return name.starts_with("ncclKernel") || name.starts_with("ncclDevKernel") || name.starts_with("void ncclKernel") ||
         name.starts_with("void ncclDevKernel");
}

// A gzip (or plain) file as RapidJSON's input stream, read a megabyte at a
// time. A read error or a truncated gzip member ends the stream early and
// is kept in `error` (the parse then fails where the text stops).
class GzStream {
 public:
  using Ch = char;
  explicit GzStream(gzFile f) : f_(f), buf_(1 << 20) {}
  Ch Peek() {
    if (pos_ == len_) fill();
    return pos_ < len_ ? buf_[pos_] : '\0';
  }
  Ch Take() {
    const Ch c = Peek();
    if (pos_ < len_) {
      ++pos_;
      ++count_;
    }
    return c;
  }
  std::size_t Tell() const { return count_; }
  // Output is never used (the reader parses, it does not parse in place).
  Ch* PutBegin() { return nullptr; }
  void Put(Ch) {}
  void Flush() {}
  std::size_t PutEnd(Ch*) { return 0; }
  const std::string& error() const { return error_; }

 private:
  void fill() {
    pos_ = len_ = 0;
    if (done_) return;
    errno = 0;
    const int n = gzread(f_, buf_.data(), static_cast<unsigned>(buf_.size()));
    const int read_errno = errno;
    int code = Z_OK;
    const char* msg = gzerror(f_, &code);
    if (n < 0 || (code != Z_OK && code != Z_STREAM_END)) {
      error_ = code == Z_BUF_ERROR ? "the gzip data ends early (truncated file)"
               : code == Z_ERRNO   ? fmt::format("cannot read the trace file: {}", read_errno != 0 ? std::strerror(read_errno) : "read error")
                                   : fmt::format("corrupt gzip data ({})", msg != nullptr ? msg : "read error");
      done_ = true;
      return;
    }
    if (n == 0) {
      done_ = true;
      return;
    }
    len_ = static_cast<std::size_t>(n);
    read_ += len_;
    if (read_ > kMaxTraceBytes) {
      error_ = fmt::format("more than {} GiB of JSON", kMaxTraceBytes >> 30);
      done_ = true;
      len_ = 0;
    }
  }
  gzFile f_;
  std::vector<char> buf_;
  std::size_t pos_ = 0, len_ = 0, count_ = 0, read_ = 0;
  bool done_ = false;
  std::string error_;
};

// A trace is a handful of levels deep; RapidJSON's reader recurses per level.
constexpr std::size_t kMaxDepth = 64;
// The reader's token buffer: one string or number of at most 64 MiB.
constexpr std::size_t kMaxTokenBytes = 64ULL << 20;

// RapidJSON's stack allocator, capped: a longer token is refused (an
// InputError, which unwinds through the reader; its stack frees itself).
class CappedAllocator {
 public:
  [[maybe_unused]] static constexpr bool kNeedFree = true;  // RapidJSON's Allocator concept
  void* Malloc(std::size_t size) {
    if (size == 0) return nullptr;
    check(size);
    return must(std::malloc(size));
  }
  void* Realloc(void* p, std::size_t, std::size_t size) {
    if (size == 0) {
      std::free(p);
      return nullptr;
    }
    check(size);
    return must(std::realloc(p, size));
  }
  static void Free(void* p) { std::free(p); }

 private:
  static void check(std::size_t size) {
    if (size > kMaxTokenBytes) throw InputError(fmt::format("a JSON string or number longer than {} MiB", kMaxTokenBytes >> 20));
  }
  static void* must(void* p) {
    if (p == nullptr) throw std::bad_alloc();
    return p;
  }
};

enum class Ctx : std::uint8_t {
  kTop, kTraceEvents, kEvent, kArgs, kArgRanks, kDistributed, kPgConfig, kPg, kPgRanks, kDeviceProps, kDevice, kSkip
};

// The fields of one event the reader keeps, as their text.
struct EventText {
  std::string ph, cat, name, ts, dur, tid;
  std::string device, stream, correlation;
  std::string coll_name, in_nelems, out_nelems, group_size, dtype, pg_name, pg_ranks;
  std::string sync_kind, wait_on_stream, wait_on_record;
  std::vector<int> pg_rank_list;
  bool has_rank_list = false;
  void clear() {
    for (std::string* s : {&ph, &cat, &name, &ts, &dur, &tid, &device, &stream, &correlation, &coll_name, &in_nelems,
                           &out_nelems, &group_size, &dtype, &pg_name, &pg_ranks, &sync_kind, &wait_on_stream, &wait_on_record}) {
      s->clear();
    }
    pg_rank_list.clear();
    has_rank_list = false;
  }
};

class Handler : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, Handler> {
 public:
  explicit Handler(Trace& t) : t_(t) {}

  bool StartObject() {
    if (stack_.size() >= kMaxDepth) return fail(fmt::format("JSON nested deeper than {} levels", kMaxDepth));
    const Ctx c = stack_.empty() ? Ctx::kTop : child(true);
    stack_.push_back(c);
    if (c == Ctx::kEvent) e_.clear();
    if (c == Ctx::kPg) t_.groups.emplace_back();
    key_.clear();
    return true;
  }
  bool EndObject(rapidjson::SizeType) {
    const Ctx c = stack_.back();
    stack_.pop_back();
    if (c == Ctx::kEvent) return event();
    return true;
  }
  bool StartArray() {
    if (stack_.size() >= kMaxDepth) return fail(fmt::format("JSON nested deeper than {} levels", kMaxDepth));
    if (stack_.empty()) return fail("the file is not a JSON object (a PyTorch profiler trace is one)");
    stack_.push_back(child(false));
    key_.clear();
    return true;
  }
  bool EndArray(rapidjson::SizeType) {
    stack_.pop_back();
    return true;
  }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    key_.assign(s, n);
    return true;
  }
  bool String(const char* s, rapidjson::SizeType n, bool) { return scalar(std::string_view(s, n)); }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) { return scalar(std::string_view(s, n)); }
  bool Null() { return true; }
  bool Bool(bool) { return true; }
  // With kParseNumbersAsStringsFlag numbers come as RawNumber; these are
  // never called but keep the handler complete.
  bool Int(int) { return true; }
  bool Uint(unsigned) { return true; }
  bool Int64(std::int64_t) { return true; }
  bool Uint64(std::uint64_t) { return true; }
  bool Double(double) { return true; }

  const std::string& error() const { return error_; }
  std::size_t events() const { return events_; }

 private:
  Ctx child(bool object) const {
    if (stack_.empty()) return Ctx::kSkip;
    switch (stack_.back()) {
      case Ctx::kTop:
        if (!object && key_ == "traceEvents") return Ctx::kTraceEvents;
        if (object && key_ == "distributedInfo") return Ctx::kDistributed;
        if (!object && key_ == "deviceProperties") return Ctx::kDeviceProps;
        return Ctx::kSkip;
      case Ctx::kTraceEvents: return object ? Ctx::kEvent : Ctx::kSkip;
      case Ctx::kEvent: return object && key_ == "args" ? Ctx::kArgs : Ctx::kSkip;
      case Ctx::kArgs: return !object && key_ == "Process Group Ranks" ? Ctx::kArgRanks : Ctx::kSkip;
      case Ctx::kDistributed: return !object && key_ == "pg_config" ? Ctx::kPgConfig : Ctx::kSkip;
      case Ctx::kPgConfig: return object ? Ctx::kPg : Ctx::kSkip;
      case Ctx::kPg: return !object && key_ == "ranks" ? Ctx::kPgRanks : Ctx::kSkip;
      case Ctx::kDeviceProps: return object && t_.device_name.empty() && !seen_device_ ? Ctx::kDevice : Ctx::kSkip;
      default: return Ctx::kSkip;
    }
  }
  bool fail(std::string what) {
    error_ = std::move(what);
    return false;
  }
  bool scalar(std::string_view v) {
    if (stack_.empty()) return fail("the file is not a JSON object (a PyTorch profiler trace is one)");
    switch (stack_.back()) {
      case Ctx::kEvent: event_field(v); break;
      case Ctx::kArgs: arg_field(v); break;
      case Ctx::kArgRanks: {
        const std::optional<long long> r = parse_int(v);
        if (!r || *r < 0 || *r >= kMaxRanks) return fail(fmt::format("{}: args.Process Group Ranks: '{}' is not a rank", where(), v));
        e_.pg_rank_list.push_back(static_cast<int>(*r));
        e_.has_rank_list = true;
        break;
      }
      case Ctx::kDistributed: return distributed_field(v);
      case Ctx::kPg:
        if (key_ == "pg_name" || key_ == "pg_desc") {
          if (const std::string why = name_problem(v); !why.empty()) {
            return fail(fmt::format("distributedInfo.pg_config: {} {} {}", key_, quote(v), why));
          }
        }
        if (key_ == "pg_name") t_.groups.back().name.assign(v);
        if (key_ == "pg_desc") t_.groups.back().description.assign(v);
        break;
      case Ctx::kPgRanks: {
        const std::optional<long long> r = parse_int(v);
        if (!r || *r < 0 || *r >= kMaxRanks) {
          return fail(fmt::format("distributedInfo.pg_config '{}': ranks: '{}' is not a rank", t_.groups.back().name, v));
        }
        t_.groups.back().ranks.push_back(static_cast<int>(*r));
        break;
      }
      case Ctx::kDevice:
        if (key_ == "name") {
          t_.device_name.assign(v);
          seen_device_ = true;
        }
        break;
      default: break;
    }
    return true;
  }
  void event_field(std::string_view v) {
    if (key_ == "ph") e_.ph.assign(v);
    else if (key_ == "cat") e_.cat.assign(v);
    else if (key_ == "name") e_.name.assign(v);
    else if (key_ == "ts") e_.ts.assign(v);
    else if (key_ == "dur") e_.dur.assign(v);
    else if (key_ == "tid") e_.tid.assign(v);
  }
  void arg_field(std::string_view v) {
    if (key_ == "device") e_.device.assign(v);
    else if (key_ == "stream") e_.stream.assign(v);
    else if (key_ == "correlation") e_.correlation.assign(v);
    else if (key_ == "Collective name") e_.coll_name.assign(v);
    else if (key_ == "In msg nelems") e_.in_nelems.assign(v);
    else if (key_ == "Out msg nelems") e_.out_nelems.assign(v);
    else if (key_ == "Group size") e_.group_size.assign(v);
    else if (key_ == "dtype") e_.dtype.assign(v);
    else if (key_ == "Process Group Name") e_.pg_name.assign(v);
    else if (key_ == "Process Group Ranks") e_.pg_ranks.assign(v);
    else if (key_ == "cuda_sync_kind") e_.sync_kind.assign(v);
    else if (key_ == "wait_on_stream") e_.wait_on_stream.assign(v);
    else if (key_ == "wait_on_cuda_event_record_corr_id") e_.wait_on_record.assign(v);
  }
  bool distributed_field(std::string_view v) {
    if (key_ == "backend") t_.backend.assign(v);
    if (key_ != "rank" && key_ != "world_size") return true;
    const std::optional<long long> x = parse_int(v);
    if (!x || *x < (key_ == "rank" ? 0 : 1) || *x > kMaxRanks) {
      return fail(fmt::format("distributedInfo.{}: '{}' is not a {}", key_, v, key_ == "rank" ? "rank" : "number of ranks"));
    }
    (key_ == "rank" ? t_.rank : t_.world_size) = static_cast<int>(*x);
    return true;
  }

  std::string where() const {
    return fmt::format("event '{}'{}", e_.name.size() > 80 ? e_.name.substr(0, 77) + "..." : e_.name,
                       e_.ts.empty() ? std::string() : " at ts " + e_.ts);
  }
  bool need_time(const std::string& text, const char* field, Ns& out) {
    if (text.empty()) return fail(fmt::format("{}: no '{}'", where(), field));
    const std::optional<Ns> v = parse_us(text);
    if (!v) return fail(fmt::format("{}: '{}' is '{}', not a time in microseconds", where(), field, text));
    out = *v;
    return true;
  }
  bool need_int(const std::string& text, const char* field, long long& out) {
    if (text.empty()) return fail(fmt::format("{}: no args.{}", where(), field));
    const std::optional<long long> v = parse_int(text);
    if (!v) return fail(fmt::format("{}: args.{} is '{}', not an integer", where(), field, text));
    out = *v;
    return true;
  }
  // A name reports print (an event's, a group's) is one line of text: a
  // JSON "\u0000" would cut a text report short.
  bool named(const std::string& text, const char* what) {
    if (const std::string why = name_problem(text); !why.empty()) {
      return fail(fmt::format("event at ts {}: its {} {} {}", e_.ts.empty() ? "?" : e_.ts, what, quote(text), why));
    }
    return true;
  }
  std::uint32_t intern(const std::string& name) {
    const auto [it, added] = ids_.try_emplace(name, static_cast<std::uint32_t>(t_.names.size()));
    if (added) t_.names.push_back(name);
    return it->second;
  }
  bool times(Ns& ts, Ns& dur) {
    if (!need_time(e_.ts, "ts", ts) || !need_time(e_.dur, "dur", dur)) return false;
    if (dur < 0) return fail(fmt::format("{}: negative duration {} us", where(), e_.dur));
    return true;
  }
  bool event() {
    if (++events_ > kMaxEvents) return fail(fmt::format("more than {} events", kMaxEvents));
    if (e_.ph != "X") return true;  // flows, instants, metadata
    const std::string& c = e_.cat;
    if (c == "kernel" || c == "gpu_memcpy" || c == "gpu_memset") return gpu_event();
    if (c == "cuda_runtime" || c == "cuda_driver") {
      RuntimeCall r;
      if (!times(r.ts, r.dur) || !need_int(e_.correlation, "correlation", r.correlation) || !named(e_.name, "name")) return false;
      r.name = intern(e_.name);
      r.driver = c == "cuda_driver";
      r.tid = parse_int(e_.tid).value_or(0);
      t_.runtime.push_back(r);
      return true;
    }
    if (c == "cuda_sync" && (e_.sync_kind == "Stream Wait Event" || (e_.sync_kind.empty() && e_.name == "Stream Wait Event"))) {
      StreamWait w;
      long long device = 0;
      Ns dur = 0;
      if (!times(w.ts, dur) || !need_int(e_.device, "device", device) || !need_int(e_.stream, "stream", w.stream) ||
          !need_int(e_.correlation, "correlation", w.correlation) || !need_int(e_.wait_on_stream, "wait_on_stream", w.on_stream) ||
          !need_int(e_.wait_on_record, "wait_on_cuda_event_record_corr_id", w.record_correlation)) {
        return false;
      }
      if (device < 0 || device > 1024) return fail(fmt::format("{}: args.device {} is not a GPU index", where(), device));
      w.device = static_cast<int>(device);
      if (w.record_correlation >= 0 && w.on_stream >= 0) {
        t_.stream_waits.push_back(w);
      } else {
        ++t_.stream_waits_dropped;  // -1: the event's record is unknown
      }
      return true;
    }
    if (e_.name.starts_with("ProfilerStep#") && c != "gpu_user_annotation") {
      Step s;
      if (!times(s.ts, s.dur)) return false;
      const std::optional<long long> n = parse_int(std::string_view(e_.name).substr(13));
      if (!n || *n < 0) return fail(fmt::format("{}: the step number is not a whole number", where()));
      s.number = *n;
      t_.steps.push_back(s);
    }
    return true;
  }
  bool gpu_event() {
    GpuActivity a;
    a.kind = e_.cat == "kernel" ? GpuKind::kKernel : e_.cat == "gpu_memcpy" ? GpuKind::kMemcpy : GpuKind::kMemset;
    long long device = 0;
    if (!times(a.ts, a.dur) || !need_int(e_.device, "device", device) || !need_int(e_.stream, "stream", a.stream) ||
        !need_int(e_.correlation, "correlation", a.correlation)) {
      return false;
    }
    if (device < 0 || device > 1024) return fail(fmt::format("{}: args.device {} is not a GPU index", where(), device));
    a.device = static_cast<int>(device);
    if (!named(e_.name, "name") || !named(e_.coll_name, "args.Collective name") || !named(e_.pg_name, "args.Process Group Name")) {
      return false;
    }
    a.name = intern(e_.name);
    a.nccl = is_nccl_kernel(e_.name);
    if (!e_.coll_name.empty()) {
      Collective k;
      k.name = e_.coll_name;
      k.dtype = e_.dtype;
      k.group_name = e_.pg_name;
      const auto count = [&](const std::string& text, const char* field, long long& out) {
        if (text.empty()) return true;
        const std::optional<long long> v = parse_int(text);
        if (!v || *v < 0) return fail(fmt::format("{}: args.{} is '{}', not a count", where(), field, text));
        out = *v;
        return true;
      };
      long long size = -1;
      if (!count(e_.in_nelems, "In msg nelems", k.in_elements) || !count(e_.out_nelems, "Out msg nelems", k.out_elements) ||
          !count(e_.group_size, "Group size", size)) {
        return false;
      }
      if (size > kMaxRanks) return fail(fmt::format("{}: args.Group size {} is too large", where(), size));
      k.group_size = static_cast<int>(size);
      if (e_.has_rank_list) {
        k.group_ranks = e_.pg_rank_list;
      } else if (!e_.pg_ranks.empty()) {
        const auto ranks = parse_rank_list(e_.pg_ranks);
        if (!ranks) return fail(fmt::format("{}: args.Process Group Ranks '{}' is not a list of ranks", where(), e_.pg_ranks));
        k.group_ranks = *ranks;
      }
      a.collective = std::move(k);
    }
    t_.gpu.push_back(std::move(a));
    return true;
  }

  Trace& t_;
  std::vector<Ctx> stack_;
  std::string key_;
  EventText e_;
  std::unordered_map<std::string, std::uint32_t> ids_;
  std::string error_;
  std::size_t events_ = 0;
  bool seen_device_ = false;
};

std::string fmt_us(Ns ns) {
  const Ns a = ns < 0 ? -ns : ns;
  return fmt::format("{}{}.{:03d}", ns < 0 ? "-" : "", a / 1000, static_cast<int>(a % 1000));
}

// Drops each event of `v` (in time order) whose key equals an earlier
// one's; returns how many. Only events of one timestamp can be equal, so
// each run of one timestamp is sorted by key on its own.
template <typename T, typename Key>
long long drop_duplicates(std::vector<T>& v, Key key) {
  std::vector<bool> copy;
  long long copies = 0;
  std::vector<std::size_t> run;
  for (std::size_t begin = 0, end = 0; begin < v.size(); begin = end) {
    end = begin + 1;
    while (end < v.size() && v[end].ts == v[begin].ts) ++end;
    if (end - begin < 2) continue;
    run.resize(end - begin);
    std::iota(run.begin(), run.end(), begin);
    std::sort(run.begin(), run.end(), [&](std::size_t a, std::size_t b) {
      const auto ka = key(v[a]), kb = key(v[b]);
      return ka != kb ? ka < kb : a < b;
    });
    for (std::size_t i = 1; i < run.size(); ++i) {
      if (key(v[run[i]]) == key(v[run[i - 1]])) {
        if (copy.empty()) copy.assign(v.size(), false);
        copy[run[i]] = true;
        ++copies;
      }
    }
  }
  if (copies == 0) return 0;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (copy[i]) continue;
    if (kept != i) v[kept] = std::move(v[i]);
    ++kept;
  }
  v.erase(v.begin() + static_cast<std::ptrdiff_t>(kept), v.end());
  return copies;
}

// What the parse leaves for the checks across events, and the repairs.
void check(Trace& t) {
  if (t.gpu.empty()) {
    throw InputError(t.file + ": no GPU activity (kernel, gpu_memcpy or gpu_memset events): profile with "
                              "ProfilerActivity.CUDA");
  }
  if (t.rank >= 0 && t.world_size > 0 && t.rank >= t.world_size) {
    throw InputError(fmt::format("{}: distributedInfo.rank {} is not below world_size {}", t.file, t.rank, t.world_size));
  }
  for (const ProcessGroup& g : t.groups) {
    for (int r : g.ranks) {
      if (t.world_size > 0 && r >= t.world_size) {
        throw InputError(fmt::format("{}: process group '{}' names rank {}, but world_size is {}", t.file, g.name, r, t.world_size));
      }
    }
  }
  // What a replay holds in picoseconds: a trace of at most a day.
  constexpr Ns kMaxSpanNs = 86'400'000'000'000LL;
  Ns earliest = t.gpu.front().ts, latest = earliest;
  const auto span = [&](Ns ts, Ns dur) {
    earliest = std::min(earliest, ts);
    latest = std::max(latest, ts + dur);
  };
  for (const GpuActivity& a : t.gpu) span(a.ts, a.dur);
  for (const RuntimeCall& r : t.runtime) span(r.ts, r.dur);
  for (const Step& s : t.steps) span(s.ts, s.dur);
  if (latest - earliest > kMaxSpanNs) {
    throw InputError(fmt::format("{}: its events span {} us, more than a day (a stray timestamp?)", t.file, fmt_us(latest - earliest)));
  }
  const auto by_time = [](const auto& a, const auto& b) { return a.ts < b.ts; };
  std::stable_sort(t.gpu.begin(), t.gpu.end(), by_time);
  std::stable_sort(t.runtime.begin(), t.runtime.end(), by_time);
  std::stable_sort(t.steps.begin(), t.steps.end(), by_time);
  // Events written twice: the copies dropped.
  Repairs& fix = t.repairs;
  fix.duplicate_activities = drop_duplicates(t.gpu, [](const GpuActivity& a) {
    return std::tuple(a.ts, a.dur, a.device, a.stream, a.correlation, a.kind, a.name);
  });
  fix.duplicate_calls = drop_duplicates(t.runtime, [](const RuntimeCall& r) {
    return std::tuple(r.ts, r.dur, r.correlation, r.tid, r.name, r.driver);
  });
  fix.duplicate_steps = drop_duplicates(t.steps, [](const Step& s) { return std::tuple(s.ts, s.dur, s.number); });
  // One stream runs one thing at a time: an activity that starts before the
  // work ahead of it on its stream ends is replayed after it (kineto_replay.h).
  std::map<std::pair<int, long long>, Ns> stream_end;
  for (const GpuActivity& a : t.gpu) {
    const auto [it, first] = stream_end.try_emplace({a.device, a.stream}, a.ts + a.dur);
    if (!first) {
      if (a.ts < it->second) {
        ++fix.overlapping;
        fix.largest_overlap = std::max(fix.largest_overlap, it->second - a.ts);
      }
      it->second = std::max(it->second, a.ts + a.dur);
    }
  }
  // A GPU activity whose launch is not in the trace (launched before the
  // profiling window opened) is replayed from its traced start.
  std::unordered_set<long long> launched;
  launched.reserve(t.runtime.size());
  for (const RuntimeCall& r : t.runtime) launched.insert(r.correlation);
  for (const GpuActivity& a : t.gpu) {
    if (launched.count(a.correlation) == 0) ++fix.unlaunched;
  }
  // A wait whose call or event record is outside the trace (a profiling
  // window that opened after the record) names nothing to wait for.
  const std::size_t waits = t.stream_waits.size();
  std::erase_if(t.stream_waits, [&](const StreamWait& w) {
    return launched.count(w.correlation) == 0 || launched.count(w.record_correlation) == 0;
  });
  t.stream_waits_dropped += static_cast<long long>(waits - t.stream_waits.size());
  std::stable_sort(t.stream_waits.begin(), t.stream_waits.end(), by_time);
  fix.duplicate_waits = drop_duplicates(t.stream_waits, [](const StreamWait& w) {
    return std::tuple(w.ts, w.device, w.stream, w.on_stream, w.correlation, w.record_correlation);
  });
  for (std::size_t i = 1; i < t.steps.size(); ++i) {
    if (t.steps[i].number <= t.steps[i - 1].number) {
      throw InputError(fmt::format("{}: ProfilerStep#{} at ts {} comes after ProfilerStep#{}", t.file, t.steps[i].number,
                                   fmt_us(t.steps[i].ts), t.steps[i - 1].number));
    }
  }
}

template <typename Stream>
Trace parse(Stream& s, const std::string& file, const std::string* stream_error_of = nullptr) {
  Trace t;
  t.file = file;
  Handler h(t);
  CappedAllocator allocator;
  rapidjson::GenericReader<rapidjson::UTF8<>, rapidjson::UTF8<>, CappedAllocator> reader(&allocator);
  rapidjson::ParseResult r;
  try {
    r = reader.Parse<rapidjson::kParseNumbersAsStringsFlag | rapidjson::kParseValidateEncodingFlag>(s, h);
  } catch (const InputError& e) {
    throw InputError(file + ": " + e.what());
  }
  if (stream_error_of != nullptr && !stream_error_of->empty()) throw InputError(file + ": " + *stream_error_of);
  if (!h.error().empty()) throw InputError(file + ": " + h.error());
  if (r.IsError()) {
    throw InputError(fmt::format("{}: byte {}: bad JSON: {}", file, r.Offset(), rapidjson::GetParseError_En(r.Code())));
  }
  check(t);
  return t;
}

}  // namespace

Repairs& Repairs::operator+=(const Repairs& o) {
  duplicate_activities += o.duplicate_activities;
  duplicate_calls += o.duplicate_calls;
  duplicate_steps += o.duplicate_steps;
  duplicate_waits += o.duplicate_waits;
  overlapping += o.overlapping;
  largest_overlap = std::max(largest_overlap, o.largest_overlap);
  unlaunched += o.unlaunched;
  return *this;
}

std::string_view to_string(GpuKind k) {
  switch (k) {
    case GpuKind::kKernel: return "kernel";
    case GpuKind::kMemcpy: return "gpu_memcpy";
    case GpuKind::kMemset: return "gpu_memset";
  }
  return "?";
}

std::optional<Ns> parse_us(std::string_view s) {
  if (s.empty() || s.size() > 40) return std::nullopt;
  const bool neg = s.front() == '-';
  std::string_view body = neg ? s.substr(1) : s;
  if (body.find_first_of("eE") != std::string_view::npos) {
    double v = 0.0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v) || std::abs(v) >= 4e15) return std::nullopt;
    return static_cast<Ns>(std::llround(v * 1000.0));
  }
  const std::size_t dot = body.find('.');
  const std::string_view whole = body.substr(0, dot);
  std::string_view frac = dot == std::string_view::npos ? std::string_view() : body.substr(dot + 1);
  if (whole.empty() || whole.size() > 16) return std::nullopt;
  const std::optional<long long> w = parse_int(whole);
  // Below 4 x 10^15 us (epoch microseconds, as some traces write them): int64 ns holds it, and sums of two.
  if (!w || *w < 0 || *w >= 4'000'000'000'000'000LL || whole.front() == '+' || whole.front() == '-') return std::nullopt;
  Ns ns = *w * 1000;
  if (dot != std::string_view::npos) {
    if (frac.empty() || frac.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
    long long scale = 100;
    for (std::size_t i = 0; i < frac.size() && i < 3; ++i, scale /= 10) ns += (frac[i] - '0') * scale;
    if (frac.size() > 3 && frac[3] >= '5') ++ns;  // to the nearest nanosecond
  }
  return neg ? -ns : ns;
}

Trace parse_trace(std::string_view json, const std::string& file) {
  rapidjson::MemoryStream s(json.data(), json.size());
  return parse(s, file);
}

std::string why_not_a_trace_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec) {
    std::error_code link_ec;
    const bool link = fs::is_symlink(fs::symlink_status(path, link_ec));
    if (ec == std::errc::too_many_symbolic_link_levels) return "not a trace file: a symbolic link that loops";
    if (link && ec == std::errc::no_such_file_or_directory) {
      const fs::path to = fs::read_symlink(path, link_ec);
      return fmt::format("not a trace file: a symbolic link to '{}', which does not exist", link_ec ? std::string("?") : to.string());
    }
    return "cannot open the trace file: " + ec.message();
  }
  switch (st.type()) {
    case fs::file_type::regular: return "";
    case fs::file_type::directory: return "not a trace file: a directory";
    case fs::file_type::fifo: return "not a trace file: a FIFO (named pipe)";
    case fs::file_type::character: return "not a trace file: a character device";
    case fs::file_type::block: return "not a trace file: a block device";
    case fs::file_type::socket: return "not a trace file: a socket";
    default: return "not a trace file: not a regular file";
  }
}

Trace read_trace_file(const std::string& path) {
  if (const std::string why = why_not_a_trace_file(path); !why.empty()) throw InputError(path + ": " + why);
  errno = 0;
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) {
    throw InputError(fmt::format("{}: cannot open the trace file: {}", path, errno != 0 ? std::strerror(errno) : "out of memory"));
  }
  struct Closer {
    gzFile f;
    ~Closer() { gzclose(f); }
  } closer{f};
  gzbuffer(f, 1 << 20);
  GzStream s(f);
  return parse(s, path, &s.error());
}

}  // namespace acesim::kineto
