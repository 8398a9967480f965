// Reading the capture spill format (layout in spill_records.h) into a model::Trace.
// Uses model/ and Abseil only (no CUDA): spill files can be read and tested without a GPU.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "capture/cupti/spill_records.h"
#include "model/trace.h"
#include "model/trace_builder.h"

namespace overlapscope::cupti {

// Reads one spill file (one process) into `builder` as one more process. Fails with
// InvalidArgument "<path>: offset N: reason" when the file is not a spill file or a record is
// malformed beyond recovery; a truncated tail is counted, not an error.
absl::Status ReadSpillFile(const std::string& path, model::TraceBuilder& builder);
// Same, from bytes in memory (`path` only names the source in messages and stats).
absl::Status ReadSpillBytes(std::string_view bytes, const std::string& path, model::TraceBuilder& builder);

// Reads several spill files (one per process/rank) into one finalized trace.
absl::StatusOr<model::Trace> ReadSpillFiles(const std::vector<std::string>& paths);

// Clock note stored in traces read from spill files.
inline constexpr char kSpillClockNote[] = "CLOCK_REALTIME ns (CUPTI timestamp callback, one clock per host)";

}  // namespace overlapscope::cupti
