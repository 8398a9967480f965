// Rank summary metrics (the JSON "summary" object, in order) and the --require gates over them.
#include "report/gates.h"

#include <cmath>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report/render.h"

namespace overlapscope::report {

std::vector<Metric> SummaryMetrics(const RankSummary& s) {
  auto integer = [](std::string name, int64_t v) { return Metric{std::move(name), false, v, std::nullopt}; };
  auto ratio = [](std::string name, std::optional<double> v) { return Metric{std::move(name), true, 0, v}; };
  auto optional = [](std::string name, std::optional<int64_t> v) {
    return Metric{std::move(name), false, v.value_or(0), std::nullopt, !v.has_value()};
  };
  std::vector<Metric> m = {integer("comm_ns", s.comm_ns),
                           integer("hidden_comm_ns", s.hidden_comm_ns),
                           integer("exposed_comm_ns", s.exposed_comm_ns),
                           optional("comm_wait_ns", s.comm_wait_ns),
                           optional("hidden_wait_ns", s.hidden_wait_ns),
                           optional("exposed_wait_ns", s.exposed_wait_ns),
                           ratio("overlap_ratio", s.overlap_ratio),
                           integer("compute_ns", s.compute_ns),
                           ratio("compute_share_overlapped", s.compute_share_overlapped),
                           integer("contention_ns", s.contention_ns),
                           integer("net_overlap_gain_ns", s.net_overlap_gain_ns),
                           ratio("hta_compat_overlap_pct", s.hta_compat_overlap_pct),
                           ratio("hta_wholetrace_overlap_pct", s.hta_wholetrace_overlap_pct),
                           integer("blocked_ns", s.blocked_ns),
                           ratio("blocked_share", s.blocked_share),
                           integer("gpu_span_ns", s.gpu_span_ns),
                           integer("gpu_idle_ns", s.gpu_idle_ns),
                           ratio("gpu_idle_share", s.gpu_idle_share),
                           integer("gpu_gap_ns", s.gpu_gap_ns)};
  for (const NamedValue& g : s.gap_ns) m.push_back(integer("gap_" + g.name + "_ns", g.value));
  int64_t total = 0;
  for (const NamedValue& f : s.findings) total = Sum(total, f.value);
  m.push_back(integer("findings", total));
  for (const NamedValue& f : s.findings) m.push_back(integer("finding_" + f.name, f.value));
  m.push_back(integer("collective_wait_ns", s.collective_wait_ns));
  m.push_back(integer("collective_times_last", s.collective_times_last));
  m.push_back(integer("critical_path_ns", s.critical_path_ns));
  for (const PathShare& p : s.critical_path_shares)
    m.push_back(ratio("critical_path_" + p.category + "_share", p.share));
  m.push_back(integer("straggler_lateness_ns", s.straggler_lateness_ns));
  m.push_back(integer("step_time_ns", s.step_time_ns));
  return m;
}

std::vector<std::string> MetricNames(const RankSummary& s) {
  std::vector<std::string> names;
  for (const Metric& m : SummaryMetrics(s)) names.push_back(m.name);
  return names;
}

absl::StatusOr<Gate> ParseGate(std::string_view expr) {
  Gate g;
  g.text = std::string(expr);
  std::string e;
  for (char c : expr)
    if (c != ' ' && c != '\t') e += c;
  size_t pos = e.find_first_of("<>=");
  if (pos == std::string::npos || pos == 0)
    return absl::InvalidArgumentError(
        absl::StrCat("--require '", g.text, "': expected METRIC OP NUMBER (OP: >= <= > < ==)"));
  g.metric = e.substr(0, pos);
  size_t len = (pos + 1 < e.size() && e[pos + 1] == '=') ? 2 : 1;
  g.op = e.substr(pos, len);
  if (g.op == "=") return absl::InvalidArgumentError(absl::StrCat("--require '", g.text, "': use == for equality"));
  std::string num = e.substr(pos + len);
  char* end = nullptr;
  g.threshold = std::strtod(num.c_str(), &end);
  if (num.empty() || end == nullptr || *end != '\0')
    return absl::InvalidArgumentError(absl::StrCat("--require '", g.text, "': '", num, "' is not a number"));
  // strtod also reads "nan", "inf" and overflows to inf ("1e999"). Every comparison with NaN is
  // false and one with inf is decided in advance: such a gate checks nothing, so refuse it.
  if (!std::isfinite(g.threshold))
    return absl::InvalidArgumentError(absl::StrCat("--require '", g.text, "': '", num, "' is not a finite number"));
  return g;
}

GateResult EvaluateGates(const Report& r, const std::vector<Gate>& gates) {
  GateResult out;
  for (size_t rank = 0; rank < r.ranks.size(); ++rank) {
    const RankReport& rk = r.ranks[rank];
    const std::vector<Metric> metrics = SummaryMetrics(rk.summary);
    for (size_t gate = 0; gate < gates.size(); ++gate) {
      const Gate& g = gates[gate];
      const Metric* m = nullptr;
      for (const Metric& x : metrics)
        if (x.name == g.metric) m = &x;
      GateCheck& check = out.checks.emplace_back();
      check.rank = rank;
      check.gate = gate;
      if (m != nullptr) check.value = *m;
      const bool path_metric = g.metric.rfind("critical_path_", 0) == 0 || g.metric == "straggler_lateness_ns";
      if (r.paths_skipped && path_metric) {  // a zero here would be no figure: fail and say why
        out.passed = false;
        out.lines.push_back(absl::StrFormat("FAIL %s: %s (not computed: %s)", rk.label, g.text, *r.paths_skipped));
        continue;
      }
      if (m == nullptr || (m->is_ratio && !m->ratio) || m->absent) {
        out.passed = false;
        std::string why = m == nullptr ? "absent: not in the summary"
                          : m->absent  ? "absent: no collective matched across ranks (arrivals unknown)"
                          : g.metric == "overlap_ratio" || g.metric == "hta_compat_overlap_pct" ||
                                  g.metric == "hta_wholetrace_overlap_pct"
                              ? "absent: no communication"
                              : "absent: no denominator (nothing to divide by)";
        out.lines.push_back(absl::StrFormat("FAIL %s: %s (%s)", rk.label, g.text, why));
        continue;
      }
      const double x = m->is_ratio ? *m->ratio : static_cast<double>(m->integer);
      // NaN compares false with everything: a NaN value fails every gate, as it should.
      const bool ok = g.op == ">="   ? x >= g.threshold
                      : g.op == "<=" ? x <= g.threshold
                      : g.op == ">"  ? x > g.threshold
                      : g.op == "<"  ? x < g.threshold
                                     : x == g.threshold;
      if (!ok) out.passed = false;
      check.passed = ok;
      out.lines.push_back(absl::StrFormat("%s %s: %s (value %.6g)", ok ? "PASS" : "FAIL", rk.label, g.text, x));
    }
  }
  return out;
}

}  // namespace overlapscope::report
