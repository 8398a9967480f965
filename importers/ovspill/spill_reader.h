// Reading the capture spill format (layout in spill_records.h) into a model::Trace.
// Uses model/ and Abseil only (no CUDA): spill files can be read and tested without a GPU.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "formats/spill_records.h"
#include "importers/nccl/nccl_plugin_records.h"
#include "model/trace.h"
#include "model/trace_builder.h"

namespace overlapscope::import {

// What else to merge into the process of a spill file: the NCCL profiler plugin's file of the
// same process (nccl_plugin_records.h).
struct SpillReadOptions {
  // Plugin file to merge ("" = none given).
  std::string nccl_plugin_file;
  // ReadSpillFile(s): when nccl_plugin_file is empty, merge <spill dir>/nccl.<pid>.ovnccl if
  // it exists (what `overlapscope profile` leaves next to the spill files).
  bool nccl_next_to_spill = true;
  NcclMergeOptions nccl;  // time window of the plugin records to merge
};

// Reads one spill file (one process) into `builder` as one more process. Fails with
// InvalidArgument "<path>: offset N: reason" when the file is not a spill file or a record is
// malformed beyond recovery; a truncated tail is counted, not an error. A plugin file that
// cannot be read is not an error either: it becomes a source whose skipped_by_reason and
// examples say why (the CUPTI capture is still good).
absl::Status ReadSpillFile(const std::string& path, model::TraceBuilder& builder, const SpillReadOptions& options = {});
// Same, from bytes in memory (`path` only names the source in messages and stats); merges only
// an explicitly named plugin file.
absl::Status ReadSpillBytes(std::string_view bytes, const std::string& path, model::TraceBuilder& builder,
                            const SpillReadOptions& options = {});

// Reads several spill files (one per process/rank) into one finalized trace.
absl::StatusOr<model::Trace> ReadSpillFiles(const std::vector<std::string>& paths,
                                            const SpillReadOptions& options = {});

// Clock note stored in traces read from spill files.
inline constexpr char kSpillClockNote[] = "CLOCK_REALTIME ns (CUPTI timestamp callback, one clock per host)";

}  // namespace overlapscope::import
