// --require gates over a report::Report: METRIC OP NUMBER checked against every rank's summary
// (ranks[i].summary of the JSON report). The summary's metrics, in their JSON order, come from
// SummaryMetrics(), so the JSON keys and the gate names cannot drift apart.
#pragma once

#include <cstddef>
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
  bool absent = false;  // an integer metric with no figure (JSON null, e.g. comm_wait_ns of one rank)
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

// One gate on one rank, structured (for clients that raise naming rank, metric and value).
struct GateCheck {
  size_t rank = 0;  // index into Report::ranks
  size_t gate = 0;  // index into the gates evaluated
  // The rank's metric (a ratio may be absent: no denominator); none when no summary has it.
  std::optional<Metric> value;
  bool passed = false;
};

struct GateResult {
  bool passed = true;
  // One per (rank, gate), rank by rank, each rank's gates in the order given (the CLI's order):
  // "PASS"/"FAIL" with the value or why it is absent; checks[i] is lines[i] structured.
  std::vector<std::string> lines;
  std::vector<GateCheck> checks;
};
// Checks every gate against every rank's summary. A metric absent for a rank (e.g.
// overlap_ratio with no communication) fails the gate and says why; a metric no summary has
// fails too ("not in the summary"): callers check names first (MetricNames of a summary).
GateResult EvaluateGates(const Report& r, const std::vector<Gate>& gates);

// The metric names of a summary with these gap causes and finding kinds.
std::vector<std::string> MetricNames(const RankSummary& s);

}  // namespace overlapscope::report
