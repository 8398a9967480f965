// Text report (the CLI default): a short summary per rank, then tables in the style of
// `nsys stats`. Rendered from the JSON document so both always agree.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report/report_internal.h"

namespace overlapscope::report {

std::string Ms(int64_t ns) { return absl::StrFormat("%.3f ms", static_cast<double>(ns) / 1e6); }
std::string Us(int64_t ns) { return absl::StrFormat("%.1f µs", static_cast<double>(ns) / 1e3); }
std::string Dur(int64_t ns) {
  if (ns < 1000 && ns > -1000) return absl::StrFormat("%d ns", ns);  // sub-µs: exact, not "0.1 µs"
  return ns < 1000000 && ns > -1000000 ? Us(ns) : Ms(ns);
}
std::string Pct(const ojson& ratio) {
  if (ratio.is_null()) return "n/a";
  return absl::StrFormat("%.1f%%", 100.0 * ratio.get<double>());
}
std::string Short(const std::string& name, size_t max) {
  if (name.size() <= max) return name;
  return name.substr(0, max - 3) + "...";
}

namespace {

int64_t I(const ojson& j) { return j.is_null() ? 0 : j.get<int64_t>(); }
std::string S(const ojson& j) { return j.is_null() ? "?" : j.is_string() ? j.get<std::string>() : j.dump(); }

std::string RankTitle(const ojson& jr) {
  if (jr["rank"].is_null()) return RankLabel(jr);  // "pid 42 (GPU 0, GPU 1)": never "rank ?"
  return absl::StrCat(RankLabel(jr), " (pid ", jr["pid"].get<int64_t>(), ")");
}

// Capture windows (analyze/windows.h): what the figures above cover.
std::string WindowsText(const ojson& ws) {
  std::string o;
  if (ws.empty()) return o;
  if (ws.size() == 1 && ws[0]["trigger"] == "process") {
    const ojson& w = ws[0];
    absl::StrAppendFormat(&o,
                          "  window        whole program; start-up before the first kernel excluded (%s); "
                          "figures cover %s\n",
                          Dur(I(w["startup_excluded_ns"])), Dur(I(w["end_ns"]) - I(w["start_ns"])));
    return o;
  }
  absl::StrAppendFormat(&o, "  windows       %d capture window(s); figures count only time inside them\n", ws.size());
  for (const ojson& w : ws) {
    const std::string name = S(w["name"]);
    absl::StrAppendFormat(&o, "    #%-3d %-16s %12s  kernels %d memcpys %d memsets %d  GPU idle %s, gaps %d (%s)\n",
                          I(w["index"]), S(w["trigger"]) + (name.empty() ? "" : " " + name),
                          Dur(I(w["end_ns"]) - I(w["start_ns"])), I(w["kernels"]), I(w["memcpys"]), I(w["memsets"]),
                          I(w["gpu_span_ns"]) > 0
                              ? absl::StrFormat("%.1f%%", 100.0 * I(w["gpu_idle_ns"]) / I(w["gpu_span_ns"]))
                              : std::string("n/a"),
                          I(w["gaps"]), Dur(I(w["gpu_gap_ns"])));
  }
  return o;
}

}  // namespace

std::string RenderReportText(const model::Trace& t, const analyze::AnalysisResult& r, const ReportInfo& info) {
  ojson j = BuildReportJson(t, r, info);
  std::string o;
  absl::StrAppendFormat(&o, "overlapscope analyze: %d rank(s), %d iteration(s) (%s), trace span %s\n",
                        j["ranks"].size(), j["iterations"]["count"].get<int64_t>(),
                        j["iterations"]["marker"].get<std::string>(), Ms(j["time_span"]["duration_ns"].get<int64_t>()));
  if (j["clock_alignment"]["status"] != "not-evaluated")
    absl::StrAppend(&o, "clocks: ", j["clock_alignment"]["summary"].get<std::string>(), "\n");
  if (j["iterations"]["assigned_by_own_start"].get<int64_t>() > 0)
    absl::StrAppendFormat(&o,
                          "note: %d GPU activities have no launch call in the trace (launched before capture); "
                          "they are placed by their own start time\n",
                          j["iterations"]["assigned_by_own_start"].get<int64_t>());

  for (const ojson& jr : j["ranks"]) {
    const ojson& s = jr["summary"];
    absl::StrAppend(&o, "\n== ", RankTitle(jr), " ==\n");
    if (s["comm_ns"].get<int64_t>() == 0) {
      absl::StrAppend(&o, "  overlap       no communication\n");
    } else {
      absl::StrAppendFormat(&o, "  overlap       %s of communication hidden under compute (%s comm, %s exposed)\n",
                            Pct(s["overlap_ratio"]), Ms(I(s["comm_ns"])), Ms(I(s["exposed_comm_ns"])));
      if (!s["hta_compat_overlap_pct"].is_null())
        absl::StrAppendFormat(&o, "                HTA-compatible overlap (HTA's rules, µs rounding): %.2f%%\n",
                              s["hta_compat_overlap_pct"].get<double>());
      int64_t unknown = 0, overlapped = 0;
      for (const ojson& d : jr["devices"]) {
        unknown += I(d["overlap"]["contention_unknown_instances"]);
        overlapped += I(d["overlap"]["overlapped_compute_instances"]);
      }
      absl::StrAppendFormat(&o, "  contention    %s compute slowdown while overlapped; net overlap gain %s%s\n",
                            Dur(I(s["contention_ns"])), Dur(I(s["net_overlap_gain_ns"])),
                            unknown == 0 ? ""
                                         : absl::StrFormat(" (%d of %d overlapped kernels never ran alone: not "
                                                           "estimated)",
                                                           unknown, overlapped));
    }
    std::string top_call;
    int64_t top_tid = -1;
    for (const ojson& th : jr["threads"]) {
      if (!th["top_calls"].empty() && top_call.empty()) {
        const ojson& c = th["top_calls"][0];
        top_call = absl::StrFormat("%s %dx %s", S(c["call"]), c["count"].get<int64_t>(), Dur(I(c["total_ns"])));
      }
      if (top_tid < 0) top_tid = I(th["thread"]);
    }
    absl::StrAppendFormat(&o, "  host blocked  %s; most-blocked thread %s: %s of its active time%s\n",
                          Dur(I(s["blocked_ns"])), top_tid < 0 ? "-" : std::to_string(top_tid), Pct(s["blocked_share"]),
                          top_call.empty() ? "" : " (top: " + top_call + ")");
    absl::StrAppendFormat(&o,
                          "  GPU idle      %s of a %s span; gaps >= %s: %s (host-blocked %s, launch-bound %s, "
                          "dependency %s, unknown %s)\n",
                          Pct(s["gpu_idle_share"]), Ms(I(s["gpu_span_ns"])),
                          Us(j["options"]["min_gap_ns"].get<int64_t>()), Dur(I(s["gpu_gap_ns"])),
                          Dur(I(s["gap_host_blocked_ns"])), Dur(I(s["gap_launch_bound_ns"])),
                          Dur(I(s["gap_dependency_ns"])), Dur(I(s["gap_unknown_ns"])));
    o += WindowsText(jr["windows"]);
    std::string f;
    for (auto& [kind, v] : jr["findings"]["by_kind"].items()) {
      if (v["count"].get<int64_t>() == 0) continue;
      absl::StrAppendFormat(&f, "%s%s x%d (%s)", f.empty() ? "" : "; ", kind, v["count"].get<int64_t>(),
                            Dur(I(v["cost_ns"])));
    }
    absl::StrAppend(&o, "  findings      ", f.empty() ? "none" : f, "\n");

    for (const ojson& d : jr["devices"]) {
      if (d["iterations"].empty()) continue;
      absl::StrAppendFormat(&o, "\n  per iteration, GPU %d (activities counted in the iteration that launched them)\n",
                            d["device"].get<int>());
      absl::StrAppendFormat(&o, "    %9s %12s %12s %12s %8s %12s %12s\n", "iteration", "comm", "hidden", "exposed",
                            "overlap", "compute", "contention");
      size_t rows = 0;
      for (const ojson& it : d["iterations"]) {
        // Long captures: the first rows here, every iteration in --json.
        if (rows++ == 2 * info.top_n) {
          absl::StrAppendFormat(&o, "    ... %d more iterations (see --json)\n",
                                d["iterations"].size() - 2 * info.top_n);
          break;
        }
        absl::StrAppendFormat(&o, "    %9d %12s %12s %12s %8s %12s %12s\n", it["iteration"].get<int64_t>(),
                              Dur(I(it["comm_ns"])), Dur(I(it["hidden_comm_ns"])), Dur(I(it["exposed_comm_ns"])),
                              it["no_communication"].get<bool>() ? "no comm" : Pct(it["overlap_ratio"]),
                              Dur(I(it["compute_ns"])), Dur(I(it["contention_ns"])));
      }
    }
    for (const ojson& d : jr["devices"]) {
      const ojson& c = d["collectives"];
      if (c["top_exposed"].empty()) continue;
      absl::StrAppendFormat(&o,
                            "\n  collectives with the most exposed time, GPU %d (%d instances, %s exposed in all)\n"
                            "    %12s %12s %8s %8s  %s\n",
                            d["device"].get<int>(), c["count"].get<int64_t>(), Dur(I(c["exposed_ns"])), "own time",
                            "exposed", "overlap", "stream", "collective");
      for (const ojson& x : c["top_exposed"])
        absl::StrAppendFormat(&o, "    %12s %12s %8s %8s  %s\n", Dur(I(x["own_ns"])), Dur(I(x["exposed_ns"])),
                              Pct(x["overlap_ratio"]), S(x["stream"]), Short(S(x["name"])));
    }
    for (const ojson& d : jr["devices"]) {
      if (d["slowdowns"].empty()) continue;
      absl::StrAppendFormat(&o, "\n  compute kernels slowed by overlap, GPU %d\n    %8s %8s %12s %12s  %s\n",
                            d["device"].get<int>(), "slowdown", "n(ovl)", "median ovl", "median alone", "kernel");
      for (const ojson& k : d["slowdowns"])
        absl::StrAppendFormat(&o, "    %7.2fx %8d %12s %12s  %s\n", k["slowdown"].get<double>(),
                              k["overlapped_count"].get<int64_t>(), Dur(I(k["median_overlapped_ns"])),
                              Dur(I(k["median_alone_ns"])), Short(S(k["name"])));
    }
    if (!jr["blocked_intervals"]["top"].empty()) {
      absl::StrAppendFormat(&o,
                            "\n  top blocking calls (%d in all; \"final\": the last sync, not counted as blocked)\n    "
                            "%12s %10s %12s %12s  %-22s %s\n",
                            jr["blocked_intervals"]["count"].get<int64_t>(), "duration", "thread", "GPU busy",
                            "GPU idle", "call", "released by");
      for (const ojson& b : jr["blocked_intervals"]["top"])
        absl::StrAppendFormat(&o, "    %12s %10s %12s %12s  %-22s %s\n", Dur(I(b["duration_ns"])), S(b["thread"]),
                              Dur(I(b["device_busy_ns"])), Dur(I(b["device_idle_ns"])),
                              S(b["call"]) + (b["final_sync"].get<bool>() ? " (final)" : ""),
                              b["released_by"].is_null() ? "-" : Short(S(b["released_by"]["name"]), 50));
    }
    for (const ojson& d : jr["devices"]) {
      if (d["top_gaps"].empty()) continue;
      absl::StrAppendFormat(&o, "\n  top idle gaps, GPU %d (%d gaps >= %s)\n    %12s %-13s %9s  %s\n",
                            d["device"].get<int>(), d["idle"]["gaps"].get<int64_t>(),
                            Us(j["options"]["min_gap_ns"].get<int64_t>()), "duration", "cause", "iteration",
                            "ended by");
      for (const ojson& g : d["top_gaps"])
        absl::StrAppendFormat(&o, "    %12s %-13s %9s  %s\n", Dur(I(g["duration_ns"])), S(g["cause"]),
                              g["iteration"].is_null() ? "-" : S(g["iteration"]),
                              g["ended_by"].is_null() ? "-" : Short(S(g["ended_by"]["name"])));
    }
    for (const ojson& d : jr["devices"]) {
      if (d["launch_delay"].empty()) continue;
      absl::StrAppendFormat(&o,
                            "\n  launch delay (kernel start - end of its launch call), GPU %d\n"
                            "    %8s %8s %10s %10s %10s %10s %9s %12s\n",
                            d["device"].get<int>(), "stream", "count", "p50", "p90", "p99", "max", "> cutoff",
                            "no launch");
      for (const ojson& s2 : d["launch_delay"]) {
        const ojson& p = s2["launch_delay"];
        absl::StrAppendFormat(&o, "    %8s %8d %10s %10s %10s %10s %9d %12d\n", S(s2["stream"]), I(p["count"]),
                              Dur(I(p["p50_ns"])), Dur(I(p["p90_ns"])), Dur(I(p["p99_ns"])), Dur(I(p["max_ns"])),
                              I(s2["launch_delay_outliers"]), I(s2["without_launch_call"]));
      }
    }
    if (!jr["launch_calls"].empty()) {
      absl::StrAppendFormat(&o,
                            "\n  launch calls (> cutoff: longer than %s; short kernels: %d)\n"
                            "    %8s %10s %10s %10s %9s  %s\n",
                            Us(j["options"]["runtime_cutoff_ns"].get<int64_t>()), I(jr["short_kernels"]["count"]),
                            "count", "p50", "p99", "max", "> cutoff", "call");
      for (const ojson& c : jr["launch_calls"]) {
        const ojson& p = c["duration"];
        absl::StrAppendFormat(&o, "    %8d %10s %10s %10s %9d  %s\n", I(p["count"]), Dur(I(p["p50_ns"])),
                              Dur(I(p["p99_ns"])), Dur(I(p["max_ns"])), I(c["outliers"]), S(c["call"]));
      }
    }
    const ojson& items = jr["findings"]["items"];
    if (!items.empty()) {
      absl::StrAppendFormat(&o, "\n  findings (%d)\n", items.size());
      size_t shown = 0;
      for (const ojson& f2 : items) {
        if (shown++ >= info.top_n) {
          absl::StrAppendFormat(&o, "    ... %d more (see --json)\n", items.size() - info.top_n);
          break;
        }
        absl::StrAppendFormat(&o, "    [%s] %s\n      -> %s\n", S(f2["kind"]), S(f2["message"]), S(f2["advice"]));
      }
    }
  }

  AppendCollectivesText(j, info, &o);

  absl::StrAppend(&o, "\n== top GPU activities by class (all ranks) ==\n");
  absl::StrAppendFormat(&o, "  %-8s %8s %12s %12s  %s\n", "class", "count", "total", "max", "name");
  for (const ojson& k : j["top_kernels"])
    absl::StrAppendFormat(&o, "  %-8s %8d %12s %12s  %s\n", S(k["class"]), I(k["count"]), Dur(I(k["total_ns"])),
                          Dur(I(k["max_ns"])), Short(S(k["name"]), 70));
  return o;
}

std::string RenderExplainClasses(const model::Trace& t, const analyze::AnalysisResult& r) {
  std::string o = "classification rules (first match wins):\n";
  for (size_t i = 0; i < r.classes.rules.size(); ++i)
    absl::StrAppendFormat(&o, "  %2d  %-55s (%s)\n", i, r.classes.rules[i].Describe(), r.classes.rules[i].origin);
  absl::StrAppendFormat(&o, "\n  %-8s %-7s %4s %8s %12s  %s\n", "class", "kind", "rule", "count", "total", "name");
  for (const analyze::ClassExplanation& e : r.classes.names)
    absl::StrAppendFormat(&o, "  %-8s %-7s %4d %8d %12s  %s\n", std::string(analyze::ToString(e.cls)),
                          std::string(model::ToString(e.kind)), e.rule, e.count, Dur(e.total_ns),
                          std::string(t.str(e.name)));
  return o;
}

}  // namespace overlapscope::report
