// Chrome trace JSON writer in PyTorch profiler (Kineto) conventions, readable by Perfetto UI,
// chrome://tracing, Holistic Trace Analysis and our own importer.
//
// Conventions (as Kineto writes them): one JSON document per process (rank) with
// "schemaVersion", "deviceProperties" (id, name), "distributedInfo" (rank, world_size) when the
// rank is known, "baseTimeNanoseconds" and "traceEvents". Event categories are `kernel`,
// `gpu_memcpy`, `gpu_memset`, `cuda_runtime`, `cuda_driver`, `cuda_sync`, `cpu_op`,
// `user_annotation`, `python_function`, `overhead`, `gpu_user_annotation`; GPU work has
// pid = device ordinal and tid = stream id with args device/stream/correlation/External id/
// bytes/grid/block and the NCCL args (Collective name, In/Out msg nelems, Group size, dtype,
// Process Group Name, Seq); API calls link to their GPU work with `ac2g` s/f flow pairs whose
// id is the correlation id; "M" metadata names processes (labels "CPU" / "GPU n") and threads.
// ts is relative to baseTimeNanoseconds (trace start floored to the second), in µs with exactly
// three decimals, so every ns survives; pid/tid fit in uint32 (others get a synthetic id).
//
// Not representable, counted in ChromeStats::not_written (never silently): syncs with no
// device (Kineto keeps cuda_sync on the GPU rows); stream-to-stream flows (no Kineto category).
// NVTX ranges are written as user_annotation (Kineto has no NVTX category) and counted in
// ChromeStats::nvtx_as_user_annotation.
//
// Failure modes: an output path that cannot be created or written, or a zlib failure, returns
// an error naming the path and the reason.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "model/trace.h"

namespace overlapscope::exporters {

using ByteSink = std::function<absl::Status(std::string_view)>;

struct ChromeStats {
  int64_t events = 0;       // JSON events written (X, flows and metadata)
  int64_t bytes = 0;        // uncompressed JSON bytes
  int64_t file_bytes = 0;   // bytes on disk (compressed for .json.gz)
  int64_t not_written = 0;  // model events Kineto JSON cannot carry (see header comment)
  int64_t nvtx_as_user_annotation = 0;
  std::vector<std::string> files;
};

// Paths WriteChrome() writes for `path`: `path` itself for a one-process trace, else one per
// process with ".rank<r>" (or ".process<i>" without a rank) before ".json" / ".json.gz".
std::vector<std::string> ChromeOutputPaths(const model::Trace& trace, const std::string& path);

// Writes one document per process; gzip-compressed when `path` ends in ".gz". With
// `only_process`: that process's document only, to `path` itself.
absl::StatusOr<ChromeStats> WriteChrome(const model::Trace& trace, const std::string& path,
                                        model::ProcessId only_process = model::kNone);

// The document of one process, uncompressed, into `sink` (tests and the benchmark).
absl::Status EncodeChromeProcess(const model::Trace& trace, model::ProcessId process, const ByteSink& sink,
                                 ChromeStats* stats);
absl::StatusOr<std::string> EncodeChromeToString(const model::Trace& trace, model::ProcessId process,
                                                 ChromeStats* stats = nullptr);

}  // namespace overlapscope::exporters
