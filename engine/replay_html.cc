// The replay's HTML page (replay_render.h RenderReplayHtml): the readable tables of
// replay_render.cc, plus per rank two charts as inline SVG: the step (measured, replayed,
// predicted, with contention) and the critical path's composition of each schedule.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "engine/replay_render.h"
#include "report/html.h"

namespace overlapscope::engine {
namespace {

namespace rp = analyze::replay;

constexpr char kCss[] =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px auto;max-width:1100px;"
    "color:#1d1d1f;padding:0 16px}h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ddd;"
    "padding-bottom:4px;margin-top:32px}h3{font-size:15px;margin:18px 0 6px}table{border-collapse:collapse;"
    "margin:6px 0}td,th{padding:3px 10px;border-bottom:1px solid #eee;text-align:right;white-space:nowrap}"
    "td:first-child,th:first-child{text-align:left}.chart{width:100%;max-width:720px;display:block}"
    ".chart text{font-size:11px;fill:#333}.legend span{margin-right:14px;font-size:12px}.legend i{"
    "display:inline-block;width:10px;height:10px;margin-right:4px}.head li{margin:3px 0}.warning{color:#b3261e}";

using report::html::Esc;

std::string Table(const std::vector<ReplayRow>& rows) {
  std::string o = "<table>";
  for (size_t k = 0; k < rows.size(); ++k) {
    o += "<tr>";
    const char* tag = k == 0 ? "th" : "td";
    for (const std::string& c : rows[k].cells) absl::StrAppend(&o, "<", tag, ">", Esc(c), "</", tag, ">");
    o += "</tr>";
  }
  return o + "</table>\n";
}

struct Part {
  const char* name;
  const char* color;
  int64_t rp::PathComposition::*field;
};
constexpr Part kParts[] = {{"compute", "#4e79a7", &rp::PathComposition::compute_ns},
                           {"comm", "#e15759", &rp::PathComposition::comm_ns},
                           {"memory", "#59a14f", &rp::PathComposition::memory_ns},
                           {"sync", "#b07aa1", &rp::PathComposition::sync_ns},
                           {"host", "#f28e2b", &rp::PathComposition::host_ns},
                           {"host blocked", "#edc948", &rp::PathComposition::blocked_ns},
                           {"idle", "#bab0ac", &rp::PathComposition::idle_ns}};

// The schedules of one rank that exist, with their labels.
std::vector<std::pair<std::string, const rp::StepFigures*>> Schedules(const ReplayRankSummary& s) {
  std::vector<std::pair<std::string, const rp::StepFigures*>> v = {{"measured", &s.measured},
                                                                   {"replayed", &s.replayed}};
  if (s.predicted) v.push_back({"predicted", &*s.predicted});
  if (s.predicted_contention) v.push_back({"with contention", &*s.predicted_contention});
  return v;
}

// Horizontal bars, one per schedule: the step (grey) and, except for the measured run (whose
// path replay does not walk), the critical path split by what it spent its time on.
std::string Bars(const ReplayRankSummary& s) {
  const auto rows = Schedules(s);
  int64_t most = 1;
  for (const auto& r : rows) most = std::max(most, r.second->step_ns);
  constexpr int kLabel = 110, kWidth = 560, kRow = 22;
  const int h = static_cast<int>(rows.size()) * kRow + 6;
  std::string o = absl::StrFormat("<svg class=\"chart\" viewBox=\"0 0 %d %d\" role=\"img\">", kLabel + kWidth + 90, h);
  for (size_t i = 0; i < rows.size(); ++i) {
    const rp::StepFigures& f = *rows[i].second;
    const int y = static_cast<int>(i) * kRow + 3;
    absl::StrAppendFormat(&o, "<text x=\"0\" y=\"%d\">%s</text>", y + 14, Esc(rows[i].first));
    const double step_w = static_cast<double>(f.step_ns) / most * kWidth;
    absl::StrAppendFormat(&o, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"16\" fill=\"#e6e6e6\"/>", kLabel, y,
                          step_w);
    if (i > 0) {
      double x = kLabel;
      for (const Part& p : kParts) {
        const double w = static_cast<double>(f.path.*p.field) / most * kWidth;
        if (w <= 0) continue;
        absl::StrAppendFormat(&o,
                              "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"16\" fill=\"%s\"><title>%s %.3f "
                              "ms</title></rect>",
                              x, y, w, p.color, p.name, (f.path.*p.field) / 1e6);
        x += w;
      }
    }
    absl::StrAppendFormat(&o, "<text x=\"%.1f\" y=\"%d\">%.3f ms</text>", kLabel + step_w + 6, y + 14, f.step_ns / 1e6);
  }
  return o + "</svg>\n";
}

std::string Legend() {
  std::string o = "<div class=\"legend\"><span><i style=\"background:#e6e6e6\"></i>step</span>";
  for (const Part& p : kParts)
    absl::StrAppendFormat(&o, "<span><i style=\"background:%s\"></i>%s</span>", p.color, p.name);
  return o + "</div>\n";
}

}  // namespace

std::string RenderReplayHtml(const model::Trace& t, const std::vector<std::string>& inputs, const rp::ReplayResult& r) {
  const std::vector<ReplayRankSummary> ranks = SummarizeRanks(t, r, kReplayErrorFlag);
  std::string body = "<h1>overlapscope replay</h1>\n<p>";
  for (size_t i = 0; i < inputs.size(); ++i) absl::StrAppend(&body, i ? ", " : "", "<code>", Esc(inputs[i]), "</code>");
  body += "</p>\n<ul class=\"head\">";
  for (const std::string& l : ReplayHeadLines(r)) absl::StrAppend(&body, "<li>", Esc(l), "</li>");
  body += "</ul>\n";
  if (!ranks.empty()) {
    absl::StrAppend(&body, "<h2>Per rank (median over iterations)</h2>\n", Table(ReplayRankRows(ranks)));
    absl::StrAppend(&body, "<h2>Step and critical path per rank</h2>\n", Legend());
    for (const ReplayRankSummary& s : ranks) {
      absl::StrAppend(&body, "<h3>", Esc(s.label), "</h3>\n");
      if (s.unreliable)
        absl::StrAppendFormat(&body,
                              "<p class=\"warning\">Replay error %+.2f %% &gt; 5 %%: predictions not reliable</p>\n",
                              s.median_error * 100);
      absl::StrAppend(&body, Bars(s), Table(ReplayPathRows(s)));
    }
  }
  return absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>overlapscope "
      "replay</title><style>",
      kCss, "</style></head><body>\n", body, "</body></html>\n");
}

}  // namespace overlapscope::engine
