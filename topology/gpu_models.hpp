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

// The model a device name as NVML and nccl-tests print it stands for ("NVIDIA H100 80GB HBM3"
// -> "H100-SXM", "A100-SXM4-40GB" -> "A100-SXM", "NVIDIA H800 PCIe" -> ""); "" where the name
// is not one of the catalogue's or does not say which board (an "A100 80GB" without SXM or PCIe).
std::string gpu_model_of_device_name(std::string_view name);

}  // namespace collsim
