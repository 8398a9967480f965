// TraceBuilder — collects events from an importer or a capture, then Finalize()s them into an
// immutable model::Trace.
//
// Producers append to data().kernels etc. directly (plain structs, no per-event calls) and use
// the GetOrAdd* helpers to get dense ids. Finalize() fails (InvalidArgument) only on
// programming errors of a producer: an id out of range or end_ns < start_ns; importers must
// count and skip such records themselves before they reach the builder.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "model/trace.h"

namespace overlapscope::model {

// A clock shift applied while the trace is finalized: an offset per process added to every
// timestamp of its events (clock alignment of multi-host traces, analyze/clock_align.h).
struct ClockShift {
  std::vector<int64_t> process_offset_ns;  // per ProcessId; empty or all 0 = no shift
  std::string note;                        // appended to the trace's clock note when not empty
};

// Decides the shift from a view of the trace being finalized that holds its strings,
// processes, threads, devices, streams and collectives (spans derived from their carriers,
// sorted by start, process/device/stream filled in) but no events. An error fails Finalize().
using ClockShiftFn = std::function<absl::StatusOr<ClockShift>(const Trace& collectives_only)>;

struct FinalizeOptions {
  ClockShiftFn clock_shift;  // empty: timestamps as recorded
  // Threads for the sorts and indexes (independent vectors at once); the trace is the same at
  // any count. 1: all on the caller's thread.
  int threads = 1;
};

class TraceBuilder {
 public:
  TraceData& data() { return d_; }
  const TraceData& data() const { return d_; }
  StringId Intern(std::string_view s) { return d_.strings.Intern(s); }

  ProcessId AddProcess(const Process& p);
  ThreadId GetOrAddThread(ProcessId p, int64_t tid);
  DeviceId GetOrAddDevice(ProcessId p, int32_t ordinal);
  StreamId GetOrAddStream(DeviceId d, int64_t native_id);

  // Validates, applies the clock shift (if any: every event is shifted in place, once, before
  // the one sort), sorts, remaps collective ids, derives collective spans and builds the
  // lookups and joins (correlation index, launch call of every GPU activity, per-stream and
  // per-device order).
  absl::StatusOr<Trace> Finalize(const FinalizeOptions& options = {}) &&;

 private:
  absl::Status Validate(int threads) const;
  void DeriveCollectiveSpans();
  absl::Status ApplyClockShift(const ClockShiftFn& fn);
  // Finalize's steps on the trace's data (moved into the Trace first); trace_indexes.cc says
  // what each index reads.
  static void SortCollectives(TraceData& d);   // by start; the activities' collective ids renumbered
  static void ClassifyApiCalls(TraceData& d);  // ApiCall::semantic from each call's name (api_names.h)
  static std::vector<GpuRef> GpuRefsByTime(const Trace& t);
  static void BuildStreamDeviceLists(Trace& t, const std::vector<GpuRef>& all, int threads);
  static void BuildCollectiveLists(Trace& t, const std::vector<GpuRef>& all);
  static void BuildGpuByCorrelation(Trace& t, const std::vector<GpuRef>& all);  // by (process, correlation)
  static void BuildApiIndex(Trace& t, int threads);
  static void BuildLaunchJoins(Trace& t, int threads);
  static void ComputeTimeSpan(Trace& t, int threads);

  TraceData d_;
  absl::flat_hash_map<std::pair<int32_t, int64_t>, ThreadId> thread_ids_;
  absl::flat_hash_map<std::pair<int32_t, int64_t>, DeviceId> device_ids_;
  absl::flat_hash_map<std::pair<int32_t, int64_t>, StreamId> stream_ids_;
};

}  // namespace overlapscope::model
