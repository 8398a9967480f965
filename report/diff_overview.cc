// The overview of a multi-rank comparison (report/diff.h DiffOverview): per matched rank the
// change (TEST - BASE) of each overview column, and the ranks whose change stands out from the
// other ranks' changes by the job overview's rule (report/overview.h).
#include "report/diff.h"
#include "report/overview.h"

namespace overlapscope::report {

JobOverview DiffOverview(const ReportDiff& d) {
  if (d.ranks.size() < 2) return {};
  std::vector<OverviewRow> rows;
  for (size_t i = 0; i < d.ranks.size(); ++i) {
    const RankDiff& rd = d.ranks[i];
    OverviewRow row{i, rd.label, rd.rank, {}, "", {}};
    for (const OverviewColumn& c : OverviewColumns()) {
      std::optional<double> change;
      for (const MetricDelta& m : rd.summary)
        if (m.metric == c.key) change = m.value.delta();
      row.values.push_back(change);
    }
    rows.push_back(std::move(row));
  }
  JobOverview o = OverviewOfRows(std::move(rows));
  o.title = "change per rank (TEST - BASE)";
  return o;
}

}  // namespace overlapscope::report
