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
#include "topology/topology.hpp"

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

// On stderr, once per file and device name: where a file's device lines name a GPU model other
// than the cluster's ("NVIDIA H800 80GB HBM3" against dgx-h100's H100-SXM), since its rows are
// then predicted on hardware they did not run on.
void warn_about_other_gpus(const Topology& topo, const std::vector<MeasurementFile>& files);

// On stderr, once per file: the NCCL variables its run set that change what NCCL does in a way
// collsim does not model (NCCL_BUFFSIZE=16777216: its rows are predicted with NCCL's default), or
// that collsim does not know (calibrate/nccl_env.hpp); and NCCL_COLLNET_ENABLE=1 on a cluster
// whose switches do not reduce (no network.sharp), where no CollNet is predicted; and buffers the
// run registered with NCCL (nccl-tests -R 1 or 2), whose zero-copy paths and symmetric kernels
// collsim does not model.
void warn_about_nccl_env(const Topology& topo, const std::vector<MeasurementFile>& files);

}  // namespace collsim
