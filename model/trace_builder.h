// TraceBuilder — collects events from an importer or a capture, then Finalize()s them into an
// immutable model::Trace.
//
// Producers append to data().kernels etc. directly (plain structs, no per-event calls) and use
// the GetOrAdd* helpers to get dense ids. Finalize() fails (InvalidArgument) only on
// programming errors of a producer: an id out of range or end_ns < start_ns; importers must
// count and skip such records themselves before they reach the builder.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "model/trace.h"

namespace overlapscope::model {

class TraceBuilder {
 public:
  TraceData& data() { return d_; }
  StringId Intern(std::string_view s) { return d_.strings.Intern(s); }

  ProcessId AddProcess(const Process& p);
  ThreadId GetOrAddThread(ProcessId p, int64_t tid);
  DeviceId GetOrAddDevice(ProcessId p, int32_t ordinal);
  StreamId GetOrAddStream(DeviceId d, int64_t native_id);

  // Sorts, remaps collective ids, derives collective spans and builds the lookups.
  absl::StatusOr<Trace> Finalize() &&;

 private:
  TraceData d_;
  absl::flat_hash_map<std::pair<int32_t, int64_t>, ThreadId> thread_ids_;
  absl::flat_hash_map<std::pair<int32_t, int64_t>, DeviceId> device_ids_;
  absl::flat_hash_map<std::pair<int32_t, int64_t>, StreamId> stream_ids_;
};

}  // namespace overlapscope::model
