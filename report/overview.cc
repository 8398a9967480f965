// The job overview (report/overview.h): columns, medians and spreads, the ranks that stand out,
// and which ranks get a detail block.
#include "report/overview.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "report/diff.h"
#include "report/gates.h"

namespace overlapscope::report {
namespace {

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  const size_t h = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<long>(h), v.end());
  const double hi = v[h];
  if (v.size() % 2 == 1) return hi;
  const double lo = *std::max_element(v.begin(), v.begin() + static_cast<long>(h));
  return lo + (hi - lo) / 2;
}

std::optional<double> Value(const std::vector<Metric>& metrics, const std::string& key) {
  for (const Metric& m : metrics) {
    if (m.name != key) continue;
    if (m.is_ratio) return m.ratio && std::isfinite(*m.ratio) ? m.ratio : std::nullopt;
    if (key == "step_time_ns" && m.integer <= 0) return std::nullopt;  // no iteration
    return static_cast<double>(m.integer);
  }
  return std::nullopt;
}

std::string PathTop(const RankSummary& s) {
  std::string top;
  double best = 0;
  for (const PathShare& p : s.critical_path_shares)
    if (p.share && *p.share > best) best = *p.share, top = p.category;
  return top;
}

ColumnStats StatsOf(const std::vector<OverviewRow>& rows, size_t c, const OverviewColumn& col) {
  std::vector<double> v;
  for (const OverviewRow& r : rows)
    if (r.values[c]) v.push_back(*r.values[c]);
  ColumnStats s;
  s.ranks = static_cast<int64_t>(v.size());
  if (v.empty()) return s;
  s.min = *std::min_element(v.begin(), v.end());
  s.max = *std::max_element(v.begin(), v.end());
  s.median = Median(v);
  std::vector<double> dev;
  for (double x : v) dev.push_back(std::fabs(x - s.median));
  s.spread = 1.4826 * Median(dev);
  s.threshold = std::max({3 * s.spread, col.rel_floor * std::fabs(s.median), col.abs_floor});
  return s;
}

}  // namespace

const std::vector<OverviewColumn>& OverviewColumns() {
  static const auto* const kColumns = new std::vector<OverviewColumn>{
      {"step_time_ns", "step", ColumnUnit::kNs, 0.05, 1e3},
      {"overlap_ratio", "overlap", ColumnUnit::kRatio, 0, 0.05},
      {"exposed_comm_ns", "exposed comm", ColumnUnit::kNs, 0.10, 1e5},
      {"blocked_ns", "host blocked", ColumnUnit::kNs, 0.10, 1e5},
      {"gpu_idle_ns", "GPU idle", ColumnUnit::kNs, 0.10, 1e5},
      {"collective_times_last", "times last", ColumnUnit::kCount, 0.10, 2},
      {"collective_wait_ns", "coll. wait", ColumnUnit::kNs, 0.10, 1e5},
  };
  return *kColumns;
}

int64_t MedianStepNs(const RankReport& rk) {
  const std::vector<double> v = StepTimes(rk);
  if (v.empty()) return 0;
  return std::llround(Median(v));
}

JobOverview BuildOverview(const Report& r) {
  if (r.ranks.size() < 2) return {};
  std::vector<OverviewRow> rows;
  for (size_t i = 0; i < r.ranks.size(); ++i) {
    const RankReport& rk = r.ranks[i];
    OverviewRow row{i, rk.label, rk.rank, {}, PathTop(rk.summary), {}};
    const std::vector<Metric> metrics = SummaryMetrics(rk.summary);
    for (const OverviewColumn& c : OverviewColumns()) row.values.push_back(Value(metrics, c.key));
    rows.push_back(std::move(row));
  }
  return OverviewOfRows(std::move(rows));
}

JobOverview OverviewOfRows(std::vector<OverviewRow> rows) {
  JobOverview o;
  o.rows = std::move(rows);
  const std::vector<OverviewColumn>& cols = OverviewColumns();
  for (size_t c = 0; c < cols.size(); ++c) o.stats.push_back(StatsOf(o.rows, c, cols[c]));
  std::vector<std::pair<double, size_t>> order;  // (-best score, row)
  for (OverviewRow& row : o.rows) {
    for (size_t c = 0; c < cols.size(); ++c) {
      const ColumnStats& s = o.stats[c];
      if (!row.values[c] || s.ranks < 3 || !(s.threshold > 0)) continue;
      const double d = std::fabs(*row.values[c] - s.median);
      if (d > s.threshold) row.deviations.push_back({c, *row.values[c], s.median, d / s.threshold});
    }
    std::stable_sort(row.deviations.begin(), row.deviations.end(),
                     [](const Deviation& a, const Deviation& b) { return a.score > b.score; });
    if (!row.deviations.empty()) order.push_back({-row.deviations.front().score, row.index});
  }
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [score, i] : order) o.stand_out.push_back(i);
  return o;
}

absl::StatusOr<RankSelection> ParseRankSelection(std::string_view view) {
  const std::string text(view);  // Debian's Abseil: absl::string_view is not std::string_view
  RankSelection s;
  auto bad = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat("--ranks '", text, "': expected all, a count (e.g. 4) or rank numbers (e.g. 0,5,17)"));
  };
  if (text == "all") {
    s.mode = RankSelection::Mode::kAll;
    return s;
  }
  if (text.empty()) return bad();
  if (text.find(',') == std::string::npos) {
    int64_t n = 0;
    if (!absl::SimpleAtoi(text, &n) || n < 0) return bad();
    s.mode = RankSelection::Mode::kCount;
    s.count = n;
    return s;
  }
  s.mode = RankSelection::Mode::kList;
  for (const std::string& part : std::vector<std::string>(absl::StrSplit(text, ','))) {
    if (part.empty()) continue;  // "5,": the list of one rank
    int64_t n = 0;
    if (!absl::SimpleAtoi(part, &n) || n < 0) return bad();
    s.ranks.push_back(n);
  }
  if (s.ranks.empty()) return bad();
  return s;
}

std::vector<bool> SelectRanks(const Report& r, const JobOverview& o, const RankSelection& s) {
  const size_t n = r.ranks.size();
  using Mode = RankSelection::Mode;
  if (s.mode == Mode::kAll || n < 2 || (s.mode == Mode::kDefault && n <= 8)) return std::vector<bool>(n, true);
  std::vector<bool> on(n, false);
  if (s.mode == Mode::kList) {
    const std::set<int64_t> want(s.ranks.begin(), s.ranks.end());
    for (size_t i = 0; i < n; ++i) {
      const RankReport& rk = r.ranks[i];
      on[i] = want.count(rk.rank ? *rk.rank : rk.pid) > 0;
    }
    return on;
  }
  for (size_t i : o.stand_out) on[i] = true;
  const int64_t others = s.mode == Mode::kCount ? s.count : 4;
  std::vector<std::pair<int64_t, size_t>> slow;  // (-step, index): slowest first, then report order
  for (size_t i = 0; i < n && i < o.rows.size(); ++i)
    if (!on[i]) slow.push_back({-r.ranks[i].summary.step_time_ns, i});
  std::stable_sort(slow.begin(), slow.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t k = 0; k < slow.size() && static_cast<int64_t>(k) < others; ++k) on[slow[k].second] = true;
  return on;
}

std::string LeftOutText(const std::vector<bool>& selected) {
  const auto shown = std::count(selected.begin(), selected.end(), true);
  if (static_cast<size_t>(shown) == selected.size()) return "";
  return absl::StrCat("\n(detail blocks for ", shown, " of ", selected.size(),
                      " ranks (by default those that stand out and the 4 slowest steps; --ranks all|N|R,R,... "
                      "chooses; --json has every rank)\n");
}

}  // namespace overlapscope::report
