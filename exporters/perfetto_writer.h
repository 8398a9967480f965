// Perfetto native trace (.pftrace) writer: TracePacket/TrackEvent protobuf, encoded by our own
// ProtoWriter (no protobuf library).
//
// What the file holds (docs/perfetto.md says what a user sees where):
// - one trusted_packet_sequence_id for everything; the first packet clears incremental state
//   and interns categories and debug-annotation names; event names (EventName iid) and
//   repeated string values are interned on first use, so large traces stay small;
// - timestamps are exact int64 ns of the model on the default trace clock (BOOTTIME), no
//   ClockSnapshot needed;
// - slices are SLICE_BEGIN/SLICE_END pairs, written per track with END before BEGIN at equal
//   timestamps, on lanes that never partially overlap (perfetto_layout.h);
// - flows (fixed64 flow_ids / terminating_flow_ids): each launch/memcpy/sync API call to its
//   GPU activity or sync record, and cudaStreamWaitEvent from the recording stream's activity to
//   the waiting stream. The flow starts on whichever end comes first in the file.
// - with an analysis result: exposed communication, overlap % per iteration, blocked-on-GPU
//   slices, GPU idle gaps with their cause and findings (perfetto_analysis.cc).
//
// Failure modes: an output path that cannot be created or written returns an error naming the
// path and the reason; a trace with timestamps before 0 ns is shifted so the earliest is 0 and
// the shift is reported in PerfettoStats (TracePacket.timestamp is unsigned).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analyze/analysis.h"
#include "model/trace.h"

namespace overlapscope::exporters {

struct PerfettoStats {
  int64_t packets = 0;
  int64_t tracks = 0;
  int64_t lane_tracks = 0;  // child tracks made for partially overlapping slices
  int64_t slices = 0;       // BEGIN/END pairs
  int64_t instants = 0;
  int64_t counter_samples = 0;
  int64_t flows = 0;
  int64_t bytes = 0;
  int64_t time_shift_ns = 0;  // added to every timestamp (0 unless the trace had negative times)
};

struct PerfettoOptions {
  // Write only this process (rank) and its GPUs, with its analysis tracks; kNone: every process.
  model::ProcessId only_process = model::kNone;
};

// Receives the encoded bytes in order, in chunks of about 1 MiB (at packet boundaries).
using ByteSink = std::function<absl::Status(std::string_view)>;

// Encodes `trace` (and, when not null, the analysis drawn on extra tracks) into `sink`.
// The analysis must be the result of analyze::AnalyzeAll() on this same trace.
absl::StatusOr<PerfettoStats> EncodePerfetto(const model::Trace& trace, const analyze::AnalysisResult* analysis_or_null,
                                             const ByteSink& sink, const PerfettoOptions& options = {});

// Encodes into memory (tests, small traces).
absl::StatusOr<std::string> EncodePerfettoToString(const model::Trace& trace,
                                                   const analyze::AnalysisResult* analysis_or_null,
                                                   PerfettoStats* stats = nullptr);

// Writes a .pftrace file. This is what `overlapscope export -o X.pftrace` and
// `overlapscope analyze --trace X.pftrace` call.
absl::Status WritePerfetto(const model::Trace& trace, const analyze::AnalysisResult* analysis_or_null,
                           const std::string& path, PerfettoStats* stats = nullptr,
                           const PerfettoOptions& options = {});

}  // namespace overlapscope::exporters
