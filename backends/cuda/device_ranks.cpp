#include "backends/cuda/device_ranks.hpp"

#include <algorithm>
#include <atomic>

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/device_kernels.hpp"

namespace collsim {

namespace {
Time from_ms(float ms) { return ns(static_cast<double>(ms) * 1e6); }
}  // namespace

DeviceRanks::DeviceRanks(const Schedule& s, std::vector<int> ranks, std::vector<int> devices,
                         std::uint64_t staging_bytes)
    : ranks_(std::move(ranks)), index_(s.rank_count(), -1) {
  int max_device = 0;
  for (int d : devices) max_device = std::max(max_device, d);
  device_index_.assign(max_device + 1, -1);
  for (int d : devices) {
    if (device_index_[d] >= 0) continue;
    device_index_[d] = static_cast<int>(devices_.size());
    Device dev;
    dev.id = d;
    use_device(d);
    cuda_check(cudaStreamCreateWithFlags(&dev.gate_stream, cudaStreamNonBlocking),
               "cudaStreamCreateWithFlags");
    cuda_check(cudaEventCreate(&dev.start), "cudaEventCreate");
    cuda_check(cudaHostAlloc(reinterpret_cast<void**>(&dev.flag), sizeof(int),
                             cudaHostAllocMapped | cudaHostAllocPortable),
               "cudaHostAlloc");
    *dev.flag = 1;
    cuda_check(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev.flag_on_device), dev.flag, 0),
               "cudaHostGetDevicePointer");
    devices_.push_back(dev);
  }
  for (std::size_t i = 0; i < ranks_.size(); ++i) {
    Rank r;
    r.rank = ranks_[i];
    r.device = devices.at(i);
    use_device(r.device);
    for (int k = 0; k < kBufferKindCount; ++k) {
      r.bytes[k] = s.buffer_bytes(r.rank, static_cast<BufferKind>(k));
      cuda_check(cudaMalloc(reinterpret_cast<void**>(&r.buffer[k]),
                            std::max<std::uint64_t>(1, r.bytes[k])),
                 "cudaMalloc");
    }
    for (int c = 0; c < s.channel_count(); ++c) {
      cudaStream_t st = nullptr;
      cuda_check(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking),
                 "cudaStreamCreateWithFlags");
      r.streams.push_back(st);
      std::byte* stage = nullptr;
      cuda_check(
          cudaMalloc(reinterpret_cast<void**>(&stage), std::max<std::uint64_t>(1, staging_bytes)),
          "cudaMalloc");
      r.staging.push_back(stage);
      cudaEvent_t join = nullptr;
      cuda_check(cudaEventCreateWithFlags(&join, cudaEventDisableTiming), "cudaEventCreate");
      r.joins.push_back(join);
    }
    cuda_check(cudaStreamCreateWithFlags(&r.join_stream, cudaStreamNonBlocking),
               "cudaStreamCreateWithFlags");
    cuda_check(cudaEventCreate(&r.end), "cudaEventCreate");
    index_.at(r.rank) = static_cast<int>(ranks_data_.size());
    ranks_data_.push_back(std::move(r));
  }
}

// Frees what it holds; errors are ignored (a destructor cannot report them, and a failed device
// leaves nothing better to do).
DeviceRanks::~DeviceRanks() {
  open_gates();
  for (Rank& r : ranks_data_) {
    cudaSetDevice(r.device);
    cudaDeviceSynchronize();
    for (std::byte* b : r.buffer) cudaFree(b);
    for (std::byte* b : r.staging) cudaFree(b);
    for (cudaStream_t st : r.streams) cudaStreamDestroy(st);
    for (cudaEvent_t e : r.joins) cudaEventDestroy(e);
    cudaStreamDestroy(r.join_stream);
    cudaEventDestroy(r.end);
  }
  for (Device& d : devices_) {
    cudaSetDevice(d.id);
    cudaStreamDestroy(d.gate_stream);
    cudaEventDestroy(d.start);
    cudaFreeHost(d.flag);
  }
}

std::byte* DeviceRanks::ptr(int rank, const BufferRef& ref) const {
  return at(rank).buffer[static_cast<int>(ref.buffer)] + ref.offset;
}

void DeviceRanks::upload_inputs(const HostBuffers& b) const {
  for (const Rank& r : ranks_data_) {
    const auto in = static_cast<int>(BufferKind::kInput);
    if (r.bytes[in] == 0) continue;
    use_device(r.device);
    cuda_check(
        cudaMemcpy(r.buffer[in], b.input.at(r.rank).data(), r.bytes[in], cudaMemcpyHostToDevice),
        "cudaMemcpy");
  }
}

void DeviceRanks::download_outputs(HostBuffers& b) const {
  for (const Rank& r : ranks_data_) {
    const auto out = static_cast<int>(BufferKind::kOutput);
    if (r.bytes[out] == 0) continue;
    use_device(r.device);
    cuda_check(
        cudaMemcpy(b.output.at(r.rank).data(), r.buffer[out], r.bytes[out], cudaMemcpyDeviceToHost),
        "cudaMemcpy");
  }
}

void DeviceRanks::begin() {
  for (Device& d : devices_) {
    use_device(d.id);
    cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    *d.flag = 0;
    d.queued = 0;
    std::atomic_thread_fence(std::memory_order_seq_cst);
    launch_gate(d.flag_on_device, d.gate_stream);
    cuda_check(cudaEventRecord(d.start, d.gate_stream), "cudaEventRecord");
  }
  gates_open_ = false;
  for (const Rank& r : ranks_data_) {
    use_device(r.device);
    const cudaEvent_t start = devices_.at(device_index_.at(r.device)).start;
    for (cudaStream_t st : r.streams) {
      cuda_check(cudaStreamWaitEvent(st, start, 0), "cudaStreamWaitEvent");
    }
    cuda_check(cudaStreamWaitEvent(r.join_stream, start, 0), "cudaStreamWaitEvent");
  }
}

void DeviceRanks::count_enqueued(int rank) {
  if (!gates_open_ && ++device_of(rank).queued >= kGateDepth) open_gates();
}

void DeviceRanks::open_gates() {
  if (gates_open_) return;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  for (Device& d : devices_) *static_cast<volatile int*>(d.flag) = 1;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  gates_open_ = true;
}

void DeviceRanks::end(RunResult* result) {
  open_gates();
  for (const Rank& r : ranks_data_) {
    use_device(r.device);
    for (std::size_t c = 0; c < r.streams.size(); ++c) {
      cuda_check(cudaEventRecord(r.joins[c], r.streams[c]), "cudaEventRecord");
      cuda_check(cudaStreamWaitEvent(r.join_stream, r.joins[c], 0), "cudaStreamWaitEvent");
    }
    cuda_check(cudaEventRecord(r.end, r.join_stream), "cudaEventRecord");
  }
  result->wall = Time();
  for (const Rank& r : ranks_data_) {
    cuda_check(cudaEventSynchronize(r.end), "cudaEventSynchronize");
    const Time t = since_start(r.rank, r.end);
    if (static_cast<std::size_t>(r.rank) < result->rank_time.size()) result->rank_time[r.rank] = t;
    result->wall = std::max(result->wall, t);
  }
}

Time DeviceRanks::since_start(int rank, cudaEvent_t e) const {
  float ms = 0;
  cuda_check(cudaEventElapsedTime(&ms, device_of(rank).start, e), "cudaEventElapsedTime");
  return from_ms(ms);
}

}  // namespace collsim
