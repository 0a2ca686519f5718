// A one-line progress indicator on stderr for long sweeps, comparisons and scale studies:
// "collsim sweep: 12/26 sizes (64 MiB), 14 s, about 20 s left", rewritten in place, erased when
// done. It prints only when stderr is a terminal, and only once the work has taken half a
// second, so pipes, files and quick runs see nothing extra. A clock redraws it twice a second, so
// a size that takes a minute still shows the time going by.
//
//   Progress progress("compare", points.size(), "sizes");
//   for (...) { ...; progress.step("64 MiB"); }   // after each unit of work, from any thread
//   progress.above([&] { std::cout << row; });     // output that must not mix with the line
//   progress.done();                              // also done by the destructor
//
// Work with no count of units (one long simulation, a fit) shows what a status function says
// instead: "collsim predict: 310 M events simulated, 2 min".
//
//   Progress progress("predict", simulated_events_status());
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace collsim {

class Progress {
 public:
  // `shown`: false keeps it silent wherever stderr goes (processes other than 0 of an MPI job).
  Progress(std::string command, std::size_t total, std::string unit, bool shown = true);
  // Open-ended: `status` is called on the clock's thread each time the line is drawn.
  Progress(std::string command, std::function<std::string()> status);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void step(const std::string& what);
  // Runs `write` (which prints to standard output and flushes) with the line erased, then draws
  // the line again below what it wrote: rows streamed to a terminal never mix with it.
  void above(const std::function<void()>& write);
  void done();

 private:
  void tick();                 // the clock thread
  void draw();                 // with mutex_ held
  std::string line() const;    // with mutex_ held

  std::string command_, unit_, last_what_;
  std::function<std::string()> status_;  // open-ended work's line
  std::size_t total_ = 0, done_ = 0;
  bool enabled_ = false;
  bool shown_ = false;
  bool stop_ = false;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::thread clock_;
};

// The status of work that runs simulations: the events simulated since it was made
// ("310 M events simulated"), from simulate.hpp's events_so_far().
std::function<std::string()> simulated_events_status();

}  // namespace collsim
