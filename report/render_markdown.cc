// Markdown report for pull-request comments: one summary table (a row per rank), then the
// findings as a list, from the typed Report.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report/render.h"
#include "report/render_internal.h"

namespace overlapscope::report {
namespace {

std::string Cell(const std::string& s) {
  // Pipes would end the cell; backticks keep kernel names readable.
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

void FindingsOfRank(const RankReport& rk, std::string& o) {
  if (rk.findings.items.empty()) return;
  absl::StrAppendFormat(&o, "\n**%s findings**\n\n", rk.label);
  for (const KindFigures& k : rk.findings.by_kind) {
    if (k.count == 0) continue;
    std::string example, advice;
    for (const Finding& f : rk.findings.items)
      if (f.kind == k.kind) {
        example = f.message;
        advice = f.advice;
        break;
      }
    absl::StrAppendFormat(&o, "- `%s` x%d, cost %s — e.g. %s. *Fix:* %s\n", k.kind, k.count, Dur(k.ns), Cell(example),
                          Cell(advice));
  }
}

// GPU idle that ended with a host-blocked launch, and where the host thread actually was in it.
void HostBlockedMarkdown(const ReportView& v, std::string& o) {
  std::string lines;
  RankReport scratch;
  for (size_t i = 0; i < v.head->ranks.size(); ++i) {
    const RankReport& rk = v.rank(i, &scratch);
    HostSplit h;
    int64_t gap_ns = 0;
    for (const DeviceReport& d : rk.devices) {
      if (!d.idle.host_blocked_split) continue;
      for (const CauseFigures& c : d.idle.causes)
        if (c.name == "host_blocked") gap_ns = Sum(gap_ns, c.ns);
      const HostSplit& x = *d.idle.host_blocked_split;
      h.blocked_ns = Sum(h.blocked_ns, x.blocked_ns);
      h.launch_ns = Sum(h.launch_ns, x.launch_ns);
      h.other_calls_ns = Sum(h.other_calls_ns, x.other_calls_ns);
      h.outside_ns = Sum(h.outside_ns, x.outside_ns);
    }
    if (gap_ns == 0) continue;
    absl::StrAppendFormat(&lines,
                          "- %s: %s of GPU idle ended by a launch from a thread that blocked in it; the thread was "
                          "in blocking calls %s, launching the ending work %s, in other runtime calls %s, in no "
                          "traced call %s.\n",
                          rk.label, Dur(gap_ns), Dur(h.blocked_ns), Dur(h.launch_ns), Dur(h.other_calls_ns),
                          Dur(h.outside_ns));
  }
  if (!lines.empty()) o += "\nHost-blocked GPU idle:\n\n" + lines;
}

}  // namespace

void RenderMarkdown(const ReportView& v, const TextOptions& options, const RenderSink& out) {
  const Report& r = *v.head;
  std::string o = "### overlapscope analyze\n\n" + WarningsMarkdown(r.warnings);
  absl::StrAppendFormat(&o, "%d rank(s), %d iteration(s), trace span %s.\n\n", r.ranks.size(), r.iterations.count,
                        Ms(Diff(r.time_span.end_ns, r.time_span.start_ns)));
  if (r.clock_alignment.status != "not-evaluated") absl::StrAppend(&o, "Clocks: ", r.clock_alignment.summary, ".\n\n");
  o += "| rank | overlap | exposed comm | HTA's overlap (default) | host blocked | GPU idle | findings |\n";
  o += "|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const RankReport& rk : r.ranks) {  // the summaries: in the head
    const RankSummary& s = rk.summary;
    const std::string hta = s.hta_compat_overlap_pct ? absl::StrFormat("%.2f%%", *s.hta_compat_overlap_pct) : "n/a";
    absl::StrAppendFormat(&o, "| %s | %s | %s | %s | %s (%s) | %s | %d |\n",
                          rk.rank ? std::to_string(*rk.rank) : rk.label,
                          s.comm_ns == 0 ? "no communication" : Pct(s.overlap_ratio), Dur(s.exposed_comm_ns), hta,
                          Dur(s.blocked_ns), Pct(s.blocked_share), Pct(s.gpu_idle_share), SummaryValue(s, "findings"));
  }
  HostBlockedMarkdown(v, o);
  AppendCollectivesMarkdown(v, options, &o);
  AppendPathsMarkdown(r, &o);
  out(o);
  o.clear();
  RankReport scratch;
  for (size_t i = 0; i < r.ranks.size(); ++i) {
    const RankReport& rk = v.rank(i, &scratch);
    FindingsOfRank(rk, o);
    if (rk.dependency_graph)
      absl::StrAppendFormat(&o, "\n**%s dependency graph**\n\n%s", rk.label,
                            DependencyGraphLines(*rk.dependency_graph, "- "));
    out(o);
    o.clear();
  }
  o += "\n<sub>overlap = hidden / total communication time per METRICS.md; HTA-compatible = Holistic Trace "
       "Analysis' rules for comparison.</sub>\n";
  out(o);
}

std::string RenderMarkdown(const Report& r, const TextOptions& options) {
  std::string o;
  RenderMarkdown(ViewOf(r), options, [&o](std::string_view s) { o.append(s); });
  return o;
}

}  // namespace overlapscope::report
