// Sweeps under mpirun (cli/sweep.h): rank 0 reads the grid, hands the
// points out to whichever rank asks, a batch at a time (guided: a share of
// what is left, so batches shrink towards the end and ranks finish
// together), and writes the output directory; every rank runs points, rank 0 on a thread beside its
// dispatching. The points' order in the files does not depend on who ran
// them, so results.csv is the one a single process writes.
//
// Open MPI is loaded with dlopen() when the process finds itself under
// mpirun, not linked: every other command starts without loading libmpi and
// the libraries it pulls in (docs/performance.md, "Start-up"), and the
// executable runs where Open MPI is not installed.
#include <cstdlib>
#include <string>

#include "cli/sweep.h"
#include "config/input_error.h"

#if ACESIM_HAVE_MPI
#include <dlfcn.h>
// The C API only (Open MPI would also declare its deprecated C++ bindings).
#define OMPI_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <cstdio>
#include <optional>
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "config/platform.h"
#endif

namespace acesim::cli::sweep {
namespace {

// Open MPI's launchers set these in every rank's environment.
long launched_ranks() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"}) {
    if (const char* v = std::getenv(var)) return std::strtol(v, nullptr, 10);
  }
  return 0;
}

}  // namespace

#if !ACESIM_HAVE_MPI

bool under_mpi() {
  if (launched_ranks() > 1) {
    throw InputError("sweep: started under mpirun, but this acesim was built without MPI (install Debian's libopenmpi-dev "
                     "and build again); every rank would run the whole sweep");
  }
  return false;
}
int mpi_rank() { return 0; }
SweepSummary run_sweep_mpi(const SweepRequest&) { throw InputError("sweep: acesim was built without MPI"); }

#else

namespace {

// The functions of libmpi acesim calls, looked up in the loaded library.
struct Mpi {
  decltype(&MPI_Init_thread) init_thread = nullptr;
  decltype(&MPI_Finalize) finalize = nullptr;
  decltype(&MPI_Comm_rank) comm_rank = nullptr;
  decltype(&MPI_Comm_size) comm_size = nullptr;
  decltype(&MPI_Bcast) bcast = nullptr;
  decltype(&MPI_Send) send = nullptr;
  decltype(&MPI_Recv) recv = nullptr;
  decltype(&MPI_Probe) probe = nullptr;
  decltype(&MPI_Iprobe) iprobe = nullptr;
  decltype(&MPI_Get_count) get_count = nullptr;
  decltype(&MPI_Abort) abort = nullptr;
  MPI_Comm world = nullptr;
  MPI_Datatype chars = nullptr;
  MPI_Datatype ull = nullptr;
  MPI_Datatype ints = nullptr;
  int rank = 0;
  int size = 1;
  bool initialized = false;

  ~Mpi() {
    if (initialized) finalize();
  }
};

template <typename T>
void look_up(void* lib, T& f, const char* name) {
  f = reinterpret_cast<T>(dlsym(lib, name));
  if (f == nullptr) throw std::runtime_error(std::string("libmpi has no ") + name);
}

Mpi& mpi() {
  static Mpi m = [] {
    Mpi x;
    if (launched_ranks() == 0) return x;
    // Open MPI's components are libraries libmpi loads in turn: they need
    // its symbols global.
    void* lib = dlopen(ACESIM_MPI_LIBRARY, RTLD_NOW | RTLD_GLOBAL);
    if (lib == nullptr) {
      throw InputError(std::string("sweep: started under mpirun, but Open MPI could not be loaded: ") + dlerror());
    }
    look_up(lib, x.init_thread, "MPI_Init_thread");
    look_up(lib, x.finalize, "MPI_Finalize");
    look_up(lib, x.comm_rank, "MPI_Comm_rank");
    look_up(lib, x.comm_size, "MPI_Comm_size");
    look_up(lib, x.bcast, "MPI_Bcast");
    look_up(lib, x.send, "MPI_Send");
    look_up(lib, x.recv, "MPI_Recv");
    look_up(lib, x.probe, "MPI_Probe");
    look_up(lib, x.iprobe, "MPI_Iprobe");
    look_up(lib, x.get_count, "MPI_Get_count");
    look_up(lib, x.abort, "MPI_Abort");
    // Open MPI's handles are the addresses of its predefined objects.
    look_up(lib, x.world, "ompi_mpi_comm_world");
    look_up(lib, x.chars, "ompi_mpi_char");
    look_up(lib, x.ull, "ompi_mpi_unsigned_long_long");
    look_up(lib, x.ints, "ompi_mpi_int");
    int provided = 0;
    if (x.init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
      throw std::runtime_error("MPI_Init_thread failed");
    }
    x.initialized = true;
    x.comm_rank(x.world, &x.rank);
    x.comm_size(x.world, &x.size);
    return x;
  }();
  return m;
}

constexpr int kTagResult = 1;  // worker -> 0: the last batch's records, one per line (empty: the first request)
constexpr int kTagWork = 2;    // 0 -> worker: a batch of points (none: stop)
constexpr std::size_t kMaxBatch = 64;

void send_text(const std::string& text, int to, int tag) {
  Mpi& m = mpi();
  m.send(text.data(), static_cast<int>(text.size()), m.chars, to, tag, m.world);
}

std::string receive_text(int from, int tag, int* source) {
  Mpi& m = mpi();
  MPI_Status status;
  m.probe(from, tag, m.world, &status);
  int n = 0;
  m.get_count(&status, m.chars, &n);
  std::string text(static_cast<std::size_t>(n), '\0');
  m.recv(text.data(), n, m.chars, status.MPI_SOURCE, tag, m.world, MPI_STATUS_IGNORE);
  if (source != nullptr) *source = status.MPI_SOURCE;
  return text;
}

// Rank 0 tells every rank the grid's text, or "" when the sweep cannot start.
std::string share_grid(const std::string& text) {
  Mpi& m = mpi();
  unsigned long long n = text.size();
  m.bcast(&n, 1, m.ull, 0, m.world);
  std::string out = m.rank == 0 ? text : std::string(n, '\0');
  if (n > 0) m.bcast(out.data(), static_cast<int>(n), m.chars, 0, m.world);
  return out;
}

SweepSummary run_worker(const SweepRequest& request) {
  SweepSummary s;
  const std::string text = share_grid("");
  if (text.empty()) {
    s.failed = true;  // rank 0 says why
    return s;
  }
  // Every rank reads the files the grid names (platforms, workloads) itself.
  // One that cannot, when rank 0 could (machines without a shared file
  // system), stops the whole job rather than leave rank 0 waiting for it.
  std::optional<Plan> checked;
  try {
    checked.emplace(parse_grid(text, request.grid_file));
  } catch (...) {
    const CommandError e = current_error();
    std::fprintf(stderr, "acesim: error: rank %d: %s (the ranks must see the same files)\n", mpi().rank, e.message.c_str());
    std::fflush(stderr);
    mpi().abort(mpi().world, kExitBadInput);
  }
  const Plan& plan = *checked;
  std::string results;  // the first message asks for work
  for (;;) {
    send_text(results, 0, kTagResult);
    MPI_Status status;
    mpi().probe(0, kTagWork, mpi().world, &status);
    int n = 0;
    mpi().get_count(&status, mpi().ull, &n);
    std::vector<unsigned long long> batch(static_cast<std::size_t>(n));
    mpi().recv(batch.data(), n, mpi().ull, 0, kTagWork, mpi().world, MPI_STATUS_IGNORE);
    if (batch.empty()) break;
    results.clear();
    for (const unsigned long long point : batch) {
      results += json_text(run_point(plan, static_cast<std::size_t>(point))) + "\n";
      ++s.run;
    }
  }
  return s;
}

SweepSummary run_root(const SweepRequest& request) {
  const auto start = std::chrono::steady_clock::now();
  std::optional<Plan> plan;
  std::optional<Output> out;
  std::string text;
  try {
    text = read_text_file(request.grid_file);
    plan.emplace(parse_grid(text, request.grid_file));
    out.emplace(request.out, sweep_meta(*plan, request.shard), resume_of(request, *plan));
  } catch (...) {
    share_grid("");
    throw;
  }
  share_grid(text);
  SweepSummary summary;
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < plan->size(); ++i) {
    if (request.shard && !request.shard->owns(i)) continue;
    ++summary.points;
    if (out->done(i)) {
      ++summary.resumed;
    } else {
      todo.push_back(i);
    }
  }
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> done{0};
  std::atomic<std::size_t> errors{0};
  // A record that cannot be written (a full disk) stops the job: the main
  // thread (the one that may call MPI) says why and aborts every rank,
  // which would otherwise wait for rank 0.
  std::mutex failed_mu;
  std::exception_ptr failed;
  std::atomic<bool> stop{false};
  auto finished = [&](nlohmann::json record) {
    if (record.contains("error")) errors.fetch_add(1);
    try {
      out->add(std::move(record));
    } catch (...) {
      const std::lock_guard<std::mutex> lock(failed_mu);
      if (!failed) failed = std::current_exception();
      next.store(todo.size());
      stop.store(true);
      return;
    }
    const std::size_t d = done.fetch_add(1) + 1;
    if (request.progress != nullptr) {
      const std::string stage = fmt::format("sweep: {}/{} points, {} errors, {} ranks", d + summary.resumed, summary.points,
                                            errors.load(), mpi().size);
      request.progress->progress({stage, -1, 0, static_cast<double>(d) / static_cast<double>(todo.size())});
    }
  };
  // Rank 0's own share, one point at a time on a thread, while this one
  // hands batches out.
  std::thread local([&] {
    for (std::size_t k; (k = next.fetch_add(1)) < todo.size();) finished(run_point(*plan, todo[k]));
  });
  const std::size_t ranks = static_cast<std::size_t>(mpi().size);
  int working = mpi().size - 1;
  while (working > 0) {
    if (stop.load()) {
      local.join();
      CommandError e;
      try {
        std::rethrow_exception(failed);
      } catch (...) {
        e = current_error();
      }
      std::fprintf(stderr, "acesim: error: %s\n", e.message.c_str());
      std::fflush(stderr);
      mpi().abort(mpi().world, e.status);
    }
    int flag = 0;
    mpi().iprobe(MPI_ANY_SOURCE, kTagResult, mpi().world, &flag, MPI_STATUS_IGNORE);
    if (flag == 0) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      continue;
    }
    int source = 0;
    const std::string results = receive_text(MPI_ANY_SOURCE, kTagResult, &source);
    for (std::size_t at = 0; at < results.size();) {
      const std::size_t end = results.find('\n', at);
      finished(nlohmann::json::parse(results.substr(at, end - at)));
      at = end + 1;
    }
    // A share of what is left: batches shrink towards the end.
    const std::size_t taken = std::min(next.load(), todo.size());
    const std::size_t want = std::clamp<std::size_t>((todo.size() - taken) / (4 * ranks), 1, kMaxBatch);
    std::vector<unsigned long long> batch;
    for (std::size_t i = 0; i < want; ++i) {
      const std::size_t k = next.fetch_add(1);
      if (k >= todo.size()) break;
      batch.push_back(todo[k]);
    }
    if (batch.empty()) --working;
    mpi().send(batch.data(), static_cast<int>(batch.size()), mpi().ull, source, kTagWork, mpi().world);
  }
  local.join();
  if (failed) std::rethrow_exception(failed);
  out->finish();
  summary.run = todo.size();
  summary.errors = out->errors();
  summary.first_error = out->first_error();
  summary.first_error_status = out->first_error_status();
  summary.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

}  // namespace

bool under_mpi() { return mpi().size > 1; }
int mpi_rank() { return under_mpi() ? mpi().rank : 0; }

SweepSummary run_sweep_mpi(const SweepRequest& request) {
  return mpi().rank == 0 ? run_root(request) : run_worker(request);
}

#endif

}  // namespace acesim::cli::sweep
