// Number and name formatting shared by the text and Markdown renderers.
#include <climits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report/render.h"
#include "report/render_internal.h"

namespace overlapscope::report {

int64_t Diff(int64_t a, int64_t b) {
  int64_t d;
  if (!__builtin_sub_overflow(a, b, &d)) return d;
  return b < 0 ? INT64_MAX : INT64_MIN;
}

int64_t Sum(int64_t a, int64_t b) {
  int64_t s;
  if (!__builtin_add_overflow(a, b, &s)) return s;
  return b < 0 ? INT64_MIN : INT64_MAX;
}

std::string Ms(int64_t ns) { return absl::StrFormat("%.3f ms", static_cast<double>(ns) / 1e6); }
std::string Us(int64_t ns) { return absl::StrFormat("%.1f µs", static_cast<double>(ns) / 1e3); }
std::string Dur(int64_t ns) {
  if (ns < 1000 && ns > -1000) return absl::StrFormat("%d ns", ns);  // sub-µs: exact, not "0.1 µs"
  return ns < 1000000 && ns > -1000000 ? Us(ns) : Ms(ns);
}
std::string Pct(const std::optional<double>& ratio) {
  if (!ratio) return "n/a";
  return absl::StrFormat("%.1f%%", 100.0 * *ratio);
}
std::string Short(const std::string& name, size_t max) {
  if (name.size() <= max || max < 3) return name;
  return name.substr(0, max - 3) + "...";
}
std::string Bytes(int64_t b) {
  if (b < 1000) return absl::StrFormat("%d B", b);
  if (b < 1000000) return absl::StrFormat("%.1f kB", static_cast<double>(b) / 1e3);
  if (b < 1000000000) return absl::StrFormat("%.2f MB", static_cast<double>(b) / 1e6);
  return absl::StrFormat("%.2f GB", static_cast<double>(b) / 1e9);
}

std::string WaitText(const RankReport& rk) {
  const RankSummary& s = rk.summary;
  if (!s.comm_wait_ns || s.comm_ns == 0) return "";
  std::string o =
      absl::StrFormat("%s of the communication was waiting for the last peer (hidden %s, exposed %s)",
                      Ms(*s.comm_wait_ns), Ms(s.hidden_wait_ns.value_or(0)), Ms(s.exposed_wait_ns.value_or(0)));
  if (rk.waited_for_most)
    absl::StrAppend(&o, "; waited for ", rk.waited_for_most->label, " most (", Ms(rk.waited_for_most->wait_ns), ")");
  return o;
}

std::string ProcessesWithoutGpuLine(const std::vector<ProcessWithoutGpu>& ps,
                                    const std::function<std::string(const std::string&)>& escape,
                                    const std::string& code_open, const std::string& code_close) {
  if (ps.empty()) return "";
  auto esc = [&](const std::string& x) { return escape ? escape(x) : x; };
  std::string o = "also captured: ";
  for (size_t i = 0; i < ps.size(); ++i) {
    const ProcessWithoutGpu& p = ps[i];
    absl::StrAppend(&o, i == 0 ? "" : ", ", "pid ", p.pid);
    if (p.rank) absl::StrAppend(&o, " (rank ", *p.rank, ")");
    if (!p.name.empty()) absl::StrAppend(&o, " ", code_open, esc(p.name), code_close);
  }
  return o + (ps.size() == 1 ? " — no GPU work" : " — no GPU work in any of them");
}

std::string RenderExplainClasses(const ClassExplanations& e) {
  std::string o = "classification rules (first match wins):\n";
  for (size_t i = 0; i < e.rules.size(); ++i)
    absl::StrAppendFormat(&o, "  %2d  %-55s (%s)\n", i, e.rules[i].rule, e.rules[i].origin);
  absl::StrAppendFormat(&o, "\n  %-8s %-7s %4s %8s %12s  %s\n", "class", "kind", "rule", "count", "total", "name");
  for (const ExplainedName& n : e.names)
    absl::StrAppendFormat(&o, "  %-8s %-7s %4d %8d %12s  %s\n", n.cls, n.kind, n.rule, n.count, Dur(n.total_ns),
                          n.name);
  return o;
}

std::string WarningsText(const std::vector<ImportWarning>& warnings) {
  if (warnings.empty()) return "";
  std::string out;
  for (const ImportWarning& w : warnings) absl::StrAppend(&out, "warning: ", w.message, "\n");
  absl::StrAppend(&out,
                  "warning: numbers below may be incomplete (see `overlapscope info`; --strict makes this "
                  "an error)\n\n");
  return out;
}

std::string WarningsMarkdown(const std::vector<ImportWarning>& warnings) {
  if (warnings.empty()) return "";
  std::string out = "> **Warning: part of the input could not be read; numbers below may be incomplete.**\n";
  for (const ImportWarning& w : warnings) absl::StrAppend(&out, "> - ", w.message, "\n");
  return out + "\n";
}

std::string DependencyGraphLines(const DependencyGraph& d, std::string_view indent) {
  std::string o = absl::StrFormat(
      "%scross-stream waits: %d recorded, %d inferred (not recorded), %d ambiguous (not taken), %d unresolved, %d "
      "not delaying",
      indent, d.waits_recorded, d.waits_inferred, d.waits_ambiguous, d.waits_unresolved, d.waits_not_delayed);
  if (d.waits_inferred_by_order > 0)
    absl::StrAppendFormat(&o,
                          "; of the inferred, %d placed by the host's call order (the wait did not delay or the timing "
                          "had several candidates)",
                          d.waits_inferred_by_order);
  if (d.waits_recorded_without_source > 0)
    absl::StrAppendFormat(&o, "; %d recorded without their source", d.waits_recorded_without_source);
  absl::StrAppendFormat(&o, "\n%sedges:", indent);
  for (const DependencyGraph::EdgeCount& e : d.edges) {
    absl::StrAppendFormat(&o, " %s %d", e.kind, e.recorded);
    if (e.inferred > 0) absl::StrAppendFormat(&o, " + %d inferred", e.inferred);
    o += ",";
  }
  if (!d.edges.empty()) o.pop_back();
  absl::StrAppendFormat(&o, "; not joined: %d GPU without launch, %d syncs without release, %d backward\n",
                        d.gpu_without_launch, d.syncs_without_release, d.backward_edges);
  return o;
}

}  // namespace overlapscope::report
