// The GPU model catalogue: architecture, NVLink ports and host interface of each GPU collsim knows.
//
//   const GpuModel* m = find_gpu_model("H100-SXM");   // nullptr if unknown
//   Bandwidth nvl = m->nvlink_bandwidth * m->nvlinks;  // 450 GB/s per direction
//
// Configs name a model; the intra-node fabric defaults to the model's native NVLink bandwidth.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "topology/device.hpp"

namespace collsim {

const GpuModel* find_gpu_model(std::string_view name);
std::vector<std::string> gpu_model_names();

}  // namespace collsim
