// Public entry of the importers: PyTorch profiler / Kineto Chrome JSON (.json, .json.gz).
//
// Failure modes: a path that does not exist or cannot be read, a file that is not JSON at all,
// is truncated before the event array ends, or has a malformed top level returns an error
// whose message is "<path>: offset <byte>: <reason>" (the CLI maps it to exit code 2). A bad
// single event (wrong types, missing ts/dur, negative dur, numbers beyond int64, invalid UTF-8
// in a name, duplicate ids) does not fail the import: it is skipped and counted in the
// source's model::SourceStats, which `overlapscope info` prints.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "model/trace.h"
#include "model/trace_builder.h"

namespace overlapscope::import {

struct ImportOptions {
  int threads = 0;  // parser threads per file; 0 = hardware concurrency (at most 2 used well)
  // Called now and then with (bytes done, bytes total) of the current file; may be empty.
  std::function<void(int64_t, int64_t)> progress;
};

// Expands directories (every *.json / *.json.gz / *.pt.trace.json inside, sorted by name).
absl::StatusOr<std::vector<std::string>> ExpandTracePaths(absl::Span<const std::string> paths);

// Imports one Kineto file into `builder` as one new process (one rank).
absl::Status ImportKinetoFile(const std::string& path, model::TraceBuilder& builder,
                              const ImportOptions& options);

// Imports files and directories (one file per rank) into one finalized multi-rank trace.
absl::StatusOr<model::Trace> ImportTraces(absl::Span<const std::string> paths,
                                          const ImportOptions& options = {});

}  // namespace overlapscope::import
