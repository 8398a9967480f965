// Stream concurrency (METRICS.md §9): per device and window (the whole trace, and each iteration
// with the activities assigned to it by launch call, as §2 assigns them), how long two sets of
// GPU activities were busy at the same time: concurrent_ns = |∪A ∩ ∪B|, with |∪A| and |∪B| beside
// it and share = concurrent_ns / min(|∪A|, |∪B|).
//
// The sets are (1) the streams of the device, every pair of streams both busy in the window, and
// (2) user groups (`--group NAME=REGEX`): an activity belongs to a group when the regex (ECMAScript,
// searched anywhere in the name) matches its own name (kernel, memcpy, memset) or the name of any
// host range enclosing its launch call (NVTX ranges, record_function / user annotations, CPU ops,
// on the launching thread). Every pair of groups is reported for every window where either is
// busy. Sync-class activities (METRICS §1) are never busy and belong to no set.
//
// Cost: one sweep over each device's activities in start order, O(n · a) with a the number of
// streams busy at once; groups add one regex search per distinct name and a linear pass over each
// thread's ranges and launch calls.
//
// Failure modes: InvalidArgument for a bad group (no '=', empty name, duplicate name, more than
// 32 groups, invalid regex), naming the group.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "analyze/iterations.h"
#include "analyze/path_inputs.h"
#include "model/trace.h"

namespace overlapscope::analyze {

struct GroupSpec {
  std::string name;
  std::string regex;
};
// Parses "NAME=REGEX" (the first '=' splits); InvalidArgument naming the text otherwise.
absl::StatusOr<GroupSpec> ParseGroupSpec(std::string_view text);
// InvalidArgument, naming the group, for an invalid regex, a name given twice or more than 32
// groups: what AnalyzeStreamConcurrency would refuse, checked before any work.
absl::Status CheckGroups(const std::vector<GroupSpec>& groups);

// Two sets of one window. For stream pairs a/b are StreamIds (a's native id < b's); for groups,
// indexes into ConcurrencyResult::groups (a < b).
struct PairConcurrency {
  int32_t a = model::kNone, b = model::kNone;
  int64_t concurrent_ns = 0;    // |∪A ∩ ∪B|
  int64_t a_ns = 0, b_ns = 0;   // |∪A|, |∪B|
  std::optional<double> share;  // concurrent / min(a_ns, b_ns); absent when that is 0
};

struct WindowConcurrency {
  int32_t iteration = model::kNone;      // index into IterationAssignment::iterations; kNone: whole trace
  int64_t number = -1;                   // its number (ProfilerStep#N)
  std::vector<PairConcurrency> streams;  // pairs of streams both busy in the window
  std::vector<PairConcurrency> groups;   // pairs of groups either of which is busy
};

struct DeviceConcurrency {
  model::DeviceId device = model::kNone;
  model::ProcessId process = model::kNone;
  WindowConcurrency whole;
  std::vector<WindowConcurrency> iterations;  // iteration order; only iterations with activity here
};

struct ConcurrencyOptions {
  std::vector<GroupSpec> groups;
};

struct ConcurrencyResult {
  std::vector<GroupSpec> groups;
  std::vector<int64_t> group_activities;   // per group: activities that belong to it (all devices)
  std::vector<DeviceConcurrency> devices;  // devices with GPU activity, in DeviceId order
};

absl::StatusOr<ConcurrencyResult> AnalyzeStreamConcurrency(const model::Trace& trace, const GpuFacts& gpu,
                                                           const IterationAssignment& iterations,
                                                           const ConcurrencyOptions& opt);

}  // namespace overlapscope::analyze
