// Rows finish out of order on the predictor's threads; InOrder hands them on in index order, each
// as soon as every one before it is done, so a long sweep prints its rows while it runs and the
// output never depends on how the threads were scheduled. close() stops it for good: an
// interrupted command closes the stream before it writes its trailer, so a simulation still in
// flight cannot print a row after it.
//
//   InOrder<Choice> rows(points.size(), [&](std::size_t i, const Choice& c) { print_row(i, c); });
//   predictor.choose_each(counts, step, cancel, [&](std::size_t i, const Choice& c) {
//     rows.put(i, c);                        // from any thread
//   });
//   const std::size_t printed = rows.close();
#pragma once

#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

namespace collsim {

template <typename T>
class InOrder {
 public:
  using Emit = std::function<void(std::size_t index, const T& value)>;

  InOrder(std::size_t n, Emit emit) : pending_(n), emit_(std::move(emit)) {}

  // Index `i` is done; emits it and every done index after it that is now next in line.
  void put(std::size_t i, T value) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (closed_ || i >= pending_.size()) return;
    pending_[i] = std::move(value);
    while (next_ < pending_.size() && pending_[next_]) {
      emit_(next_, *pending_[next_]);
      pending_[next_].reset();
      ++next_;
    }
  }

  // Emits nothing more; returns how many indices were emitted (0 .. n).
  std::size_t close() {
    const std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
    return next_;
  }

 private:
  std::mutex mutex_;
  std::vector<std::optional<T>> pending_;
  std::size_t next_ = 0;
  bool closed_ = false;
  Emit emit_;
};

}  // namespace collsim
