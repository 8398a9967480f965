// Text and Markdown renderings of a report comparison (report/diff.h): the verdict first, then
// per rank the summary and the per-iteration distributions, kernels, classes, collectives.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "report/diff_internal.h"
#include "report/overview.h"
#include "report/render.h"

namespace overlapscope::report {
namespace diff_internal {

std::string JudgedText(const Judgement& j, size_t nb, size_t nt, bool has_values) {
  if (!has_values) return "not judged (no per-iteration values)";
  if (j.verdict == Significance::kNotJudged)
    return absl::StrFormat("not judged (%d vs %d iterations; %d a side needed)", nb, nt, kMinIterations);
  return absl::StrFormat("%s (p=%.2g)", ToString(j.verdict), j.p);
}

std::string StepLine(const std::string& label, const SeriesDelta& s, const Delta& overlap) {
  const Delta step{s.base.empty() ? std::nullopt : std::optional<double>(s.judged.base_median),
                   s.test.empty() ? std::nullopt : std::optional<double>(s.judged.test_median)};
  std::string line =
      absl::StrCat(label, ": step time ", Value("step_time_ns", step.base), " -> ", Value("step_time_ns", step.test),
                   " (", SignedDur(step.delta().value_or(0)), ", ", SignedPct(step.relative()), "), ",
                   JudgedText(s.judged, s.base.size(), s.test.size(), true));
  absl::StrAppend(&line, "; overlap ", Value("overlap_ratio", overlap.base), " -> ",
                  Value("overlap_ratio", overlap.test), " (", DeltaText("overlap_ratio", overlap), ")");
  return line;
}

}  // namespace diff_internal

namespace {

using namespace diff_internal;  // NOLINT

constexpr size_t kChangesShown = 10;

// A Markdown table cell: '|' would end the cell, a newline the row.
std::string Cell(std::string s) {
  std::string o;
  for (char c : s) {
    if (c == '|')
      o += "\\|";
    else if (c == '\n')
      o += ' ';
    else
      o += c;
  }
  return o;
}

std::string ChangeLine(const Change& c, size_t nb, size_t nt) {
  return absl::StrCat(SignedDur(c.delta_ns()), "  ", c.what, " (", c.where, "): ", Dur(std::llround(c.base_ns)), " -> ",
                      Dur(std::llround(c.test_ns)), " per iteration, ",
                      c.per_iteration_values ? JudgedText(c.judged, nb, nt, true) : JudgedText(c.judged, 0, 0, false));
}

// Iterations per side of a change: its series' lengths are not kept, so use the step-time series
// of the first rank (what "iterations" means for every per-rank series).
std::pair<size_t, size_t> SideIterations(const ReportDiff& d) {
  if (d.verdict.step_time.empty()) return {0, 0};
  return {d.verdict.step_time.front().base.size(), d.verdict.step_time.front().test.size()};
}

}  // namespace

std::string RenderDiffText(const ReportDiff& d) {
  std::string o;
  for (const std::string& w : d.warnings) absl::StrAppend(&o, "WARNING ", w, "\n");
  absl::StrAppend(&o, "overlapscope diff (deltas are TEST - BASE)\n");
  absl::StrAppend(&o, "  base: ", absl::StrJoin(d.base_inputs, " "), "\n  test: ", absl::StrJoin(d.test_inputs, " "),
                  "\n");
  {
    const JobOverview change = DiffOverview(d);  // several ranks: the changes that stand out first
    o += OverviewText(change, std::vector<bool>(change.rows.size(), false));
  }
  o += "\nVerdict\n";
  for (size_t i = 0; i < d.verdict.step_time.size(); ++i)
    absl::StrAppend(&o, "  ", StepLine(d.ranks[i].label, d.verdict.step_time[i], d.verdict.overlap_ratio[i]), "\n");
  if (d.ranks.empty()) o += "  no rank of TEST matches a rank of BASE\n";
  const auto [nb, nt] = SideIterations(d);
  if (d.verdict.changes.empty()) {
    o += "  no change moved the step time (every compared time is equal)\n";
  } else {
    o += "  what moved the step time (per iteration and rank, largest first):\n";
    for (size_t i = 0; i < d.verdict.changes.size() && i < kChangesShown; ++i)
      absl::StrAppendFormat(&o, "  %2d. %s\n", i + 1, ChangeLine(d.verdict.changes[i], nb, nt));
  }
  for (const std::string& l : d.only_in_base) absl::StrAppend(&o, "  only in BASE: ", l, "\n");
  for (const std::string& l : d.only_in_test) absl::StrAppend(&o, "  only in TEST: ", l, "\n");
  for (const RankDiff& r : d.ranks) {
    absl::StrAppend(&o, "\n", r.label, " (matched by ", r.matched_by, ")\n");
    absl::StrAppendFormat(&o, "  %-44s %14s %14s  %s\n", "metric", "base", "test", "delta");
    for (const MetricDelta& m : r.summary)
      absl::StrAppendFormat(&o, "  %-44s %14s %14s  %s\n", m.metric, Value(m.metric, m.value.base),
                            Value(m.metric, m.value.test), DeltaText(m.metric, m.value));
    absl::StrAppendFormat(&o, "  per iteration (medians)\n  %-44s %14s %14s  %s\n", "metric", "base", "test",
                          "significance");
    for (const SeriesDelta& s : r.per_iteration)
      absl::StrAppendFormat(&o, "  %-44s %14s %14s  %s\n", s.metric, Value(s.metric, s.judged.base_median),
                            Value(s.metric, s.judged.test_median),
                            JudgedText(s.judged, s.base.size(), s.test.size(), true));
  }
  absl::StrAppend(&o, "\nKernels by name", d.top_kernels_limited ? " (each report lists its top N per class)" : "",
                  "\n");
  absl::StrAppendFormat(&o, "  %-8s %-8s %8s %8s %12s %12s %12s %12s  %s\n", "status", "class", "count", "count'",
                        "total", "total'", "median", "median'", "name");
  for (const KernelDiff& k : d.kernels)
    absl::StrAppendFormat(&o, "  %-8s %-8s %8s %8s %12s %12s %12s %12s  %s\n", k.status, k.cls,
                          Value("count", k.count.base), Value("count", k.count.test), Value("_ns", k.total_ns.base),
                          Value("_ns", k.total_ns.test), Value("_ns", k.median_ns.base), Value("_ns", k.median_ns.test),
                          Short(k.name));
  o += "\nClasses\n";
  for (const ClassDiff& c : d.classes)
    absl::StrAppendFormat(&o, "  %-8s count %s -> %s, time %s -> %s (%s)\n", c.cls, Value("n", c.count.base),
                          Value("n", c.count.test), Value("_ns", c.total_ns.base), Value("_ns", c.total_ns.test),
                          DeltaText("total_ns", c.total_ns));
  if (!d.collectives.empty()) {
    o += "\nCollectives by (op, communicator, size): medians over matched instances\n";
    for (const CollectiveDiff& c : d.collectives)
      absl::StrAppendFormat(
          &o,
          "  %s comm %s %s: instances %s -> %s, bus time %s -> %s, exposed %s -> %s, skew %s -> %s, busbw %s -> %s\n",
          c.op, c.communicator.empty() ? "-" : c.communicator, c.size_bytes < 0 ? "size ?" : Bytes(c.size_bytes),
          Value("n", c.instances.base), Value("n", c.instances.test), Value("_ns", c.bus_time_ns.base),
          Value("_ns", c.bus_time_ns.test), Value("_ns", c.exposed_ns.base), Value("_ns", c.exposed_ns.test),
          Value("_ns", c.skew_ns.base), Value("_ns", c.skew_ns.test), Value("GB/s", c.busbw_gbps.base),
          Value("GB/s", c.busbw_gbps.test));
  }
  return o;
}

std::string RenderDiffMarkdown(const ReportDiff& d) {
  std::string o = "### overlapscope diff\n\n";
  for (const std::string& w : d.warnings) absl::StrAppend(&o, "> **Warning:** ", w, "\n\n");
  absl::StrAppend(&o, "BASE `", absl::StrJoin(d.base_inputs, " "), "` → TEST `", absl::StrJoin(d.test_inputs, " "),
                  "` (deltas are TEST − BASE)\n\n");
  {
    const JobOverview change = DiffOverview(d);
    o += OverviewMarkdown(change, std::vector<bool>(change.rows.size(), false));
  }
  o += "**Verdict**\n\n";
  for (size_t i = 0; i < d.verdict.step_time.size(); ++i)
    absl::StrAppend(&o, "- ", StepLine(d.ranks[i].label, d.verdict.step_time[i], d.verdict.overlap_ratio[i]), "\n");
  const auto [nb, nt] = SideIterations(d);
  if (!d.verdict.changes.empty()) {
    o += "\n| # | change | where | base / iteration | test / iteration | delta | significance |\n"
         "|---|---|---|---|---|---|---|\n";
    for (size_t i = 0; i < d.verdict.changes.size() && i < kChangesShown; ++i) {
      const Change& c = d.verdict.changes[i];
      absl::StrAppend(&o, "| ", i + 1, " | `", Cell(Short(c.what, 70)), "` | ", c.where, " | ",
                      Dur(std::llround(c.base_ns)), " | ", Dur(std::llround(c.test_ns)), " | ", SignedDur(c.delta_ns()),
                      " | ", JudgedText(c.judged, nb, nt, c.per_iteration_values), " |\n");
    }
  } else {
    o += "\nNo change moved the step time.\n";
  }
  for (const RankDiff& r : d.ranks) {
    absl::StrAppend(&o, "\n<details><summary>", r.label,
                    ": summary</summary>\n\n| metric | base | test | delta |\n|---|---:|---:|---:|\n");
    for (const MetricDelta& m : r.summary)
      absl::StrAppend(&o, "| ", m.metric, " | ", Value(m.metric, m.value.base), " | ", Value(m.metric, m.value.test),
                      " | ", DeltaText(m.metric, m.value), " |\n");
    o += "\n</details>\n";
  }
  o += "\n| kernel | class | status | count base → test | median base → test | total base | total test | delta "
       "|\n|---|---|---|---:|---:|---:|---:|---:|\n";
  for (size_t i = 0; i < d.kernels.size() && i < kChangesShown; ++i) {
    const KernelDiff& k = d.kernels[i];
    absl::StrAppend(&o, "| `", Cell(Short(k.name, 70)), "` | ", k.cls, " | ", k.status, " | ",
                    Value("count", k.count.base), " → ", Value("count", k.count.test), " | ",
                    Value("_ns", k.median_ns.base), " → ", Value("_ns", k.median_ns.test), " | ",
                    Value("_ns", k.total_ns.base), " | ", Value("_ns", k.total_ns.test), " | ",
                    DeltaText("total_ns", k.total_ns), " |\n");
  }
  o += "\n| class | count base → test | time base | time test | delta |\n|---|---:|---:|---:|---:|\n";
  for (const ClassDiff& c : d.classes)
    absl::StrAppend(&o, "| ", c.cls, " | ", Value("n", c.count.base), " → ", Value("n", c.count.test), " | ",
                    Value("_ns", c.total_ns.base), " | ", Value("_ns", c.total_ns.test), " | ",
                    DeltaText("total_ns", c.total_ns), " |\n");
  if (!d.collectives.empty()) {
    o += "\n<details><summary>collectives by (op, communicator, size): medians over instances</summary>\n\n"
         "| op | communicator | size | instances | bus time | exposed | skew | busbw GB/s |\n"
         "|---|---|---:|---:|---:|---:|---:|---:|\n";
    auto pair = [](const std::string& unit, const Delta& v) {
      return absl::StrCat(Value(unit, v.base), " → ", Value(unit, v.test));
    };
    for (const CollectiveDiff& c : d.collectives)
      absl::StrAppend(&o, "| ", Cell(c.op), " | ", Cell(c.communicator.empty() ? "-" : c.communicator), " | ",
                      c.size_bytes < 0 ? "?" : Bytes(c.size_bytes), " | ", pair("n", c.instances), " | ",
                      pair("_ns", c.bus_time_ns), " | ", pair("_ns", c.exposed_ns), " | ", pair("_ns", c.skew_ns),
                      " | ", pair("GB/s", c.busbw_gbps), " |\n");
    o += "\n</details>\n";
  }
  return o;
}

}  // namespace overlapscope::report
