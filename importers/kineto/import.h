// Public entry of the importers: PyTorch profiler / Kineto Chrome JSON (.json, .json.gz).
//
// Failure modes: a path that does not exist or cannot be read, a file that is not JSON at all,
// is truncated before the event array ends, or has a malformed top level returns an error
// whose message is "<path>: offset <byte>: <reason>" (the CLI maps it to exit code 2). A bad
// single event (wrong types, missing ts/dur, negative dur, numbers beyond int64, invalid UTF-8
// in a name, duplicate ids) does not fail the import: it is skipped and counted in the
// source's model::SourceStats, which `overlapscope info` prints.
//
// SourceStats of a Kineto file (events_read == events_kept + skipped() + ignored + unknown):
//   kept_by_category: "kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "cuda_sync",
//     "cuda_runtime", "cuda_driver", "cpu_op", "user_annotation", "python_function",
//     "overhead", and "M" (process_name / thread_name / process_labels metadata applied).
//   ignored_by_category: "ac2g" (flow arrows; ids checked against correlation ids), "M"
//     (sort indexes and other display metadata), "Trace" (profiler span), "i" (instants).
//   unknown_categories: cat -> count ("<none>" when an X/flow event has no cat); skipped.
//   unknown_args: arg key -> count (event-level keys as "(event key) K"); the event is kept.
//   skipped_by_reason: "missing ph", "unsupported ph" (B/E/C/...), "missing ts",
//     "missing dur", "negative dur", "ts not a number" / "dur not a number" (e.g. a string),
//     "ts not finite" / "dur not finite" (NaN, Infinity), "ts beyond int64 ns" /
//     "dur beyond int64 ns", "ts + dur beyond int64 ns", "ph not a string",
//     "cat not a string", "name not a string", "args not an object",
//     "bad arg value: <key>" (a used arg with the wrong type or beyond int64),
//     "tid not an integer" (host events), "missing device" / "missing stream" /
//     "device out of range" (GPU events), "metadata without its arg",
//     "duplicate correlation id" (a later runtime/driver call reusing an id of the file).
//   notes (nothing dropped): "strings with invalid UTF-8 (replaced by U+FFFD)",
//     "ac2g flow id without matching correlation id", "ac2g flow without integer id",
//     "GPU activity without API call in file (launched before the capture)",
//     "cuda_sync without API call of the same correlation",
//     "file ends before the top-level object closes (after traceEvents)" (cut in its trailing
//     keys: imported; "...; no baseTimeNanoseconds seen" when the base was not read).
//   examples: the first 20 skips as "offset <byte>: <reason>".
// Timestamps: ts/dur (us, decimal) become int64 ns exactly (digits, no floating point; digits
// past the ns round half away from zero), plus baseTimeNanoseconds wherever it appears.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "model/trace.h"
#include "model/trace_builder.h"

namespace overlapscope::import {

struct ImportOptions {
  // Parser threads per file; 0 = hardware concurrency (at most 32 are used). A reader thread
  // that reads/inflates ahead comes on top. The result is the same at any count.
  int threads = 0;
  // Bytes of uncompressed JSON held and parsed at a time (the window; it grows only when one
  // JSON value is larger). 0 = 2 MiB per parser thread, 16 to 32 MiB; two blocks are held (one
  // read ahead by a reader thread). Tests use small values to exercise chunk boundaries.
  int64_t chunk_bytes = 0;
  // Called now and then with (bytes done, bytes total) of the current file; may be empty.
  std::function<void(int64_t, int64_t)> progress;
};

// Expands directories: every *.json / *.json.gz inside (not recursive) whose first 64 KiB
// mention "traceEvents" or "schemaVersion" (so side files such as timings.json are left out),
// in natural order of names (rank2 before rank10; ImportTraces and ImportInto then read them in
// RankOrder); when both X.json and X.json.gz exist only X.json.gz is taken. Files are
// passed through unchanged. Fails on a path that does not exist or a directory with no trace.
absl::StatusOr<std::vector<std::string>> ExpandTracePaths(absl::Span<const std::string> paths);

// OK for a regular file or a directory; InvalidArgument "PATH: offset 0: cannot open: ..." for a
// directory entry that cannot be read as a trace (a FIFO, socket or device; a symlink loop or a
// dangling link). Directory expansion calls it on every entry with a trace's name.
absl::Status CheckDirectoryEntry(const std::filesystem::directory_entry& entry);

// The rank a file name states: "rank3", "rank_3", "rank-3" anywhere in the base name, else a
// trailing "-3" before the extension (.json, .json.gz, .pt.trace.json). -1 when none.
int32_t RankFromFileName(std::string_view path);

// The rank a Kineto file records in its top-level distributedInfo, read from the first 64 KiB
// (inflated for .gz) only: Kineto writes distributedInfo before traceEvents. -1 when the head
// has none (no distributedInfo before traceEvents, a bare array, a file that cannot be read: the
// import reports that), or its rank is not a non-negative integer.
int32_t RankFromTraceHead(const std::string& path);

// The rank the import will give a Kineto file: RankFromTraceHead, else RankFromFileName, else -1.
int32_t RankOfTraceFile(const std::string& path);

// The reading order of Kineto files: indexes into `files`, by rank (RankOfTraceFile), files
// without a rank last; ties and unranked files keep their order in `files` (natural order of
// names, so pid-named files by pid). Every path that lists inputs uses it (whole model,
// per-rank, MPI shares, exports), so processes come in rank order even when file names do not
// carry the rank (tensorboard_trace_handler's "<worker>.<time>.pt.trace.json"). Reads each head;
// with `read_heads` false (captures: rank<R>.ovspill, pid<P>.ovspill) the names' ranks only.
std::vector<size_t> RankOrder(const std::vector<std::string>& files, bool read_heads = true);

// The host a PyTorch profiler file name states: tensorboard_trace_handler's default worker name
// makes "<host>_<pid>.<time>.pt.trace.json[.gz]" (time in ns, 19 digits, or in ms, 13 digits), so
// the host is what is left of the base name after ".pt.trace.json", ".<time>" and "_<pid>",
// when that is a host name (letters, digits, '-', '.'). "" for any other name (a custom worker
// name, HTA's "rank-0.Apr_03_18_51_38.1102.pt.trace.json"). Used only when the trace itself
// records no host (top-level "host_name", written by Kineto since 2026); the host serves clock
// alignment across hosts (analyze/clock_align.h).
std::string HostFromTraceFileName(std::string_view path);

// Imports one Kineto file into `builder` as one new process (one rank). The rank comes from the
// top-level distributedInfo.rank, else RankFromFileName, else it stays unknown. On error the
// builder may hold a partial process: discard it.
absl::Status ImportKinetoFile(const std::string& path, model::TraceBuilder& builder, const ImportOptions& options);

// Two Kineto files of one rank (the same trace twice, or two runs mixed) would be matched
// against each other as if they were peers: InvalidArgument naming both files.
absl::Status CheckOneFilePerRank(const model::TraceBuilder& builder);

// Clock note of traces imported from Kineto files.
inline constexpr char kKinetoClockNote[] =
    "Kineto ts/dur (us) converted exactly to ns, plus each file's baseTimeNanoseconds";

// Imports files and directories (one file per rank) into one finalized multi-rank trace.
absl::StatusOr<model::Trace> ImportTraces(absl::Span<const std::string> paths, const ImportOptions& options = {});

}  // namespace overlapscope::import
