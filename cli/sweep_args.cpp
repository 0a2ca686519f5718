#include "cli/sweep_args.hpp"

#include <fmt/format.h>

#include <limits>

#include "algorithms/ir/request.hpp"
#include "topology/error.hpp"

namespace collsim {

namespace {

std::uint64_t parse_size(const std::string& text, const char* option) {
  try {
    return parse_bytes(text).count();
  } catch (const UnitError& e) {
    throw RequestError(fmt::format("{} {}: {}", option, text, e.what()));
  }
}

}  // namespace

void add_sweep_options(CLI::App* cmd, SweepArgs& s) {
  cmd->add_option("-b,--minbytes", s.min_bytes, "smallest size, as nccl-tests' -b")
      ->capture_default_str();
  cmd->add_option("-e,--maxbytes", s.max_bytes, "largest size, as nccl-tests' -e")
      ->capture_default_str();
  cmd->add_option("-f,--stepfactor", s.factor, "multiply the size by this at each step")
      ->check(CLI::Range(std::uint64_t{2}, std::uint64_t{1} << 20))
      ->capture_default_str();
}

std::uint64_t sweep_min(const SweepArgs& s) { return parse_size(s.min_bytes, "-b"); }
std::uint64_t sweep_max(const SweepArgs& s) { return parse_size(s.max_bytes, "-e"); }

std::vector<SweepPoint> sweep_points(const SweepArgs& s, const Prepared& p) {
  const std::uint64_t lo = sweep_min(s);
  const std::uint64_t hi = sweep_max(s);
  if (lo == 0) {
    throw RequestError(fmt::format(
        "-b 0: the sweep would never grow (0 x {} = 0); start at one element or more", s.factor));
  }
  if (lo > hi) {
    throw RequestError(
        fmt::format("-b {} ({} B) is greater than -e {} ({} B)", s.min_bytes, lo, s.max_bytes, hi));
  }
  const Request& r = p.request;
  std::vector<SweepPoint> out;
  for (std::uint64_t size = lo; size <= hi;) {
    SweepPoint pt;
    try {
      pt.count = count_for_bytes(r.collective, Bytes(size), r.dtype, r.comm.size());
    } catch (const RequestError& e) {
      throw RequestError(fmt::format("{} {}: {}", size == lo ? "-b" : "size", size, e.what()));
    }
    Request q = r;
    q.count = pt.count;
    pt.bytes = request_bytes(q).count();
    out.push_back(pt);
    if (size > std::numeric_limits<std::uint64_t>::max() / s.factor) break;
    size *= s.factor;
  }
  return out;
}

}  // namespace collsim
