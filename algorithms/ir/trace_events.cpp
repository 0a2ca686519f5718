#include "algorithms/ir/trace_events.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <ostream>

#include "algorithms/generators/registry.hpp"

namespace collsim {

namespace {

std::string_view coll_name(Collective c) {
  static constexpr std::array<std::string_view, kCollectiveCount> kNames = {
      "AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce",
      "Gather",    "Scatter",   "AllToAll",      "Barrier",   "SendRecv"};
  return kNames[static_cast<int>(c)];
}

std::string_view redop_name(ReduceOp op, DataType t) {
  switch (op) {
    case ReduceOp::kSum:
      return "Sum";
    case ReduceOp::kProd:
      return "Prod";
    case ReduceOp::kMin:
    case ReduceOp::kMax:
      return "MinMax";
    case ReduceOp::kAvg:
      return is_floating(t) ? "PreMulSum" : "SumPostDiv";
  }
  return "Sum";
}

std::string upper(std::string_view s) {
  std::string out;
  for (char c : s) out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::string trace_timestamp(Time t) {
  const std::int64_t ps = std::max<std::int64_t>(0, t.ps());
  return fmt::format("{}.{:06}", ps / 1000000, ps % 1000000);
}

std::string json_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string nccl_kernel_name(const ScheduleInfo& info) {
  const AlgorithmInfo* a = find_algorithm_or_null(info.algorithm);
  const Family family = a != nullptr ? a->family : Family::kOther;
  const std::string algo = family == Family::kRing   ? "RING"
                           : family == Family::kTree ? "TREE"
                                                     : upper(info.algorithm);
  const std::string proto = upper(to_string(info.protocol));
  if (info.collective == Collective::kSendRecv) return "ncclDevKernel_SendRecv";
  if (is_reduction(info.collective)) {
    return fmt::format("ncclDevKernel_{}_{}_{}_{}_{}", coll_name(info.collective),
                       redop_name(info.redop, info.dtype), to_string(info.dtype), algo, proto);
  }
  return fmt::format("ncclDevKernel_{}_{}_{}", coll_name(info.collective), algo, proto);
}

TraceEventWriter::TraceEventWriter(std::ostream& out) : out_(out) {
  out_ << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
}

TraceEventWriter::~TraceEventWriter() { out_ << "\n]}\n"; }

void TraceEventWriter::event(const std::string& body) {
  out_ << (first_ ? "" : ",\n") << '{' << body << '}';
  first_ = false;
}

void TraceEventWriter::rank_tracks(int rank, std::string_view label, int channels,
                                   std::string_view span_name, Time finish,
                                   const ScheduleInfo& info) {
  event(fmt::format(
      R"J("name":"process_name","ph":"M","pid":{},"tid":0,"args":{{"name":"rank {} ({})"}})J", rank,
      rank, json_escape(label)));
  event(fmt::format(
      R"("name":"process_sort_index","ph":"M","pid":{},"tid":0,"args":{{"sort_index":{}}})", rank,
      rank));
  event(fmt::format(R"("name":"thread_name","ph":"M","pid":{},"tid":0,"args":{{"name":"kernel"}})",
                    rank));
  for (int c = 0; c < channels; ++c) {
    event(fmt::format(
        R"("name":"thread_name","ph":"M","pid":{},"tid":{},"args":{{"name":"channel {}"}})", rank,
        c + 1, c));
  }
  event(fmt::format(
      R"("name":"{}","cat":"kernel","ph":"X","pid":{},"tid":0,"ts":0.000000,"dur":{},"args":{{"bytes":{},"ranks":{},"channels":{}}})",
      json_escape(span_name), rank, trace_timestamp(finish), info.bytes.count(), info.ranks,
      info.channels));
}

void TraceEventWriter::op_slice(int rank, int channel, std::uint64_t index, const Op& op,
                                Time start, Time end) {
  std::string peers;
  if (receives(op.kind)) peers += fmt::format(R"(,"from":{})", op.recv_peer);
  if (sends(op.kind)) peers += fmt::format(R"(,"to":{})", op.send_peer);
  event(fmt::format(
      R"("name":"{}","cat":"op","ph":"X","pid":{},"tid":{},"ts":{},"dur":{},"args":{{"op":{},"bytes":{}{}}})",
      to_string(op.kind), rank, channel + 1, trace_timestamp(start), trace_timestamp(end - start),
      index, op.bytes, peers));
}

void TraceEventWriter::flow_start(std::uint64_t id, int rank, int channel, Time at) {
  event(fmt::format(R"("name":"data","cat":"flow","ph":"s","id":{},"pid":{},"tid":{},"ts":{})", id,
                    rank, channel + 1, trace_timestamp(at)));
}

void TraceEventWriter::flow_end(std::uint64_t id, int rank, int channel, Time at) {
  event(fmt::format(
      R"("name":"data","cat":"flow","ph":"f","bp":"e","id":{},"pid":{},"tid":{},"ts":{})", id, rank,
      channel + 1, trace_timestamp(at)));
}

}  // namespace collsim
