// Markdown report for pull-request comments: one summary table (a row per rank), then the
// findings as a list. Rendered from the JSON document.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report/report_internal.h"

namespace overlapscope::report {
namespace {

std::string Cell(std::string s) {
  // Pipes would end the cell; backticks keep kernel names readable.
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

}  // namespace

std::string RenderReportMarkdown(const model::Trace& t, const analyze::AnalysisResult& r, const ReportInfo& info) {
  ojson j = BuildReportJson(t, r, info);
  std::string o = "### overlapscope analyze\n\n";
  absl::StrAppendFormat(&o, "%d rank(s), %d iteration(s), trace span %s.\n\n", j["ranks"].size(),
                        j["iterations"]["count"].get<int64_t>(), Ms(j["time_span"]["duration_ns"].get<int64_t>()));
  if (j["clock_alignment"]["status"] != "not-evaluated")
    absl::StrAppend(&o, "Clocks: ", j["clock_alignment"]["summary"].get<std::string>(), ".\n\n");
  o += "| rank | overlap | exposed comm | HTA-compatible overlap | host blocked | GPU idle | findings |\n";
  o += "|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const ojson& jr : j["ranks"]) {
    const ojson& s = jr["summary"];
    std::string hta = s["hta_compat_overlap_pct"].is_null()
                          ? "n/a"
                          : absl::StrFormat("%.2f%%", s["hta_compat_overlap_pct"].get<double>());
    absl::StrAppendFormat(&o, "| %s | %s | %s | %s | %s (%s) | %s | %d |\n",
                          jr["rank"].is_null() ? RankLabel(jr) : std::to_string(jr["rank"].get<int>()),
                          s["comm_ns"].get<int64_t>() == 0 ? "no communication" : Pct(s["overlap_ratio"]),
                          Dur(s["exposed_comm_ns"].get<int64_t>()), hta, Dur(s["blocked_ns"].get<int64_t>()),
                          Pct(s["blocked_share"]), Pct(s["gpu_idle_share"]), s["findings"].get<int64_t>());
  }
  AppendCollectivesMarkdown(j, info, &o);
  for (const ojson& jr : j["ranks"]) {
    const ojson& items = jr["findings"]["items"];
    if (items.empty()) continue;
    absl::StrAppendFormat(&o, "\n**%s findings**\n\n", RankLabel(jr));
    for (auto& [kind, v] : jr["findings"]["by_kind"].items()) {
      if (v["count"].get<int64_t>() == 0) continue;
      std::string example, advice;
      for (const ojson& f : items)
        if (f["kind"] == kind) {
          example = f["message"].get<std::string>();
          advice = f["advice"].get<std::string>();
          break;
        }
      absl::StrAppendFormat(&o, "- `%s` x%d, cost %s — e.g. %s. *Fix:* %s\n", kind, v["count"].get<int64_t>(),
                            Dur(v["cost_ns"].get<int64_t>()), Cell(example), Cell(advice));
    }
  }
  o += "\n<sub>overlap = hidden / total communication time per METRICS.md; HTA-compatible = Holistic Trace "
       "Analysis' rules for comparison.</sub>\n";
  return o;
}

}  // namespace overlapscope::report
