#include "cli/output_rows.hpp"

#include <fmt/format.h>

#include <cmath>

namespace collsim {

namespace {

double rounded(double v, double scale) { return std::round(v * scale) / scale; }

}  // namespace

OutRow make_row(const Request& r, const Candidate& c, Time t) {
  OutRow o;
  o.collective = r.collective;
  o.algorithm = c.algorithm;
  o.protocol = c.protocol;
  o.channels = r.channels;
  o.ranks = r.comm.size();
  o.bytes = request_bytes(r).count();
  o.count = r.count;
  o.dtype = r.dtype;
  const double seconds = t.seconds();
  const double algbw = seconds > 0 ? static_cast<double>(o.bytes) / seconds * 1e-9 : 0.0;
  o.time_us = rounded(t.us(), 1e6);
  o.algbw_GBps = rounded(algbw, 1e4);
  o.busbw_GBps = rounded(algbw * busbw_factor(r.collective, o.ranks), 1e4);
  return o;
}

std::string csv_header() {
  return "collective,algorithm,protocol,channels,ranks,bytes,count,dtype,time_us,algbw_GBps,"
         "busbw_GBps";
}

std::string csv_line(const OutRow& r) {
  return fmt::format("{},{},{},{},{},{},{},{},{},{},{}", to_string(r.collective), r.algorithm,
                     to_string(r.protocol), r.channels, r.ranks, r.bytes, r.count,
                     to_string(r.dtype), r.time_us, r.algbw_GBps, r.busbw_GBps);
}

nlohmann::ordered_json to_json(const OutRow& r) {
  nlohmann::ordered_json j;
  j["collective"] = std::string(to_string(r.collective));
  j["algorithm"] = r.algorithm;
  j["protocol"] = std::string(to_string(r.protocol));
  j["channels"] = r.channels;
  j["ranks"] = r.ranks;
  j["bytes"] = r.bytes;
  j["count"] = r.count;
  j["dtype"] = std::string(to_string(r.dtype));
  j["time_us"] = r.time_us;
  j["algbw_GBps"] = r.algbw_GBps;
  j["busbw_GBps"] = r.busbw_GBps;
  return j;
}

}  // namespace collsim
