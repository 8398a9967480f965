// engine exports: the session's trace as Perfetto protobuf (.pftrace, optionally with the
// analysis drawn on extra tracks) or as Kineto-compatible Chrome JSON (.json / .json.gz, one
// file per rank). The trace is the session's: clocks aligned as at Load (docs/perfetto.md says
// what a user sees where).
//
// Failure modes (no exception escapes): an output path that cannot be created or written, or a
// zlib failure: an error naming the path and the reason (the CLI exits 1).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/analysis.h"
#include "engine/session.h"

namespace overlapscope::engine {

enum class TraceFormat { kPerfetto, kChrome };
// From the file name: .pftrace / .perfetto-trace / .pb -> Perfetto; .json / .json.gz -> Chrome;
// InvalidArgument otherwise.
absl::StatusOr<TraceFormat> TraceFormatFromPath(const std::string& path);

struct PerfettoExport {
  int64_t packets = 0, tracks = 0, lane_tracks = 0, slices = 0, instants = 0, counter_samples = 0, flows = 0;
  int64_t bytes = 0;
  int64_t time_shift_ns = 0;  // added to every timestamp (the trace had times before 0)
};

struct ChromeExport {
  std::vector<std::string> files;
  int64_t events = 0, bytes = 0, file_bytes = 0;
  int64_t not_written = 0;              // sync records without a device (Kineto cannot carry them)
  int64_t nvtx_as_user_annotation = 0;  // NVTX ranges written as user_annotation
};

struct ExportOptions {
  // Perfetto: draw this analysis (of the same session) on extra tracks; null: events only.
  const Analysis* analysis = nullptr;
  // Only the rank read from session.files()[only_file] (Perfetto: its tracks and its analysis
  // tracks; Chrome: its document, written to `path` itself); -1: every rank.
  int64_t only_file = -1;
};

absl::StatusOr<PerfettoExport> ExportPerfetto(const Session& session, const std::string& path,
                                              const ExportOptions& options = {});
// One file per process: `path` itself for a one-process trace (or with only_file), else
// ".rank<r>" (".process<i>" without a rank) before ".json" / ".json.gz"; gzip-compressed when
// `path` ends in ".gz". ExportOptions::analysis is not drawn (Chrome JSON keeps events only).
absl::StatusOr<ChromeExport> ExportChrome(const Session& session, const std::string& path,
                                          const ExportOptions& options = {});

}  // namespace overlapscope::engine
