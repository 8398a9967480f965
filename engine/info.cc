#include "engine/info.h"

#include <exception>
#include <new>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analyze/clock_align.h"
#include "engine/session_state.h"
#include "nlohmann/json.hpp"
#include "report/import_warnings.h"

namespace overlapscope::engine {
namespace {

using nlohmann::json;

json AlignmentJson(const model::Trace& t, const analyze::ClockAlignment& a) {
  json hosts = json::array();
  for (const analyze::HostClock& h : a.hosts) {
    json pids = json::array();
    for (model::ProcessId p : h.processes) pids.push_back(t.processes()[p].pid);
    hosts.push_back({{"host", h.host},
                     {"pids", pids},
                     {"reference", h.reference},
                     {"aligned", h.aligned},
                     {"offset_ns", h.offset_ns},
                     {"instances", h.instances},
                     {"residual_spread_ns", h.residual_spread_ns},
                     {"reason", h.reason.empty() ? json(nullptr) : json(h.reason)}});
  }
  return {{"mode", std::string(analyze::ToString(a.mode))}, {"status", std::string(analyze::ToString(a.status))},
          {"summary", analyze::DescribeClockAlignment(a)},  {"matched_instances_used", a.matched_instances_used},
          {"residual_spread_ns", a.residual_spread_ns},     {"hosts", hosts}};
}

json Describe(const model::Trace& t, const analyze::ClockAlignment& alignment) {
  json j;
  j["schema"] = "overlapscope.info/1";
  j["clock_note"] = t.clock_note();
  j["clock_alignment"] = AlignmentJson(t, alignment);
  j["time_span"] = {{"start_ns", t.start_ns()}, {"end_ns", t.end_ns()}, {"duration_ns", t.end_ns() - t.start_ns()}};
  j["counts"] = {{"kernels", t.kernels().size()},       {"memcpys", t.memcpys().size()},
                 {"memsets", t.memsets().size()},       {"api_calls", t.api_calls().size()},
                 {"syncs", t.syncs().size()},           {"ranges", t.ranges().size()},
                 {"gpu_ranges", t.gpu_ranges().size()}, {"collectives", t.collectives().size()}};
  j["duplicate_api_correlation_ids"] = t.duplicate_api_correlations();
  std::vector<int64_t> k(t.streams().size()), m(t.streams().size()), s(t.streams().size());
  for (const auto& e : t.kernels()) ++k[e.stream];
  for (const auto& e : t.memcpys()) ++m[e.stream];
  for (const auto& e : t.memsets()) ++s[e.stream];
  std::vector<int64_t> api(t.threads().size()), rng(t.threads().size());
  for (const auto& e : t.api_calls()) ++api[e.thread];
  for (const auto& e : t.ranges()) ++rng[e.thread];
  json procs = json::array();
  for (size_t p = 0; p < t.processes().size(); ++p) {
    const auto& pr = t.processes()[p];
    json jp = {{"rank", pr.rank},        {"world_size", pr.world_size}, {"pid", pr.pid},
               {"name", t.str(pr.name)}, {"host", t.str(pr.host)},      {"source", t.str(pr.source)}};
    json devs = json::array();
    for (size_t d = 0; d < t.devices().size(); ++d) {
      if (t.devices()[d].process != static_cast<int32_t>(p)) continue;
      json jd = {{"ordinal", t.devices()[d].ordinal}, {"name", t.str(t.devices()[d].name)}};
      json streams = json::array();
      for (size_t st = 0; st < t.streams().size(); ++st) {
        if (t.streams()[st].device != static_cast<int32_t>(d)) continue;
        streams.push_back({{"stream", t.streams()[st].native_id},
                           {"name", t.str(t.streams()[st].name)},
                           {"kernels", k[st]},
                           {"memcpys", m[st]},
                           {"memsets", s[st]}});
      }
      jd["streams"] = streams;
      devs.push_back(jd);
    }
    jp["devices"] = devs;
    json threads = json::array();
    for (size_t th = 0; th < t.threads().size(); ++th) {
      if (t.threads()[th].process != static_cast<int32_t>(p)) continue;
      threads.push_back({{"tid", t.threads()[th].tid},
                         {"name", t.str(t.threads()[th].name)},
                         {"api_calls", api[th]},
                         {"ranges", rng[th]}});
    }
    jp["threads"] = threads;
    procs.push_back(jp);
  }
  j["processes"] = procs;
  json sources = json::array();
  for (const auto& src : t.sources()) {
    sources.push_back({{"path", src.path},
                       {"format", src.format},
                       {"bytes", src.bytes},
                       {"events_read", src.events_read},
                       {"events_kept", src.events_kept},
                       {"events_skipped", src.skipped()},
                       {"events_ignored", src.ignored()},
                       {"base_time_ns", src.base_time_ns},
                       {"kept_by_category", src.kept_by_category},
                       {"stats", report::StatsJson(src)},
                       {"examples", src.examples}});
  }
  j["sources"] = sources;
  j["warnings"] = report::WarningsJson(t);
  return j;
}

std::string Text(const json& j) {
  std::string out = report::WarningsTextOfJson(j["warnings"]);
  const auto& ts = j["time_span"];
  absl::StrAppendFormat(&out, "time span   %.3f ms (%d .. %d ns)\n", ts["duration_ns"].get<int64_t>() / 1e6,
                        ts["start_ns"].get<int64_t>(), ts["end_ns"].get<int64_t>());
  out += "events     ";
  for (auto& [key, v] : j["counts"].items()) absl::StrAppend(&out, " ", key, "=", v.get<int64_t>());
  out += "\n";
  absl::StrAppend(&out, "clocks      ", j["clock_alignment"]["summary"].get<std::string>(), "\n");
  if (j["duplicate_api_correlation_ids"].get<int64_t>() > 0)
    absl::StrAppend(&out, "warning: ", j["duplicate_api_correlation_ids"].get<int64_t>(),
                    " API calls share a correlation id with an earlier call (first one kept)\n");
  for (const auto& p : j["processes"]) {
    absl::StrAppendFormat(&out, "\n%s  pid %d  %s%s\n",
                          p["rank"].get<int>() < 0 ? "no rank recorded" : absl::StrCat("rank ", p["rank"].get<int>()),
                          p["pid"].get<int64_t>(), p["name"].get<std::string>(),
                          p["host"].get<std::string>().empty() ? "" : " @ " + p["host"].get<std::string>());
    for (const auto& d : p["devices"]) {
      absl::StrAppendFormat(&out, "  GPU %d %s\n", d["ordinal"].get<int>(), d["name"].get<std::string>());
      absl::StrAppendFormat(&out, "    %-10s %9s %9s %9s\n", "stream", "kernels", "memcpys", "memsets");
      for (const auto& s : d["streams"])
        absl::StrAppendFormat(&out, "    %-10d %9d %9d %9d\n", s["stream"].get<int64_t>(), s["kernels"].get<int64_t>(),
                              s["memcpys"].get<int64_t>(), s["memsets"].get<int64_t>());
    }
    absl::StrAppendFormat(&out, "  %-10s %10s %10s  %s\n", "thread", "api calls", "ranges", "name");
    for (const auto& th : p["threads"])
      absl::StrAppendFormat(&out, "  %-10d %10d %10d  %s\n", th["tid"].get<int64_t>(), th["api_calls"].get<int64_t>(),
                            th["ranges"].get<int64_t>(), th["name"].get<std::string>());
  }
  for (const auto& s : j["sources"]) {
    absl::StrAppendFormat(&out, "\nsource %s (%s, %d bytes)\n  read %d  kept %d  skipped %d  ignored %d\n",
                          s["path"].get<std::string>(), s["format"].get<std::string>(), s["bytes"].get<int64_t>(),
                          s["events_read"].get<int64_t>(), s["events_kept"].get<int64_t>(),
                          s["events_skipped"].get<int64_t>(), s["events_ignored"].get<int64_t>());
    for (auto& [k, v] : s["kept_by_category"].items())
      absl::StrAppendFormat(&out, "    kept     %-28s %d\n", k, v.get<int64_t>());
    out += report::StatsText(s["stats"]);
    for (const auto& e : s["examples"]) absl::StrAppend(&out, "    e.g. ", e.get<std::string>(), "\n");
  }
  return out;
}

std::string CaptureText(const model::Trace& t) {
  std::string o = absl::StrFormat("\ncaptured %d process(es), %.3f ms  (%s)\n", t.processes().size(),
                                  static_cast<double>(t.end_ns() - t.start_ns()) / 1e6, t.clock_note());
  const size_t np = t.processes().size();
  std::vector<int64_t> k(np), m(np), s(np), a(np), y(np), r(np);
  for (const auto& e : t.kernels()) ++k[t.ProcessOfDevice(e.device)];
  for (const auto& e : t.memcpys()) ++m[t.ProcessOfDevice(e.device)];
  for (const auto& e : t.memsets()) ++s[t.ProcessOfDevice(e.device)];
  for (const auto& e : t.api_calls()) ++a[t.ProcessOfThread(e.thread)];
  for (const auto& e : t.syncs())
    if (e.thread != model::kNone) ++y[t.ProcessOfThread(e.thread)];
  for (const auto& e : t.ranges()) ++r[t.ProcessOfThread(e.thread)];
  for (size_t p = 0; p < np; ++p) {
    const auto& pr = t.processes()[p];
    absl::StrAppendFormat(&o, "  %s pid %d %s: kernels %d memcpys %d memsets %d api %d syncs %d ranges %d\n",
                          pr.rank < 0 ? "no rank" : absl::StrCat("rank ", pr.rank), pr.pid, std::string(t.str(pr.name)),
                          k[p], m[p], s[p], a[p], y[p], r[p]);
    for (const auto& d : t.devices())
      if (d.process == static_cast<int32_t>(p))
        absl::StrAppendFormat(&o, "    GPU %d %s\n", d.ordinal, std::string(t.str(d.name)));
  }
  for (const auto& src : t.sources()) {
    absl::StrAppendFormat(&o, "  %s: records %d kept %d skipped %d dropped by CUPTI %d\n", src.path, src.events_read,
                          src.events_kept, src.skipped(), src.Count(model::Stat::kCuptiDroppedRecords));
    o += report::StatsText(report::StatsJson(src));
    for (const auto& e : src.examples) absl::StrAppendFormat(&o, "    note: %s\n", e);
  }
  return o;
}

// One line per capture window of each process; a process whose ranges never opened says so.
std::string WindowsText(const model::Trace& t, bool ranged) {
  std::string o;
  for (size_t p = 0; p < t.processes().size(); ++p) {
    int n = 0;
    int64_t first = 0;
    const long long pid = t.processes()[p].pid;
    for (const model::CaptureWindow& w : t.windows()) {
      if (w.process != static_cast<model::ProcessId>(p)) continue;
      if (n++ == 0) first = w.start_ns;
      absl::StrAppendFormat(&o, "    pid %d window %d (%s%s%s): %.3f ms long, starts at +%.3f ms\n", pid, w.index,
                            std::string(model::ToString(w.trigger)), w.name ? " " : "", std::string(t.str(w.name)),
                            static_cast<double>(w.end_ns - w.start_ns) / 1e6,
                            static_cast<double>(w.start_ns - first) / 1e6);
    }
    if (ranged && n == 0)
      absl::StrAppendFormat(&o, "    no capture window opened in pid %d: nothing recorded (did it reach the range?)\n",
                            pid);
  }
  return o;
}

}  // namespace

EventCounts CountEvents(const Session& session) {
  const model::Trace& t = session.trace();
  auto n = [](const auto& v) { return static_cast<int64_t>(v.size()); };
  return EventCounts{n(t.processes()), n(t.kernels()), n(t.memcpys()), n(t.memsets()),
                     n(t.api_calls()), n(t.syncs()),   n(t.ranges())};
}

absl::StatusOr<std::string> DescribeCapture(const Session& session, bool ranged) {
  try {
    return CaptureText(session.trace()) + WindowsText(session.trace(), ranged);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("out of memory while describing the capture");
  }
}

absl::StatusOr<std::string> DescribeSession(const Session& session, bool as_json) {
  try {  // nlohmann throws; nothing leaves the engine
    json j = Describe(session.trace(), session.clock_alignment());
    return as_json ? j.dump(2, ' ', false, json::error_handler_t::replace) + "\n" : Text(j);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("out of memory while describing the trace");
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("describing the trace failed: ", e.what()));
  }
}

}  // namespace overlapscope::engine
