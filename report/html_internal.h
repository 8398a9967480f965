// Internal to the HTML pages (report/html.h): escaping and the inline SVG charts.
#pragma once

#include <string>
#include <vector>

#include "report/html.h"
#include "report/overview.h"

namespace overlapscope::report::html {

std::string ClassColor(const std::string& cls);

// Hidden vs exposed communication per iteration of one GPU (stacked bars, µs).
std::string OverlapBars(const DeviceReport& d);
// GPU idle of one rank by cause (one stacked horizontal bar with a legend).
std::string IdleBar(const RankReport& rk);
// Top kernels of one class: horizontal bars by total time.
std::string KernelBars(const std::vector<KernelTotal>& kernels, const std::string& cls);
// Collective wait per rank (rows) and matched instance (columns), darker = longer wait.
std::string WaitHeatmap(const CrossRank& x);
// One iteration of one rank: streams as rows, classes as colours.
std::string TimelineSvg(const RankTimeline& t);
std::string Legend();

// The job overview section (html_overview.cc): "" for fewer than 2 ranks.
// `anchor_suffix` empty: the job overview of `analyze --html`, linked to the rank sections
// (RankAnchor); else the diff's overview of the change (DiffOverview), linked to the ranks' delta
// sections (RankAnchor + anchor_suffix).
std::string OverviewHtml(const JobOverview& o, const std::string& anchor_suffix = "");
// The id of a rank's section ("r-rank-3").
std::string RankAnchor(const std::string& label);
// Whether rank i gets a section: every rank up to 8 ranks, else those that stand out.
bool HasSection(const JobOverview& o, size_t i);

}  // namespace overlapscope::report::html
