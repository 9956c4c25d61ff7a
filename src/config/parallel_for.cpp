#include "config/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <thread>

namespace acesim {

unsigned thread_count(std::size_t n, int jobs) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int wanted = jobs > 0 ? jobs : cores;
  return static_cast<unsigned>(std::max<long long>(1, std::min<long long>(wanted, static_cast<long long>(n))));
}

void run_on_threads(unsigned threads, const std::function<void()>& work, const std::vector<std::exception_ptr>& errors) {
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

void parallel_for(std::size_t n, int jobs, const std::function<void(std::size_t)>& fn) {
  const unsigned threads = thread_count(n, jobs);
  std::vector<std::exception_ptr> errors(n);
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next++; i < n; i = next++) {
      try {
        fn(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  run_on_threads(threads, work, errors);
}

}  // namespace acesim
