#include "cli/interrupt.hpp"

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

namespace collsim {

namespace {

std::atomic<bool> g_interrupted{false};

extern "C" void on_signal(int) { g_interrupted.store(true); }

struct sigaction g_old_int, g_old_term;

// What the work thread and the waiting thread share; kept alive by both, since an interrupted
// wait returns while the work still runs.
struct Shared {
  std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false;
  std::exception_ptr error;
};

}  // namespace

InterruptWatch::InterruptWatch() {
  g_interrupted.store(false);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
}

InterruptWatch::~InterruptWatch() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
}

const std::atomic<bool>* InterruptWatch::cancel() const { return &g_interrupted; }

bool InterruptWatch::run(const std::function<void()>& work) {
  auto shared = std::make_shared<Shared>();
  std::thread worker([shared, work] {
    std::exception_ptr error;
    try {
      work();
    } catch (...) {
      error = std::current_exception();
    }
    const std::lock_guard<std::mutex> lock(shared->mutex);
    shared->error = error;
    shared->done = true;
    shared->done_cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(shared->mutex);
  // The handler cannot notify a condition variable, so the wait looks at the flag four times a
  // second.
  while (!shared->done && !g_interrupted.load()) {
    shared->done_cv.wait_for(lock, std::chrono::milliseconds(250));
  }
  if (!shared->done) {
    worker.detach();
    return false;
  }
  lock.unlock();
  worker.join();
  if (shared->error) std::rethrow_exception(shared->error);
  // The work may have seen the signal (through cancel()) and stopped early before this thread
  // looked: its results are still cut short.
  return !g_interrupted.load();
}

void finish_interrupted(const std::string& what) {
  std::cout.flush();
  std::fflush(stdout);
  std::fprintf(stderr, "collsim: interrupted: %s\n", what.c_str());
  std::fflush(stderr);
  std::_Exit(130);
}

}  // namespace collsim
