// --require gates over a report::Report: METRIC OP NUMBER checked against every rank's summary
// (ranks[i].summary of the JSON report). The summary's metrics, in their JSON order, come from
// SummaryMetrics(), so the JSON keys and the gate names cannot drift apart.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "report/report.h"

namespace overlapscope::report {

// One metric of a rank summary: an integer, or a ratio (absent when its denominator is 0).
struct Metric {
  std::string name;
  bool is_ratio = false;
  int64_t integer = 0;
  std::optional<double> ratio;
};
std::vector<Metric> SummaryMetrics(const RankSummary& s);

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
  std::vector<std::string> lines;  // one per (gate, rank): "PASS"/"FAIL" with value or why absent
};
// Checks every gate against every rank's summary. A metric absent for a rank (e.g.
// overlap_ratio with no communication) fails the gate and says why; a metric no summary has
// fails too ("not in the summary"): callers check names first (MetricNames of a summary).
GateResult EvaluateGates(const Report& r, const std::vector<Gate>& gates);

// The metric names of a summary with these gap causes and finding kinds.
std::vector<std::string> MetricNames(const RankSummary& s);

}  // namespace overlapscope::report
