#include "cli/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "simulator/simulate.hpp"

namespace collsim {

namespace {

constexpr auto kInterval = std::chrono::milliseconds(500);

// Half a second, or COLLSIM_PROGRESS_DELAY_MS (0-60000) for tests that need the line at once.
std::chrono::milliseconds delay() {
  if (const char* env = std::getenv("COLLSIM_PROGRESS_DELAY_MS")) {
    const long v = std::strtol(env, nullptr, 10);
    if (v >= 0 && v <= 60000) return std::chrono::milliseconds(v);
  }
  return std::chrono::milliseconds(500);
}

std::string duration(double s) {
  if (s < 90) return fmt::format("{:.0f} s", s);
  if (s < 5400) return fmt::format("{:.0f} min", s / 60);
  return fmt::format("{:.1f} h", s / 3600);
}

}  // namespace

Progress::Progress(std::string command, std::size_t total, std::string unit, bool shown)
    : command_(std::move(command)),
      unit_(std::move(unit)),
      total_(total),
      enabled_(shown && isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()) {
  if (enabled_) clock_ = std::thread([this] { tick(); });
}

Progress::Progress(std::string command, std::function<std::string()> status)
    : command_(std::move(command)),
      status_(std::move(status)),
      enabled_(isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()) {
  if (enabled_) clock_ = std::thread([this] { tick(); });
}

Progress::~Progress() { done(); }

void Progress::step(const std::string& what) {
  const std::lock_guard<std::mutex> lock(mutex_);
  ++done_;
  last_what_ = what;
}

void Progress::above(const std::function<void()>& write) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (shown_) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }
  write();
  if (shown_ && !stop_) draw();
}

std::string Progress::line() const {
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (status_) return fmt::format("collsim {}: {}, {}", command_, status_(), duration(elapsed));
  std::string s = fmt::format("collsim {}: {}/{} {}", command_, done_, total_, unit_);
  if (!last_what_.empty()) s += fmt::format(" ({})", last_what_);
  s += ", " + duration(elapsed);
  // The rate so far; the units differ in cost, so this is a rough guide.
  if (done_ > 0 && done_ < total_) {
    s += ", about " + duration(elapsed * static_cast<double>(total_ - done_) / done_) + " left";
  }
  return s;
}

void Progress::draw() {
  shown_ = true;
  std::fprintf(stderr, "\r\033[K%s", line().c_str());
  std::fflush(stderr);
}

void Progress::tick() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (wake_.wait_for(lock, delay(), [this] { return stop_; })) return;
  while (!stop_) {
    draw();
    wake_.wait_for(lock, kInterval, [this] { return stop_; });
  }
}

void Progress::done() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (stop_) return;
    stop_ = true;
  }
  wake_.notify_all();
  if (clock_.joinable()) clock_.join();
  if (shown_) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }
  shown_ = false;
}

std::function<std::string()> simulated_events_status() {
  const std::uint64_t start = events_so_far();
  return [start] {
    const double m = static_cast<double>(events_so_far() - start) / 1e6;
    return fmt::format("{:.{}f} M events simulated", m, m < 10 ? 1 : 0);
  };
}

}  // namespace collsim
