// One predicted row in docs/cli.md's column contract, and its CSV / JSON forms (predict, sweep,
// compare):
//
//   collective,algorithm,protocol,channels,ranks,bytes,count,dtype,time_us,algbw_GBps,busbw_GBps
//
// algbw = bytes / time, busbw = algbw x the nccl-tests factor (GB = 1e9 B). Numbers are rounded
// for stable output: time_us to the picosecond (6 decimals, exact), bandwidths to 4 decimals.
//
//   OutRow r = make_row(request, candidate, time);
//   std::cout << csv_header() << "\n" << csv_line(r) << "\n";
//   nlohmann::ordered_json j = to_json(r);   // the same keys, in the same order
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "algorithms/ir/request.hpp"
#include "algorithms/models/selection.hpp"
#include "topology/units.hpp"

namespace collsim {

struct OutRow {
  Collective collective = Collective::kAllReduce;
  std::string algorithm;
  Protocol protocol = Protocol::kSimple;
  int channels = 0;
  int ranks = 0;
  std::uint64_t bytes = 0;
  std::uint64_t count = 0;
  DataType dtype = DataType::kF32;
  double time_us = 0;
  double algbw_GBps = 0;
  double busbw_GBps = 0;
};

// `r` is the request as run (its count, channels, communicator); the candidate names the
// algorithm and protocol.
OutRow make_row(const Request& r, const Candidate& c, Time t);

std::string csv_header();
std::string csv_line(const OutRow& r);
nlohmann::ordered_json to_json(const OutRow& r);

}  // namespace collsim
