#include "engine/analysis.h"

#include <algorithm>
#include <exception>
#include <new>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analyze/analysis.h"
#include "base/phase_log.h"
#include "base/status_macros.h"
#include "engine/no_throw.h"
#include "engine/session_state.h"
#include "engine/stream_report.h"
#include "report/build.h"
#include "report/gates.h"
#include "report/render.h"

namespace overlapscope::engine {
namespace {

absl::Status AddRule(analyze::ClassRules& rules, const ClassRuleSpec& r) {
  ASSIGN_OR_RETURN(analyze::ActivityClass cls, analyze::ParseActivityClass(r.cls));
  return rules.AddUserRule(cls, analyze::MatchKind::kRegex, r.pattern, r.origin);
}

}  // namespace

absl::StatusOr<analyze::AnalyzeOptions> ToAnalyzeOptions(const AnalyzeOptions& o) {
  analyze::AnalyzeOptions a;
  for (const ClassRuleSpec& r : o.class_rules) RETURN_IF_ERROR(AddRule(a.rules, r));
  for (const RulesText& f : o.rules_files) RETURN_IF_ERROR(a.rules.AddRulesFromText(f.text, f.source));
  a.iteration_marker = o.iteration_marker;
  a.min_gap_ns = o.min_gap_ns;
  a.runtime_cutoff_ns = o.runtime_cutoff_ns;
  a.launch_delay_cutoff_ns = o.launch_delay_cutoff_ns;
  a.top_n = o.top_n;
  a.threads = o.threads;
  for (const std::string& g : o.groups) {
    ASSIGN_OR_RETURN(analyze::GroupSpec spec, analyze::ParseGroupSpec(g));
    a.groups.push_back(std::move(spec));
  }
  RETURN_IF_ERROR(analyze::CheckGroups(a.groups));
  a.keep_path_segments = o.keep_critical_path;
  a.critical_path = o.critical_path;
  a.comm_wait_split = o.critical_path;  // both need one model of every rank (analysis.h)
  return a;
}

namespace {

absl::StatusOr<report::Gate> ParseKnownGate(std::string_view expr) {
  ASSIGN_OR_RETURN(report::Gate g, report::ParseGate(expr));
  const std::vector<std::string> names = GateMetricNames();
  if (std::find(names.begin(), names.end(), g.metric) == names.end())
    return absl::InvalidArgumentError(absl::StrCat("--require '", g.text, "': unknown metric '", g.metric,
                                                   "'; metrics: ", absl::StrJoin(names, ", ")));
  return g;
}

}  // namespace

absl::Status CheckClassRule(const ClassRuleSpec& rule) {
  analyze::ClassRules rules;
  return AddRule(rules, rule);
}

absl::Status CheckGroup(std::string_view spec) {
  ASSIGN_OR_RETURN(analyze::GroupSpec g, analyze::ParseGroupSpec(spec));
  return analyze::CheckGroups({g});
}

absl::Status CheckRulesText(const RulesText& r) {
  analyze::ClassRules rules;
  return rules.AddRulesFromText(r.text, r.source);
}

const Session& Analysis::session() const { return s_->session; }
const AnalyzeOptions& Analysis::options() const { return s_->options; }
const analyze::AnalysisResult& Analysis::result() const { return s_->result; }
const report::Report& Analysis::report() const { return s_->report; }

absl::StatusOr<Analysis> Analyze(const Session& session, const AnalyzeOptions& options) {
  return NoThrow("analyzing", [&]() -> absl::StatusOr<Analysis> {
    ASSIGN_OR_RETURN(analyze::AnalyzeOptions a, ToAnalyzeOptions(options));
    ASSIGN_OR_RETURN(analyze::AnalysisResult r, analyze::AnalyzeAll(session.trace(), a));
    report::ReportInfo info;
    info.inputs = session.inputs();
    info.top_n = static_cast<int64_t>(options.top_n);
    info.clock_alignment = session.clock_alignment();
    info.threads = std::max(options.threads, 1);
    base::PhaseSpan br_("build report");
    report::Report rep = report::BuildReport(session.trace(), r, info);
    base::PhaseLog("report built");
    if (!options.critical_path) rep.paths_skipped = std::string(kPathsOff);
    return Analysis(std::make_shared<Analysis::State>(Analysis::State{session, options, std::move(r), std::move(rep)}));
  });
}

absl::StatusOr<std::string> RenderReport(const report::Report& rep, ReportFormat format, const RenderOptions& options) {
  return NoThrow("rendering the report", [&]() -> absl::StatusOr<std::string> {
    report::TextOptions text;
    text.collectives_shown = options.collectives_shown;
    text.ranks = options.ranks;
    switch (format) {
      case ReportFormat::kJson: return report::RenderJson(rep, std::max(options.threads, 1));
      case ReportFormat::kMarkdown: return report::RenderMarkdown(rep, text);
      case ReportFormat::kText: break;
    }
    return report::RenderText(rep, text);
  });
}

absl::StatusOr<std::string> RenderReport(const Analysis& a, ReportFormat format, const RenderOptions& options) {
  RenderOptions o = options;
  if (o.threads <= 0) o.threads = a.options().threads;
  return RenderReport(a.report(), format, o);
}

absl::Status WriteReport(const Analysis& a, ReportFormat format, const RenderOptions& options, std::FILE* out) {
  report::ReportView v = report::ViewOf(a.report());
  v.threads = std::max(options.threads > 0 ? options.threads : a.options().threads, 1);
  return StreamReport(v, format, options, out);
}

absl::StatusOr<std::string> ExplainClasses(const Analysis& a) {
  return NoThrow("explaining the classes", [&]() -> absl::StatusOr<std::string> {
    return report::RenderExplainClasses(report::BuildClassExplanations(a.session().trace(), a.result().classes));
  });
}

std::vector<std::string> GateMetricNames() { return report::GateMetricNames(); }

absl::Status CheckGate(std::string_view expr) { return ParseKnownGate(expr).status(); }

absl::StatusOr<GateOutcome> EvaluateGates(const Analysis& a, const std::vector<std::string>& exprs) {
  return EvaluateGates(a.report(), exprs);
}

absl::StatusOr<GateOutcome> EvaluateGates(const report::Report& rep, const std::vector<std::string>& exprs) {
  return NoThrow("evaluating the gates", [&]() -> absl::StatusOr<GateOutcome> {
    std::vector<report::Gate> gates;
    for (const std::string& e : exprs) {
      ASSIGN_OR_RETURN(report::Gate g, ParseKnownGate(e));
      gates.push_back(std::move(g));
    }
    report::GateResult r = report::EvaluateGates(rep, gates);
    return GateOutcome{r.passed, std::move(r.lines), std::move(r.checks)};
  });
}

}  // namespace overlapscope::engine
