// --require gates: METRIC OP NUMBER checked against every rank's JSON summary.
#include <algorithm>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "report/report_internal.h"

namespace overlapscope::report {

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
  return g;
}

absl::StatusOr<GateResult> EvaluateGates(const model::Trace& t, const analyze::AnalysisResult& r,
                                         const std::vector<Gate>& gates) {
  std::vector<std::string> names = GateMetricNames();
  for (const Gate& g : gates)
    if (std::find(names.begin(), names.end(), g.metric) == names.end())
      return absl::InvalidArgumentError(absl::StrCat("--require '", g.text, "': unknown metric '", g.metric,
                                                     "'; metrics: ", absl::StrJoin(names, ", ")));
  GateResult out;
  for (const analyze::RankSummary& s : r.ranks) {
    ojson sum = RankSummaryJson(t, r, s);
    // Same label as the report: "rank 3", or "pid 42 (GPU 0, GPU 1)" for a process without a rank.
    std::string who = s.rank == model::kNone ? absl::StrCat("pid ", s.pid) : absl::StrCat("rank ", s.rank);
    if (s.rank == model::kNone && !s.devices.empty()) {
      std::vector<std::string> gpus;
      for (int32_t i : s.devices) gpus.push_back(absl::StrCat("GPU ", t.devices()[r.overlap[i].device].ordinal));
      absl::StrAppend(&who, " (", absl::StrJoin(gpus, ", "), ")");
    }
    for (const Gate& g : gates) {
      const ojson& v = sum[g.metric];
      if (v.is_null()) {
        out.passed = false;
        std::string why = g.metric == "overlap_ratio" || g.metric == "hta_compat_overlap_pct"
                              ? "absent: no communication"
                              : "absent: no denominator (nothing to divide by)";
        out.lines.push_back(absl::StrFormat("FAIL %s: %s (%s)", who, g.text, why));
        continue;
      }
      double x = v.get<double>();
      bool ok = g.op == ">="   ? x >= g.threshold
                : g.op == "<=" ? x <= g.threshold
                : g.op == ">"  ? x > g.threshold
                : g.op == "<"  ? x < g.threshold
                               : x == g.threshold;
      if (!ok) out.passed = false;
      out.lines.push_back(absl::StrFormat("%s %s: %s (value %.6g)", ok ? "PASS" : "FAIL", who, g.text, x));
    }
  }
  return out;
}

}  // namespace overlapscope::report
