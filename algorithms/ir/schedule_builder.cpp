#include "algorithms/ir/schedule_builder.hpp"

#include <algorithm>
#include <cassert>

namespace collsim {

namespace {

class ListSource final : public OpSource {
 public:
  ListSource(std::vector<std::vector<std::vector<Op>>> ops,
             std::vector<std::vector<std::uint64_t>> buffers,
             std::vector<std::vector<Dependency>> deps)
      : ops_(std::move(ops)), buffers_(std::move(buffers)), deps_(std::move(deps)) {}

  std::uint64_t op_count(int rank, int channel) const override {
    return ops_.at(rank).at(channel).size();
  }
  Op op(int rank, int channel, std::uint64_t index) const override {
    return ops_.at(rank).at(channel).at(index);
  }
  std::uint64_t buffer_bytes(int rank, BufferKind buffer) const override {
    return buffers_.at(rank).at(static_cast<int>(buffer));
  }
  std::vector<Dependency> dependencies(int rank) const override { return deps_.at(rank); }

 private:
  std::vector<std::vector<std::vector<Op>>> ops_;
  std::vector<std::vector<std::uint64_t>> buffers_;
  std::vector<std::vector<Dependency>> deps_;
};

// Ranks and switch actors (schedule.hpp).
std::size_t actors(const ScheduleInfo& i) {
  return static_cast<std::size_t>(i.ranks) + i.switches.size();
}

}  // namespace

ScheduleBuilder::ScheduleBuilder(ScheduleInfo info)
    : info_(std::move(info)),
      ops_(actors(info_), std::vector<std::vector<Op>>(info_.channels)),
      buffers_(actors(info_), std::vector<std::uint64_t>(kBufferKindCount, 0)),
      deps_(actors(info_)) {}

void ScheduleBuilder::set_buffer(int rank, BufferKind buffer, std::uint64_t bytes) {
  buffers_.at(rank).at(static_cast<int>(buffer)) = bytes;
}

std::uint64_t ScheduleBuilder::add(int rank, int channel, const Op& op) {
  auto& v = ops_.at(rank).at(channel);
  v.push_back(op);
  return v.size() - 1;
}

void ScheduleBuilder::depend(int rank, const Dependency& d) { deps_.at(rank).push_back(d); }

Schedule ScheduleBuilder::build() && {
  for (auto& d : deps_) {
    std::sort(d.begin(), d.end(), [](const Dependency& a, const Dependency& b) {
      return a.channel != b.channel ? a.channel < b.channel : a.op < b.op;
    });
  }
  auto source =
      std::make_shared<ListSource>(std::move(ops_), std::move(buffers_), std::move(deps_));
  return Schedule(info_, std::move(source));
}

Schedule materialize(const Schedule& s) {
  ScheduleBuilder b(s.info());
  for (int r = 0; r < s.actor_count(); ++r) {
    for (int k = 0; k < kBufferKindCount; ++k) {
      const auto kind = static_cast<BufferKind>(k);
      b.set_buffer(r, kind, s.buffer_bytes(r, kind));
    }
    for (int c = 0; c < s.channel_count(); ++c) {
      for (OpCursor cur = s.cursor(r, c); !cur.done(); cur.next()) b.add(r, c, cur.op());
    }
    for (const Dependency& d : s.dependencies(r)) b.depend(r, d);
  }
  return std::move(b).build();
}

}  // namespace collsim
