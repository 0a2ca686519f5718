// Runs independent jobs on a few threads: f(0) ... f(n-1), each exactly once. Callers write each
// result into its own slot, so the outcome does not depend on the scheduling. If jobs throw,
// the remaining ones are skipped and one of the exceptions is rethrown once all threads stopped.
// Threads: parallel_threads().
//
//   std::vector<double> out(n);
//   parallel_for(n, [&](std::size_t i) { out[i] = simulate_one(i); });
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace collsim {

// Up to 8 threads, one per core; COLLSIM_THREADS=N (1..64) sets the count, which is how the
// determinism tests check that the output does not depend on it.
inline std::size_t parallel_threads() {
  if (const char* env = std::getenv("COLLSIM_THREADS")) {
    const long v = std::strtol(env, nullptr, 10);
    if (v >= 1 && v <= 64) return static_cast<std::size_t>(v);
  }
  return std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
}

// Whether this thread is a worker of a pool that already has the threads (parallel_for's own, or
// cli/distribute.hpp's): a parallel_for called on it runs its jobs on it, one after another,
// instead of starting threads of its own beside every other worker's.
inline thread_local bool t_pool_worker = false;

template <typename F>
void parallel_for(std::size_t n, F&& f) {
  const std::size_t threads = t_pool_worker ? 1 : std::min<std::size_t>(n, parallel_threads());
  if (threads <= 1) {
    for (std::size_t i = 0; i < n; ++i) f(i);
    return;
  }
  std::atomic<std::size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&] {
    const bool was_worker = t_pool_worker;
    t_pool_worker = true;
    for (std::size_t i = next++; i < n; i = next++) {
      try {
        f(i);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        next = n;
      }
    }
    t_pool_worker = was_worker;
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace collsim
