// The HTML pages (report/html.h): page frame and sections; the charts are in html_svg.cc.
#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "report/diff_internal.h"
#include "report/html_internal.h"
#include "report/render.h"

namespace overlapscope::report {
namespace {

using namespace html;  // NOLINT

constexpr char kCss[] =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px auto;max-width:1100px;"
    "color:#1d1d1f;padding:0 16px}h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ddd;"
    "padding-bottom:4px;margin-top:32px}h3{font-size:15px;margin:18px 0 6px}table{border-collapse:collapse;"
    "margin:6px 0}td,th{padding:3px 10px;border-bottom:1px solid #eee;text-align:right}td:first-child,"
    "th:first-child{text-align:left}.chart{width:100%;max-width:720px;display:block}.chart text{font-size:11px;"
    "fill:#333}.note{color:#777;font-style:italic}.legend span{margin-right:14px;font-size:12px}.legend i{"
    "display:inline-block;width:10px;height:10px;margin-right:4px}.up{color:#b3261e}.down{color:#1b7f3b}"
    ".sides{display:grid;grid-template-columns:1fr 1fr;gap:16px}.verdict li{margin:3px 0}code{font-size:12px}"
    ".advice{color:#555}.warning{color:#b3261e}td{white-space:nowrap}td:first-child,td:last-child{white-space:normal}"
    ".findings td:last-child{text-align:left}";

std::string Page(const std::string& title, const std::string& body) {
  return absl::StrCat("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>", Esc(title),
                      "</title><style>", kCss, "</style></head><body>\n", body, "</body></html>\n");
}

std::string Row(const std::vector<std::string>& cells, const char* tag = "td") {
  std::string o = "<tr>";
  for (const std::string& c : cells) absl::StrAppend(&o, "<", tag, ">", c, "</", tag, ">");
  return o + "</tr>";
}

std::string SummaryTable(const RankReport& rk) {
  const RankSummary& s = rk.summary;
  const std::vector<double> steps = StepTimes(rk);
  std::string o = "<table class=\"summary\">";
  o += Row({"step time (median)", steps.empty() ? "n/a" : Dur(static_cast<int64_t>(MedianOf(steps)))});
  o += Row({"overlap (hidden / all communication)", Pct(s.overlap_ratio)});
  o += Row({"exposed communication", Dur(s.exposed_comm_ns)});
  o += Row({"hidden communication", Dur(s.hidden_comm_ns)});
  if (s.comm_wait_ns) {  // METRICS §2: waiting is not communicating
    std::string w = absl::StrCat(Dur(*s.comm_wait_ns), " (hidden ", Dur(s.hidden_wait_ns.value_or(0)), ", exposed ",
                                 Dur(s.exposed_wait_ns.value_or(0)), ")");
    if (rk.waited_for_most)
      absl::StrAppend(&w, "; waited for ", Esc(rk.waited_for_most->label), " most (", Dur(rk.waited_for_most->wait_ns),
                      ")");
    o += Row({"communication waiting for the last peer", w});
  }
  o += Row({"compute", Dur(s.compute_ns)});
  // Signed (METRICS.md §2): below zero the overlapped compute ran faster than alone, which is no
  // slowdown; said so, as the text report does, rather than a negative slowdown.
  o += Row({"contention (compute slowed by overlap)",
            s.contention_ns >= 0
                ? Dur(s.contention_ns)
                : absl::StrCat("none (overlapped compute ran ", Dur(Diff(0, s.contention_ns)), " faster)")});
  o += Row({"host blocked on the GPU", absl::StrCat(Dur(s.blocked_ns), " (", Pct(s.blocked_share), ")")});
  o += Row({"GPU idle", absl::StrCat(Dur(s.gpu_idle_ns), " (", Pct(s.gpu_idle_share), ")")});
  o += Row({"collective wait", Dur(s.collective_wait_ns)});
  int64_t findings = 0;
  for (const NamedValue& f : s.findings) findings += f.value;
  o += Row({"findings", absl::StrCat(findings)});
  return o + "</table>";
}

std::string FindingsSection(const RankReport& rk) {
  if (rk.findings.items.empty()) return "<p class=\"note\">no findings</p>";
  std::map<std::string, std::pair<int64_t, const Finding*>> by;  // kind -> (cost, first)
  for (const Finding& f : rk.findings.items) {
    auto& e = by[f.kind];
    e.first += f.cost_ns;
    if (e.second == nullptr) e.second = &f;
  }
  std::string o = "<table class=\"findings\">" + Row({"finding", "count", "cost", "what to change"}, "th");
  for (const KindFigures& k : rk.findings.by_kind) {
    auto it = by.find(k.kind);
    if (k.count == 0 || it == by.end()) continue;
    o += Row({Esc(k.kind), absl::StrCat(k.count), Dur(k.ns),
              absl::StrCat(Esc(it->second.second->message), "<br><span class=\"advice\">",
                           Esc(it->second.second->advice), "</span>")});
  }
  return o + "</table>";
}

std::string RankSection(const RankReport& rk, const std::vector<RankTimeline>& timelines) {
  std::string o = absl::StrCat("<section class=\"rank\" id=\"", RankAnchor(rk.label), "\"><h2>", Esc(rk.label), "</h2>",
                               SummaryTable(rk));
  for (const DeviceReport& d : rk.devices)
    absl::StrAppend(&o, "<h3>Overlap per iteration, GPU ", d.device, " (hidden vs exposed communication)</h3>",
                    OverlapBars(d));
  absl::StrAppend(&o, "<h3>GPU idle by cause</h3>", IdleBar(rk), "<h3>Findings</h3>", FindingsSection(rk));
  for (const RankTimeline& t : timelines)
    if (t.label == rk.label)
      absl::StrAppend(&o, "<h3>Timeline of iteration ", t.iteration, " (median step time)</h3>", TimelineSvg(t));
  return o + "</section>\n";
}

std::string CrossRankSection(const Report& r) {
  const CrossRank& x = r.collectives_across_ranks;
  if (r.ranks.size() < 2) return "";
  std::string o =
      "<section class=\"cross\"><h2>Collectives across ranks</h2><h3>Collective wait (rank &times; "
      "instance)</h3>" +
      WaitHeatmap(x) + "<h3>Stragglers</h3><table class=\"stragglers\">" +
      Row({"rank", "times last", "others waited", "own wait"}, "th");
  for (const Straggling& s : x.ranks)
    o += Row({Esc(s.ref.label), absl::StrCat(s.times_last), Dur(s.others_wait_ns), Dur(s.own_wait_ns)});
  return o + "</table></section>\n";
}

std::string KernelsSection(const Report& r) {
  std::string o = "<section class=\"kernels\"><h2>Top kernels by class</h2>";
  for (const char* cls : {"compute", "comm", "memory", "sync"}) {
    const std::string bars = KernelBars(r.top_kernels, cls);
    if (!bars.empty()) absl::StrAppend(&o, "<h3>", cls, "</h3>", bars);
  }
  return o + "</section>\n";
}

std::string Header(const Report& r) {
  std::string others;
  if (!r.processes_without_gpu_work.empty())
    others = "<p class=\"note\">" +
             ProcessesWithoutGpuLine(
                 r.processes_without_gpu_work, [](const std::string& x) { return Esc(x); }, "<code>", "</code>") +
             "</p>";
  return absl::StrCat("<p>", Esc(absl::StrJoin(r.inputs, " ")), " &middot; ", r.ranks.size(), " rank(s), ",
                      r.iterations.count, " iteration(s) &middot; ", Esc(r.tool), "</p>", others, Legend());
}

// Coloured delta: red when worse, green when better (higher is better only for the overlap
// figures; for times, counts and shares lower is better).
std::string Signed(const std::string& metric, const Delta& d) {
  const std::optional<double> v = d.delta();
  static const char* const kHigherBetter[] = {"overlap_ratio", "compute_share_overlapped", "net_overlap_gain_ns",
                                              "hta_compat_overlap_pct", "hidden_comm_ns"};
  bool higher_better = false;
  for (const char* m : kHigherBetter) higher_better |= metric == m;
  const char* cls = !v || *v == 0 ? "" : ((*v > 0) != higher_better ? "up" : "down");
  return absl::StrCat("<span class=\"", cls, "\">", Esc(diff_internal::DeltaText(metric, d)), "</span>");
}

std::string VerdictHtml(const ReportDiff& d) {
  std::string o = "<h2>Verdict</h2><ul class=\"verdict\">";
  for (size_t i = 0; i < d.verdict.step_time.size(); ++i)
    o += "<li>" + Esc(diff_internal::StepLine(d.ranks[i].label, d.verdict.step_time[i], d.verdict.overlap_ratio[i])) +
         "</li>";
  if (d.ranks.empty()) o += "<li>no rank of TEST matches a rank of BASE</li>";
  o += "</ul>";
  if (d.verdict.changes.empty()) return o + "<p>No change moved the step time.</p>";
  const size_t nb = d.verdict.step_time.empty() ? 0 : d.verdict.step_time[0].base.size();
  const size_t nt = d.verdict.step_time.empty() ? 0 : d.verdict.step_time[0].test.size();
  o += "<h3>What moved the step time (per iteration and rank, largest first)</h3><table class=\"changes\">" +
       Row({"change", "where", "base", "test", "delta", "significance"}, "th");
  for (size_t i = 0; i < d.verdict.changes.size() && i < 10; ++i) {
    const Change& c = d.verdict.changes[i];
    const Delta v{c.base_ns, c.test_ns};
    o += Row({"<code>" + Esc(Short(c.what, 80)) + "</code>", Esc(c.where), Dur(std::llround(c.base_ns)),
              Dur(std::llround(c.test_ns)), Signed("_ns", v),
              Esc(diff_internal::JudgedText(c.judged, nb, nt, c.per_iteration_values))});
  }
  return o + "</table>";
}

std::string Arrow(const std::string& unit, const Delta& v) {
  return Esc(diff_internal::Value(unit, v.base)) + " &rarr; " + Esc(diff_internal::Value(unit, v.test));
}

// Kernels by name (the 20 that moved most) and by class, with their deltas.
std::string KernelDeltas(const ReportDiff& d) {
  std::string o = "<h2>Kernels</h2><table class=\"kdiff\">" +
                  Row({"kernel", "class", "status", "count", "median", "total base", "total test", "delta"}, "th");
  for (size_t i = 0; i < d.kernels.size() && i < 20; ++i) {
    const KernelDiff& k = d.kernels[i];
    o += Row({"<code>" + Esc(Short(k.name, 80)) + "</code>", k.cls, k.status, Arrow("count", k.count),
              Arrow("_ns", k.median_ns), Esc(diff_internal::Value("_ns", k.total_ns.base)),
              Esc(diff_internal::Value("_ns", k.total_ns.test)), Signed("total_ns", k.total_ns)});
  }
  o += "</table><h3>By class</h3><table class=\"classdiff\">" +
       Row({"class", "count", "time base", "time test", "delta"}, "th");
  for (const ClassDiff& c : d.classes)
    o += Row({Esc(c.cls), Arrow("count", c.count), Esc(diff_internal::Value("_ns", c.total_ns.base)),
              Esc(diff_internal::Value("_ns", c.total_ns.test)), Signed("total_ns", c.total_ns)});
  return o + "</table>";
}

// Collectives by (op, communicator, size): medians over the matched instances (several ranks).
std::string CollectiveDeltas(const ReportDiff& d) {
  if (d.collectives.empty()) return "";
  std::string o =
      "<h2>Collectives by (op, communicator, size)</h2><p class=\"note\">medians over the matched "
      "instances; exposed: not hidden by compute, averaged over the ranks</p><table class=\"colldiff\">" +
      Row({"collective", "instances", "bus time", "delta", "exposed", "delta", "skew", "busbw GB/s"}, "th");
  for (const CollectiveDiff& c : d.collectives)
    o += Row({Esc(absl::StrCat(c.op, " ", c.communicator.empty() ? "-" : c.communicator, " ",
                               c.size_bytes < 0 ? "size ?" : Bytes(c.size_bytes))),
              Arrow("n", c.instances), Arrow("_ns", c.bus_time_ns), Signed("_ns", c.bus_time_ns),
              Arrow("_ns", c.exposed_ns), Signed("_ns", c.exposed_ns), Arrow("_ns", c.skew_ns),
              Arrow("GB/s", c.busbw_gbps)});
  return o + "</table>";
}

}  // namespace

std::string RenderHtml(const Report& r, const std::vector<RankTimeline>& timelines) {
  std::string body = absl::StrCat("<h1>overlapscope report</h1>", Header(r));
  for (const ImportWarning& w : r.warnings) body += "<p class=\"warning\"><b>Warning:</b> " + Esc(w.message) + "</p>";
  const JobOverview overview = BuildOverview(r);  // multi-rank: first (html_overview.cc)
  body += OverviewHtml(overview);
  size_t left_out = 0;
  for (size_t i = 0; i < r.ranks.size(); ++i) {
    if (overview.rows.empty() || HasSection(overview, i))
      body += RankSection(r.ranks[i], timelines);
    else
      ++left_out;
  }
  if (left_out > 0)
    absl::StrAppend(&body, "<p class=\"note\">", left_out, " of ", r.ranks.size(),
                    " ranks do not stand out and have no section here (their figures: the overview above and --json)."
                    "</p>");
  body += CrossRankSection(r);
  body += KernelsSection(r);
  return Page("overlapscope report", body);
}

std::string RenderDiffHtml(const Report& base, const Report& test, const ReportDiff& d,
                           const std::vector<RankTimeline>& base_timelines,
                           const std::vector<RankTimeline>& test_timelines) {
  std::string body = "<h1>overlapscope diff</h1><p>BASE " + Esc(absl::StrJoin(d.base_inputs, " ")) + " &rarr; TEST " +
                     Esc(absl::StrJoin(d.test_inputs, " ")) + " (deltas are TEST &minus; BASE)</p>" + Legend();
  for (const std::string& w : d.warnings) body += "<p class=\"warning\"><b>Warning:</b> " + Esc(w) + "</p>";
  body += OverviewHtml(DiffOverview(d), "-delta");  // multi-rank: the change per rank, outliers first
  body += VerdictHtml(d);
  // Per rank the key metrics; the whole summary folds out (no script: <details>).
  static const char* const kKey[] = {"step_time_ns",   "overlap_ratio", "exposed_comm_ns",
                                     "hidden_comm_ns", "compute_ns",    "gpu_idle_ns",
                                     "blocked_ns",     "findings",      "collective_wait_ns"};
  for (const RankDiff& rd : d.ranks) {
    std::string key = "<table class=\"deltas\">" + Row({"metric", "base", "test", "delta"}, "th");
    std::string all = "<details><summary>every summary metric</summary><table class=\"all-deltas\">";
    for (const MetricDelta& m : rd.summary) {
      const std::string row = Row({Esc(m.metric), Esc(diff_internal::Value(m.metric, m.value.base)),
                                   Esc(diff_internal::Value(m.metric, m.value.test)), Signed(m.metric, m.value)});
      all += row;
      for (const char* k : kKey)
        if (m.metric == k) key += row;
    }
    body += "<h2 id=\"" + RankAnchor(rd.label) + "-delta\">" + Esc(rd.label) + ": deltas</h2>" + key + "</table>" +
            all + "</table></details>";
  }
  body += KernelDeltas(d) + CollectiveDeltas(d);
  body += "<h2>Both sides</h2><div class=\"sides\"><div><h2>BASE</h2>";
  for (const RankReport& rk : base.ranks) body += RankSection(rk, base_timelines);
  body += CrossRankSection(base) + KernelsSection(base) + "</div><div><h2>TEST</h2>";
  for (const RankReport& rk : test.ranks) body += RankSection(rk, test_timelines);
  body += CrossRankSection(test) + KernelsSection(test);
  body += "</div></div>";
  return Page("overlapscope diff", body);
}

int64_t MedianIterationNumber(const RankReport& rk, bool* found) {
  std::map<int64_t, bool> numbers;
  for (const DeviceReport& d : rk.devices)
    for (const IterationOverlap& it : d.iterations) numbers[it.iteration] = true;
  const std::vector<double> steps = StepTimes(rk);  // in the order of `numbers`
  *found = !steps.empty() && steps.size() == numbers.size();
  if (!*found) return 0;
  std::vector<size_t> order(steps.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return steps[a] < steps[b]; });
  auto it = numbers.begin();
  std::advance(it, static_cast<std::ptrdiff_t>(order[(order.size() - 1) / 2]));
  return it->first;
}

}  // namespace overlapscope::report
