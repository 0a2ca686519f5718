#include "import/import.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "import/nccl_topology_xml.hpp"
#include "import/nvidia_smi_topo.hpp"
#include "import/xml.hpp"
#include "topology/loader.hpp"

namespace collsim {

namespace {

std::string read_input(const std::string& path) {
  std::ifstream file;
  if (path != "-") {
    file.open(path);
    if (!file) throw ImportError(fmt::format("{}: cannot open the file", path));
  }
  std::optional<std::string> text = read_at_most(path == "-" ? std::cin : file, kMaxConfigBytes);
  if (!text) {
    throw ImportError(
        fmt::format("{}: larger than {} MiB; expected a topology dump or "
                    "`nvidia-smi topo -m` output",
                    path, kMaxConfigBytes >> 20));
  }
  return std::move(*text);
}

std::string detect(const std::string& text, const std::string& path) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '<') return "nccl-xml";
  if (looks_like_nvidia_smi_topo(text)) return "nvidia-smi";
  throw ImportError(
      fmt::format("{}: neither NCCL's topology dump (XML starting with <system>) nor "
                  "`nvidia-smi topo -m` output (a header row starting with GPU0)",
                  path));
}

}  // namespace

std::string import_cluster(const std::string& path, const ImportOptions& options,
                           const std::string& format) {
  const std::string text = read_input(path);
  const std::string kind = format == "auto" ? detect(text, path) : format;
  const std::string file = path == "-" ? "<stdin>" : path;
  ImportedNode node = kind == "nccl-xml" ? read_nccl_topology_xml(text, file, options)
                                         : read_nvidia_smi_topo(text, file, options);
  node.name = !options.name.empty() ? options.name
              : path == "-"         ? "imported"
                                    : std::filesystem::path(path).stem().string();
  return cluster_yaml(node);
}

}  // namespace collsim
