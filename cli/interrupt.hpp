// Ctrl-C (SIGINT) or SIGTERM during a long command: the signal handler only sets a flag. The
// command runs its work on another thread and waits for either; when interrupted it prints what
// it finished (complete rows, valid CSV / JSON / table), says on stderr what was cut, and exits
// with 130 (finish_interrupted), without waiting for simulations in flight.
//
//   InterruptWatch watch;
//   const bool finished = watch.run([&] { work(watch.cancel()); });   // cancel: stop starting
//   if (!finished) { print_partial(); finish_interrupted("3 of 26 sizes done"); }
#pragma once

#include <atomic>
#include <functional>
#include <string>

namespace collsim {

class InterruptWatch {
 public:
  InterruptWatch();   // installs the SIGINT and SIGTERM handlers
  ~InterruptWatch();  // restores the previous ones
  InterruptWatch(const InterruptWatch&) = delete;
  InterruptWatch& operator=(const InterruptWatch&) = delete;

  // Set once a signal came: work checks it to start nothing new.
  const std::atomic<bool>* cancel() const;
  // Runs `work` on its own thread: true when it returned, false when a signal came first (the
  // thread is then left to the process's exit). Exceptions from `work` are rethrown here.
  bool run(const std::function<void()>& work);
};

// Flushes standard output, prints "collsim: interrupted: WHAT" on stderr and exits with 130
// (128 + SIGINT), as shells expect of an interrupted command.
[[noreturn]] void finish_interrupted(const std::string& what);

}  // namespace collsim
