// The verdict of a report comparison (report/diff.h): per rank the step time and the overlap,
// then the changes that moved the step time, in ns per iteration and rank, largest first.
#include <algorithm>
#include <cmath>

#include "report/diff_internal.h"

namespace overlapscope::report::diff_internal {
namespace {

double D(int64_t v) { return static_cast<double>(v); }

// Kernels by name: per-iteration totals are summed over ranks, so divide by the ranks; a report
// without per-iteration values (before schema 1.5) gives total / iterations (of all ranks).
void KernelChanges(const Report& base, const Report& test, const ReportDiff& d, std::vector<Change>* out) {
  const double bn = std::max<double>(1, D(static_cast<int64_t>(base.ranks.size())));
  const double tn = std::max<double>(1, D(static_cast<int64_t>(test.ranks.size())));
  for (const KernelDiff& k : d.kernels) {
    Change c{k.kind + " " + k.name, "all ranks", 0, 0, k.per_iteration.judged, false};
    const bool series = !k.per_iteration.base.empty() || !k.per_iteration.test.empty();
    if (series) {
      c.per_iteration_values = true;
      c.base_ns = k.per_iteration.judged.base_median / bn;
      c.test_ns = k.per_iteration.judged.test_median / tn;
    } else {
      c.base_ns = k.total_ns.base.value_or(0) / std::max<double>(1, D(base.iterations.count));
      c.test_ns = k.total_ns.test.value_or(0) / std::max<double>(1, D(test.iterations.count));
      c.judged = Judgement{};
    }
    out->push_back(std::move(c));
  }
}

// A summary total of one rank per iteration (a report before 1.7 has no per-iteration values).
void TotalChange(const std::string& what, const RankReport& b, const RankReport& t, double b_total, double t_total,
                 std::vector<Change>* out) {
  const double bi = std::max<double>(1, D(static_cast<int64_t>(StepTimes(b).size())));
  const double ti = std::max<double>(1, D(static_cast<int64_t>(StepTimes(t).size())));
  Change c{what, t.label, b_total / bi, t_total / ti, Judgement{}, false};
  c.judged.base_median = c.base_ns;
  c.judged.test_median = c.test_ns;
  out->push_back(std::move(c));
}

void RankChanges(const RankReport& b, const RankReport& t, const RankDiff& rd, std::vector<Change>* out) {
  for (const SeriesDelta& s : rd.per_iteration)
    if (s.metric == "exposed_comm_ns")
      out->push_back({"exposed communication", t.label, s.judged.base_median, s.judged.test_median, s.judged, true});
  std::vector<std::string> causes;
  for (const NamedValue& g : b.summary.gap_ns) causes.push_back(g.name);
  for (const NamedValue& g : t.summary.gap_ns)
    if (std::find(causes.begin(), causes.end(), g.name) == causes.end()) causes.push_back(g.name);
  auto value = [](const std::vector<NamedValue>& v, const std::string& name) {
    for (const NamedValue& x : v)
      if (x.name == name) return D(x.value);
    return 0.0;
  };
  for (const std::string& cause : causes) {
    const std::string what = "GPU idle (" + cause + ")";
    auto series = std::find_if(rd.per_iteration.begin(), rd.per_iteration.end(),
                               [&](const SeriesDelta& s) { return s.metric == "gap_" + cause + "_ns"; });
    if (series != rd.per_iteration.end())  // per-iteration values on both sides (reports 1.7 on)
      out->push_back({what, t.label, series->judged.base_median, series->judged.test_median, series->judged, true});
    else
      TotalChange(what, b, t, value(b.summary.gap_ns, cause), value(t.summary.gap_ns, cause), out);
  }
}

}  // namespace

Verdict BuildVerdict(const Report& base, const Report& test,
                     const std::vector<std::pair<const RankReport*, const RankReport*>>& pairs, const ReportDiff& d) {
  Verdict v;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const RankDiff& rd = d.ranks[i];
    for (const SeriesDelta& s : rd.per_iteration)
      if (s.metric == "step_time_ns") v.step_time.push_back(s);
    Delta overlap;
    for (const MetricDelta& m : rd.summary)
      if (m.metric == "overlap_ratio") overlap = m.value;
    v.overlap_ratio.push_back(overlap);
    RankChanges(*pairs[i].first, *pairs[i].second, rd, &v.changes);
  }
  KernelChanges(base, test, d, &v.changes);
  v.changes.erase(
      std::remove_if(v.changes.begin(), v.changes.end(), [](const Change& c) { return std::fabs(c.delta_ns()) < 0.5; }),
      v.changes.end());
  std::stable_sort(v.changes.begin(), v.changes.end(),
                   [](const Change& a, const Change& b) { return std::fabs(a.delta_ns()) > std::fabs(b.delta_ns()); });
  return v;
}

}  // namespace overlapscope::report::diff_internal
