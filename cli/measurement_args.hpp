// The options `calibrate` and `validate` share: the measurement files, the collective of files
// that do not name it, the GPUs one thread drove, the NCCL release and the environment where the
// file does not say, and the size range of the rows to use (docs/cli.md), read and filtered.
//
//   MeasurementArgs m;  add_measurement_options(cmd, m);
//   std::vector<MeasurementFile> files = read_measurement_args(m);  // MeasurementError,
//   RequestError; one per collective of each file
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/measurement.hpp"

namespace collsim {

struct MeasurementArgs {
  std::vector<std::string> files;
  std::string op;         // "": the files must name their collective
  std::string min_bytes;  // "": no bound
  std::string max_bytes;
  int gpus_per_thread = 0;                  // 0: as the header says ("nGpus"), else 1
  std::optional<std::string> nccl_version;  // none: as the file says, else the newest modelled
  std::vector<std::string> env;  // "KEY=VALUE": the run's environment, where the file is silent
};

void add_measurement_options(CLI::App* cmd, MeasurementArgs& m);
std::vector<MeasurementFile> read_measurement_args(const MeasurementArgs& m);

}  // namespace collsim
