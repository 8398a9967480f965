// Rendering of a replay result (engine-internal): text, Markdown and JSON (schema
// overlapscope.replay/1, docs/report-schema.md "Replay"). The replay error comes first in every
// form; a prediction over a rank whose replay error exceeds 5 % is flagged next to its number.
#pragma once

#include <string>
#include <vector>

#include "analyze/replay/replay.h"
#include "engine/analysis.h"
#include "engine/replay_summary.h"
#include "model/trace.h"

namespace overlapscope::engine {

// Above this |replay error| (fraction), a prediction says it is not to be trusted.
inline constexpr double kReplayErrorFlag = 0.05;

std::string RenderReplay(const model::Trace& t, const std::vector<std::string>& inputs,
                         const analyze::replay::ReplayResult& r, ReportFormat format);

// A self-contained HTML page of the same (replay_html.cc): the replay error first, graph
// coverage and changes, the per-rank table, and per rank the step and the critical path's
// composition as bars (measured, replayed, predicted, with contention). No script, no network.
std::string RenderReplayHtml(const model::Trace& t, const std::vector<std::string>& inputs,
                             const analyze::replay::ReplayResult& r);

// What the readable forms share (replay_render.cc).
struct ReplayRow {
  std::vector<std::string> cells;
};
// Header lines: replay error first, then edge coverage, changes and the contention model.
std::vector<std::string> ReplayHeadLines(const analyze::replay::ReplayResult& r);
// Per-rank table (header first; medians over iterations) and a rank's critical-path table.
std::vector<ReplayRow> ReplayRankRows(const std::vector<ReplayRankSummary>& ranks);
std::vector<ReplayRow> ReplayPathRows(const ReplayRankSummary& s);

}  // namespace overlapscope::engine
