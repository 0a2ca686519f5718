// A schedule written op by op and held in memory: for hand-made schedules (tests, imported
// MSCCL-style programs) and for copying a small generated schedule into plain vectors.
//
//   ScheduleInfo info;  info.ranks = 2;  info.channels = 1;  info.fifo =
//   geometry(Protocol::kSimple); ScheduleBuilder b(info); b.set_buffer(0, BufferKind::kInput, 64);
//   b.set_buffer(1, BufferKind::kOutput, 64);
//   b.add(0, 0, ops::send(1, ops::in(0), 64));
//   b.add(1, 0, ops::recv(0, ops::out(0), 64));
//   Schedule s = std::move(b).build();
//   validate(s);                                           // validate.hpp
#pragma once

#include <cstdint>
#include <vector>

#include "algorithms/ir/schedule.hpp"

namespace collsim {

class ScheduleBuilder {
 public:
  explicit ScheduleBuilder(ScheduleInfo info);

  void set_buffer(int rank, BufferKind buffer, std::uint64_t bytes);
  // Appends an op to (rank, channel) and returns its index.
  std::uint64_t add(int rank, int channel, const Op& op);
  void depend(int rank, const Dependency& d);

  // The schedule as built; not validated (call validate()).
  Schedule build() &&;

 private:
  ScheduleInfo info_;
  std::vector<std::vector<std::vector<Op>>> ops_;    // [rank][channel]
  std::vector<std::vector<std::uint64_t>> buffers_;  // [rank][buffer kind]
  std::vector<std::vector<Dependency>> deps_;        // [rank]
};

// Every op of `s` copied into memory (for tests comparing on-demand and materialized forms).
Schedule materialize(const Schedule& s);

}  // namespace collsim
