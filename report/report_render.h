// Report renderers for analyze::AnalysisResult: JSON (schema "overlapscope.report/1", see
// docs/report-schema.md), text (default CLI output, like `nsys stats`), Markdown (PR comments),
// the --explain-classes listing, and the --require regression gate.
//
// The JSON document is the single source: text and Markdown are rendered from it, and gates read
// the per-rank "summary" objects of it, so the three outputs and the gate can never disagree.
// Nothing here does I/O; the CLI writes the strings.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "analyze/analysis.h"
#include "analyze/clock_align.h"
#include "model/trace.h"

namespace overlapscope::report {

struct ReportInfo {
  std::vector<std::string> inputs;  // trace paths as given
  std::string tool_version = "0.1.0";
  size_t top_n = 10;  // rows per table
  // Text/Markdown list the first N matched collective instances (SIZE_MAX: all); JSON lists all.
  size_t collectives_shown = 20;
  // How the timestamps of the analyzed trace were aligned across hosts (the CLI runs
  // analyze::EstimateClockAlignment before AnalyzeAll); default: not evaluated.
  analyze::ClockAlignment clock_alignment;
};

std::string RenderReportJson(const model::Trace& t, const analyze::AnalysisResult& r, const ReportInfo& info);
std::string RenderReportText(const model::Trace& t, const analyze::AnalysisResult& r, const ReportInfo& info);
std::string RenderReportMarkdown(const model::Trace& t, const analyze::AnalysisResult& r, const ReportInfo& info);
// --explain-classes: the rule table, then each distinct name with its class, rule, count, time.
std::string RenderExplainClasses(const model::Trace& t, const analyze::AnalysisResult& r);

// One --require expression: METRIC OP NUMBER with OP one of >= <= > < ==.
struct Gate {
  std::string text;
  std::string metric;
  std::string op;
  double threshold = 0;
};
// InvalidArgument naming the expression when it does not parse.
absl::StatusOr<Gate> ParseGate(std::string_view expr);

struct GateResult {
  bool passed = true;
  std::vector<std::string> lines;  // one per (gate, rank): "PASS"/"FAIL"/"ABSENT" with value
};
// Checks every gate against every rank's summary. A metric that is absent for a rank (e.g.
// overlap_ratio with no communication) fails the gate and says why. InvalidArgument when a gate
// names a metric the summary does not have (lists the valid names).
absl::StatusOr<GateResult> EvaluateGates(const model::Trace& t, const analyze::AnalysisResult& r,
                                         const std::vector<Gate>& gates);
// The metric names a gate may use (keys of a rank summary).
std::vector<std::string> GateMetricNames();

}  // namespace overlapscope::report
