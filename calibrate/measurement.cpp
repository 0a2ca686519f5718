#include "calibrate/measurement.hpp"

namespace collsim {

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
