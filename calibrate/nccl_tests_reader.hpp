// Reads what nccl-tests' *_perf programs print (and what `collsim bench` prints, which is the same
// table, or collsim's CSV) into a MeasurementFile: the rows, and what the file says about the run.
//
//   MeasurementFile m = read_measurements("logs/all_reduce.txt");  // throws MeasurementError
//   ReadOptions op{.collective = Collective::kAllGather};           // what --op says
//   MeasurementFile n = read_measurements("logs/unnamed.txt", op);
//   ReadOptions run{.nccl_version = "2.17.1", .env = {{"NCCL_ALGO", "Ring"}}};  // --nccl-version,
//   MeasurementFile o = read_measurements("logs/bare.txt", run);                // --env
//   std::vector<MeasurementFile> p = read_measurement_parts("logs/sweep.txt");  // per collective
//
// `collsim bench` writes the same table, opening with "# Collective test starting: <op>" as
// nccl-tests does, so this reader needs nothing more for it.
//
// How a file is read (nccl-tests' JSON report, -J, is first turned into the log it stands for:
// calibrate/nccl_tests_json.hpp):
// - The launcher's wrapping is undone first (detail::unwrap_log): "\r\n" line ends; Open MPI's
//   --tag-output tags, "[1,0]<stdout>:" and "[1,0]<stderr>:" alike, also where one cuts into
//   another rank's unfinished line (whose pieces are joined again); Intel MPI's "[0] ", srun's
//   "0: " and Ray's "(head, rank=0, pid=3808) " at the start of a line. A row's line number is
//   the line where it begins.
// - A line whose first word reads as a number ("33554432", but also "3.3e7" or "32M", which are
//   then reported as a size in the wrong unit) is a table row and must be complete: as many
//   columns as the column header above it (13 with root and "#wrong", 12 in the older format
//   without root and with "error"; without a header, the first row's count, 12 or 13), each a
//   number of the right kind. nccl-tests 2.19's per-iteration summaries (-I 1: "i_min i_max
//   i_p99 i_cv%" closing each result group, 21 columns) and closing timestamp (-S 1: two words,
//   "2026-11-28 11:02:03") are read too, from the header or, without one, from the row; a
//   "cputime" header (-C 1) is refused: it times the host's loop. A row that runs into log output
//   ("... -1gcn151:...NCCL INFO ...") is an error: its numbers cannot be trusted.
// - Every other line not starting with '#' is foreign output (other ranks' NCCL INFO lines,
//   launcher chatter) and is skipped; it is only read for "NCCL version x.y.z", for NCCL's echo
//   of a variable it read ("NCCL INFO NCCL_ALGO set by environment to Ring", which joins the
//   environment and, where "# env:" or -x says otherwise, overrides it with a warning), for
//   NCCL's init summary of the communicator's channels ("24 coll channels, ..., 16 nvls
//   channels": MeasurementFile::coll_channels, nvls_channels), for
//   echoed commands ("> mpirun ...", "$ ./all_reduce_perf ...") and, when not recognisable as
//   NCCL or launcher output, reported in `warnings`.
// - '#' lines carry nccl-tests' header (nThread line, rank lines, "nccl-tests version", column
//   header, "# Avg bus bandwidth", "# Out of bounds values", "# Reducing maxBytes ..."), and a
//   curator's "# key: text" lines: "# env:" is read as KEY=VALUE assignments (up to the first
//   word of prose), "# command:" as a command line, the others are kept as free text.
// - "### KEY=VALUE ..." labels (annotated sweeps) apply to the rows below them, up to the next
//   label: ALGO and PROTO override NCCL_ALGO / NCCL_PROTO, GPUS sets the rank count.
// - A file may hold several tables (runs), one after the other. A table begins with the first
//   line of a run ("# nccl-tests version", "# Collective test starting:", "# nThread", a line
//   naming a *_perf program) that follows the rows of the table before; until its first row,
//   such lines belong to the same table. Labels, the column layout and the run header of one
//   table do not carry over to the next.
// - A table's collective comes from "# Collective test starting: x_perf" (or collsim's
//   "allreduce"), "# Collective test concluded: x_perf" or the *_perf program of a command line
//   in it; these must agree. A table that names none takes the collective (and the launch line)
//   of the table before it (a run repeated without its banner); tables before the first that
//   names one take that one's. `ReadOptions::collective` (--op) is for files that name none: it
//   must agree with every collective the file names. If nothing names it, the read fails asking
//   for --op.
// - Tables of one collective are read as one MeasurementFile: their rows in file order (a size
//   measured twice gives two rows, both kept), each with the rank count its own table says, the
//   devices and "# Avg bus bandwidth" values of them all, and the first one's run header and
//   command. Tables of different collectives give one MeasurementFile each
//   (read_measurement_parts), in the order of their first table. What the whole file says
//   (environment, versions, curator's metadata, warnings, skipped lines) is in every part.
// - A row's rank count: a "### GPUS=n" label, else a complete rank listing (ranks 0..n-1), else
//   the launch (processes from mpirun -np / srun -n, or 1 for a command line that starts with
//   the program, x nThread x nGpus of the header), else the one n that size / count or busbw /
//   algbw allow, else the highest rank of a partial listing + 1; 0 when nothing tells (Broadcast,
//   Reduce, SendRecv rows do not need it). Command lines count only when they start with the
//   launcher or the program; a curator's prose that merely names the program does not.
// - Checks: algbw = size / time within the printed digits; size = count x element size (x ranks
//   for AllGather, ReduceScatter, AllToAll, Gather, Scatter); busbw = algbw x the nccl-tests
//   factor (docs/nccl-model.md §3) within the printed digits. A row failing one is an error (wrong
//   units, a corrupted or hand-edited row). A rank count the file does not state is inferred from
//   those identities when exactly one fits every row of the run. Results that failed nccl-tests'
//   own validation (#wrong > 0, out-of-bounds values) or a "# Avg bus bandwidth" that does not
//   match its rows are warnings: the timing itself is still what was measured.
// - Type and reduction names collsim lacks (int8, fp8, mulsum) are kept as text with an empty
//   data_type / reduce_op, not rejected: their timings are as good as any.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "calibrate/measurement.hpp"

namespace collsim {

struct ReadOptions {
  // The collective measured (what --op says); required when the file names no *_perf program.
  std::optional<Collective> collective = {};
  // The NCCL release the run used (what --nccl-version says), for files that print none (no
  // banner, library line or "# nccl:" version); one that prints another is a RequestError.
  std::optional<std::string> nccl_version = {};
  // The run's environment (what --env says: NCCL_ALGO, NCCL_PROTO, NCCL_NVLS_ENABLE,
  // NCCL_MIN_NCHANNELS, ...), for files that do not show it ("# env:", launcher -x); a file that
  // sets one of these keys to another value is a RequestError. Read as the file's own would be.
  std::vector<std::pair<std::string, std::string>> env = {};
};

// The largest measurement file read (a MeasurementError beyond it): real logs are kilobytes.
inline constexpr std::size_t kMaxMeasurementBytes = std::size_t{64} << 20;

// The file's rows, one MeasurementFile per collective it measured; "-" reads standard input.
// Throws MeasurementError "path: cannot read: <reason>" when the file cannot be opened, and
// when it is larger than kMaxMeasurementBytes.
std::vector<MeasurementFile> read_measurement_parts(const std::string& path,
                                                    const ReadOptions& options = {});
// The same, for a file of one collective: a file of several is a MeasurementError.
MeasurementFile read_measurements(const std::string& path, const ReadOptions& options = {});

// The same two, from text already in memory; `path` names it in messages and in the result.
std::vector<MeasurementFile> parse_measurement_parts(std::string_view text, const std::string& path,
                                                     const ReadOptions& options = {});
MeasurementFile parse_measurements(std::string_view text, const std::string& path,
                                   const ReadOptions& options = {});

}  // namespace collsim
