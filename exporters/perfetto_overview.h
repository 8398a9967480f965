// The overview trace of a many-rank job (`overlapscope export --per-rank`): only summary tracks,
// built from the job's report figures (no events), so that it stays small enough for the Perfetto
// UI at thousands of ranks. Per rank, a process "rank r · host" holding (METRICS.md):
// - "iterations": one slice per iteration on the GPU span of its work (§2), args comm_ns,
//   hidden_comm_ns, exposed_comm_ns and idle_<cause>_ns;
// - "exposed communication": a counter (ns) whose value over each iteration is that iteration's
//   exposed_comm_ns (§2), 0 between iterations;
// - "idle: <cause>": a counter per gap cause with any idle time (host_blocked, launch_bound,
//   dependency, unknown; §4), over each iteration that iteration's idle time in gaps of that cause;
// - "waiting for peers": one slice per matched collective in which the rank waited, from its
//   arrival to the last rank's arrival (its wait_ns, §6).
// A rank with several GPUs gets these iteration tracks per GPU ("GPU d · iterations").
//
// Units: ns on the job's (aligned) trace clock. Failure modes: an output that cannot be created or
// written (the message names the path); nothing throws but bad_alloc.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "exporters/perfetto_writer.h"

namespace overlapscope::exporters {

struct OverviewIteration {
  int64_t number = 0;                // ProfilerStep number (or ordinal)
  int64_t start_ns = 0, end_ns = 0;  // GPU span of the iteration's work
  int64_t comm_ns = 0, hidden_comm_ns = 0, exposed_comm_ns = 0;
  std::vector<std::pair<std::string, int64_t>> idle_ns;  // by gap cause, in report order
};
struct OverviewDevice {
  int64_t ordinal = 0;
  std::vector<OverviewIteration> iterations;
};
struct OverviewWait {
  int64_t arrival_ns = 0, wait_ns = 0;  // wait_ns > 0
  int64_t instance = 0;                 // 1-based index of the report's instances
  int64_t sequence = -1, skew_ns = 0;
  std::string op, communicator, last;  // last: the label of the rank that arrived last
};
struct OverviewRank {
  std::string label, host;  // "rank 3"
  int64_t pid = -1;         // the OS pid (the track's pid is synthetic: 1 + index)
  std::vector<OverviewDevice> devices;
  std::vector<OverviewWait> waits;
};

// Each rank is freed once its tracks are laid out (the layout holds them until they are encoded).
absl::StatusOr<PerfettoStats> EncodeOverview(std::vector<OverviewRank> ranks, const ByteSink& sink);
absl::StatusOr<PerfettoStats> WriteOverview(std::vector<OverviewRank> ranks, const std::string& path);

}  // namespace overlapscope::exporters
