// Reads what nccl-tests' *_perf programs print (and what `collsim bench` prints, which is the same
// table, or collsim's CSV) into a MeasurementFile: the rows, and what the file says about the run.
//
//   MeasurementFile m = read_measurements("logs/all_reduce.txt");  // throws MeasurementError
//   ReadOptions op{.collective = Collective::kAllGather};           // what --op says
//   MeasurementFile n = read_measurements("logs/unnamed.txt", op);
//
// `collsim bench` writes the same table, opening with "# Collective test starting: <op>" as
// nccl-tests does, so this reader needs nothing more for it.
//
// How a file is read:
// - Launcher tags are removed first: Open MPI's "[1,0]<stdout>:", Intel MPI's "[0] ", srun's
//   "0: "; "<stderr>" lines are skipped.
// - A line whose first word reads as a number ("33554432", but also "3.3e7" or "32M", which are
//   then reported as a size in the wrong unit) is a table row and must be complete: as many
//   columns as the column header above it (13 with root and "#wrong", 12 in the older format
//   without root and with "error"; without a header, the first row's count, 12 or 13), each a
//   number of the right kind. A row that runs into log output ("... -1gcn151:...NCCL INFO ...")
//   is an error: its numbers cannot be trusted.
// - Every other line not starting with '#' is foreign output (other ranks' NCCL INFO lines,
//   launcher chatter) and is skipped; it is only read for "NCCL version x.y.z", for echoed
//   commands ("> mpirun ...", "$ ./all_reduce_perf ...") and, when not recognisable as NCCL or
//   launcher output, reported in `warnings`.
// - '#' lines carry nccl-tests' header (nThread line, rank lines, "nccl-tests version", column
//   header, "# Avg bus bandwidth", "# Out of bounds values", "# Reducing maxBytes ..."), and a
//   curator's "# key: text" lines: "# env:" is read as KEY=VALUE assignments (up to the first
//   word of prose), "# command:" as a command line, the others are kept as free text.
// - "### KEY=VALUE ..." labels (annotated sweeps) apply to the rows below them, up to the next
//   label: ALGO and PROTO override NCCL_ALGO / NCCL_PROTO, GPUS sets the rank count.
// - The collective comes from "# Collective test starting: x_perf" (or collsim's "allreduce") or
//   the *_perf program of a command line; all of these, and `ReadOptions::collective`, must
//   agree. If none names it, the read fails asking for --op.
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

#include "calibrate/measurement.hpp"

namespace collsim {

struct ReadOptions {
  // The collective measured (what --op says); required when the file names no *_perf program.
  std::optional<Collective> collective;
};

// Throws MeasurementError "path: cannot read: <reason>" when the file cannot be opened.
MeasurementFile read_measurements(const std::string& path, const ReadOptions& options = {});

// The same, from text already in memory; `path` names it in messages and in the result.
MeasurementFile parse_measurements(std::string_view text, const std::string& path,
                                   const ReadOptions& options = {});

}  // namespace collsim
