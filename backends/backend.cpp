#include "backends/backend.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdlib>

#include "topology/error.hpp"

namespace collsim {

HostBuffers HostBuffers::for_schedule(const Schedule& s) {
  HostBuffers b;
  for (int r = 0; r < s.rank_count(); ++r) {
    b.input.emplace_back(s.buffer_bytes(r, BufferKind::kInput));
    b.output.emplace_back(s.buffer_bytes(r, BufferKind::kOutput));
  }
  return b;
}

HostBuffers HostBuffers::for_ranks(const Schedule& s, const std::vector<int>& ranks) {
  HostBuffers b;
  b.input.resize(s.rank_count());
  b.output.resize(s.rank_count());
  for (int r : ranks) {
    b.input.at(r).resize(s.buffer_bytes(r, BufferKind::kInput));
    b.output.at(r).resize(s.buffer_bytes(r, BufferKind::kOutput));
  }
  return b;
}

void check_buffers(const Schedule& s, const HostBuffers& b, const std::vector<int>& ranks) {
  const std::size_t n = static_cast<std::size_t>(s.rank_count());
  if (b.input.size() != n || b.output.size() != n) {
    throw RequestError(fmt::format("buffers for {} / {} ranks, schedule has {}", b.input.size(),
                                   b.output.size(), n));
  }
  auto check = [&](int r) {
    if (b.input[r].size() < s.buffer_bytes(r, BufferKind::kInput) ||
        b.output[r].size() < s.buffer_bytes(r, BufferKind::kOutput)) {
      throw RequestError(
          fmt::format("rank {}: buffers of {} B in / {} B out, schedule needs {} B / {} B", r,
                      b.input[r].size(), b.output[r].size(), s.buffer_bytes(r, BufferKind::kInput),
                      s.buffer_bytes(r, BufferKind::kOutput)));
    }
  };
  if (ranks.empty()) {
    for (int r = 0; r < s.rank_count(); ++r) check(r);
  } else {
    for (int r : ranks) check(r);
  }
}

void refuse_switch_actors(const Schedule& s, std::string_view backend) {
  if (s.actor_count() == s.rank_count()) return;
  throw BackendError(fmt::format(
      "{} backend: the {} schedule has the switch compute (switch actors), which only the cpu "
      "backend executes; run it there or simulate it",
      backend, s.info().algorithm));
}

std::vector<std::string> ProcessGroup::describe_processes() {
  std::array<char, 256> host{};
  if (gethostname(host.data(), host.size() - 1) != 0) host = {'?'};
  return {fmt::format("{}:{}", host.data(), static_cast<long>(getpid()))};
}

bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MV2_COMM_WORLD_SIZE",
                        "SLURM_STEP_NUM_TASKS"}) {
    if (std::getenv(v) != nullptr) return true;
  }
  return false;
}

std::vector<int> Backend::local_ranks(const Schedule& s) const {
  std::vector<int> all(s.rank_count());
  for (int r = 0; r < s.rank_count(); ++r) all[r] = r;
  return all;
}

Backend::Placement Backend::placement(int /*rank*/) const { return {0, "[cpu] host"}; }

RunResult DryRunBackend::run(const Schedule& s, HostBuffers& buffers, const RunOptions&) {
  check_buffers(s, buffers);
  const auto start = std::chrono::steady_clock::now();
  RunResult res;
  for (int r = 0; r < s.rank_count(); ++r) {
    for (int c = 0; c < s.channel_count(); ++c) {
      for (OpCursor k = s.cursor(r, c); !k.done(); k.next()) {
        ++res.ops;
        if (sends(k.op().kind)) res.bytes_sent += k.op().bytes;
      }
    }
  }
  const auto ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count();
  res.wall = collsim::ns(static_cast<double>(ns));
  res.rank_time.assign(s.rank_count(), Time());
  return res;
}

}  // namespace collsim
