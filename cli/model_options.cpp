#include "cli/model_options.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <iostream>

#include "calibrate/nccl_env.hpp"
#include "calibrate/nccl_tests_lines.hpp"
#include "import/nccl_graph_log.hpp"
#include "topology/error.hpp"

namespace collsim {

namespace {

[[noreturn]] void bad_graph(std::string_view item) {
  throw RequestError(fmt::format(
      "--nccl-graph: expected NAME=CHANNELSxGBPS[/INTER_GBPS] with NAME ring, tree or nvls "
      "(e.g. ring=8x24,tree=8x24), got \"{}\"",
      item));
}

double number(std::string_view text, std::string_view item) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !(v > 0)) bad_graph(item);
  return v;
}

}  // namespace

// "NCCL_ALGO=Ring" as --env gives it, read as a "###" label's words are (a variable's name of
// letters, digits and '_', not starting with a digit, '=', its value), the value checked where
// collsim acts on the variable.
std::pair<std::string, std::string> nccl_env_assignment(const std::string& item) {
  std::optional<std::pair<std::string, std::string>> assignment =
      detail::parse_any_assignment(item);
  if (!assignment) {
    throw RequestError(fmt::format("--env {}: expected VARIABLE=VALUE, as NCCL_ALGO=Ring",
                                   item.empty() ? "\"\"" : item));
  }
  const auto& [key, value] = *assignment;
  // The variables collsim acts on must hold what NCCL would accept; others are kept unread.
  const auto refuse = [&](const std::string& expected) {
    throw RequestError(fmt::format("--env {}: expected {}", item, expected));
  };
  if (key == "NCCL_ALGO" || key == "NCCL_PROTO") {
    if (value.empty()) {
      refuse(key == "NCCL_ALGO" ? "a list such as Ring or ^Tree"
                                : "a list such as Simple or ^LL128");
    }
    try {
      key == "NCCL_ALGO" ? parse_nccl_filter(value, "") : parse_nccl_filter("", value);
    } catch (const RequestError& e) {
      throw RequestError(fmt::format("--env {}: {}", item, e.what()));
    }
  } else if (key == "NCCL_NVLS_ENABLE") {
    if (value != "0" && value != "1") refuse("0 or 1");
  } else if (key == "NCCL_COLLNET_ENABLE") {
    if (value != "0" && value != "1") refuse("0 or 1");
  } else if (key == "NCCL_NVLS_CHUNKSIZE" ||
             (key == "NCCL_NVLSTREE_MAX_CHUNKSIZE" && value != "-2")) {
    if (!nccl_env_bytes(value)) {
      refuse(key == "NCCL_NVLS_CHUNKSIZE" ? "a size in bytes, as 131072"
                                          : "a size in bytes, as 65536, or -2 (NCCL's default)");
    }
  } else if (key == "NCCL_MIN_NCHANNELS" || key == "NCCL_MAX_NCHANNELS" || key == "NCCL_MIN_CTAS" ||
             key == "NCCL_MAX_CTAS" || key == "NCCL_NVLS_NCHANNELS") {
    if (!nccl_env_count(value)) refuse("a positive channel count");
  }
  return *std::move(assignment);
}

std::vector<std::string> model_names(const std::vector<Model>& models) {
  std::vector<std::string> out;
  for (Model m : models) out.emplace_back(to_string(m));
  return out;
}

void add_model_options(CLI::App* cmd, ModelArgs& m, const std::vector<Model>& models,
                       std::string_view select) {
  const std::vector<std::string> names = model_names(models);
  m.model = names.front();
  m.select = std::string(select);
  cmd->add_option("--model", m.model, fmt::format("cost model: {}", fmt::join(names, ", ")))
      ->check(CLI::IsMember(names))
      ->capture_default_str();
  m.select_option = cmd->add_option("--select", m.select,
                                    "policy for --algo/--proto auto: nccl (what NCCL's tuning "
                                    "model picks; best where NCCL has no such collective) or best "
                                    "(the fastest by --model, NCCL-runnable or not)")
                        ->check(CLI::IsMember({"best", "nccl"}))
                        ->capture_default_str();
  cmd->add_option("--nccl-version", m.nccl_version,
                  "NCCL release (2.x up to 2.30.7, or head): how it divides a collective among "
                  "channels, and its tuning constants (2.22.3's before 2.23, 2.26.2's to 2.26, "
                  "each release's own from 2.27)")
      ->capture_default_str();
  cmd->add_option("--nccl-graph", m.nccl_graph,
                  "NCCL's graphs, channels x GB/s per channel: ring=8x24,tree=8x24,nvls=8x40/60 "
                  "(default: estimated from the links)");
  cmd->add_option("--nccl-log", m.nccl_log,
                  "NCCL_DEBUG=INFO output whose graph lines (Pattern, nChannels, bw) set "
                  "--nccl-graph and --nccl-tree-pattern; the two options override it")
      ->check(CLI::ExistingFile);
  m.tree_pattern_option =
      cmd->add_option("--nccl-tree-pattern", m.nccl_tree_pattern,
                      "NCCL's tree pattern: balanced, split, or tree (fell back, x0.85)")
          ->check(CLI::IsMember({"balanced", "split", "tree"}))
          ->capture_default_str();
  cmd->add_option("--nccl-cpu", m.nccl_cpu, "host CPU for NCCL's model: intel, amd, other")
      ->check(CLI::IsMember({"intel", "amd", "other"}))
      ->capture_default_str();
  add_line_forwarding_flag(cmd, m.line_forwarding);
  cmd->add_option("--env", m.env,
                  "VAR=VALUE: NCCL's environment for the prediction (NCCL_MIN_NCHANNELS=32, "
                  "NCCL_NVLS_ENABLE=0, NCCL_NVLS_CHUNKSIZE=262144, ...); repeat it for each "
                  "variable; NCCL_ALGO and NCCL_PROTO are --algo and --proto");
  // Checked once the command line is read, before anything runs: a value NCCL would not take is
  // an error; a variable collsim does not act on is said once.
  cmd->parse_complete_callback([&m] {
    for (const std::string& item : m.env) {
      const auto [key, value] = nccl_env_assignment(item);
      if (key == "NCCL_ALGO" || key == "NCCL_PROTO") {
        throw RequestError(
            fmt::format("--env {}: give it as {}, which takes NCCL's lists ({})", item,
                        key == "NCCL_ALGO" ? "--algo" : "--proto",
                        key == "NCCL_ALGO" ? "ring,tree or ^nvls" : "simple or ^ll128"));
      }
    }
    const std::map<std::string, std::string> env = nccl_env(m);
    const std::vector<std::string> unmodelled =
        unmodelled_nccl_env(env, Collective::kAllToAll, true, kNewestNccl);
    if (!unmodelled.empty()) {
      std::cerr << fmt::format(
          "collsim: warning: --env {}: collsim does not model {}: predicted as NCCL runs "
          "without {}\n",
          fmt::join(unmodelled, ", "), unmodelled.size() == 1 ? "it" : "them",
          unmodelled.size() == 1 ? "it" : "them");
    }
    std::vector<std::string> described;
    for (const auto& [key, value] : env) {
      const NcclEnvVar* v = find_nccl_env(key);
      if (v != nullptr && v->role == NcclEnvRole::kConfig) described.push_back(key + "=" + value);
    }
    if (!described.empty()) {
      std::cerr << fmt::format(
          "collsim: warning: --env {}: the cluster's config says what {} selects (its NICs, "
          "GPUDirect RDMA, PXN, routing, PCIe peer-to-peer, NVLink domain): ignored\n",
          fmt::join(described, ", "), described.size() == 1 ? "it" : "each");
    }
  });
}

std::map<std::string, std::string> nccl_env(const ModelArgs& m) {
  std::map<std::string, std::string> out;
  for (const std::string& item : m.env) {
    auto [key, value] = nccl_env_assignment(item);
    out[key] = std::move(value);
  }
  return out;
}

void add_line_forwarding_flag(CLI::App* cmd, bool& on) {
  cmd->add_flag("--line-forwarding", on,
                "simulate LL and LL128 forwarding over NVLink and PCIe pass by pass (cut-through: "
                "a pass of the channel's threads, 8 KiB of LL or 40 KiB of LL128 wire) rather "
                "than piece by piece; see docs/theory.md 2.5");
}

void apply_nccl_graph(std::string_view text, NcclModelInput& in) {
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, end - start);
    start = end + 1;
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) bad_graph(item);
    const std::string_view name = item.substr(0, eq);
    const std::string_view value = item.substr(eq + 1);
    std::optional<NcclGraph>* slot = name == "ring"   ? &in.ring
                                     : name == "tree" ? &in.tree
                                     : name == "nvls" ? &in.nvls
                                                      : nullptr;
    if (slot == nullptr) bad_graph(item);
    if (value == "none") {
      slot->reset();
      continue;
    }
    const std::size_t x = value.find('x');
    if (x == std::string_view::npos) bad_graph(item);
    const double channels = number(value.substr(0, x), item);
    if (channels != static_cast<int>(channels) || channels > 64) bad_graph(item);
    std::string_view bw = value.substr(x + 1);
    const std::size_t slash = bw.find('/');
    NcclGraph g = slot->value_or(NcclGraph{});
    // A graph the estimate had none of crosses the same network plugin as the ring's.
    if (!*slot && in.ring) g.latency_inter = in.ring->latency_inter;
    g.channels = static_cast<int>(channels);
    g.bw_intra = number(bw.substr(0, slash), item);
    g.bw_inter = slash == std::string_view::npos ? g.bw_intra : number(bw.substr(slash + 1), item);
    *slot = g;
    if (name == "ring") in.runtime_channels = 2 * g.channels;
  }
}

NcclRelease nccl_release(const ModelArgs& m) {
  try {
    return parse_nccl_release(m.nccl_version);
  } catch (const RequestError& e) {
    throw RequestError(fmt::format("--nccl-version: {}", e.what()));
  }
}

NcclModelInput nccl_input(const ModelArgs& m, const Topology& topo, const Communicator& comm) {
  const CpuVendor cpu = m.nccl_cpu == "amd"     ? CpuVendor::kAmd
                        : m.nccl_cpu == "other" ? CpuVendor::kOther
                                                : CpuVendor::kIntel;
  NcclModelInput in = nccl_model_input(topo, comm, nccl_release(m), cpu);
  std::string tree_pattern = m.nccl_tree_pattern;
  if (!m.nccl_log.empty()) {
    const NcclGraphLog logged = read_nccl_graph_log_file(m.nccl_log);
    apply_nccl_graph(logged.graph, in);
    const bool given = m.tree_pattern_option != nullptr && m.tree_pattern_option->count() > 0;
    if (!given && !logged.tree_pattern.empty()) tree_pattern = logged.tree_pattern;
  }
  if (!m.nccl_graph.empty()) apply_nccl_graph(m.nccl_graph, in);
  in.tree_pattern_is_tree = tree_pattern == "tree";
  set_nvls_across_max_chunk(in);  // from the graphs as given
  nccl_env_settings(nccl_env(m)).apply(in, nccl_max_channels(nccl_release(m)));
  return in;
}

}  // namespace collsim
