// Text and Markdown sections of the critical path, straggler causes and stream concurrency
// (METRICS §8, §9), from the typed Report.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report/render.h"
#include "report/render_internal.h"

namespace overlapscope::report {
namespace {

// How the report names the path categories (report_paths.h lists them).
std::string CategoryName(const std::string& c) {
  if (c == "host_launch") return "host";
  if (c == "host_untraced") return "host untraced";
  if (c == "host_blocked") return "host blocked";
  if (c == "gpu_wait_host") return "GPU waits for host";
  if (c == "gpu_gap") return "GPU gaps";
  if (c == "wait_peers") return "waits for peers";
  return c;
}

int64_t Ns(const PathComposition& c, const std::string& category) {
  for (const PathCategoryTime& k : c.categories)
    if (k.category == category) return k.ns;
  return 0;
}
std::string Share(int64_t part, int64_t whole) {
  return whole > 0 ? absl::StrFormat("%.1f%%", 100.0 * static_cast<double>(part) / static_cast<double>(whole)) : "-";
}

// "compute 62.1%, comm 10.2%, ..." (categories with time only).
std::string Shares(const PathComposition& c) {
  std::string o;
  for (const PathCategoryTime& k : c.categories) {
    if (k.ns == 0) continue;
    absl::StrAppend(&o, o.empty() ? "" : ", ", CategoryName(k.category), " ", Share(k.ns, c.length_ns));
  }
  return o.empty() ? "-" : o;
}

// The columns of the per-iteration and per-rank tables: compute, comm, memory, host (launch and
// untraced), host blocked, GPU waits (for the host and gaps), waits for peers.
std::vector<std::string> Columns(const PathComposition& c) {
  const int64_t len = c.length_ns;
  return {Share(Ns(c, "compute"), len),      Share(Ns(c, "comm"), len),
          Share(Ns(c, "memory"), len),       Share(Sum(Ns(c, "host_launch"), Ns(c, "host_untraced")), len),
          Share(Ns(c, "host_blocked"), len), Share(Sum(Ns(c, "gpu_wait_host"), Ns(c, "gpu_gap")), len),
          Share(Ns(c, "wait_peers"), len)};
}

// The straggler sentence of one summary: "rank 5 arrives last in 80.0% of allreduce (8 of 10);
// lateness 1.2 ms in all; 70.0% of its lead over the median rank is `kernel X` running 12.0%
// slower than on the median rank (+...)".
std::string StragglerLine(const StragglerSummary& s) {
  const int64_t behind = s.behind_median_ns;
  std::string o = absl::StrFormat("%s arrives last in %s of %s (%d of %d); lateness %s in all", s.label,
                                  Pct(s.times_last_share), s.op, s.times_last, s.instances, Dur(s.lateness_ns));
  if (behind != s.lateness_ns) absl::StrAppendFormat(&o, " (%s behind the median rank)", Dur(behind));
  if (!s.names.empty() && s.names[0].delta_ns > 0) {
    const NameLateness& n = s.names[0];
    // Host time is named by the op, call or range it lay in (host_launch, host_blocked).
    const bool host = n.category.rfind("host", 0) == 0;
    absl::StrAppendFormat(&o, "; %s of its lead over the median rank is %s`%s`", Share(n.delta_ns, behind),
                          host ? "host time in " : "", Short(n.name, 60));
    if (n.slower && host)
      absl::StrAppendFormat(&o, " taking %.1f%% longer than on the median rank", 100.0 * *n.slower);
    else if (n.slower)
      absl::StrAppendFormat(&o, " running %.1f%% slower than on the median rank", 100.0 * *n.slower);
    else
      absl::StrAppend(&o, ", which the median rank did not run");
    absl::StrAppendFormat(&o, " (+%s)", Dur(n.delta_ns));
  }
  return o;
}

void CriticalPathText(const CriticalPath& cp, size_t top_n, std::string& o) {
  if (cp.total.length_ns <= 0) return;
  absl::StrAppendFormat(&o,
                        "\n== critical path (per iteration, across ranks; METRICS.md §8) ==\n"
                        "  %d iteration(s); the job's paths: %s in all\n  on them: %s\n",
                        cp.iterations, Ms(cp.total.length_ns), Shares(cp.total));
  absl::StrAppend(&o, "  each rank's own path (collectives not followed):\n");
  for (const RankPath& r : cp.own_total)
    absl::StrAppendFormat(&o, "    %-8s %12s  %s\n", r.label, Ms(r.composition.length_ns), Shares(r.composition));
  absl::StrAppendFormat(&o, "  top on the job's paths\n    %12s %7s %-19s %s\n", "time", "share", "category", "name");
  for (const PathActivity& a : cp.top)
    absl::StrAppendFormat(&o, "    %12s %7s %-19s %s\n", Dur(a.ns), Share(a.ns, cp.total.length_ns),
                          CategoryName(a.category), a.name ? Short(*a.name, 70) : "(no recorded op)");
  absl::StrAppendFormat(&o, "  per iteration\n    %9s %12s %-8s %8s %8s %8s %8s %8s %8s %8s\n", "iteration", "length",
                        "ends on", "compute", "comm", "memory", "host", "blocked", "GPU wait", "peers");
  size_t rows = 0;
  for (const IterationCriticalPath& it : cp.per_iteration) {
    if (rows++ == 2 * top_n) {
      absl::StrAppendFormat(&o, "    ... %d more iterations (see --json)\n", cp.per_iteration.size() - 2 * top_n);
      break;
    }
    const std::vector<std::string> c = Columns(it.composition);
    absl::StrAppendFormat(&o, "    %9s %12s %-8s %8s %8s %8s %8s %8s %8s %8s\n",
                          it.iteration ? std::to_string(*it.iteration) : "-", Dur(it.composition.length_ns), it.ends_on,
                          c[0], c[1], c[2], c[3], c[4], c[5], c[6]);
  }
  if (cp.sm_holders > 0)
    absl::StrAppendFormat(&o,
                          "  waited for SMs: %d kernels on the paths started only as another stream's kernel that "
                          "filled the device ended or reached its last wave (the path goes on through that kernel)\n",
                          cp.sm_holders);
  const PathUnjoined& u = cp.unjoined;
  if (u.gpu_without_launch + u.unresolved_waits + u.syncs_without_release + u.backward_edges + u.guard_stops > 0)
    absl::StrAppendFormat(&o,
                          "  not joined (counted, never guessed): %d GPU activities without their launch call, %d "
                          "stream waits without their event record, %d host syncs without the GPU work that "
                          "released them, %d dependencies backwards in time, %d walks stopped without progress\n",
                          u.gpu_without_launch, u.unresolved_waits, u.syncs_without_release, u.backward_edges,
                          u.guard_stops);
}

void StragglersText(const StragglerCauses& st, size_t top_n, std::string& o) {
  if (st.summaries.empty()) return;
  absl::StrAppend(&o, "\n== straggler causes (last rank vs the median rank; METRICS.md §8) ==\n");
  size_t shown = 0;
  for (const StragglerSummary& s : st.summaries) {
    if (shown++ == top_n) break;
    absl::StrAppend(&o, "  ", StragglerLine(s), "\n");
    std::string parts;
    for (const PathCategoryTime& k : s.category_delta)
      if (k.ns != 0)
        absl::StrAppendFormat(&parts, "%s%s %s%s", parts.empty() ? "" : ", ", CategoryName(k.category),
                              k.ns > 0 ? "+" : "", Dur(k.ns));
    if (s.started_later_ns != 0)
      absl::StrAppendFormat(&parts, ", previous collective ended later %s", Dur(s.started_later_ns));
    if (s.unexplained_ns != 0) absl::StrAppendFormat(&parts, ", not covered %s", Dur(s.unexplained_ns));
    absl::StrAppend(&o, "    late minus median rank, summed: ", parts.empty() ? "-" : parts, "\n");
  }
}

std::string StreamName(const std::optional<int64_t>& s) { return s ? std::to_string(*s) : "-"; }

void ConcurrencyText(const StreamConcurrency& sc, std::string& o) {
  bool header = false;
  for (const DeviceConcurrency& d : sc.devices) {
    const WindowConcurrency& w = d.whole;
    if (w.streams.empty() && w.groups.empty()) continue;
    if (!header)
      absl::StrAppend(&o, "\n== stream concurrency (whole trace; per iteration in --json; METRICS.md §9) ==\n");
    header = true;
    absl::StrAppendFormat(&o, "  %s GPU %d\n", d.label, d.device);
    auto line = [&](const char* kind, const std::string& a, const std::string& b, const Concurrency& c) {
      absl::StrAppendFormat(&o, "    %s %s & %s: %s together, %s of the shorter (%s, %s)\n", kind, a, b,
                            Dur(c.concurrent_ns), Pct(c.share), Dur(c.a_ns), Dur(c.b_ns));
    };
    for (const StreamPair& p : w.streams) line("streams", StreamName(p.a), StreamName(p.b), p.c);
    for (const GroupPair& p : w.groups) line("groups", p.a, p.b, p.c);
  }
}

}  // namespace

void AppendPathsText(const Report& r, std::string* out) {
  const size_t top_n = static_cast<size_t>(std::max<int64_t>(0, r.options.top_n));
  if (r.paths_skipped)
    absl::StrAppend(out, "\n== critical path, straggler causes: not computed (", *r.paths_skipped, ") ==\n");
  CriticalPathText(r.critical_path, top_n, *out);
  StragglersText(r.straggler_causes, top_n, *out);
  ConcurrencyText(r.stream_concurrency, *out);
}

void AppendPathsMarkdown(const Report& r, std::string* out) {
  std::string& o = *out;
  if (r.paths_skipped)
    absl::StrAppend(&o, "\n*Critical path, straggler causes: not computed (", *r.paths_skipped, ").*\n");
  const CriticalPath& cp = r.critical_path;
  if (cp.total.length_ns > 0) {
    absl::StrAppendFormat(&o, "\n**Critical path** (%d iterations, %s): %s.\n\n", cp.iterations, Ms(cp.total.length_ns),
                          Shares(cp.total));
    o += "| rank (own path) | length | compute | comm | memory | host | host blocked | GPU waits | waits for peers |\n";
    o += "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const RankPath& rp : cp.own_total) {
      const std::vector<std::string> c = Columns(rp.composition);
      absl::StrAppendFormat(&o, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", rp.label,
                            Ms(rp.composition.length_ns), c[0], c[1], c[2], c[3], c[4], c[5], c[6]);
    }
  }
  const int64_t top_n = r.options.top_n;
  int64_t shown = 0;
  for (const StragglerSummary& s : r.straggler_causes.summaries) {
    if (shown++ == 0) o += "\n**Stragglers**\n\n";
    if (shown > top_n) break;
    absl::StrAppend(&o, "- ", StragglerLine(s), "\n");
  }
  const StreamConcurrency& sc = r.stream_concurrency;
  if (!sc.groups.empty()) {
    o += "\n**Group concurrency** (whole trace)\n\n| rank | GPU | groups | together | share of the shorter |\n"
         "|---|---:|---|---:|---:|\n";
    for (const DeviceConcurrency& d : sc.devices)
      for (const GroupPair& p : d.whole.groups)
        absl::StrAppendFormat(&o, "| %s | %d | %s & %s | %s | %s |\n", d.label, d.device, p.a, p.b,
                              Dur(p.c.concurrent_ns), Pct(p.c.share));
  }
}

}  // namespace overlapscope::report
