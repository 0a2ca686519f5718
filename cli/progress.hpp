// A one-line progress indicator on stderr for long sweeps and comparisons: "collsim sweep:
// 12/26 sizes (64 MiB)", rewritten in place, erased when done. It prints only when stderr is a
// terminal, and only once the work has taken half a second, so pipes, files and quick runs see
// nothing extra.
//
//   Progress progress("compare", points.size(), "sizes");
//   for (...) { progress.step("64 MiB"); ... }   // before each unit of work
//   progress.done();                              // also done by the destructor
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace collsim {

class Progress {
 public:
  Progress(std::string command, std::size_t total, std::string unit);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void step(const std::string& what);
  void done();

 private:
  std::string command_, unit_;
  std::size_t total_ = 0, done_ = 0;
  bool enabled_ = false;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace collsim
