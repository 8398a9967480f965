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

}  // namespace overlapscope::engine
