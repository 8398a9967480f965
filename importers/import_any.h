// The one entry of the importers: any input overlapscope reads, recognized by its first bytes.
//
// Inputs: Kineto / PyTorch-profiler JSON (.json, or gzip-compressed .json.gz: kineto/import.h),
// our CUPTI captures (.ovspill, magic "OVSPILL1": ovspill/spill_reader.h; the NCCL profiler
// plugin's nccl.<pid>.ovnccl next to a capture is merged into it), and directories: a directory
// holding *.ovspill files stands for them (a `profile` output directory; the .pftrace/.json
// written beside them are exports of the same capture), any other directory for its Kineto
// files (kineto::ExpandTracePaths). Every file becomes one process (rank) of one trace.
//
// Recognition: the first bytes decide (gzip magic 1f 8b, "OVSPILL1", "OVNCCL01"); a file with
// none of them is a spill file when its name ends in .ovspill (the spill reader then says what
// is wrong), else Kineto JSON (the JSON reader says what is wrong).
//
// Failure modes (messages "<path>: offset <byte>: <reason>"): a path that does not exist, a
// directory without traces, a file that cannot be read or parsed, Kineto files and captures
// mixed in one call, an .ovnccl file given on its own, two Kineto files of one rank. Nothing
// throws: allocation failures and other exceptions come back as errors.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "importers/kineto/import.h"
#include "importers/ovspill/spill_reader.h"
#include "model/trace.h"
#include "model/trace_builder.h"

namespace overlapscope::import {

enum class InputFormat { kKinetoJson, kKinetoJsonGz, kSpill, kNcclPlugin };
std::string_view ToString(InputFormat f);  // "kineto-json", "kineto-json.gz", "ovspill", "ovnccl"

// The format of one file from its first bytes (and, for a file without a known magic, its name:
// see the header comment). Fails only when the file cannot be opened.
absl::StatusOr<InputFormat> DetectFormat(const std::string& path);

// Where a long import stands: file `file` (0-based) of `files`, `done_bytes` of `total_bytes`
// of that file read (total 0 when unknown, e.g. captures).
struct ImportProgress {
  int file = 0, files = 0;
  std::string path;
  int64_t done_bytes = 0, total_bytes = 0;
};

struct ImportAnyOptions {
  ImportOptions kineto;                                 // parser threads, window size (its `progress` is replaced)
  SpillReadOptions spill;                               // NCCL plugin file merging
  std::function<void(const ImportProgress&)> progress;  // may be empty
};

// The files `paths` stand for (directories expanded) and their formats, in reading order.
struct ExpandedInputs {
  std::vector<std::string> files;
  std::vector<InputFormat> formats;  // parallel to files
};
absl::StatusOr<ExpandedInputs> ExpandInputs(absl::Span<const std::string> paths);

// Imports every input into `builder` and sets the builder's clock note; returns the files read.
// Each file becomes one process, in order: process i of the trace came from files[i]. On error the builder may hold
// partial processes: discard it.
absl::StatusOr<ExpandedInputs> ImportInto(absl::Span<const std::string> paths, const ImportAnyOptions& options,
                                          model::TraceBuilder& builder);

// ImportInto, then TraceBuilder::Finalize(finalize) (clock alignment, when asked, happens there).
absl::StatusOr<model::Trace> ImportAny(absl::Span<const std::string> paths, const ImportAnyOptions& options = {},
                                       const model::FinalizeOptions& finalize = {});

}  // namespace overlapscope::import
