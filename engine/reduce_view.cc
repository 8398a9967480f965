// PerRankReport (engine/reduce.h): the report of a per-rank reduction rendered part by part. A
// rank is read back from ReducedRanks when the renderer asks for it and completed with what only
// the whole job knows (its cross-rank summary figures, the findings' times relative to the job's
// start); a collective instance is built from the gathered records when asked for. Nothing holds
// every rank or every instance row at once.
#include <cstdlib>
#include <exception>
#include <new>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analyze/findings/finding_rule.h"
#include "base/status_macros.h"
#include "engine/reduce_internal.h"
#include "engine/session_state.h"
#include "report/build.h"

namespace overlapscope::engine {
namespace {

// Findings' time markers (AnalyzeOptions::mark_message_times) -> "+X ms" after `origin_ns`, as
// findings::FindingInputs::At writes it for the whole trace.
std::string UnmarkTimes(const std::string& s, int64_t origin_ns) {
  const char m = analyze::findings::kTimeMarker;
  if (s.find(m) == std::string::npos) return s;
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    const size_t a = s.find(m, i), b = a == std::string::npos ? a : s.find(m, a + 1);
    if (b == std::string::npos) {
      out.append(s, i, std::string::npos);
      break;
    }
    out.append(s, i, a - i);
    const int64_t ns = std::strtoll(s.substr(a + 1, b - a - 1).c_str(), nullptr, 10);
    out += absl::StrFormat("+%.3f ms", static_cast<double>(ns - origin_ns) / 1e6);
    i = b + 1;
  }
  return out;
}

// Rank i whole: its part read back, with the head's summary (cross-rank figures added there).
absl::StatusOr<report::RankReport> LoadRank(const PerRankReport::State& s, size_t i) {
  ASSIGN_OR_RETURN(std::string bytes, s.ranks->Get(static_cast<int64_t>(i)));
  ASSIGN_OR_RETURN(reduce::RankPart part, reduce::DeserializePart(bytes, s.files[i]));
  report::RankReport r = std::move(part.rank);
  r.summary = s.head.ranks[i].summary;
  for (report::Finding& f : r.findings.items) {
    f.message = UnmarkTimes(f.message, s.head.time_span.start_ns);
    f.advice = UnmarkTimes(f.advice, s.head.time_span.start_ns);
  }
  return r;
}

}  // namespace

namespace reduce {
void TrimRank(report::RankReport* r) {
  report::RankReport t;
  t.label = std::move(r->label);
  t.rank = r->rank;
  t.pid = r->pid;
  t.host = std::move(r->host);
  t.source = std::move(r->source);
  t.summary = std::move(r->summary);
  *r = std::move(t);
}
}  // namespace reduce

const report::Report& PerRankReport::head() const { return s_->head; }
const ReduceStats& PerRankReport::stats() const { return s_->stats; }
absl::Status PerRankReport::status() const { return s_->status; }

report::ReportView PerRankReport::view() const {
  const State& s = *s_;
  if (s.whole) return report::ViewOf(s.head);
  report::ReportView v;
  v.head = &s.head;
  v.rank = [&s](size_t i, report::RankReport* scratch) -> const report::RankReport& {
    absl::StatusOr<report::RankReport> r;
    try {
      r = LoadRank(s, i);
    } catch (const std::bad_alloc&) {
      r = absl::ResourceExhaustedError(absl::StrCat(s.files[i], ": out of memory while rendering this rank"));
    }
    if (r.ok()) {
      *scratch = std::move(r).value();
    } else {  // the rest still renders; the caller fails the run (status())
      if (s.status.ok()) s.status = r.status();
      *scratch = s.head.ranks[i];
    }
    return *scratch;
  };
  v.instance_count = s.cross.instances.size();
  v.instance = [&s](size_t k, report::Instance* scratch) -> const report::Instance& {
    *scratch = report::BuildInstance(s.gathered.trace, s.cross, s.gathered.exposed, k);
    return *scratch;
  };
  for (const analyze::CollectiveInstance& ci : s.cross.instances)
    v.instance_rows += static_cast<int64_t>(ci.ranks.size());
  return v;
}

absl::StatusOr<report::Report> PerRankReport::Materialize() const {
  try {
    if (s_->whole) return s_->head;
    const report::ReportView v = view();
    report::Report r = s_->head;
    report::RankReport rank;
    for (size_t i = 0; i < r.ranks.size(); ++i) r.ranks[i] = v.rank(i, &rank);
    report::Instance inst;
    for (size_t k = 0; k < v.instance_count; ++k) r.collectives_across_ranks.instances.push_back(v.instance(k, &inst));
    RETURN_IF_ERROR(status());
    return r;
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("out of memory while assembling the report");
  }
}

absl::Status WriteReport(const PerRankReport& report, ReportFormat format, const RenderOptions& options,
                         std::FILE* out) {
  bool written = true;
  const report::RenderSink sink = [&](std::string_view text) {
    if (written && !text.empty()) written = std::fwrite(text.data(), 1, text.size(), out) == text.size();
  };
  try {
    const report::ReportView v = report.view();
    report::TextOptions text;
    text.collectives_shown = options.collectives_shown;
    switch (format) {
      case ReportFormat::kJson: report::RenderJson(v, sink); break;
      case ReportFormat::kMarkdown: report::RenderMarkdown(v, text, sink); break;
      case ReportFormat::kText: report::RenderText(v, text, sink); break;
    }
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("out of memory while rendering the report");
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("rendering the report failed: ", e.what()));
  }
  if (!written || std::fflush(out) != 0) return absl::InternalError("cannot write the report to stdout");
  return report.status();
}

}  // namespace overlapscope::engine
