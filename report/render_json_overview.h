// Internal to the JSON renderer: the "job_overview" section (report/overview.h), schema 1.9.
#pragma once

#include "nlohmann/json.hpp"
#include "report/report.h"

namespace overlapscope::report {

// The section's value: null for fewer than 2 ranks; else the rule, per column its median,
// spread, threshold, min and max, the ranks that stand out (largest deviation first) and one row
// per rank (every rank, in report order). docs/report-schema.md lists the keys.
nlohmann::ordered_json OverviewJson(const Report& r);
// The same of any overview (the diff's overview of the change: report/diff.h DiffOverview).
struct JobOverview;
nlohmann::ordered_json OverviewJsonOf(const JobOverview& o);

}  // namespace overlapscope::report
