#include "backends/backend.hpp"

#include <fmt/format.h>

#include <chrono>

#include "backends/cpu_backend.hpp"
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

void check_buffers(const Schedule& s, const HostBuffers& b) {
  const std::size_t n = static_cast<std::size_t>(s.rank_count());
  if (b.input.size() != n || b.output.size() != n) {
    throw RequestError(fmt::format("buffers for {} / {} ranks, schedule has {}", b.input.size(),
                                   b.output.size(), n));
  }
  for (int r = 0; r < s.rank_count(); ++r) {
    if (b.input[r].size() < s.buffer_bytes(r, BufferKind::kInput) ||
        b.output[r].size() < s.buffer_bytes(r, BufferKind::kOutput)) {
      throw RequestError(
          fmt::format("rank {}: buffers of {} B in / {} B out, schedule needs {} B / {} B", r,
                      b.input[r].size(), b.output[r].size(), s.buffer_bytes(r, BufferKind::kInput),
                      s.buffer_bytes(r, BufferKind::kOutput)));
    }
  }
}

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

std::unique_ptr<Backend> make_backend(std::string_view name) {
  if (name == "cpu") return std::make_unique<CpuBackend>();
  if (name == "dry-run") return std::make_unique<DryRunBackend>();
  throw RequestError(
      fmt::format("unknown backend \"{}\": {}", name, expected_one_of(name, {"cpu", "dry-run"})));
}

}  // namespace collsim
