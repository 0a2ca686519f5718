#include "cli/measurement_args.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iostream>
#include <limits>
#include <set>
#include <utility>

#include "algorithms/models/nccl_release.hpp"
#include "calibrate/calibration.hpp"
#include "calibrate/launch_command.hpp"
#include "calibrate/nccl_env.hpp"
#include "calibrate/nccl_tests_reader.hpp"
#include "calibrate/row_model.hpp"
#include "cli/model_options.hpp"
#include "topology/error.hpp"
#include "topology/gpu_models.hpp"
#include "topology/units.hpp"

namespace collsim {

namespace {

std::uint64_t size_option(const std::string& text, const char* option, std::uint64_t none) {
  if (text.empty()) return none;
  try {
    return parse_bytes(text).count();
  } catch (const UnitError& e) {
    throw RequestError(fmt::format("{}: {}", option, e.what()));
  }
}

}  // namespace

void add_measurement_options(CLI::App* cmd, MeasurementArgs& m) {
  cmd->add_option("--measurements", m.files,
                  "nccl-tests output or `collsim bench` output (table or CSV); - for standard "
                  "input")
      ->required()
      ->check(CLI::Validator(
          [](const std::string& path) {
            return path == "-" ? std::string() : CLI::ExistingFile(path);  // - is stdin
          },
          "FILE or -"));
  cmd->add_option("--op", m.op,
                  "the collective measured, for files that do not name it (no \"# Collective "
                  "test starting:\" line or *_perf command); files that do must agree");
  cmd->add_option("--gpus-per-thread", m.gpus_per_thread,
                  "GPUs one thread drove (nccl-tests -g), for files whose header does not say "
                  "(no \"nGpus\"); files that do must agree")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--nccl-version", m.nccl_version,
                  "the NCCL release the run used (2.x.y), for files that do not print it (no "
                  "\"NCCL version\" banner, nccl-library= or \"# nccl:\" line); files that do "
                  "must agree");
  cmd->add_option("--env", m.env,
                  "VAR=VALUE the run's environment had (NCCL_ALGO=Ring, NCCL_PROTO=Simple, "
                  "NCCL_NVLS_ENABLE=0, NCCL_MIN_NCHANNELS=32, ...), for files that do not show "
                  "it (\"# env:\", mpirun -x); repeat it for each variable; files that set the "
                  "variable must agree");
  cmd->add_option("--min-bytes", m.min_bytes, "use only rows of at least this size");
  cmd->add_option("--max-bytes", m.max_bytes, "use only rows of at most this size");
}

std::vector<MeasurementFile> read_measurement_args(const MeasurementArgs& m) {
  const std::uint64_t lo = size_option(m.min_bytes, "--min-bytes", 0);
  const std::uint64_t hi =
      size_option(m.max_bytes, "--max-bytes", std::numeric_limits<std::uint64_t>::max());
  if (lo > hi) {
    throw RequestError(
        fmt::format("--min-bytes {} is above --max-bytes {}", m.min_bytes, m.max_bytes));
  }
  ReadOptions options;
  if (!m.op.empty()) options.collective = parse_collective(m.op);
  if (m.nccl_version) {
    try {
      parse_nccl_release(*m.nccl_version);
    } catch (const RequestError& e) {
      throw RequestError(fmt::format("--nccl-version: {}", e.what()));
    }
    options.nccl_version = m.nccl_version;
  }
  for (const std::string& item : m.env) options.env.push_back(nccl_env_assignment(item));
  std::vector<MeasurementFile> files;
  for (const std::string& f : m.files) {
    std::vector<MeasurementFile> parts = read_measurement_parts(f, options);
    // What the reader noticed (nccl-tests' own failed checks and warnings, rows timed
    // differently, lines it skipped): the whole file's, so every part holds them; told once, on
    // stderr, the first few of a long list.
    constexpr std::size_t kShown = 5;
    if (!parts.empty()) {
      const std::vector<std::string>& said = parts.front().warnings;
      for (std::size_t i = 0; i < std::min(said.size(), kShown); ++i) {
        std::cerr << "collsim: warning: " << said[i] << "\n";
      }
      if (said.size() > kShown) {
        std::cerr << fmt::format("collsim: warning: {}: {} more like these\n", f,
                                 said.size() - kShown);
      }
    }
    for (MeasurementFile& part : parts) {
      if (m.gpus_per_thread > 0) {
        const std::optional<int> said = part.run.gpus_per_thread;
        if (said && *said != m.gpus_per_thread) {
          throw RequestError(fmt::format(
              "--gpus-per-thread {}: {}:{} says nGpus {}; give it only for files whose header "
              "does not say",
              m.gpus_per_thread, part.path, part.run.line, *said));
        }
        part.run.gpus_per_thread = m.gpus_per_thread;
      }
      keep_sizes(part, lo, hi);
      files.push_back(std::move(part));
    }
  }
  return files;
}

void warn_about_other_gpus(const Topology& topo, const std::vector<MeasurementFile>& files) {
  const std::string& ours = topo.gpu_model().name;
  std::set<std::pair<std::string, std::string>> told;  // (file, device name)
  for (const MeasurementFile& f : files) {
    for (const std::string& name : f.gpu_names) {
      const std::string model = gpu_model_of_device_name(name);
      if (model.empty() || model == ours || !told.insert({f.path, name}).second) continue;
      std::cerr << fmt::format(
          "collsim: warning: {}: its devices are \"{}\" ({} in collsim's catalogue), {}'s GPUs "
          "are {}: its rows are predicted on {}\n",
          f.path, name, model, topo.name(), ours, topo.name());
    }
  }
}

void warn_about_nccl_env(const Topology& topo, const std::vector<MeasurementFile>& files) {
  const int per_node = static_cast<int>(topo.gpus_of_node(0).size());
  std::set<std::string> told;
  for (const MeasurementFile& f : files) {
    if (!told.insert(f.path).second) continue;
    int ranks = f.ranks;
    for (const MeasurementRow& row : f.rows) ranks = std::max(ranks, row.ranks);
    const std::vector<std::string> said =
        unmodelled_nccl_env(f.env, f.collective, ranks > per_node, nccl_release_of(f));
    if (!said.empty()) {
      std::cerr << fmt::format(
          "collsim: warning: {}: the run set {}, which collsim does not model: its rows are "
          "predicted as NCCL runs without {}\n",
          f.path, fmt::join(said, ", "), said.size() == 1 ? "it" : "them");
    }
    const std::optional<LaunchCommand> launch = parse_launch_command(f.command);
    if (launch && launch->registration == 2) {
      std::cerr << fmt::format(
          "collsim: warning: {}: the run registered its buffers as symmetric memory (-R 2), with "
          "which NCCL (2.27 and later) runs its symmetric kernels where they are faster; collsim "
          "does not model them: its rows are predicted as NCCL runs unregistered buffers\n",
          f.path);
    } else if (launch && launch->registration == 1) {
      std::cerr << fmt::format(
          "collsim: warning: {}: the run registered its buffers with NCCL (-R 1), which lets NCCL "
          "skip the copies through its own buffers (NVLS, CollNet, point-to-point); collsim does "
          "not model that: its rows are predicted as NCCL runs unregistered buffers\n",
          f.path);
    }
    const auto collnet = f.env.find("NCCL_COLLNET_ENABLE");
    if (collnet != f.env.end() && collnet->second == "1" && ranks > per_node && !topo.sharp()) {
      std::cerr << fmt::format(
          "collsim: warning: {}: the run set NCCL_COLLNET_ENABLE=1, but {}'s switches do not "
          "reduce (network.sharp: false): no CollNet is predicted, as NCCL runs none without "
          "SHARP\n",
          f.path, topo.name());
    }
  }
}

}  // namespace collsim
