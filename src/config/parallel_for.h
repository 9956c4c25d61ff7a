// Independent simulations on several threads, with results and errors as a
// serial loop gives them: each task writes its own slot, and the first
// failure by index is the one rethrown, whatever the threads' order.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <vector>

namespace acesim {

// Threads for n tasks: `jobs`, or every core for 0 (or less), at most n, at
// least 1.
unsigned thread_count(std::size_t n, int jobs);

// `work` on this thread and threads - 1 more; then the first of `errors`
// set, by index, rethrown.
void run_on_threads(unsigned threads, const std::function<void()>& work, const std::vector<std::exception_ptr>& errors);

// fn(i) for every i in [0, n) on thread_count(n, jobs) threads, taken in
// index order.
void parallel_for(std::size_t n, int jobs, const std::function<void(std::size_t)>& fn);

}  // namespace acesim
