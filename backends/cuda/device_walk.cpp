#include "backends/cuda/device_walk.hpp"

#include <algorithm>
#include <tuple>

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/device_kernels.hpp"

namespace collsim {

DeviceWalkHooks::DeviceWalkHooks(const Schedule& s, DeviceRanks& dev, const RunOptions& o,
                                 const std::vector<std::vector<cudaEvent_t>>* dependency_events)
    : dev_(dev),
      dtype_(s.info().dtype),
      redop_(s.info().redop),
      divisor_(s.info().redop == ReduceOp::kAvg ? s.rank_count() : 0),
      record_ops_(o.record_ops),
      own_dependency_events_(dependency_events ? 0 : s.rank_count()),
      dependency_events_(dependency_events ? *dependency_events : own_dependency_events_),
      op_start_(dev.ranks().size() * s.channel_count()) {
  if (dependency_events) return;
  for (int r : dev.ranks()) {
    for (std::size_t i = 0; i < s.dependencies(r).size(); ++i) {
      own_dependency_events_[r].push_back(event(r, false));
    }
  }
}

// Errors are ignored: a destructor cannot report them.
DeviceWalkHooks::~DeviceWalkHooks() {
  for (cudaEvent_t e : events_) cudaEventDestroy(e);
}

cudaEvent_t DeviceWalkHooks::event(int rank, bool timing) {
  events_.push_back(new_event(dev_.device(rank), timing));
  return events_.back();
}

void DeviceWalkHooks::wait(const WalkStream& st, cudaEvent_t e) {
  cuda_check(cudaStreamWaitEvent(stream(st), e, 0), "cudaStreamWaitEvent");
  dev_.count_enqueued(st.rank());
}

void DeviceWalkHooks::record(const WalkStream& st, cudaEvent_t e) {
  cuda_check(cudaEventRecord(e, stream(st)), "cudaEventRecord");
  dev_.count_enqueued(st.rank());
}

std::vector<OpTiming> DeviceWalkHooks::op_timings() const {
  std::vector<OpTiming> v;
  for (const Timed& t : timed_) {
    v.push_back({t.timing.rank, t.timing.channel, t.timing.index, t.timing.op,
                 dev_.since_start(t.timing.rank, t.start), dev_.since_start(t.timing.rank, t.end)});
  }
  std::sort(v.begin(), v.end(), [](const OpTiming& a, const OpTiming& b) {
    return std::tie(a.rank, a.channel, a.index) < std::tie(b.rank, b.channel, b.index);
  });
  return v;
}

std::byte* DeviceWalkHooks::address(const WalkStream& st, const BufferRef& ref) {
  return dev_.ptr(st.rank(), ref);
}

void DeviceWalkHooks::copy(const WalkStream& st, std::byte* dst, const std::byte* src,
                           std::size_t n) {
  if (n == 0 || dst == src) return;
  cuda_check(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, stream(st)), "cudaMemcpyAsync");
  dev_.count_enqueued(st.rank());
}

void DeviceWalkHooks::reduce(const WalkStream& st, std::byte* dst, const std::byte* a,
                             const std::byte* b, std::size_t n, bool postop) {
  launch_reduce(dtype_, redop_, dst, a, b, n, postop ? divisor_ : 0, stream(st));
  dev_.count_enqueued(st.rank());
}

void DeviceWalkHooks::enter(const WalkStream& st) { use_device(dev_.device(st.rank())); }

void DeviceWalkHooks::begin(const WalkStream& st, const Op&) {
  if (!record_ops_) return;
  op_start_[st.id()] = event(st.rank(), true);
  record(st, op_start_[st.id()]);
}

void DeviceWalkHooks::end(const WalkStream& st, const Op& op) {
  if (!record_ops_) return;
  cudaEvent_t end = event(st.rank(), true);
  record(st, end);
  timed_.push_back(
      {OpTiming{st.rank(), st.channel(), st.index(), op, {}, {}}, op_start_[st.id()], end});
}

void DeviceWalkHooks::depend(const WalkStream& st, std::size_t index) {
  wait(st, dependency_events_[st.rank()][index]);
}

void DeviceWalkHooks::release(const WalkStream& st, std::size_t index) {
  record(st, dependency_events_[st.rank()][index]);
}

}  // namespace collsim
