// JSON report reader (report/read_json.h): ranks[].
#include "report/read_json_internal.h"

namespace overlapscope::report::read_internal {
namespace {

OverlapFigures Figures(const Node& n) {
  OverlapFigures s;
  s.comm_ns = n.At("comm_ns").Int();
  s.hidden_comm_ns = n.At("hidden_comm_ns").Int();
  s.exposed_comm_ns = n.At("exposed_comm_ns").Int();
  s.overlap_ratio = n.At("overlap_ratio").OptDouble();
  s.compute_ns = n.At("compute_ns").Int();
  s.compute_share_overlapped = n.At("compute_share_overlapped").OptDouble();
  s.contention_ns = n.At("contention_ns").Int();
  s.net_overlap_gain_ns = n.At("net_overlap_gain_ns").Int();
  s.overlapped_compute_instances = n.At("overlapped_compute_instances").Int();
  s.contention_unknown_instances = n.At("contention_unknown_instances").Int();
  s.activities = n.At("activities").Int();
  return s;
}

std::optional<GpuActivity> Activity(const Node& n) {
  if (n.j.is_null()) return std::nullopt;
  return GpuActivity{n.At("kind").Str(), n.At("name").Str(), n.At("start_ns").Int(), n.At("end_ns").Int(),
                     n.At("stream").OptInt()};
}

Percentiles ReadPercentiles(const Node& n) {
  return Percentiles{n.At("count").Int(),  n.At("min_ns").Int(), n.At("p50_ns").Int(),    n.At("p90_ns").Int(),
                     n.At("p99_ns").Int(), n.At("max_ns").Int(), n.At("mean_ns").Double()};
}

// report.h HostSplit; null: absent.
std::optional<HostSplit> ReadSplit(const Node& n) {
  if (n.j.is_null()) return std::nullopt;
  return HostSplit{n.At("blocked_ns").Int(), n.At("launch_ns").Int(), n.At("other_calls_ns").Int(),
                   n.At("outside_ns").Int()};
}

void ReadIdle(const Node& n, DeviceIdle* idle) {
  idle->span_ns = n.At("span_ns").Int();
  idle->busy_ns = n.At("busy_ns").Int();
  idle->idle_ns = n.At("idle_ns").Int();
  idle->idle_share = n.At("idle_share").OptDouble();
  idle->min_gap_ns = n.At("min_gap_ns").Int();
  idle->gaps = n.At("gaps").Int();
  idle->gap_ns = n.At("gap_ns").Int();
  n.At("causes").Members([&](const std::string& k, const Node& c) {
    idle->causes.push_back({k, c.At("ns").Int(), c.At("count").Int()});
  });
  idle->host_blocked_split = ReadSplit(n.At("host_blocked_split"));
}

WaitedFor ReadWaitedFor(const Node& x) { return {x.At("label").Str(), x.At("rank").OptInt(), x.At("wait_ns").Int()}; }

DeviceReport Device(const Node& n) {
  DeviceReport d;
  d.device = n.At("device").Int();
  d.name = n.At("name").Str();
  d.overlap = Figures(n.At("overlap"));
  n.At("iterations").Each([&](const Node& x) {
    IterationOverlap it{x.At("iteration").Int(),
                        x.At("gpu_start_ns").Int(),
                        x.At("gpu_end_ns").Int(),
                        x.At("cpu_start_ns").Int(),
                        x.At("cpu_end_ns").Int(),
                        Figures(x),
                        {}};
    x.At("gap_ns").Members([&](const std::string& k, const Node& v) { it.gap_ns.push_back({k, v.Int()}); });  // 1.7
    d.iterations.push_back(std::move(it));
  });
  const Node c = n.At("collectives");
  d.collectives.count = c.At("count").Int();
  d.collectives.exposed_ns = c.At("exposed_ns").Int();
  c.At("top_exposed").Each([&](const Node& x) {
    d.collectives.top_exposed.push_back({x.At("name").Str(), x.At("stream").OptInt(), x.At("start_ns").Int(),
                                         x.At("end_ns").Int(), x.At("own_ns").Int(), x.At("hidden_ns").Int(),
                                         x.At("overlap_ratio").OptDouble()});
  });
  n.At("slowdowns").Each([&](const Node& x) {
    d.slowdowns.push_back({x.At("name").Str(), x.At("overlapped_count").Int(), x.At("alone_count").Int(),
                           x.At("median_overlapped_ns").Int(), x.At("median_alone_ns").Int(),
                           x.At("slowdown").Double()});
  });
  ReadIdle(n.At("idle"), &d.idle);
  n.At("top_gaps").Each([&](const Node& x) {
    d.top_gaps.push_back({x.At("start_ns").Int(), x.At("end_ns").Int(), x.At("cause").Str(), Activity(x.At("ended_by")),
                          x.At("launch_call").OptStr(), x.At("thread").OptInt(), x.At("iteration").OptInt(),
                          ReadSplit(x.At("host")), std::nullopt});
    if (x.Has("waiting_on")) {
      const Node w = x.At("waiting_on");
      d.top_gaps.back().waiting_on =
          IdleGap::WaitingOn{w.At("stream").OptInt(), w.At("name").Str(), w.At("inferred").Bool()};
    }
  });
  n.At("launch_delay").Each([&](const Node& x) {
    d.launch_delay.push_back({x.At("stream").OptInt(), ReadPercentiles(x.At("launch_delay")),
                              x.At("launch_delay_outliers").Int(), x.At("without_launch_call").Int()});
  });
  if (const Node w = n.At("comm_wait"); !w.j.is_null()) {  // 1.9
    CommWait c{w.At("comm_wait_ns").Int(), w.At("hidden_wait_ns").Int(), w.At("exposed_wait_ns").Int(), {}};
    w.At("waited_for").Each([&](const Node& x) { c.waited_for.push_back(ReadWaitedFor(x)); });
    d.comm_wait = std::move(c);
  }
  return d;
}

// The summary's keys (report/gates.h SummaryMetrics): fixed ones, gap_<cause>_ns, finding_<kind>.
RankSummary Summary(const Node& n) {
  RankSummary s;
  n.Members([&](const std::string& k, const Node& v) {
    auto is = [&](const char* key) { return k == key; };
    if (is("comm_ns"))
      s.comm_ns = v.Int();
    else if (is("hidden_comm_ns"))
      s.hidden_comm_ns = v.Int();
    else if (is("exposed_comm_ns"))
      s.exposed_comm_ns = v.Int();
    else if (is("comm_wait_ns"))
      s.comm_wait_ns = v.OptInt();
    else if (is("hidden_wait_ns"))
      s.hidden_wait_ns = v.OptInt();
    else if (is("exposed_wait_ns"))
      s.exposed_wait_ns = v.OptInt();
    else if (is("overlap_ratio"))
      s.overlap_ratio = v.OptDouble();
    else if (is("compute_ns"))
      s.compute_ns = v.Int();
    else if (is("compute_share_overlapped"))
      s.compute_share_overlapped = v.OptDouble();
    else if (is("contention_ns"))
      s.contention_ns = v.Int();
    else if (is("net_overlap_gain_ns"))
      s.net_overlap_gain_ns = v.Int();
    else if (is("hta_compat_overlap_pct"))
      s.hta_compat_overlap_pct = v.OptDouble();
    else if (is("hta_wholetrace_overlap_pct"))
      s.hta_wholetrace_overlap_pct = v.OptDouble();
    else if (is("blocked_ns"))
      s.blocked_ns = v.Int();
    else if (is("blocked_share"))
      s.blocked_share = v.OptDouble();
    else if (is("gpu_span_ns"))
      s.gpu_span_ns = v.Int();
    else if (is("gpu_idle_ns"))
      s.gpu_idle_ns = v.Int();
    else if (is("gpu_idle_share"))
      s.gpu_idle_share = v.OptDouble();
    else if (is("gpu_gap_ns"))
      s.gpu_gap_ns = v.Int();
    else if (is("collective_wait_ns"))
      s.collective_wait_ns = v.Int();
    else if (is("step_time_ns"))
      s.step_time_ns = v.Int();
    else if (is("collective_times_last"))
      s.collective_times_last = v.Int();
    else if (is("critical_path_ns"))
      s.critical_path_ns = v.Int();
    else if (is("straggler_lateness_ns"))
      s.straggler_lateness_ns = v.Int();
    else if (k.size() > 20 && k.rfind("critical_path_", 0) == 0 && k.compare(k.size() - 6, 6, "_share") == 0)
      s.critical_path_shares.push_back({k.substr(14, k.size() - 20), v.OptDouble()});
    else if (is("findings"))
      v.Int();  // the sum of the finding_ keys: recomputed
    else if (k.size() > 7 && k.rfind("gap_", 0) == 0 && k.compare(k.size() - 3, 3, "_ns") == 0)
      s.gap_ns.push_back({k.substr(4, k.size() - 7), v.Int()});
    else if (k.rfind("finding_", 0) == 0)
      s.findings.push_back({k.substr(8), v.Int()});
    // unknown keys: a later minor's metric; ignored.
  });
  return s;
}

std::vector<KindFigures> Kinds(const Node& n, const char* ns_key) {
  std::vector<KindFigures> v;
  n.Members([&](const std::string& k, const Node& x) { v.push_back({k, x.At("count").Int(), x.At(ns_key).Int()}); });
  return v;
}

void ReadThreads(const Node& n, RankReport* rk) {
  n.Each([&](const Node& x) {
    ThreadBlocking th{x.At("thread").OptInt(),
                      x.At("name").Str(),
                      x.At("blocked_ns").Int(),
                      x.At("final_sync_ns").Int(),
                      x.At("active_span_ns").Int(),
                      x.At("blocked_share").OptDouble(),
                      {}};
    x.At("top_calls").Each([&](const Node& c) {
      th.top_calls.push_back({c.At("call").Str(), c.At("count").Int(), c.At("total_ns").Int(), c.At("max_ns").Int()});
    });
    rk->threads.push_back(std::move(th));
  });
}

RankReport Rank(const Node& n) {
  RankReport rk;
  rk.label = n.At("label").Str();
  rk.rank = n.At("rank").OptInt();
  rk.pid = n.At("pid").Int();
  rk.host = n.At("host").Str();
  rk.source = n.At("source").Str();
  rk.summary = Summary(n.At("summary"));
  if (const Node w = n.At("waited_for_most"); !w.j.is_null()) rk.waited_for_most = ReadWaitedFor(w);  // 1.9
  n.At("windows").Each([&](const Node& w) {
    rk.windows.push_back(
        {w.At("index").Int(), w.At("trigger").Str(), w.At("name").Str(), w.At("capture_start_ns").Int(),
         w.At("capture_end_ns").Int(), w.At("start_ns").Int(), w.At("end_ns").Int(), w.At("startup_excluded_ns").Int(),
         w.At("kernels").Int(), w.At("memcpys").Int(), w.At("memsets").Int(), w.At("gpu_span_ns").Int(),
         w.At("gpu_busy_ns").Int(), w.At("gpu_idle_ns").Int(), w.At("gpu_gap_ns").Int(), w.At("gaps").Int()});
  });
  n.At("devices").Each([&](const Node& d) { rk.devices.push_back(Device(d)); });
  if (n.Has("hta_compat")) {
    const Node h = n.At("hta_compat");
    HtaCompat c;
    c.overlap_pct = h.At("overlap_pct").OptDouble();
    c.comm_us = h.At("comm_us").Int();
    c.overlap_us = h.At("overlap_us").Int();
    if (h.Has("step_filter")) {  // 1.5
      c.step_filter = h.At("step_filter").Bool();
      c.last_step_start_us = h.At("last_step_start_us").OptInt();
      c.filtered_out = h.At("filtered_out").Int();
      c.wholetrace_overlap_pct = h.At("wholetrace_overlap_pct").OptDouble();
      c.wholetrace_comm_us = h.At("wholetrace_comm_us").Int();
      c.wholetrace_overlap_us = h.At("wholetrace_overlap_us").Int();
    }
    c.dropped_sub_us = h.At("dropped_sub_us").Int();
    c.note = h.At("note").Str();
    rk.hta_compat = std::move(c);
  }
  ReadThreads(n.At("threads"), &rk);
  const Node bi = n.At("blocked_intervals");
  rk.blocked_intervals.count = bi.At("count").Int();
  bi.At("top").Each([&](const Node& x) {
    rk.blocked_intervals.top.push_back({x.At("call").Str(), x.At("reason").Str(), x.At("thread").OptInt(),
                                        x.At("start_ns").Int(), x.At("duration_ns").Int(), x.At("stream").OptInt(),
                                        Activity(x.At("released_by")), x.At("device_busy_ns").Int(),
                                        x.At("device_idle_ns").Int(), x.At("iteration").OptInt(),
                                        x.At("final_sync").Bool()});
  });
  const Node f = n.At("findings");
  rk.findings.by_kind = Kinds(f.At("by_kind"), "cost_ns");
  f.At("items").Each([&](const Node& x) {
    rk.findings.items.push_back({x.At("kind").Str(), x.At("time_ns").Int(), x.At("end_ns").Int(),
                                 x.At("thread").OptInt(), x.At("stream").OptInt(), x.At("call").Str(),
                                 x.At("iteration").OptInt(), x.At("cost_ns").Int(), x.At("message").Str(),
                                 x.At("advice").Str()});
  });
  rk.sync_points.count = n.At("sync_points").At("count").Int();
  rk.sync_points.by_kind = Kinds(n.At("sync_points").At("by_kind"), "blocked_ns");
  if (n.At("sync_points").Has("stream_waits"))
    n.At("sync_points").At("stream_waits").Each([&](const Node& x) {
      rk.sync_points.stream_waits.push_back({x.At("stream").OptInt(), x.At("wait_on_stream").OptInt(),
                                             x.At("source").Str(), x.At("waiter").Str(), x.At("inferred").Bool(),
                                             x.At("count").Int()});
    });
  n.At("launch_calls").Each([&](const Node& x) {
    rk.launch_calls.push_back({x.At("call").Str(), ReadPercentiles(x.At("duration")), x.At("outliers").Int()});
  });
  rk.short_kernels.count = n.At("short_kernels").At("count").Int();
  n.At("short_kernels").At("top").Each([&](const Node& x) {
    rk.short_kernels.top.push_back(
        {x.At("name").Str(), x.At("count").Int(), x.At("gpu_total_ns").Int(), x.At("cpu_total_ns").Int()});
  });
  if (n.Has("dependency_graph")) {
    const Node g = n.At("dependency_graph");
    DependencyGraph d;
    for (const char* k : {"program-order", "stream-order", "launch", "event-wait", "host-release", "peer"})
      if (g.At("edges").Has(k))
        d.edges.push_back({k, g.At("edges").At(k).At("recorded").Int(), g.At("edges").At(k).At("inferred").Int()});
    const Node w = g.At("waits");
    d.waits_recorded = w.At("recorded").Int(), d.waits_recorded_without_source = w.At("recorded_without_source").Int();
    d.waits_inferred = w.At("inferred").Int(), d.waits_ambiguous = w.At("ambiguous").Int();
    if (w.Has("inferred_by_order")) d.waits_inferred_by_order = w.At("inferred_by_order").Int();  // 1.10
    d.waits_unresolved = w.At("unresolved").Int(), d.waits_not_delayed = w.At("not_delayed").Int();
    d.waits_already_complete = w.At("already_complete").Int();
    d.gpu_without_launch = g.At("gpu_without_launch").Int();
    d.syncs_without_release = g.At("syncs_without_release").Int();
    d.backward_edges = g.At("backward_edges").Int();
    rk.dependency_graph = std::move(d);
  }
  return rk;
}

}  // namespace

std::vector<RankReport> ReadRanks(const Node& ranks) {
  std::vector<RankReport> out;
  ranks.Each([&](const Node& n) { out.push_back(Rank(n)); });
  return out;
}

}  // namespace overlapscope::report::read_internal
