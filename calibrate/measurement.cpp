#include "calibrate/measurement.hpp"

#include <algorithm>
#include <cctype>

namespace collsim {

// NCCL_ALGO with NVLS and NVLSTree taken out, as NCCL_NVLS_ENABLE=0 does (nvlsSupport = 0 in
// `src/transport/nvls.cc`: neither is run, whatever NCCL_ALGO allows). A list keeps its other
// entries; a negated list or none at all negates them as well.
std::string nccl_algo_without_nvls(const std::optional<std::string>& algo) {
  if (!algo || algo->empty()) return "^NVLS,NVLSTree";
  if (algo->front() == '^') return *algo + ",NVLS,NVLSTree";
  std::string kept;
  std::size_t from = 0;
  while (from <= algo->size()) {
    const std::size_t comma = std::min(algo->find(',', from), algo->size());
    const std::string name = algo->substr(from, comma - from);
    std::string lower;
    for (char ch : name) {
      if (ch != '_') lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    }
    if (lower != "nvls" && lower != "nvlstree") kept += (kept.empty() ? "" : ",") + name;
    from = comma + 1;
  }
  return kept.empty() ? *algo : kept;  // nothing else allowed: NCCL's own error, not ours
}

std::string_view to_string(MeasurementFormat f) {
  switch (f) {
    case MeasurementFormat::kNcclTests:
      return "nccl-tests";
    case MeasurementFormat::kNcclTestsOld:
      return "nccl-tests (old format)";
    case MeasurementFormat::kCollsimCsv:
      return "collsim csv";
  }
  return "?";
}

std::string_view to_string(RanksSource s) {
  switch (s) {
    case RanksSource::kUnknown:
      return "unknown";
    case RanksSource::kLabel:
      return "label";
    case RanksSource::kRankLines:
      return "rank lines";
    case RanksSource::kLaunch:
      return "launch";
    case RanksSource::kSizeCount:
      return "size / count";
    case RanksSource::kBusbwRatio:
      return "busbw / algbw";
    case RanksSource::kCsvColumn:
      return "csv column";
  }
  return "?";
}

}  // namespace collsim
