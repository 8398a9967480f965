// Internal to the report renderers: the JSON document every output is rendered from.
#pragma once

#include <string>

#include "analyze/analysis.h"
#include "model/trace.h"
#include "nlohmann/json.hpp"
#include "viewer_export/report_render.h"

namespace overlapscope::viewer_export {

using ojson = nlohmann::ordered_json;

ojson BuildReportJson(const model::Trace& t, const analyze::AnalysisResult& r, const ReportInfo& info);
// The flat per-rank "summary" object (numbers, or null when a ratio has no denominator).
ojson RankSummaryJson(const model::Trace& t, const analyze::AnalysisResult& r, const analyze::RankSummary& s);

// Formatting helpers shared by text and Markdown.
std::string Ms(int64_t ns);      // "1.234 ms"
std::string Us(int64_t ns);      // "12.3 µs"
std::string Dur(int64_t ns);     // µs below 1 ms, ms above
std::string Pct(const ojson& ratio);  // "62.3%" or "n/a"
std::string Short(const std::string& name, size_t max = 60);

}  // namespace overlapscope::viewer_export
