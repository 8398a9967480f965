// Internal to analyze/: which user groups (stream_concurrency.h, `--group NAME=REGEX`) each GPU
// activity belongs to, as a bit mask (bit g = group g).
#pragma once

#include <cstdint>
#include <regex>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analyze/path_inputs.h"
#include "analyze/stream_concurrency.h"
#include "model/trace.h"

namespace overlapscope::analyze {

inline constexpr size_t kMaxGroups = 32;

// The groups' regexes, compiled (ECMAScript); InvalidArgument naming the group for a bad one or
// for more than kMaxGroups groups.
absl::StatusOr<std::vector<std::regex>> CompileGroups(const std::vector<GroupSpec>& groups);

// out[kind][i]: the groups of activity i of that kind (GpuKind order). InvalidArgument for an
// invalid regex or too many groups, naming the group.
absl::Status GroupMasks(const model::Trace& t, const GpuFacts& gpu, const std::vector<GroupSpec>& groups,
                        std::vector<uint32_t> out[3], std::vector<int64_t>* members);

}  // namespace overlapscope::analyze
