// `collsim bench --backend B --op OP [-b MIN] [-e MAX] [-f FACTOR] [--ranks N] [--algo A]
//  [--format F] [-w W] [-n N] [-c 0|1] [-o FILE] [--trace FILE]`: runs the schedules on real
// hardware and prints what was measured, as nccl-tests prints it (docs/cli.md). Backends: cpu
// (threads in this process), mpi (one rank per process:
// `mpirun -np 4 collsim bench --backend mpi ...`), cuda, nccl, and nccl-native (NCCL's own
// collective for the same request, the reference).
//
// The table is nccl-tests' out-of-place half (collsim's schedules read an input and write an
// output; they have no in-place form), opening with "# Collective test starting: <op>" and a
// "### ALGO=... PROTO=... GPUS=n" label, so that calibrate/nccl_tests_reader.hpp reads it like
// any nccl-tests log, with the algorithm, protocol and rank count of every row. `--format csv`
// prints docs/cli.md's CSV columns, `json` the same rows plus "wrong". The exit status is 1 when an
// element was wrong (like nccl-tests' "Out of bounds values ... FAILED").
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "algorithms/generators/registry.hpp"
#include "backends/bench.hpp"
#include "backends/registry.hpp"
#include "backends/trace_export.hpp"
#include "cli/commands.hpp"
#include "cli/nccl_tests_table.hpp"
#include "cli/option_checks.hpp"
#include "cli/output_rows.hpp"
#include "topology/error.hpp"

namespace collsim {

namespace {

struct BenchArgs {
  std::string backend = "cpu";
  std::string op;
  std::string min_bytes = "8";
  std::string max_bytes = "64M";
  std::uint64_t factor = 2;
  int ranks = 0;
  int ranks_per_node = 0;
  std::string algo = "ring";
  std::string proto = "simple";
  int channels = 1;
  std::string dtype = "f32";
  std::string redop = "sum";
  int root = 0;
  int warmup = 5;
  int iters = 20;
  int check = 1;
  int threads = 0;
  std::string format = "table";
  std::string output;
  std::string trace;
};

struct Row {
  Request request;
  BenchSample sample;
};

Bytes parse_size(const std::string& text, const char* option) {
  try {
    return parse_bytes(text);
  } catch (const UnitError& e) {
    throw RequestError(fmt::format("{}: {}", option, e.what()));
  }
}

// The row as measured, with the algorithm and protocol as given (like the ### label), or
// NCCL's own choice for nccl-native.
ResultRow result_of(const BenchArgs& a, const Row& r) {
  const bool native = a.backend == "nccl-native";
  ResultRow row = result_row(r.request, {}, r.sample.time);
  row.algorithm = native ? "nccl" : a.algo;
  row.protocol = native ? "auto" : a.proto;
  return row;
}

// A rank line per rank: the process that ran it ("host:pid", consecutive ranks per process) and
// where the backend placed it.
std::vector<NcclTestsTable::Device> devices(Backend& backend, int ranks,
                                            const std::vector<std::string>& processes) {
  std::vector<NcclTestsTable::Device> out;
  const int per_process = std::max(1, ranks / std::max<int>(1, static_cast<int>(processes.size())));
  for (int r = 0; r < ranks; ++r) {
    const std::string& proc =
        processes.at(std::min<std::size_t>(r / per_process, processes.size() - 1));
    const std::size_t colon = proc.rfind(':');
    const Backend::Placement p = backend.placement(r);
    out.push_back({proc.substr(colon + 1), proc.substr(0, colon), p.device, p.description});
  }
  return out;
}

// The run as nccl-tests prints it, out-of-place half only, with one "### ALGO=... GPUS=n" label
// for the whole run.
NcclTestsTable bench_table(const BenchArgs& a, const std::vector<Row>& rows, Backend& backend,
                           int ranks, const std::vector<std::string>& processes) {
  NcclTestsTable t;
  t.collective = parse_collective(a.op);
  t.redop = parse_reduce_op(a.redop);
  t.root = a.root;
  t.gpus = ranks / std::max(1, backend.processes().size());
  t.min_bytes = parse_size(a.min_bytes, "-b").count();
  t.max_bytes = parse_size(a.max_bytes, "-e").count();
  t.factor = a.factor;
  t.warmup = a.warmup;
  t.iters = a.iters;
  t.validation = a.check;
  t.ranks = ranks;
  t.devices = devices(backend, ranks, processes);
  t.comments = backend.header_comments();
  t.label = a.backend == "nccl-native"
                ? fmt::format("GPUS={} BACKEND={} CHANNELS=nccl", ranks, a.backend)
                : fmt::format("ALGO={} PROTO={} GPUS={} CHANNELS={} BACKEND={}", a.algo, a.proto,
                              ranks, a.channels, a.backend);
  t.repeat_in_place = false;
  for (const Row& r : rows) {
    t.rows.push_back({result_of(a, r), a.check ? std::optional(r.sample.wrong) : std::nullopt, ""});
  }
  return t;
}

void write_rows(std::ostream& out, const BenchArgs& a, const std::vector<Row>& rows) {
  if (a.format == "csv") {
    out << csv_header() << "\n";
    std::uint64_t wrong = 0;
    for (const Row& r : rows) {
      out << csv_line(result_of(a, r), CsvNumbers::kFixed) << "\n";
      wrong += r.sample.wrong;
    }
    out << fmt::format("# backend {}: {} wrong elements{}\n", a.backend, wrong,
                       a.check ? "" : " (not checked)");
    return;
  }
  nlohmann::ordered_json j;
  j["backend"] = a.backend;
  j["rows"] = nlohmann::json::array();
  for (const Row& r : rows) {
    // Rounded as the CSV of predict and sweep is.
    nlohmann::ordered_json row = to_json(rounded(result_of(a, r)));
    if (a.check) row["wrong"] = r.sample.wrong;
    j["rows"].push_back(std::move(row));
  }
  out << j.dump(2) << "\n";
}

// The sizes -b, -b x f, ... up to -e, each rounded down as nccl-tests does (count_for_bytes),
// duplicates and empty blocked sizes dropped.
std::vector<Request> sweep(const BenchArgs& a, const Request& base) {
  const Bytes lo = parse_size(a.min_bytes, "-b");
  const Bytes hi = parse_size(a.max_bytes, "-e");
  if (hi < lo) throw RequestError(fmt::format("-e {} is below -b {}", a.max_bytes, a.min_bytes));
  if (a.factor < 2) throw RequestError(fmt::format("-f: expected a factor >= 2, got {}", a.factor));
  std::vector<Request> out;
  if (base.collective == Collective::kBarrier) return {base};
  const std::uint64_t elem = element_size(base.dtype);
  for (std::uint64_t b = lo.count(); b <= hi.count(); b *= a.factor) {
    Request r = base;
    r.count = count_for_bytes(r.collective, Bytes(b - b % elem), r.dtype, r.comm.size());
    if (r.count == 0 && b > 0) continue;
    if (!out.empty() && out.back().count == r.count) continue;
    out.push_back(r);
    if (b == 0) break;
  }
  return out;
}

void run_bench(const BenchArgs& given) {
  check_writable(given.output, "-o");
  check_writable(given.trace, "--trace");
  BenchArgs a = given;
  a.algo = canonical_algorithm(given.algo);  // NCCL's spellings name collsim's algorithm
  std::unique_ptr<Backend> backend = make_backend(a.backend);
  ProcessGroup& group = backend->processes();
  try {
    Request base;
    base.collective = parse_collective(a.op);
    base.algorithm = a.algo;
    base.protocol = parse_protocol(a.proto);
    base.dtype = parse_data_type(a.dtype);
    base.redop = parse_reduce_op(a.redop);
    base.channels = a.channels;
    base.root = a.root;
    int ranks = a.ranks > 0 ? a.ranks : backend->preferred_ranks();
    if (ranks <= 0) ranks = 8;
    const int per_node = a.ranks_per_node > 0 ? a.ranks_per_node : ranks;
    if (ranks % per_node != 0) {
      throw RequestError(
          fmt::format("--ranks-per-node {} does not divide --ranks {}", per_node, ranks));
    }
    base.comm = Communicator::grid(ranks / per_node, per_node);
    BenchOptions o;
    o.warmup = a.warmup;
    o.iters = a.iters;
    o.check = a.check != 0;
    o.run.threads = a.threads;
    std::vector<Row> rows;
    const std::vector<Request> requests = sweep(a, base);
    for (std::size_t i = 0; i < requests.size(); ++i) {
      const Schedule s = plan(requests[i]);
      o.trace = !a.trace.empty() && i + 1 == requests.size();
      Row row{requests[i], measure(*backend, s, o)};
      if (row.sample.wrong > 0 && !row.sample.wrong_detail.empty()) {
        std::cerr << "collsim: " << row.sample.wrong_detail << "\n";
      }
      if (o.trace && group.index() == 0) {
        std::ofstream f(a.trace);
        write_measured_trace(f, s, row.sample.op_timings, a.backend);
        if (!f) throw Error(fmt::format("--trace: cannot write \"{}\"", a.trace));
      }
      rows.push_back(std::move(row));
    }
    const std::vector<std::string> processes = group.describe_processes();
    if (group.index() != 0) return;
    std::ostringstream text;
    if (a.format == "table") {
      write_nccl_tests_table(text, bench_table(a, rows, *backend, ranks, processes));
    } else {
      write_rows(text, a, rows);
    }
    if (a.output.empty()) {
      std::cout << text.str() << std::flush;
    } else {
      std::ofstream f(a.output);
      f << text.str();
      if (!f) throw Error(fmt::format("-o: cannot write \"{}\"", a.output));
    }
    std::uint64_t wrong = 0;
    for (const Row& r : rows) wrong += r.sample.wrong;
    if (wrong > 0) {
      throw BackendError(
          fmt::format("{} backend: {} wrong elements (see #wrong)", a.backend, wrong));
    }
  } catch (const Error& e) {
    // The other processes of an MPI job would wait for this one forever: stop them all.
    if (group.size() > 1) {
      std::cerr << "collsim: process " << group.index() << ": " << e.what() << "\n";
      group.abort_all(1);
    }
    throw;
  }
}

}  // namespace

void register_bench(CLI::App& app) {
  auto a = std::make_shared<BenchArgs>();
  CLI::App* cmd = app.add_subcommand(
      "bench", "Run the schedules on real hardware and print what was measured, nccl-tests style");
  cmd->add_option("--backend", a->backend, "cpu, mpi (under mpirun), cuda, nccl or nccl-native")
      ->capture_default_str();
  cmd->add_option("--op", a->op,
                  "collective: allreduce allgather reducescatter broadcast reduce gather scatter "
                  "alltoall barrier sendrecv")
      ->required();
  cmd->add_option("-b,--minbytes", a->min_bytes, "smallest size (nccl-tests' size column)")
      ->capture_default_str();
  cmd->add_option("-e,--maxbytes", a->max_bytes, "largest size")->capture_default_str();
  cmd->add_option("-f,--stepfactor", a->factor, "multiply the size by this each step")
      ->capture_default_str();
  cmd->add_option("--ranks", a->ranks,
                  "ranks (default: the MPI job's processes, the GPUs, or 8 for cpu)")
      ->check(positive_int());
  cmd->add_option("--ranks-per-node", a->ranks_per_node,
                  "ranks per node of the layout the algorithms see (default: all on one node)")
      ->check(positive_int());
  cmd->add_option("--algo", a->algo, "algorithm (see `collsim list`)")->capture_default_str();
  cmd->add_option("--proto", a->proto, "protocol: ll, ll128 or simple")->capture_default_str();
  cmd->add_option("--channels", a->channels, "channels (NCCL's nChannels)")
      ->check(positive_int())
      ->capture_default_str();
  cmd->add_option("--dtype", a->dtype,
                  "data type: f16 bf16 f32 f64 f8e4m3 f8e5m2 i8 u8 i32 u32 i64 u64")
      ->capture_default_str();
  cmd->add_option("--redop", a->redop, "reduction: sum prod min max avg")->capture_default_str();
  cmd->add_option("--root", a->root, "root rank (broadcast, reduce, gather, scatter)")
      ->check(non_negative_int())
      ->capture_default_str();
  cmd->add_option("-w,--warmup_iters", a->warmup, "untimed runs first")
      ->check(non_negative_int())
      ->capture_default_str();
  cmd->add_option("-n,--iters", a->iters, "timed runs per size")
      ->check(positive_int())
      ->capture_default_str();
  cmd->add_option("-c,--check", a->check, "verify the results (#wrong): 1 or 0")
      ->check(CLI::Range(0, 1))
      ->capture_default_str();
  cmd->add_option("--threads", a->threads, "worker threads of the cpu backend (0: all cores)")
      ->check(non_negative_int());
  cmd->add_option("--format", a->format, "table (nccl-tests), csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", a->output, "write the results to FILE (default: stdout)");
  cmd->add_option("--trace", a->trace,
                  "write a Perfetto trace (JSON) of one more run at the largest size");
  cmd->callback([a] { run_bench(*a); });
}

}  // namespace collsim
