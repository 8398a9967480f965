// Internal to the renderers: sections shared by text and Markdown.
#pragma once

#include <string>

#include "report/render.h"
#include "report/report.h"

namespace overlapscope::report {

// The dependency graph's counts of one rank in two lines (text) or one (Markdown): waits recorded,
// inferred (always said), ambiguous, unresolved; edges by kind. Empty when the report has none.
std::string DependencyGraphLines(const DependencyGraph& d, std::string_view indent);

// Collectives across ranks (METRICS §6), every matched instance up to options.collectives_shown.
void AppendCollectivesText(const ReportView& v, const TextOptions& options, std::string* out);
void AppendCollectivesMarkdown(const ReportView& v, const TextOptions& options, std::string* out);

// Critical path, straggler causes and stream concurrency (METRICS §8, §9; render_paths_text.cc).
void AppendPathsText(const Report& r, std::string* out);
void AppendPathsMarkdown(const Report& r, std::string* out);

// A rank summary figure by its JSON key ("gap_host_blocked_ns", "finding_..."): 0 when absent.
int64_t SummaryValue(const RankSummary& s, const std::string& key);

}  // namespace overlapscope::report
