// What a session holds (`overlapscope info`): ranks, devices, streams with their kernel, copy
// and memset counts, threads, counts per event kind, time span, clock alignment and every
// import statistic (records skipped or ignored, with reasons and examples).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "engine/session.h"

namespace overlapscope::engine {

// JSON (schema overlapscope.info/1, ends with a newline) or the text form, rendered from the
// same document so the two never disagree. Fails only when memory runs out.
absl::StatusOr<std::string> DescribeSession(const Session& session, bool json);

// How many events of each kind the session holds.
struct EventCounts {
  int64_t processes = 0, kernels = 0, memcpys = 0, memsets = 0, api_calls = 0, syncs = 0, ranges = 0;
};
EventCounts CountEvents(const Session& session);

// The capture summary `profile` prints: processes with their event counts and GPUs, and per
// source what was read, kept, skipped (with reasons) and dropped by CUPTI; then one line per
// capture window of each process. `ranged` (a capture range or a delay was asked for): a process
// without any window is said to have recorded nothing.
absl::StatusOr<std::string> DescribeCapture(const Session& session, bool ranged = false);

}  // namespace overlapscope::engine
