// `collsim import FILE [-o OUT.yaml] [--from auto|nccl-xml|nvidia-smi] [--name N] [--gpu MODEL]
//  [--nic-kind K] [--nic-bandwidth BW]`: a cluster YAML from NCCL's topology dump
// (NCCL_TOPO_DUMP_FILE) or `nvidia-smi topo -m` output (import/import.hpp), on standard output or
// in OUT.yaml; any command then loads it as CONFIG.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "import/import.hpp"
#include "import/xml.hpp"

namespace collsim {

namespace {

struct ImportArgs {
  std::string file;
  std::string output;
  std::string format = "auto";
  ImportOptions options;
};

void run_import(const ImportArgs& a) {
  const std::string yaml = import_cluster(a.file, a.options, a.format);
  if (a.output.empty()) {
    std::cout << yaml;
    return;
  }
  std::ofstream out(a.output);
  if (!out) throw ImportError(fmt::format("-o {}: cannot write the file", a.output));
  out << yaml;
  out.close();
  if (!out) throw ImportError(fmt::format("-o {}: writing the file failed", a.output));
}

}  // namespace

void register_import(CLI::App& app) {
  auto args = std::make_shared<ImportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "import", "Write a cluster YAML from NCCL's topology dump or `nvidia-smi topo -m` output");
  cmd->add_option("FILE", args->file,
                  "NCCL_TOPO_DUMP_FILE output or `nvidia-smi topo -m` output; - for standard input")
      ->required();
  cmd->add_option("-o,--output", args->output,
                  "write the YAML to this file (default: standard output)");
  cmd->add_option("--from", args->format, "the input's format")
      ->check(CLI::IsMember({"auto", "nccl-xml", "nvidia-smi"}))
      ->capture_default_str();
  cmd->add_option("--name", args->options.name, "the cluster's name (default: the file's name)");
  cmd->add_option("--gpu", args->options.gpu_model,
                  "the GPU model, where the file does not tell it (e.g. H200, H100-PCIe)");
  cmd->add_option("--nic-kind", args->options.nic_kind,
                  "ib, roce, ethernet or efa (default: from the NIC names)");
  cmd->add_option("--nic-bandwidth", args->options.nic_bandwidth,
                  "NIC speed, e.g. 400Gbps (nvidia-smi output does not give it)");
  cmd->callback([args] { run_import(*args); });
}

}  // namespace collsim
