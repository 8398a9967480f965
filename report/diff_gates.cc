// --fail-on gates over a report comparison, and the value formatting the diff renderers share
// (report/diff.h).
#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report/diff_internal.h"
#include "report/render.h"

namespace overlapscope::report {
namespace diff_internal {
namespace {

bool EndsWith(const std::string& s, const char* suffix) {
  const std::string x = suffix;
  return s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
}
bool IsRatio(const std::string& metric) {
  return metric == "overlap_ratio" || EndsWith(metric, "_share") || metric == "compute_share_overlapped";
}

}  // namespace

std::string SignedDur(double ns) {
  if (std::fabs(ns) < 0.5) return "0 ns";
  const std::string d = Dur(static_cast<int64_t>(std::llround(std::fabs(ns))));
  return (ns < 0 ? "-" : "+") + d;
}

std::string SignedPct(const std::optional<double>& r) {
  if (!r) return "n/a";
  if (std::isinf(*r)) return *r > 0 ? "+inf%" : "-inf%";
  return absl::StrFormat("%+.1f%%", *r * 100);
}

std::string Value(const std::string& metric, const std::optional<double>& v) {
  if (!v) return "n/a";
  if (EndsWith(metric, "_ns")) return Dur(static_cast<int64_t>(std::llround(*v)));
  if (IsRatio(metric)) return Pct(*v);
  if (*v == std::floor(*v) && std::fabs(*v) < 1e15) return absl::StrCat(static_cast<int64_t>(*v));
  return absl::StrFormat("%.4g", *v);
}

std::string DeltaText(const std::string& metric, const Delta& v) {
  const std::optional<double> d = v.delta();
  if (!d) return "n/a";
  std::string s;
  if (EndsWith(metric, "_ns"))
    s = SignedDur(*d);
  else if (IsRatio(metric))
    s = absl::StrFormat("%+.1f points", *d * 100);
  else
    s = (*d == std::floor(*d)) ? absl::StrFormat("%+d", static_cast<int64_t>(*d)) : absl::StrFormat("%+.4g", *d);
  if (v.relative() && !IsRatio(metric)) absl::StrAppend(&s, " (", SignedPct(v.relative()), ")");
  return s;
}

}  // namespace diff_internal

using namespace diff_internal;  // NOLINT

absl::StatusOr<DiffGate> ParseDiffGate(std::string_view expr) {
  DiffGate g;
  g.text = std::string(expr);
  std::string e;
  for (char c : expr)
    if (c != ' ' && c != '\t') e += c;
  const size_t pos = e.find_first_of("<>");
  auto bad = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat("--fail-on '", g.text, "': ", why,
                                                   " (expected METRIC>DELTA or METRIC<DELTA, DELTA a signed "
                                                   "number, with % for relative to BASE, e.g. 'step_time_ns>+5%')"));
  };
  if (pos == std::string::npos || pos == 0) return bad("no metric or no < >");
  g.metric = e.substr(0, pos);
  g.op = e[pos];
  std::string num = e.substr(pos + 1);
  if (!num.empty() && num[0] == '=') return bad("use > or < (the comparison is strict)");
  if (!num.empty() && num.back() == '%') {
    g.relative = true;
    num.pop_back();
  }
  if (!num.empty() && num[0] == '+') num.erase(0, 1);
  if (num.empty() || !absl::SimpleAtod(num, &g.threshold) || !std::isfinite(g.threshold)) return bad("bad number");
  return g;
}

std::vector<std::string> DiffMetricNames(const ReportDiff& d) {
  std::vector<std::string> names;
  for (const RankDiff& r : d.ranks)
    for (const MetricDelta& m : r.summary)
      if (std::find(names.begin(), names.end(), m.metric) == names.end()) names.push_back(m.metric);
  return names;
}

DiffGateResult EvaluateDiffGates(const ReportDiff& d, const std::vector<DiffGate>& gates) {
  DiffGateResult res;
  for (const DiffGate& g : gates)
    for (const RankDiff& r : d.ranks) {
      auto it =
          std::find_if(r.summary.begin(), r.summary.end(), [&](const MetricDelta& m) { return m.metric == g.metric; });
      if (it == r.summary.end()) {
        res.passed = false;
        res.lines.push_back(absl::StrCat("FAIL ", r.label, ": ", g.text, ": no metric ", g.metric));
        continue;
      }
      const Delta& v = it->value;
      const std::string values = absl::StrCat(g.metric, " ", Value(g.metric, v.base), " -> ", Value(g.metric, v.test),
                                              " (", DeltaText(g.metric, v), ")");
      if (!v.base && !v.test) {
        res.lines.push_back(absl::StrCat("PASS ", r.label, ": ", g.text, ": ", g.metric, " absent on both sides"));
        continue;
      }
      bool fail = false;
      std::string why;
      if (!v.base || !v.test) {
        fail = true;
        why = " (absent on one side)";
      } else {
        double x = *v.delta();
        if (g.relative) x = *v.base == 0 ? (x == 0 ? 0 : std::copysign(INFINITY, x)) : x / std::fabs(*v.base) * 100;
        fail = g.op == '>' ? x > g.threshold : x < g.threshold;
      }
      if (fail) res.passed = false;
      res.lines.push_back(
          absl::StrCat(fail ? "FAIL " : "PASS ", r.label, ": ", values, fail ? " violates " : " within ", g.text, why));
    }
  return res;
}

}  // namespace overlapscope::report
