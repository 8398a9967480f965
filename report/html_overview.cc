// The job overview of the HTML page (report/html_internal.h): the ranks that stand out, linked
// to their sections, and a heat map of ranks x overview columns coloured by the deviation from
// the column's median (no script: an SVG whose cells carry <title> tooltips with the values).
#include <algorithm>
#include <cctype>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report/html_internal.h"
#include "report/overview.h"
#include "report/render.h"

namespace overlapscope::report::html {
namespace {

constexpr int kLeft = 96, kCol = 84, kTop = 34;
constexpr size_t kAllSections = 8;  // beyond: sections for the ranks that stand out only

// Blue below the median, red above; the saturation is the deviation over the column's outlier
// threshold (full at the threshold and beyond, where the cell is also outlined).
std::string CellColor(double dev_over_threshold) {
  const double a = std::min(1.0, std::fabs(dev_over_threshold));
  const int base = dev_over_threshold >= 0 ? 0 : 1;
  const int rgb[2][3] = {{215, 48, 39}, {69, 117, 180}};
  auto mix = [&](int c) { return static_cast<int>(std::lround(247 + (rgb[base][c] - 247) * a)); };
  return absl::StrFormat("rgb(%d,%d,%d)", mix(0), mix(1), mix(2));
}

std::string HeatMap(const JobOverview& o, const std::string& suffix) {
  const std::vector<OverviewColumn>& cols = OverviewColumns();
  const size_t n = o.rows.size();
  const double row = std::clamp(900.0 / static_cast<double>(n), 2.0, 16.0);
  const double height = kTop + row * static_cast<double>(n) + 8;
  std::string s = absl::StrFormat(
      "<svg class=\"chart overview\" viewBox=\"0 0 %d %.0f\" role=\"img\" aria-label=\"ranks by column\">",
      kLeft + kCol * static_cast<int>(cols.size()) + 8, height);
  for (size_t c = 0; c < cols.size(); ++c)
    absl::StrAppendFormat(&s, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>",
                          kLeft + kCol * static_cast<int>(c) + kCol / 2, kTop - 10, Esc(cols[c].title));
  for (size_t i = 0; i < n; ++i) {
    const OverviewRow& r = o.rows[i];
    const double y = kTop + row * static_cast<double>(i);
    const bool out = !r.deviations.empty();
    const std::string label =
        absl::StrFormat("<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\"%s>%s</text>", kLeft - 6, y + std::min(row, 11.0),
                        out ? " font-weight=\"bold\"" : "", Esc(r.label));
    if (out || n <= kAllSections)  // those with a section: linked to it
      absl::StrAppend(&s, "<a href=\"#", RankAnchor(r.label), suffix, "\">", label, "</a>");
    else if (row >= 11)
      s += label;
    for (size_t c = 0; c < cols.size(); ++c) {
      const ColumnStats& st = o.stats[c];
      const std::optional<double>& v = r.values[c];
      const double dev = v && st.threshold > 0 ? (*v - st.median) / st.threshold : 0;
      bool cell_out = false;
      for (const Deviation& d : r.deviations) cell_out |= d.column == c;
      absl::StrAppendFormat(
          &s, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"%s\"%s><title>%s</title></rect>",
          kLeft + kCol * static_cast<int>(c) + 1, y, kCol - 2, std::max(1.0, row - (row >= 4 ? 1 : 0)),
          v ? CellColor(dev) : "#eeeeee", cell_out ? " stroke=\"#000\" stroke-width=\"1\"" : "",
          Esc(absl::StrCat(r.label, ", ", cols[c].title, ": ", OverviewValue(c, v), " (median ",
                           OverviewValue(c, st.median), ")", cell_out ? ", stands out" : "")));
    }
  }
  return s + "</svg>";
}

std::string StatsTable(const JobOverview& o) {
  const std::vector<OverviewColumn>& cols = OverviewColumns();
  std::string s =
      "<table class=\"ovstats\"><tr><th>column</th><th>median</th><th>spread</th><th>min</th>"
      "<th>max</th><th>stands out beyond</th></tr>";
  for (size_t c = 0; c < cols.size(); ++c) {
    const ColumnStats& st = o.stats[c];
    if (st.ranks == 0) {
      absl::StrAppend(&s, "<tr><td>", Esc(cols[c].title),
                      "</td><td>-</td><td>-</td><td>-</td><td>-</td><td>-</td></tr>");
      continue;
    }
    const double t = st.threshold;
    absl::StrAppend(&s, "<tr><td>", Esc(cols[c].title), "</td><td>", Esc(OverviewValue(c, st.median)), "</td><td>",
                    Esc(OverviewValue(c, st.spread)), "</td><td>", Esc(OverviewValue(c, st.min)), "</td><td>",
                    Esc(OverviewValue(c, st.max)), "</td><td>&plusmn;", Esc(OverviewValue(c, t)), "</td></tr>");
  }
  return s + "</table>";
}

}  // namespace

bool HasSection(const JobOverview& o, size_t i) {
  return o.rows.size() <= kAllSections || (i < o.rows.size() && !o.rows[i].deviations.empty());
}

std::string RankAnchor(const std::string& label) {
  std::string a = "r-";
  for (char c : label) a += (std::isalnum(static_cast<unsigned char>(c)) != 0) ? c : '-';
  return a;
}

std::string OverviewHtml(const JobOverview& o, const std::string& anchor_suffix) {
  if (o.rows.empty()) return "";
  const bool diff = !anchor_suffix.empty();
  std::string s = absl::StrFormat("<section class=\"overview\"><h2>%s: %d ranks</h2>",
                                  diff ? "Change per rank (TEST &minus; BASE)" : "Job overview", o.rows.size());
  if (o.stand_out.empty()) {
    s += "<p>No rank stands out.</p>";
  } else {
    s += "<h3>Ranks that stand out</h3><ul class=\"standout\">";
    for (size_t i : o.stand_out) {
      const OverviewRow& r = o.rows[i];
      std::string what;
      for (const Deviation& d : r.deviations)
        absl::StrAppend(&what, what.empty() ? "" : "; ", OverviewColumns()[d.column].title, " ",
                        OverviewValue(d.column, d.value), d.value > d.median ? " (high, median " : " (low, median ",
                        OverviewValue(d.column, d.median), ")");
      absl::StrAppend(&s, "<li><a href=\"#", RankAnchor(r.label), anchor_suffix, "\">", Esc(r.label),
                      "</a>: ", Esc(what), "</li>");
    }
    s += "</ul>";
  }
  s += diff ? "<h3>Ranks &times; change of each column (red: changed more than the median change, blue: less; "
              "full colour and outlined: stands out)</h3>"
            : "<h3>Ranks &times; columns (red: above the median, blue: below; full colour and outlined: stands "
              "out)</h3>";
  s += HeatMap(o, anchor_suffix);
  s += StatsTable(o);
  s += "<p class=\"note\">spread = 1.4826 &times; MAD; a rank stands out when |value &minus; median| exceeds "
       "max(3 &times; spread, a floor per column); hover a cell for its value; --json has every row ";
  s += diff ? "(overview).</p>" : "(job_overview).</p>";
  return s + "</section>\n";
}

}  // namespace overlapscope::report::html
