// Internal to the report renderers: the JSON document every output is rendered from.
#pragma once

#include <string>

#include "analyze/analysis.h"
#include "model/trace.h"
#include "nlohmann/json.hpp"
#include "report/report_render.h"

namespace overlapscope::report {

using ojson = nlohmann::ordered_json;

ojson BuildReportJson(const model::Trace& t, const analyze::AnalysisResult& r, const ReportInfo& info);
// The flat per-rank "summary" object (numbers, or null when a ratio has no denominator).
ojson RankSummaryJson(const model::Trace& t, const analyze::AnalysisResult& r, const analyze::RankSummary& s);

// Collectives across ranks (METRICS §6) with every matched instance, and the clock alignment
// (report_collectives.cc).
ojson CrossRankJson(const model::Trace& t, const analyze::AnalysisResult& r, const ReportInfo& info);
ojson ClockAlignmentJson(const model::Trace& t, const analyze::ClockAlignment& a);
// Text and Markdown sections rendered from the document built above.
void AppendCollectivesText(const ojson& doc, const ReportInfo& info, std::string* out);
void AppendCollectivesMarkdown(const ojson& doc, const ReportInfo& info, std::string* out);
// The label of a rank object of the document: "rank 3", or "pid 42 (GPU 0, GPU 1)".
std::string RankLabel(const ojson& jr);

// Formatting helpers shared by text and Markdown.
std::string Ms(int64_t ns);           // "1.234 ms"
std::string Us(int64_t ns);           // "12.3 µs"
std::string Dur(int64_t ns);          // ns below 1 µs, µs below 1 ms, ms above
std::string Pct(const ojson& ratio);  // "62.3%" or "n/a"
std::string Short(const std::string& name, size_t max = 60);
std::string Bytes(int64_t bytes);  // "512 B", "2.00 MB" (decimal units, as nccl-tests sizes)

}  // namespace overlapscope::report
