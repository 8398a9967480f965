// Replay and what-if (METRICS §11) for front ends: `overlapscope replay`, the C API's
// ovscope_replay and Python's overlapscope.replay().
//
// The session's trace is analyzed (classes, iterations, blocking calls, collectives across
// ranks, contention), its dependency graph built, every iteration replayed and, with changes,
// predicted (analyze/replay/replay.h says how). The output starts with the replay error, always.
//
// Failure modes (no exception escapes): InvalidArgument for a malformed change or class rule
// ("--change 'SPEC': reason"); ResourceExhausted when memory runs out.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/analysis.h"
#include "engine/session.h"

namespace overlapscope::engine {

struct ReplayRequest {
  AnalyzeOptions analyze;            // classes and the iteration marker
  std::vector<std::string> changes;  // --change SPEC, applied together, in order
  bool contention = true;            // also predict with the contention model
  int sm_count = 0;                  // SMs per GPU for the SM-share model; 0: from the GPU's name
  bool strict = false;               // no fallbacks (analyze/replay/replay.h ReplayOptions::strict)
  // Not empty: also write the predicted timeline beside the measured one there (Perfetto, a
  // "<name> predicted" process and "GPU N — <device> predicted" groups per rank; without changes
  // the replayed timeline).
  std::string trace_out;
  // Not empty: also write a self-contained HTML page of the result there (no script, no network).
  std::string html_out;
};

// InvalidArgument "--change 'SPEC': reason" for a malformed change.
absl::Status CheckChange(std::string_view spec);

// The JSON document's schema name.
inline constexpr std::string_view kReplaySchema = "overlapscope.replay/1";
// Its version, major.minor (the report's rule, docs/report-schema.md): the minor grows with additive
// changes (1.1: `schema_version`, `job`, `ranks[].predicted_change[_contention]`,
// `iterations[].peer_wait_ns` / `late_peer_rank`; 1.2: `measured.critical_path` null, not zeros:
// the recorded schedule's path is not walked); a change that removes or renames a key bumps the
// major (and the schema name's number).
inline constexpr std::string_view kReplaySchemaVersion = "1.2";

// Replays (and predicts) the session's trace and renders the result: text, Markdown, or JSON
// (schema overlapscope.replay/1, docs/report-schema.md "Replay").
absl::StatusOr<std::string> RunReplay(const Session& session, const ReplayRequest& request, ReportFormat format);

}  // namespace overlapscope::engine
