// The job overview as text and Markdown (report/overview.h): the ranks that stand out first,
// then the job's median and spread per column, then one row per rank (every rank up to 16, else
// those that stand out and those with a detail block; the JSON and the HTML have every row).
#include <algorithm>
#include <cctype>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report/overview.h"
#include "report/render.h"

namespace overlapscope::report {
namespace {

constexpr size_t kAllRowsUpTo = 16;
constexpr size_t kStandOutListed = 20;

std::string Count(double v) { return std::floor(v) == v ? absl::StrFormat("%.0f", v) : absl::StrFormat("%.1f", v); }

std::string DeviationText(const Deviation& d) {
  const OverviewColumn& c = OverviewColumns()[d.column];
  return absl::StrCat(c.title, " ", OverviewValue(d.column, d.value), d.value > d.median ? " (high" : " (low",
                      ", median ", OverviewValue(d.column, d.median), ")");
}

std::vector<size_t> RowsShown(const JobOverview& o, const std::vector<bool>& selected) {
  std::vector<size_t> rows;
  for (size_t i = 0; i < o.rows.size(); ++i) {
    const bool out = !o.rows[i].deviations.empty();
    if (o.rows.size() <= kAllRowsUpTo || out || (i < selected.size() && selected[i])) rows.push_back(i);
  }
  return rows;
}

std::string Cell(const OverviewRow& row, size_t c) {
  std::string v = OverviewValue(c, row.values[c]);
  for (const Deviation& d : row.deviations)
    if (d.column == c) v += "*";
  return v;
}

std::string StandOutText(const JobOverview& o) {
  std::string s;
  if (o.stand_out.empty()) return "  ranks that stand out: none\n";
  absl::StrAppendFormat(&s, "  ranks that stand out (%d; * below):\n", o.stand_out.size());
  for (size_t k = 0; k < o.stand_out.size() && k < kStandOutListed; ++k) {
    const OverviewRow& row = o.rows[o.stand_out[k]];
    std::string what;
    for (const Deviation& d : row.deviations) absl::StrAppend(&what, what.empty() ? "" : "; ", DeviationText(d));
    absl::StrAppendFormat(&s, "    %-10s %s\n", row.label, what);
  }
  if (o.stand_out.size() > kStandOutListed)
    absl::StrAppendFormat(&s, "    ... %d more (--json: job_overview)\n", o.stand_out.size() - kStandOutListed);
  return s;
}

}  // namespace

std::string OverviewValue(size_t c, const std::optional<double>& v) {
  if (!v) return "-";
  switch (OverviewColumns()[c].unit) {
    case ColumnUnit::kNs: return Dur(static_cast<int64_t>(std::llround(std::clamp(*v, -9e18, 9e18))));
    case ColumnUnit::kRatio: return Pct(*v);
    case ColumnUnit::kCount: return Count(*v);
  }
  return "-";
}

std::string OverviewText(const JobOverview& o, const std::vector<bool>& selected) {
  if (o.rows.empty()) return "";
  const std::vector<OverviewColumn>& cols = OverviewColumns();
  std::string s = absl::StrFormat("\n== %s: %d ranks ==\n", o.title, o.rows.size());
  s += StandOutText(o);
  s += "\n  a rank stands out when |value - median| > max(3 x spread, floor); spread = 1.4826 x MAD\n";
  absl::StrAppendFormat(&s, "  %-13s %12s %12s %12s %12s\n", "column", "median", "spread", "min", "max");
  for (size_t c = 0; c < cols.size(); ++c) {
    const ColumnStats& st = o.stats[c];
    if (st.ranks == 0) {
      absl::StrAppendFormat(&s, "  %-13s %12s\n", cols[c].title, "-");
      continue;
    }
    absl::StrAppendFormat(&s, "  %-13s %12s %12s %12s %12s\n", cols[c].title, OverviewValue(c, st.median),
                          OverviewValue(c, st.spread), OverviewValue(c, st.min), OverviewValue(c, st.max));
  }
  absl::StrAppendFormat(&s, "\n  %-10s", "rank");
  for (const OverviewColumn& c : cols) absl::StrAppendFormat(&s, " %13s", c.title);
  s += "  critical path\n";
  const std::vector<size_t> shown = RowsShown(o, selected);
  for (size_t i : shown) {
    const OverviewRow& row = o.rows[i];
    absl::StrAppendFormat(&s, "  %-10s", row.label);
    for (size_t c = 0; c < cols.size(); ++c) absl::StrAppendFormat(&s, " %13s", Cell(row, c));
    absl::StrAppend(&s, "  ", row.path_top.empty() ? "-" : row.path_top, "\n");
  }
  if (shown.size() < o.rows.size())
    absl::StrAppendFormat(&s, "  ... %d other ranks within the spread (--json, --html: every rank)\n",
                          o.rows.size() - shown.size());
  return s;
}

std::string OverviewMarkdown(const JobOverview& o, const std::vector<bool>& selected) {
  if (o.rows.empty()) return "";
  const std::vector<OverviewColumn>& cols = OverviewColumns();
  std::string title = o.title;
  if (!title.empty()) title[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(title[0])));
  std::string s = absl::StrFormat("**%s: %d ranks.** ", title, o.rows.size());
  if (o.stand_out.empty()) {
    s += "No rank stands out.\n\n";
  } else {
    absl::StrAppendFormat(&s, "Ranks that stand out (%d):\n\n", o.stand_out.size());
    for (size_t k = 0; k < o.stand_out.size() && k < kStandOutListed; ++k) {
      const OverviewRow& row = o.rows[o.stand_out[k]];
      std::string what;
      for (const Deviation& d : row.deviations) absl::StrAppend(&what, what.empty() ? "" : "; ", DeviationText(d));
      absl::StrAppend(&s, "- **", row.label, "**: ", what, "\n");
    }
    if (o.stand_out.size() > kStandOutListed)
      absl::StrAppendFormat(&s, "- ... %d more (`--json`: `job_overview`)\n", o.stand_out.size() - kStandOutListed);
    s += "\n";
  }
  s += "| rank |";
  for (const OverviewColumn& c : cols) absl::StrAppend(&s, " ", c.title, " |");
  s += " critical path |\n|---|";
  for (size_t c = 0; c < cols.size(); ++c) s += "---:|";
  s += "---|\n| *median* |";
  for (size_t c = 0; c < cols.size(); ++c)
    absl::StrAppend(&s, " ", o.stats[c].ranks ? OverviewValue(c, o.stats[c].median) : "-", " |");
  s += " |\n| *spread* |";
  for (size_t c = 0; c < cols.size(); ++c)
    absl::StrAppend(&s, " ", o.stats[c].ranks ? OverviewValue(c, o.stats[c].spread) : "-", " |");
  s += " |\n";
  const std::vector<size_t> shown = RowsShown(o, selected);
  for (size_t i : shown) {
    const OverviewRow& row = o.rows[i];
    absl::StrAppend(&s, "| ", row.label, " |");
    for (size_t c = 0; c < cols.size(); ++c) absl::StrAppend(&s, " ", Cell(row, c), " |");
    absl::StrAppend(&s, " ", row.path_top.empty() ? "-" : row.path_top, " |\n");
  }
  if (shown.size() < o.rows.size())
    absl::StrAppendFormat(&s, "\n%d other ranks within the spread are not listed (`--json`, `--html`: every rank).\n",
                          o.rows.size() - shown.size());
  s += "\n*: stands out (|value - median| > max(3 x spread, floor), spread = 1.4826 x MAD).\n\n";
  return s;
}

}  // namespace overlapscope::report
