// The JSON "job_overview" section (report/render_json_overview.h).
#include "report/render_json_overview.h"

#include <cmath>

#include "report/overview.h"
#include "report/render_json_paths.h"

namespace overlapscope::report {
namespace {

using ojson = nlohmann::ordered_json;

ojson Number(const OverviewColumn& c, const std::optional<double>& v) {
  if (!v || !std::isfinite(*v)) return nullptr;
  if (c.unit == ColumnUnit::kRatio) return *v;
  if (std::floor(*v) == *v && std::fabs(*v) < 9e18) return static_cast<int64_t>(*v);
  return *v;  // a median of an even count of integers may end in .5
}

ojson RankRef(const OverviewRow& row) {
  return ojson{{"index", row.index}, {"label", row.label}, {"rank", JsonOpt(row.rank)}};
}

}  // namespace

ojson OverviewJson(const Report& r) { return OverviewJsonOf(BuildOverview(r)); }

ojson OverviewJsonOf(const JobOverview& o) {
  if (o.rows.empty()) return nullptr;
  const std::vector<OverviewColumn>& cols = OverviewColumns();
  ojson j;
  j["rule"] = "|value - median| > max(3 x spread, rel_floor x |median|, abs_floor), spread = 1.4826 x MAD";
  ojson columns = ojson::array();
  for (size_t c = 0; c < cols.size(); ++c) {
    const ColumnStats& s = o.stats[c];
    const bool any = s.ranks > 0;
    columns.push_back({{"metric", cols[c].key},
                       {"title", cols[c].title},
                       {"ranks", s.ranks},
                       {"median", any ? Number(cols[c], s.median) : ojson(nullptr)},
                       {"spread", any ? ojson(s.spread) : ojson(nullptr)},
                       {"threshold", any ? ojson(s.threshold) : ojson(nullptr)},
                       {"min", any ? Number(cols[c], s.min) : ojson(nullptr)},
                       {"max", any ? Number(cols[c], s.max) : ojson(nullptr)},
                       {"rel_floor", cols[c].rel_floor},
                       {"abs_floor", cols[c].abs_floor}});
  }
  j["columns"] = columns;
  ojson stand_out = ojson::array();
  for (size_t i : o.stand_out) {
    ojson x = RankRef(o.rows[i]);
    ojson devs = ojson::array();
    for (const Deviation& d : o.rows[i].deviations)
      devs.push_back({{"metric", cols[d.column].key},
                      {"value", Number(cols[d.column], d.value)},
                      {"median", Number(cols[d.column], d.median)},
                      {"score", d.score}});
    x["deviations"] = devs;
    stand_out.push_back(x);
  }
  j["stand_out"] = stand_out;
  ojson rows = ojson::array();
  for (const OverviewRow& row : o.rows) {
    ojson x = RankRef(row);
    for (size_t c = 0; c < cols.size(); ++c) x[cols[c].key] = Number(cols[c], row.values[c]);
    x["critical_path_top"] = row.path_top.empty() ? ojson(nullptr) : ojson(row.path_top);
    x["stands_out"] = !row.deviations.empty();
    rows.push_back(x);
  }
  j["rows"] = rows;
  return j;
}

}  // namespace overlapscope::report
