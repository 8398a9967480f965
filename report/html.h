// Self-contained HTML pages of a report (`analyze --html`) and of a comparison (`diff --html`):
// one file, no network, no script, inline SVG and CSS. Pure functions of the typed Report (and
// ReportDiff) plus the compact timeline of one iteration per rank (built by the engine from the
// trace: engine::IterationTimelines), which the report itself does not hold.
//
// Sections: per rank the summary; overlap per iteration (hidden vs exposed communication); GPU
// idle by cause; top kernels by class; findings with what to change; with several ranks a heat
// map of collective wait (rank x instance) and the straggler table; the timeline of one iteration
// per rank (streams as rows, classes as colours). The diff page shows the verdict, both sides
// and the deltas. Any Report renders (absent values print as "n/a"); text is HTML-escaped.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "report/diff.h"
#include "report/report.h"

namespace overlapscope::report {

struct TimelineSlice {
  int64_t start_ns = 0, end_ns = 0;
  std::string cls, name;  // class "compute", "comm", "memory", "sync"
};
struct TimelineRow {
  std::string label;  // "GPU 0 stream 7"
  std::vector<TimelineSlice> slices;
};
// One chosen iteration of one rank: the iteration whose step time is the median of the rank's.
struct RankTimeline {
  std::string label;  // the rank's label in the report
  int64_t iteration = 0;
  int64_t start_ns = 0, end_ns = 0;
  std::vector<TimelineRow> rows;
  int64_t dropped = 0;  // slices beyond the per-rank limit, not drawn
};

std::string RenderHtml(const Report& r, const std::vector<RankTimeline>& timelines);

namespace html {
// Text escaped for HTML text and attribute values (&, <, >, "): for every page that embeds names
// from a trace (the report pages here, the replay page in engine/).
std::string Esc(const std::string& s);
}  // namespace html
std::string RenderDiffHtml(const Report& base, const Report& test, const ReportDiff& d,
                           const std::vector<RankTimeline>& base_timelines,
                           const std::vector<RankTimeline>& test_timelines);

// Index of the iteration (in rk.devices[0].iterations order of StepTimes) whose step time is the
// median; -1 without iterations. The engine uses it to choose the timeline's iteration.
int64_t MedianIterationNumber(const RankReport& rk, bool* found);

}  // namespace overlapscope::report
