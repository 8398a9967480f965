// JSON rendering of a report comparison: schema overlapscope.diff/1 (docs/diff-schema.md).
// Absent values are null, never NaN; deltas are TEST − BASE.
#include <cmath>

#include "nlohmann/json.hpp"
#include "report/diff_internal.h"
#include "report/overview.h"
#include "report/render_json_overview.h"

namespace overlapscope::report {
namespace {

using ojson = nlohmann::ordered_json;

ojson Num(const std::optional<double>& v) {
  if (!v || !std::isfinite(*v)) return nullptr;
  if (*v == std::floor(*v) && std::fabs(*v) < 9e15) return static_cast<int64_t>(*v);
  return *v;
}

ojson DeltaJson(const Delta& d) {
  return {{"base", Num(d.base)}, {"test", Num(d.test)}, {"delta", Num(d.delta())}, {"relative", Num(d.relative())}};
}

ojson JudgedJson(const Judgement& j) {
  return {{"significance", ToString(j.verdict)},
          {"p", j.verdict == Significance::kNotJudged ? ojson(nullptr) : ojson(j.p)},
          {"exact", j.exact},
          {"base_median", Num(j.base_median)},
          {"test_median", Num(j.test_median)}};
}

ojson SeriesJson(const SeriesDelta& s) {
  ojson j{{"metric", s.metric}, {"base", ojson::array()}, {"test", ojson::array()}};
  for (double v : s.base) j["base"].push_back(Num(v));
  for (double v : s.test) j["test"].push_back(Num(v));
  j.update(JudgedJson(s.judged));
  return j;
}

ojson VerdictJson(const ReportDiff& d) {
  ojson ranks = ojson::array();
  for (size_t i = 0; i < d.verdict.step_time.size(); ++i)
    ranks.push_back({{"label", d.ranks[i].label},
                     {"step_time_ns", SeriesJson(d.verdict.step_time[i])},
                     {"overlap_ratio", DeltaJson(d.verdict.overlap_ratio[i])}});
  ojson changes = ojson::array();
  for (const Change& c : d.verdict.changes) {
    ojson j{{"what", c.what},
            {"where", c.where},
            {"base_ns", Num(c.base_ns)},
            {"test_ns", Num(c.test_ns)},
            {"delta_ns", Num(c.delta_ns())},
            {"per_iteration_values", c.per_iteration_values}};
    j.update(JudgedJson(c.judged));
    if (!c.per_iteration_values) j["significance"] = "not judged";
    changes.push_back(j);
  }
  return {{"ranks", ranks}, {"changes", changes}};
}

}  // namespace

std::string RenderDiffJson(const ReportDiff& d, const std::vector<DiffGate>& gates) {
  ojson j;
  j["schema"] = kDiffSchema;
  j["schema_version"] = kDiffSchemaVersion;
  j["warnings"] = d.warnings;
  j["base"] = {
      {"inputs", d.base_inputs}, {"report_schema_version", d.base_schema_version}, {"iterations", d.base_iterations}};
  j["test"] = {
      {"inputs", d.test_inputs}, {"report_schema_version", d.test_schema_version}, {"iterations", d.test_iterations}};
  j["significance"] = {{"test", "two-sided rank-sum (Mann-Whitney U) over per-iteration values"},
                       {"max_p", kMaxP},
                       {"min_relative_change", kMinRelativeChange},
                       {"min_iterations", kMinIterations}};
  j["verdict"] = VerdictJson(d);
  j["overview"] = OverviewJsonOf(DiffOverview(d));  // 1.2: the change per rank (null below 2 ranks)
  ojson ranks = ojson::array();
  for (const RankDiff& r : d.ranks) {
    ojson summary = ojson::object();
    for (const MetricDelta& m : r.summary) summary[m.metric] = DeltaJson(m.value);
    ojson per = ojson::array();
    for (const SeriesDelta& s : r.per_iteration) per.push_back(SeriesJson(s));
    ranks.push_back({{"label", r.label},
                     {"rank", r.rank ? ojson(*r.rank) : ojson(nullptr)},
                     {"matched_by", r.matched_by},
                     {"summary", summary},
                     {"per_iteration", per}});
  }
  j["ranks"] = ranks;
  j["only_in_base"] = d.only_in_base;
  j["only_in_test"] = d.only_in_test;
  j["top_kernels_limited"] = d.top_kernels_limited;
  ojson kernels = ojson::array();
  for (const KernelDiff& k : d.kernels)
    kernels.push_back({{"class", k.cls},
                       {"kind", k.kind},
                       {"name", k.name},
                       {"status", k.status},
                       {"count", DeltaJson(k.count)},
                       {"total_ns", DeltaJson(k.total_ns)},
                       {"median_ns", DeltaJson(k.median_ns)},
                       {"per_iteration_ns", SeriesJson(k.per_iteration)}});
  j["kernels"] = kernels;
  ojson classes = ojson::array();
  for (const ClassDiff& c : d.classes)
    classes.push_back({{"class", c.cls}, {"count", DeltaJson(c.count)}, {"total_ns", DeltaJson(c.total_ns)}});
  j["classes"] = classes;
  ojson colls = ojson::array();
  for (const CollectiveDiff& c : d.collectives)
    colls.push_back({{"op", c.op},
                     {"communicator", c.communicator},
                     {"size_bytes", c.size_bytes < 0 ? ojson(nullptr) : ojson(c.size_bytes)},
                     {"instances", DeltaJson(c.instances)},
                     {"bus_time_ns", DeltaJson(c.bus_time_ns)},
                     {"exposed_ns", DeltaJson(c.exposed_ns)},
                     {"skew_ns", DeltaJson(c.skew_ns)},
                     {"busbw_gbps", DeltaJson(c.busbw_gbps)}});
  j["collectives"] = colls;
  const DiffGateResult g = EvaluateDiffGates(d, gates);
  j["gates"] = {{"expressions", ojson::array()}, {"passed", g.passed}, {"lines", g.lines}};
  for (const DiffGate& x : gates) j["gates"]["expressions"].push_back(x.text);
  return j.dump(2, ' ', false, ojson::error_handler_t::replace) + "\n";
}

}  // namespace overlapscope::report
