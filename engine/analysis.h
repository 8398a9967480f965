// engine::Analyze — every analysis of METRICS.md over a Session, and the report built from it.
//
//   auto analysis = engine::Analyze(session, options);      // StatusOr<Analysis>
//   auto json = engine::RenderReport(*analysis, engine::ReportFormat::kJson);
//   auto gates = engine::EvaluateGates(*analysis, {"overlap_ratio>=0.6"});
//
// The report is built once, at Analyze, as a typed report::Report (report/report.h: the content
// of the JSON schema overlapscope.report/1, docs/report-schema.md); JSON, text, Markdown and the
// gates are pure functions of it (report/render.h, report/gates.h), so they never disagree.
//
// Failure modes (no exception escapes): InvalidArgument naming the rule for a bad class rule
// (regex or rules-file line, see CheckClassRule / CheckRulesText), or naming the gate for a bad
// --require expression or an unknown metric; ResourceExhausted when memory runs out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/session.h"
#include "report/gates.h"
#include "report/overview.h"
#include "report/report.h"

namespace overlapscope::analyze {
struct AnalysisResult;
}

namespace overlapscope::engine {

// A classification rule given by the user (ahead of the defaults, first match wins):
// cls "comm", "compute" or "memory"; pattern an RE2 regex searched in the activity
// name; origin names it in errors and in --explain-classes ("--comm-kernel").
struct ClassRuleSpec {
  std::string cls;
  std::string pattern;
  std::string origin;
};
// A rules file's text (lines "CLASS REGEX", "CLASS prefix TEXT", "CLASS contains TEXT", "#"
// comments); `source` names it in errors ("FILE:LINE: reason").
struct RulesText {
  std::string text;
  std::string source;
};

struct AnalyzeOptions {
  std::vector<ClassRuleSpec> class_rules;  // in this order, then rules_files, then the defaults
  std::vector<RulesText> rules_files;
  std::string iteration_marker = "ProfilerStep#";  // iterations: ranges whose name starts with it
  int64_t min_gap_ns = 5000;                       // shortest GPU idle gap reported
  int64_t runtime_cutoff_ns = 50000;               // launch calls longer than this are outliers
  int64_t launch_delay_cutoff_ns = 100000;         // launch delays above this are outliers
  size_t top_n = 10;                               // rows of every "top" list (JSON included)
  int threads = 2;                                 // analyses run side by side on this many threads
  // Stream concurrency groups (METRICS §9), each "NAME=REGEX": activities whose name, or the
  // name of a host range around their launch call, matches REGEX (ECMAScript, searched).
  std::vector<std::string> groups;
  // Keep the critical path's segments for the Perfetto export's "critical path" track
  // (ExportPerfetto draws it when they were kept); costs memory along the path.
  bool keep_critical_path = false;
  // The critical path and straggler causes (METRICS §8; --critical-path off leaves them out, the
  // report says so in `skipped`). The per-rank reduction (engine/reduce.h) leaves them out of a
  // job of several ranks: they need every rank's events at once.
  bool critical_path = true;
};

// InvalidArgument naming the rule (or "FILE:LINE") when it would not be accepted by Analyze.
absl::Status CheckClassRule(const ClassRuleSpec& rule);
absl::Status CheckRulesText(const RulesText& rules);
// InvalidArgument "--group 'SPEC': ..." when a group would not be accepted by Analyze (no '=',
// empty name or regex, invalid regex); names given twice are checked by Analyze.
absl::Status CheckGroup(std::string_view spec);

class Analysis {
 public:
  const Session& session() const;
  const AnalyzeOptions& options() const;
  // The report (what `analyze --json` prints, as plain structs).
  const report::Report& report() const;
  // The analyses' results, for code in the engine's layer and below (exporters, tests).
  const analyze::AnalysisResult& result() const;

  struct State;  // defined in analysis.cc
  explicit Analysis(std::shared_ptr<const State> state) : s_(std::move(state)) {}
  const std::shared_ptr<const State>& state() const { return s_; }

 private:
  std::shared_ptr<const State> s_;
};

absl::StatusOr<Analysis> Analyze(const Session& session, const AnalyzeOptions& options = {});

enum class ReportFormat { kJson, kText, kMarkdown };
struct RenderOptions {
  // Text and Markdown list the first N matched collective instances (SIZE_MAX: all); JSON
  // always lists all.
  size_t collectives_shown = 20;
  // Text and Markdown: which ranks get a detail block (--ranks; report/overview.h); JSON has all.
  report::RankSelection ranks;
  // JSON: threads that render the long per-iteration arrays (the same bytes at any count); 0:
  // the analysis's AnalyzeOptions::threads, or 1 for a report without an analysis.
  int threads = 0;
};
// The report of the analysis; JSON ends with a newline. Fails only when memory runs out.
absl::StatusOr<std::string> RenderReport(const Analysis& analysis, ReportFormat format,
                                         const RenderOptions& options = {});
// The same for a report assembled without an Analysis (the per-rank reduction, engine/reduce.h).
absl::StatusOr<std::string> RenderReport(const report::Report& report, ReportFormat format,
                                         const RenderOptions& options = {});
// Writes RenderReport's bytes to `out` as they are rendered, never holding the whole text (a
// JSON report of a long trace is tens of MB). Internal when writing fails (a full disk, a closed
// pipe); when rendering fails (memory), part of the report may already be written.
absl::Status WriteReport(const Analysis& analysis, ReportFormat format, const RenderOptions& options, std::FILE* out);
// --explain-classes: the rule table, then each distinct activity name with its class, rule,
// count and time.
absl::StatusOr<std::string> ExplainClasses(const Analysis& analysis);

// Gates (--require): "METRIC OP NUMBER", OP one of >= <= > < ==, METRIC a key of each rank's
// "summary" in the JSON report.
std::vector<std::string> GateMetricNames();
// InvalidArgument "--require 'EXPR': ..." when EXPR does not parse or names an unknown metric.
absl::Status CheckGate(std::string_view expr);
struct GateOutcome {
  bool passed = true;
  // One per (gate, rank): "PASS rank 0: overlap_ratio>=0.6 (value 0.71)", "FAIL ...", a metric
  // absent on a rank (no communication) fails and says so.
  std::vector<std::string> lines;
  // lines[i] structured: rank (index into report().ranks), gate (index into exprs), the rank's
  // value and verdict.
  std::vector<report::GateCheck> checks;
};
absl::StatusOr<GateOutcome> EvaluateGates(const Analysis& analysis, const std::vector<std::string>& exprs);
absl::StatusOr<GateOutcome> EvaluateGates(const report::Report& report, const std::vector<std::string>& exprs);

// report::Report::paths_skipped of a report without the critical path and straggler causes
// (AnalyzeOptions::critical_path false, or the per-rank reduction of several ranks): the same
// words either way, so that both give the same report.
inline constexpr char kPathsOff[] =
    "--critical-path off: the job's critical path and straggler causes cross ranks at collectives and need every "
    "rank's events at once; the per-rank reduction (--per-rank, --jobs, MPI) leaves them out";

}  // namespace overlapscope::engine
