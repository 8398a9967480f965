// Text report (the CLI default): a short summary per rank, then tables in the style of
// `nsys stats`, from the typed Report.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report/gates.h"
#include "report/render.h"
#include "report/render_internal.h"

namespace overlapscope::report {
namespace {

// An optional id as the text prints it: the number, or `none` when absent.
std::string Id(const std::optional<int64_t>& v, const char* none = "?") { return v ? std::to_string(*v) : none; }

std::string RankTitle(const RankReport& rk) {
  if (!rk.rank) return rk.label;  // "pid 42 (GPU 0, GPU 1)": never "rank ?"
  return absl::StrCat(rk.label, " (pid ", rk.pid, ")");
}

void Header(const Report& r, std::string& o) {
  absl::StrAppendFormat(&o, "overlapscope analyze: %d rank(s), %d iteration(s) (%s), trace span %s\n", r.ranks.size(),
                        r.iterations.count, r.iterations.marker, Ms(Diff(r.time_span.end_ns, r.time_span.start_ns)));
  if (r.clock_alignment.status != "not-evaluated") absl::StrAppend(&o, "clocks: ", r.clock_alignment.summary, "\n");
  if (!r.processes_without_gpu_work.empty())
    absl::StrAppend(&o, ProcessesWithoutGpuLine(r.processes_without_gpu_work), "\n");
  if (r.iterations.assigned_by_own_start > 0)
    absl::StrAppendFormat(&o,
                          "note: %d GPU activities have no launch call in the trace (launched before capture); "
                          "they are placed by their own start time, within their stream's order\n",
                          r.iterations.assigned_by_own_start);
}

// Capture windows (analyze/windows.h): what the figures above cover.
void WindowsText(const std::vector<Window>& ws, std::string& o) {
  if (ws.empty()) return;
  if (ws.size() == 1 && ws[0].trigger == "process") {
    absl::StrAppendFormat(&o,
                          "  window        whole program; start-up before the first kernel excluded (%s); "
                          "figures cover %s\n",
                          Dur(ws[0].startup_excluded_ns), Dur(Diff(ws[0].end_ns, ws[0].start_ns)));
    return;
  }
  absl::StrAppendFormat(&o, "  windows       %d capture window(s); figures count only time inside them\n", ws.size());
  for (const Window& w : ws) {
    absl::StrAppendFormat(&o, "    #%-3d %-16s %12s  kernels %d memcpys %d memsets %d  GPU idle %s, gaps %d (%s)\n",
                          w.index, w.trigger + (w.name.empty() ? "" : " " + w.name), Dur(Diff(w.end_ns, w.start_ns)),
                          w.kernels, w.memcpys, w.memsets,
                          w.gpu_span_ns > 0 ? absl::StrFormat("%.1f%%", 100.0 * static_cast<double>(w.gpu_idle_ns) /
                                                                            static_cast<double>(w.gpu_span_ns))
                                            : std::string("n/a"),
                          w.gaps, Dur(w.gpu_gap_ns));
  }
}

// Where the host thread was during the gaps called host-blocked (analyze/gpu_idle.h HostSplit).
std::string SplitText(const HostSplit& h) {
  return absl::StrFormat(
      "in blocking calls %s, launching the work that ended the gap %s, in other runtime calls %s, "
      "in no traced call %s",
      Dur(h.blocked_ns), Dur(h.launch_ns), Dur(h.other_calls_ns), Dur(h.outside_ns));
}

void HostBlockedSplitText(const RankReport& rk, std::string& o) {
  HostSplit sum;
  bool any = false;
  for (const DeviceReport& d : rk.devices) {
    if (!d.idle.host_blocked_split) continue;
    any = true;
    const HostSplit& h = *d.idle.host_blocked_split;
    sum.blocked_ns = Sum(sum.blocked_ns, h.blocked_ns);
    sum.launch_ns = Sum(sum.launch_ns, h.launch_ns);
    sum.other_calls_ns = Sum(sum.other_calls_ns, h.other_calls_ns);
    sum.outside_ns = Sum(sum.outside_ns, h.outside_ns);
  }
  if (!any) return;
  absl::StrAppendFormat(&o, "                in host-blocked gaps the launching thread was %s\n", SplitText(sum));
}

void RankSummaryLines(const Report& r, const RankReport& rk, std::string& o) {
  const RankSummary& s = rk.summary;
  absl::StrAppend(&o, "\n== ", RankTitle(rk), " ==\n");
  if (s.comm_ns == 0) {
    absl::StrAppend(&o, "  overlap       no communication\n");
  } else {
    absl::StrAppendFormat(&o, "  overlap       %s of communication hidden under compute (%s comm, %s exposed)\n",
                          Pct(s.overlap_ratio), Ms(s.comm_ns), Ms(s.exposed_comm_ns));
    if (const std::string w = WaitText(rk); !w.empty()) absl::StrAppend(&o, "  waiting       ", w, "\n");
    if (s.hta_compat_overlap_pct || s.hta_wholetrace_overlap_pct) {
      auto pct = [](const std::optional<double>& v) { return v ? absl::StrFormat("%.2f%%", *v) : std::string("n/a"); };
      absl::StrAppendFormat(&o,
                            "                HTA's number (its rules, µs rounding): %s as HTA prints it by default "
                            "(GPU work launched before the last ProfilerStep), %s over the whole trace\n",
                            pct(s.hta_compat_overlap_pct), pct(s.hta_wholetrace_overlap_pct));
    }
    int64_t unknown = 0, overlapped = 0;
    for (const DeviceReport& d : rk.devices) {
      unknown = Sum(unknown, d.overlap.contention_unknown_instances);
      overlapped = Sum(overlapped, d.overlap.overlapped_compute_instances);
    }
    // contention_ns is signed (METRICS.md §2): below zero the overlapped kernels ran faster than
    // their median alone, which is no slowdown; said so rather than printing a negative slowdown.
    const std::string contention =
        s.contention_ns >= 0
            ? absl::StrFormat("%s compute slowdown while overlapped", Dur(s.contention_ns))
            : absl::StrFormat("no compute slowdown: overlapped compute ran %s faster than alone (contention %s)",
                              Dur(Diff(0, s.contention_ns)), Dur(s.contention_ns));
    absl::StrAppendFormat(&o, "  contention    %s; net overlap gain %s%s\n", contention, Dur(s.net_overlap_gain_ns),
                          unknown == 0 ? ""
                                       : absl::StrFormat(" (%d of %d overlapped kernels never ran alone: not "
                                                         "estimated)",
                                                         unknown, overlapped));
  }
  std::string top_call;
  int64_t top_tid = -1;
  for (const ThreadBlocking& th : rk.threads) {
    if (!th.top_calls.empty() && top_call.empty()) {
      const CallTotal& c = th.top_calls.front();
      top_call = absl::StrFormat("%s %dx %s", c.call, c.count, Dur(c.total_ns));
    }
    if (top_tid < 0) top_tid = th.thread.value_or(0);
  }
  absl::StrAppendFormat(&o, "  host blocked  %s; most-blocked thread %s: %s of its active time%s\n", Dur(s.blocked_ns),
                        top_tid < 0 ? "-" : std::to_string(top_tid), Pct(s.blocked_share),
                        top_call.empty() ? "" : " (top: " + top_call + ")");
  absl::StrAppendFormat(&o,
                        "  GPU idle      %s of a %s span; gaps >= %s: %s (host-blocked %s, launch-bound %s, "
                        "dependency %s, unknown %s)\n",
                        Pct(s.gpu_idle_share), Ms(s.gpu_span_ns), Us(r.options.min_gap_ns), Dur(s.gpu_gap_ns),
                        Dur(SummaryValue(s, "gap_host_blocked_ns")), Dur(SummaryValue(s, "gap_launch_bound_ns")),
                        Dur(SummaryValue(s, "gap_dependency_ns")), Dur(SummaryValue(s, "gap_unknown_ns")));
  HostBlockedSplitText(rk, o);
  WindowsText(rk.windows, o);
  std::string f;
  for (const KindFigures& k : rk.findings.by_kind) {
    if (k.count == 0) continue;
    absl::StrAppendFormat(&f, "%s%s x%d (%s)", f.empty() ? "" : "; ", k.kind, k.count, Dur(k.ns));
  }
  absl::StrAppend(&o, "  findings      ", f.empty() ? "none" : f, "\n");
}

void IterationTables(const Report& r, const RankReport& rk, std::string& o) {
  const size_t limit = static_cast<size_t>(std::max<int64_t>(0, r.options.top_n)) * 2;
  for (const DeviceReport& d : rk.devices) {
    if (d.iterations.empty()) continue;
    absl::StrAppendFormat(&o, "\n  per iteration, GPU %d (activities counted in the iteration that launched them)\n",
                          d.device);
    absl::StrAppendFormat(&o, "    %9s %12s %12s %12s %8s %12s %12s\n", "iteration", "comm", "hidden", "exposed",
                          "overlap", "compute", "contention");
    for (size_t i = 0; i < d.iterations.size(); ++i) {
      if (i == limit) {  // long captures: the first rows here, every iteration in --json
        absl::StrAppendFormat(&o, "    ... %d more iterations (see --json)\n", d.iterations.size() - limit);
        break;
      }
      const IterationOverlap& it = d.iterations[i];
      absl::StrAppendFormat(&o, "    %9d %12s %12s %12s %8s %12s %12s\n", it.iteration, Dur(it.stats.comm_ns),
                            Dur(it.stats.hidden_comm_ns), Dur(it.stats.exposed_comm_ns),
                            it.stats.comm_ns == 0 ? "no comm" : Pct(it.stats.overlap_ratio), Dur(it.stats.compute_ns),
                            Dur(it.stats.contention_ns));
    }
  }
}

void DeviceTables(const RankReport& rk, std::string& o) {
  for (const DeviceReport& d : rk.devices) {
    const DeviceCollectives& c = d.collectives;
    if (c.top_exposed.empty()) continue;
    absl::StrAppendFormat(&o,
                          "\n  collectives with the most exposed time, GPU %d (%d instances, %s exposed in all)\n"
                          "    %12s %12s %8s %8s  %s\n",
                          d.device, c.count, Dur(c.exposed_ns), "own time", "exposed", "overlap", "stream",
                          "collective");
    for (const CollectiveExposure& x : c.top_exposed)
      absl::StrAppendFormat(&o, "    %12s %12s %8s %8s  %s\n", Dur(x.own_ns), Dur(Diff(x.own_ns, x.hidden_ns)),
                            Pct(x.overlap_ratio), Id(x.stream), Short(x.name));
  }
  for (const DeviceReport& d : rk.devices) {
    if (d.slowdowns.empty()) continue;
    absl::StrAppendFormat(&o, "\n  compute kernels slowed by overlap, GPU %d\n    %8s %8s %12s %12s  %s\n", d.device,
                          "slowdown", "n(ovl)", "median ovl", "median alone", "kernel");
    for (const Slowdown& k : d.slowdowns)
      absl::StrAppendFormat(&o, "    %7.2fx %8d %12s %12s  %s\n", k.slowdown, k.overlapped_count,
                            Dur(k.median_overlapped_ns), Dur(k.median_alone_ns), Short(k.name));
  }
}

void BlockingTable(const RankReport& rk, std::string& o) {
  if (rk.blocked_intervals.top.empty()) return;
  absl::StrAppendFormat(&o,
                        "\n  top blocking calls (%d in all; \"final\": the last sync, not counted as blocked)\n    "
                        "%12s %10s %12s %12s  %-22s %s\n",
                        rk.blocked_intervals.count, "duration", "thread", "GPU busy", "GPU idle", "call",
                        "released by");
  for (const BlockedInterval& b : rk.blocked_intervals.top)
    absl::StrAppendFormat(&o, "    %12s %10s %12s %12s  %-22s %s\n", Dur(b.duration_ns), Id(b.thread),
                          Dur(b.device_busy_ns), Dur(b.device_idle_ns), b.call + (b.final_sync ? " (final)" : ""),
                          b.released_by ? Short(b.released_by->name, 50) : "-");
}

void GapAndLaunchTables(const Report& r, const RankReport& rk, std::string& o) {
  for (const DeviceReport& d : rk.devices) {
    if (d.top_gaps.empty()) continue;
    absl::StrAppendFormat(&o, "\n  top idle gaps, GPU %d (%d gaps >= %s)\n    %12s %-13s %9s  %s\n", d.device,
                          d.idle.gaps, Us(r.options.min_gap_ns), "duration", "cause", "iteration", "ended by");
    for (const IdleGap& g : d.top_gaps) {
      absl::StrAppendFormat(&o, "    %12s %-13s %9s  %s\n", Dur(Diff(g.end_ns, g.start_ns)), g.cause,
                            Id(g.iteration, "-"), g.ended_by ? Short(g.ended_by->name) : "-");
      if (g.host) absl::StrAppendFormat(&o, "    %12s host %s\n", "", SplitText(*g.host));
      if (g.waiting_on)
        absl::StrAppendFormat(&o, "    %12s waiting on stream %s (%s)%s\n", "", Id(g.waiting_on->stream),
                              Short(g.waiting_on->name), g.waiting_on->inferred ? " [inferred]" : " [recorded]");
    }
  }
  for (const DeviceReport& d : rk.devices) {
    if (d.launch_delay.empty()) continue;
    absl::StrAppendFormat(&o,
                          "\n  launch delay (kernel start - end of its launch call), GPU %d\n"
                          "    %8s %8s %10s %10s %10s %10s %9s %12s\n",
                          d.device, "stream", "count", "p50", "p90", "p99", "max", "> cutoff", "no launch");
    for (const StreamLaunchDelay& s : d.launch_delay) {
      const Percentiles& p = s.launch_delay;
      absl::StrAppendFormat(&o, "    %8s %8d %10s %10s %10s %10s %9d %12d\n", Id(s.stream), p.count, Dur(p.p50_ns),
                            Dur(p.p90_ns), Dur(p.p99_ns), Dur(p.max_ns), s.launch_delay_outliers,
                            s.without_launch_call);
    }
  }
  if (!rk.launch_calls.empty()) {
    absl::StrAppendFormat(&o,
                          "\n  launch calls (> cutoff: longer than %s; short kernels: %d)\n"
                          "    %8s %10s %10s %10s %9s  %s\n",
                          Us(r.options.runtime_cutoff_ns), rk.short_kernels.count, "count", "p50", "p99", "max",
                          "> cutoff", "call");
    for (const LaunchCall& c : rk.launch_calls)
      absl::StrAppendFormat(&o, "    %8d %10s %10s %10s %9d  %s\n", c.duration.count, Dur(c.duration.p50_ns),
                            Dur(c.duration.p99_ns), Dur(c.duration.max_ns), c.outliers, c.call);
  }
}

void FindingsList(const Report& r, const RankReport& rk, std::string& o) {
  const std::vector<Finding>& items = rk.findings.items;
  if (items.empty()) return;
  const size_t limit = static_cast<size_t>(std::max<int64_t>(0, r.options.top_n));
  absl::StrAppendFormat(&o, "\n  findings (%d)\n", items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    if (i >= limit) {
      absl::StrAppendFormat(&o, "    ... %d more (see --json)\n", items.size() - limit);
      break;
    }
    absl::StrAppendFormat(&o, "    [%s] %s\n      -> %s\n", items[i].kind, items[i].message, items[i].advice);
  }
}

void StreamWaitsText(const Report& r, const RankReport& rk, std::string& o) {
  const auto& sw = rk.sync_points.stream_waits;
  if (sw.empty()) return;
  absl::StrAppendFormat(&o, "\n  stream waits with their source (%d kinds)\n    %6s %8s %8s  %-10s %s\n", sw.size(),
                        "count", "stream", "waits on", "edge", "source -> waiting activity");
  const size_t limit = static_cast<size_t>(std::max<int64_t>(0, r.options.top_n));
  for (size_t i = 0; i < sw.size() && i < limit; ++i)
    absl::StrAppendFormat(&o, "    %6d %8s %8s  %-10s %s -> %s\n", sw[i].count, Id(sw[i].stream),
                          Id(sw[i].wait_on_stream), sw[i].inferred ? "inferred" : "recorded", Short(sw[i].source, 40),
                          Short(sw[i].waiter, 40));
}

}  // namespace

int64_t SummaryValue(const RankSummary& s, const std::string& key) {
  for (const Metric& m : SummaryMetrics(s))
    if (m.name == key && !m.is_ratio && !m.absent) return m.integer;
  return 0;
}

void RenderText(const ReportView& v, const TextOptions& options, const RenderSink& out) {
  const Report& r = *v.head;
  // Data-loss warnings first: a report over data that was not understood never looks ordinary.
  std::string o = WarningsText(r.warnings);
  Header(r, o);
  // The job overview first (multi-rank): the ranks that stand out, then detail blocks for the
  // selected ranks only (report/overview.h).
  const JobOverview overview = BuildOverview(r);
  const std::vector<bool> selected = SelectRanks(r, overview, options.ranks);
  o += OverviewText(overview, selected);
  RankReport scratch;
  for (size_t i = 0; i < r.ranks.size(); ++i) {  // one rank at a time: the text never holds them all
    if (!selected[i]) continue;
    const RankReport& rk = v.rank(i, &scratch);
    RankSummaryLines(r, rk, o);
    IterationTables(r, rk, o);
    DeviceTables(rk, o);
    BlockingTable(rk, o);
    GapAndLaunchTables(r, rk, o);
    FindingsList(r, rk, o);
    if (rk.dependency_graph)
      o += "\n  dependency graph (METRICS §8)\n" + DependencyGraphLines(*rk.dependency_graph, "    ");
    StreamWaitsText(r, rk, o);
    out(o);
    o.clear();
  }
  o += LeftOutText(selected);
  AppendCollectivesText(v, options, &o);
  AppendPathsText(r, &o);  // critical path, stragglers, concurrency (render_paths_text.cc)
  absl::StrAppend(&o, "\n== top GPU activities by class (all ranks) ==\n");
  absl::StrAppendFormat(&o, "  %-8s %8s %12s %12s  %s\n", "class", "count", "total", "max", "name");
  for (const KernelTotal& k : r.top_kernels)
    absl::StrAppendFormat(&o, "  %-8s %8d %12s %12s  %s\n", k.cls, k.count, Dur(k.total_ns), Dur(k.max_ns),
                          Short(k.name, 70));
  out(o);
}

std::string RenderText(const Report& r, const TextOptions& options) {
  std::string o;
  RenderText(ViewOf(r), options, [&o](std::string_view s) { o.append(s); });
  return o;
}

}  // namespace overlapscope::report
