// Clock alignment of multi-host traces. Ranks on one host share CLOCK_REALTIME; ranks of
// several hosts do not (NTP leaves offsets of tens of µs to ms), and METRICS §6 skews and
// waits would then measure the clock offset, not the ranks.
//
// Estimate: a collective ENDS nearly together on every rank (nobody leaves before the last
// data arrive), so for each matched instance (analyze/cross_rank.h: matched by sequence or
// order, never by time) that has participants on the reference host R and on host H,
//   d = end_R − end_H   (end_X: the earliest end among X's participants in that instance)
// and H's offset is the median of d over those instances (even count: floor of the mean of the
// two middle values, as elsewhere in the report). Adding the offset to every timestamp of H's
// processes puts H on R's clock. R is the host of the lowest-ranked participant (or of process 0
// without collectives). At least `min_instances` (default 3) shared instances are required;
// otherwise H stays unaligned and the reason says "too few matched collectives".
//
// Clock domains: the host name of a process (model::Process::host); a process without a host
// name is its own domain "pid P" (only aligned when forced: it may share a host with others).
// Mode auto aligns when the trace names >= 2 distinct hosts; on aligns whenever there are >= 2
// domains; off never. Offsets are exact int64 ns. Pure: no I/O.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "model/trace.h"
#include "model/trace_builder.h"

namespace overlapscope::analyze {

enum class ClockAlignMode { kOff, kAuto, kOn };
// "off", "auto", "on"; InvalidArgument naming the value otherwise.
absl::StatusOr<ClockAlignMode> ParseClockAlignMode(std::string_view s);
std::string_view ToString(ClockAlignMode m);

enum class ClockAlignStatus {
  kNotEvaluated,  // nobody ran EstimateClockAlignment (default of a report without it)
  kOff,           // --align-clocks=off
  kOneHost,       // one clock domain: clocks shared, nothing to do
  kHostsUnknown,  // auto mode, fewer than two named hosts: clocks assumed shared
  kAligned,       // every other domain got an offset
  kPartial,       // some domains got an offset, others had too few matched collectives
  kNotAligned,    // >= 2 domains, none could be aligned
};
// "not-evaluated", "off", "one-host", "hosts-unknown", "aligned", "partial", "not-aligned"
std::string_view ToString(ClockAlignStatus s);

struct HostClock {
  std::string host;   // host name, or "pid P" for a process without one
  bool named = true;  // false: `host` is "pid P" (no host name recorded)
  std::vector<model::ProcessId> processes;
  bool reference = false;
  bool aligned = false;            // offset_ns is applied (reference: false, offset 0)
  int64_t offset_ns = 0;           // added to every timestamp of `processes`
  int64_t instances = 0;           // matched instances shared with the reference
  int64_t residual_spread_ns = 0;  // max |end_R − (end_H + offset)| over those instances
  std::string reason;              // why not aligned (empty when aligned or reference)
};

struct ClockAlignment {
  ClockAlignMode mode = ClockAlignMode::kAuto;
  ClockAlignStatus status = ClockAlignStatus::kNotEvaluated;
  std::vector<HostClock> hosts;  // reference first, then by first process
  int64_t min_instances = 3;
  int64_t matched_instances_used = 0;  // distinct instances used by at least one aligned host
  int64_t residual_spread_ns = 0;      // max over aligned hosts
  // True when the alignment changes a timestamp (some host got a non-zero offset).
  bool applied() const;
};

ClockAlignment EstimateClockAlignment(const model::Trace& trace, ClockAlignMode mode, int64_t min_instances = 3);

// Clock alignment applied once while a trace is built: give the result to
// TraceBuilder::Finalize (FinalizeOptions::clock_shift). It estimates the alignment from the
// collectives of the trace being finalized (EstimateClockAlignment on its collectives-only view),
// stores it in *alignment (may be null), and returns each aligned host's offset for every
// process of that host and the clock note ("host b shifted by -1234567 ns to host a (median of
// collective end differences)"); Finalize adds the offsets to every timestamp of those processes
// (events of all kinds, collective spans) before its one sort.
model::ClockShiftFn ClockAlignmentShift(ClockAlignMode mode, ClockAlignment* alignment, int64_t min_instances = 3);

// One line for reports: "clocks of 2 hosts aligned by 40 matched collectives; host b shifted by
// -1234.567 µs (residual spread 0.4 µs)", "one host: clocks shared, not aligned", ...
std::string DescribeClockAlignment(const ClockAlignment& a);

}  // namespace overlapscope::analyze
