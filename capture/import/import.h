// Public entry of the importers: PyTorch profiler / Kineto Chrome JSON (.json, .json.gz).
//
// Failure modes: a path that does not exist or cannot be read, a file that is not JSON at all,
// is truncated before the event array ends, or has a malformed top level returns an error
// whose message is "<path>: offset <byte>: <reason>" (the CLI maps it to exit code 2). A bad
// single event (wrong types, missing ts/dur, negative dur, numbers beyond int64, invalid UTF-8
// in a name, duplicate ids) does not fail the import: it is skipped and counted in the
// source's model::SourceStats, which `overlapscope info` prints.
#pragma once

#include <cstdint>
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
  int threads = 0;  // parser threads per file; 0 = hardware concurrency (at most 2 used)
  // Bytes of uncompressed JSON held and parsed at a time (the window; it grows only when one
  // JSON value is larger). 0 = 16 MiB; two blocks are held (one read ahead by a reader
  // thread). Tests use small values to exercise chunk boundaries.
  int64_t chunk_bytes = 0;
  // Called now and then with (bytes done, bytes total) of the current file; may be empty.
  std::function<void(int64_t, int64_t)> progress;
};

// Expands directories: every *.json / *.json.gz inside (not recursive) whose first 64 KiB
// mention "traceEvents" or "schemaVersion" (so side files such as timings.json are left out),
// sorted by name; when both X.json and X.json.gz exist only X.json.gz is taken. Files are
// passed through unchanged. Fails on a path that does not exist or a directory with no trace.
absl::StatusOr<std::vector<std::string>> ExpandTracePaths(absl::Span<const std::string> paths);

// The rank a file name states: "rank3", "rank_3", "rank-3" anywhere in the base name, else a
// trailing "-3" before the extension (.json, .json.gz, .pt.trace.json). -1 when none.
int32_t RankFromFileName(std::string_view path);

// Imports one Kineto file into `builder` as one new process (one rank). The rank comes from the
// top-level distributedInfo.rank, else RankFromFileName, else it stays unknown. On error the
// builder may hold a partial process: discard it.
absl::Status ImportKinetoFile(const std::string& path, model::TraceBuilder& builder,
                              const ImportOptions& options);

// Imports files and directories (one file per rank) into one finalized multi-rank trace.
absl::StatusOr<model::Trace> ImportTraces(absl::Span<const std::string> paths,
                                          const ImportOptions& options = {});

}  // namespace overlapscope::import
