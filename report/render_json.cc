// JSON report, schema "overlapscope.report/1" (docs/report-schema.md), from the typed Report.
// Keys and their order are the schema's; absent optionals are null, never NaN.
#include <cmath>

#include "nlohmann/json.hpp"
#include "report/gates.h"
#include "report/render.h"
#include "report/render_json_deferred.h"
#include "report/render_json_iteration.h"
#include "report/render_json_overview.h"
#include "report/render_json_paths.h"
#include "report/render_json_text.h"

namespace overlapscope::report {
namespace {

using ojson = nlohmann::ordered_json;

// Placeholders of the arrays RenderJson writes element by element (Splice).
constexpr char kRanksToken[] = "@@overlapscope:ranks@@";
constexpr char kInstancesToken[] = "@@overlapscope:instances@@";
constexpr char kDevicesToken[] = "@@overlapscope:concurrency-devices@@";

ojson Activity(const std::optional<GpuActivity>& a) {
  if (!a) return nullptr;
  return ojson{{"kind", a->kind},
               {"name", a->name},
               {"start_ns", a->start_ns},
               {"end_ns", a->end_ns},
               {"stream", JsonOpt(a->stream)}};
}

// Where the host was during host-blocked gaps (report.h HostSplit); null when absent.
ojson Split(const std::optional<HostSplit>& h) {
  if (!h) return nullptr;
  return ojson{{"blocked_ns", h->blocked_ns},
               {"launch_ns", h->launch_ns},
               {"other_calls_ns", h->other_calls_ns},
               {"outside_ns", h->outside_ns}};
}

ojson PercentilesJson(const Percentiles& p) {
  return ojson{{"count", p.count},   {"min_ns", p.min_ns}, {"p50_ns", p.p50_ns},  {"p90_ns", p.p90_ns},
               {"p99_ns", p.p99_ns}, {"max_ns", p.max_ns}, {"mean_ns", p.mean_ns}};
}

ojson WaitedForJson(const WaitedFor& w) {
  return {{"label", w.label}, {"rank", JsonOpt(w.rank)}, {"wait_ns", w.wait_ns}};
}

ojson CommWaitJson(const CommWait& c) {
  ojson by = ojson::array();
  for (const WaitedFor& w : c.waited_for) by.push_back(WaitedForJson(w));
  return {{"comm_wait_ns", c.comm_wait_ns},
          {"hidden_wait_ns", c.hidden_wait_ns},
          {"exposed_wait_ns", c.exposed_wait_ns},
          {"waited_for", by}};
}

// `deferred`: where the per-iteration array goes (rendered apart), or null to build it here.
ojson DeviceJson(const DeviceReport& d, DeferredArrays* deferred) {
  ojson j;
  j["device"] = d.device;
  j["name"] = d.name;
  j["overlap"] = FiguresJson(d.overlap);
  if (deferred != nullptr) {
    j["iterations"] = deferred->AddText(d.iterations.size(), [&d](size_t i, size_t indent, std::string* out) {
      AppendIterationText(d.iterations[i], indent, out);
    });
  } else {
    ojson its = ojson::array();
    for (const IterationOverlap& io : d.iterations) its.push_back(IterationJson(io));
    j["iterations"] = its;
  }
  ojson top = ojson::array();
  for (const CollectiveExposure& c : d.collectives.top_exposed)
    top.push_back({{"name", c.name},
                   {"stream", JsonOpt(c.stream)},
                   {"start_ns", c.start_ns},
                   {"end_ns", c.end_ns},
                   {"own_ns", c.own_ns},
                   {"hidden_ns", c.hidden_ns},
                   {"exposed_ns", Diff(c.own_ns, c.hidden_ns)},
                   {"overlap_ratio", JsonOpt(c.overlap_ratio)}});
  j["collectives"] = {{"count", d.collectives.count}, {"exposed_ns", d.collectives.exposed_ns}, {"top_exposed", top}};
  ojson sl = ojson::array();
  for (const Slowdown& s : d.slowdowns)
    sl.push_back({{"name", s.name},
                  {"overlapped_count", s.overlapped_count},
                  {"alone_count", s.alone_count},
                  {"median_overlapped_ns", s.median_overlapped_ns},
                  {"median_alone_ns", s.median_alone_ns},
                  {"slowdown", s.slowdown}});
  j["slowdowns"] = sl;
  ojson idle;
  idle["span_ns"] = d.idle.span_ns;
  idle["busy_ns"] = d.idle.busy_ns;
  idle["idle_ns"] = d.idle.idle_ns;
  idle["idle_share"] = JsonOpt(d.idle.idle_share);
  idle["min_gap_ns"] = d.idle.min_gap_ns;
  idle["gaps"] = d.idle.gaps;
  idle["gap_ns"] = d.idle.gap_ns;
  ojson causes = ojson::object();
  for (const CauseFigures& c : d.idle.causes) causes[c.name] = {{"ns", c.ns}, {"count", c.count}};
  idle["causes"] = causes;
  idle["host_blocked_split"] = Split(d.idle.host_blocked_split);
  j["idle"] = idle;
  ojson tg = ojson::array();
  for (const IdleGap& g : d.top_gaps)
    tg.push_back({{"start_ns", g.start_ns},
                  {"end_ns", g.end_ns},
                  {"duration_ns", Diff(g.end_ns, g.start_ns)},
                  {"cause", g.cause},
                  {"ended_by", Activity(g.ended_by)},
                  {"launch_call", JsonOpt(g.launch_call)},
                  {"thread", JsonOpt(g.thread)},
                  {"iteration", JsonOpt(g.iteration)},
                  {"host", Split(g.host)}});
  for (size_t i = 0; i < d.top_gaps.size(); ++i)
    if (const auto& w = d.top_gaps[i].waiting_on)
      tg[i]["waiting_on"] = {{"stream", JsonOpt(w->stream)}, {"name", w->name}, {"inferred", w->inferred}};
  j["top_gaps"] = tg;
  ojson ld = ojson::array();
  for (const StreamLaunchDelay& s : d.launch_delay)
    ld.push_back({{"stream", JsonOpt(s.stream)},
                  {"launch_delay", PercentilesJson(s.launch_delay)},
                  {"launch_delay_outliers", s.launch_delay_outliers},
                  {"without_launch_call", s.without_launch_call}});
  j["launch_delay"] = ld;
  j["comm_wait"] = d.comm_wait ? CommWaitJson(*d.comm_wait) : ojson(nullptr);  // 1.9
  return j;
}

ojson SummaryJson(const RankSummary& s) {
  ojson j = ojson::object();
  for (const Metric& m : SummaryMetrics(s))
    j[m.name] = m.is_ratio ? JsonOpt(m.ratio) : m.absent ? ojson(nullptr) : ojson(m.integer);
  return j;
}

ojson Kinds(const std::vector<KindFigures>& v, const char* ns_key) {
  ojson j = ojson::object();
  for (const KindFigures& k : v) j[k.kind] = {{"count", k.count}, {ns_key, k.ns}};
  return j;
}

ojson WindowsJson(const std::vector<Window>& ws) {
  ojson out = ojson::array();
  for (const Window& w : ws)
    out.push_back({{"index", w.index},
                   {"trigger", w.trigger},
                   {"name", w.name},
                   {"capture_start_ns", w.capture_start_ns},
                   {"capture_end_ns", w.capture_end_ns},
                   {"start_ns", w.start_ns},
                   {"end_ns", w.end_ns},
                   {"startup_excluded_ns", w.startup_excluded_ns},
                   {"kernels", w.kernels},
                   {"memcpys", w.memcpys},
                   {"memsets", w.memsets},
                   {"gpu_span_ns", w.gpu_span_ns},
                   {"gpu_busy_ns", w.gpu_busy_ns},
                   {"gpu_idle_ns", w.gpu_idle_ns},
                   {"gpu_gap_ns", w.gpu_gap_ns},
                   {"gaps", w.gaps}});
  return out;
}

// The long arrays (iterations, findings) go to `deferred`, which writes them in place.
ojson RankJson(const RankReport& rk, DeferredArrays* deferred) {
  ojson jr;
  jr["label"] = rk.label;
  jr["rank"] = JsonOpt(rk.rank);
  jr["pid"] = rk.pid;
  jr["host"] = rk.host;
  jr["source"] = rk.source;
  jr["summary"] = SummaryJson(rk.summary);
  jr["waited_for_most"] = rk.waited_for_most ? WaitedForJson(*rk.waited_for_most) : ojson(nullptr);  // 1.9
  jr["windows"] = WindowsJson(rk.windows);
  ojson devs = ojson::array();
  for (const DeviceReport& d : rk.devices) devs.push_back(DeviceJson(d, deferred));
  jr["devices"] = devs;
  if (rk.hta_compat)
    jr["hta_compat"] = {{"overlap_pct", JsonOpt(rk.hta_compat->overlap_pct)},
                        {"comm_us", rk.hta_compat->comm_us},
                        {"overlap_us", rk.hta_compat->overlap_us},
                        {"step_filter", rk.hta_compat->step_filter},
                        {"last_step_start_us", JsonOpt(rk.hta_compat->last_step_start_us)},
                        {"filtered_out", rk.hta_compat->filtered_out},
                        {"wholetrace_overlap_pct", JsonOpt(rk.hta_compat->wholetrace_overlap_pct)},
                        {"wholetrace_comm_us", rk.hta_compat->wholetrace_comm_us},
                        {"wholetrace_overlap_us", rk.hta_compat->wholetrace_overlap_us},
                        {"dropped_sub_us", rk.hta_compat->dropped_sub_us},
                        {"note", rk.hta_compat->note}};
  ojson threads = ojson::array();
  for (const ThreadBlocking& th : rk.threads) {
    ojson calls = ojson::array();
    for (const CallTotal& c : th.top_calls)
      calls.push_back({{"call", c.call}, {"count", c.count}, {"total_ns", c.total_ns}, {"max_ns", c.max_ns}});
    threads.push_back({{"thread", JsonOpt(th.thread)},
                       {"name", th.name},
                       {"blocked_ns", th.blocked_ns},
                       {"final_sync_ns", th.final_sync_ns},
                       {"active_span_ns", th.active_span_ns},
                       {"blocked_share", JsonOpt(th.blocked_share)},
                       {"top_calls", calls}});
  }
  jr["threads"] = threads;
  ojson tb = ojson::array();
  for (const BlockedInterval& b : rk.blocked_intervals.top)
    tb.push_back({{"call", b.call},
                  {"reason", b.reason},
                  {"thread", JsonOpt(b.thread)},
                  {"start_ns", b.start_ns},
                  {"duration_ns", b.duration_ns},
                  {"stream", JsonOpt(b.stream)},
                  {"released_by", Activity(b.released_by)},
                  {"device_busy_ns", b.device_busy_ns},
                  {"device_idle_ns", b.device_idle_ns},
                  {"iteration", JsonOpt(b.iteration)},
                  {"final_sync", b.final_sync}});
  jr["blocked_intervals"] = {{"count", rk.blocked_intervals.count}, {"top", tb}};
  // Findings may number tens of thousands on a long trace (one per starved collective): written
  // as text, rendered apart like the iterations.
  const auto finding = [&rk](size_t i, size_t indent, std::string* out) {
    const Finding& f = rk.findings.items[i];
    ObjectText(indent, out)
        .Str("kind", f.kind)
        .Int("time_ns", f.time_ns)
        .Int("end_ns", f.end_ns)
        .OptInt("thread", f.thread)
        .OptInt("stream", f.stream)
        .Str("call", f.call)
        .OptInt("iteration", f.iteration)
        .Int("cost_ns", f.cost_ns)
        .Str("message", f.message)
        .Str("advice", f.advice)
        .Close();
  };
  const ojson items = deferred->AddText(rk.findings.items.size(), finding);
  jr["findings"] = {{"by_kind", Kinds(rk.findings.by_kind, "cost_ns")}, {"items", items}};
  jr["sync_points"] = {{"count", rk.sync_points.count}, {"by_kind", Kinds(rk.sync_points.by_kind, "blocked_ns")}};
  if (!rk.sync_points.stream_waits.empty()) {
    ojson sw = ojson::array();
    for (const SyncPoints::StreamWait& w : rk.sync_points.stream_waits)
      sw.push_back({{"stream", JsonOpt(w.stream)},
                    {"wait_on_stream", JsonOpt(w.wait_on_stream)},
                    {"source", w.source},
                    {"waiter", w.waiter},
                    {"inferred", w.inferred},
                    {"count", w.count}});
    jr["sync_points"]["stream_waits"] = sw;
  }
  ojson calls = ojson::array();
  for (const LaunchCall& c : rk.launch_calls)
    calls.push_back({{"call", c.call}, {"duration", PercentilesJson(c.duration)}, {"outliers", c.outliers}});
  jr["launch_calls"] = calls;
  ojson shorts = ojson::array();
  for (const ShortKernel& k : rk.short_kernels.top)
    shorts.push_back(
        {{"name", k.name}, {"count", k.count}, {"gpu_total_ns", k.gpu_total_ns}, {"cpu_total_ns", k.cpu_total_ns}});
  jr["short_kernels"] = {{"count", rk.short_kernels.count}, {"top", shorts}};
  if (rk.dependency_graph) {
    const DependencyGraph& d = *rk.dependency_graph;
    ojson edges = ojson::object();
    for (const DependencyGraph::EdgeCount& e : d.edges)
      edges[e.kind] = {{"recorded", e.recorded}, {"inferred", e.inferred}};
    jr["dependency_graph"] = {{"edges", edges},
                              {"waits",
                               {{"recorded", d.waits_recorded},
                                {"recorded_without_source", d.waits_recorded_without_source},
                                {"inferred", d.waits_inferred},
                                {"inferred_by_order", d.waits_inferred_by_order},
                                {"ambiguous", d.waits_ambiguous},
                                {"unresolved", d.waits_unresolved},
                                {"not_delayed", d.waits_not_delayed},
                                {"already_complete", d.waits_already_complete}}},
                              {"gpu_without_launch", d.gpu_without_launch},
                              {"syncs_without_release", d.syncs_without_release},
                              {"backward_edges", d.backward_edges}};
  }
  return jr;
}

ojson RefJson(const ParticipantRef& p) {
  return {{"label", p.label}, {"rank", JsonOpt(p.rank)}, {"gpu", JsonOpt(p.gpu)}, {"pid", JsonOpt(p.pid)}};
}

ojson InstanceJson(const Instance& ci) {
  ojson j;
  j["index"] = ci.index;
  j["op"] = ci.op;
  j["communicator"] = ci.communicator;
  j["sequence"] = JsonOpt(ci.sequence);
  j["order"] = JsonOpt(ci.order);
  j["dtype"] = JsonOpt(ci.dtype);
  j["in_elements"] = JsonOpt(ci.in_elements);
  j["out_elements"] = JsonOpt(ci.out_elements);
  j["bytes"] = JsonOpt(ci.bytes);
  j["size_bytes"] = JsonOpt(ci.size_bytes);
  j["nranks"] = JsonOpt(ci.nranks);
  j["algorithm"] = JsonOpt(ci.algorithm);
  j["protocol"] = JsonOpt(ci.protocol);
  j["channels"] = JsonOpt(ci.channels);
  j["root_or_peer"] = JsonOpt(ci.root_or_peer);
  j["reduce_op"] = JsonOpt(ci.reduce_op);
  j["first_start_ns"] = ci.first_start_ns;
  j["skew_ns"] = ci.skew_ns;
  j["last"] = JsonOpt(ci.last);
  j["last_rank"] = ci.last_rank;
  j["bus_time_ns"] = ci.bus_time_ns;
  j["algbw_gbps"] = JsonOpt(ci.algbw_gbps);
  j["busbw_gbps"] = JsonOpt(ci.busbw_gbps);
  ojson ranks = ojson::array();
  for (const InstanceRank& p : ci.ranks) {
    ojson jp = RefJson(p.ref);
    jp["comm_rank"] = JsonOpt(p.comm_rank);
    jp["start_ns"] = p.start_ns;
    jp["arrival_ns"] = p.arrival_ns;
    jp["arrival_source"] = p.arrival_source;
    jp["end_ns"] = p.end_ns;
    jp["duration_ns"] = Diff(p.end_ns, p.start_ns);
    jp["wait_ns"] = p.wait_ns;
    jp["stream"] = JsonOpt(p.stream);
    jp["channels"] = JsonOpt(p.channels);
    jp["channel_span_ns"] = JsonOpt(p.channel_span_ns);
    jp["exposed_ns"] = JsonOpt(p.exposed_ns);
    ranks.push_back(jp);
  }
  j["ranks"] = ranks;
  return j;
}

ojson CrossRankJson(const CrossRank& x) {
  ojson xr;
  xr["matched_instances"] = x.matched_instances;
  xr["matched_by"] = x.matched_by;
  xr["matched_by_order"] = x.matched_by_order;
  xr["identified_by"] = x.identified_by;
  xr["identified_note"] = x.identified_note;
  xr["unmatched"] = x.unmatched;
  xr["without_rank"] = x.without_rank;
  xr["duplicates"] = x.duplicates;
  xr["max_skew_ns"] = x.max_skew_ns;
  xr["total_skew_ns"] = x.total_skew_ns;
  xr["skew_from"] = "arrival";
  xr["arrival_fallbacks"] = x.arrival_fallbacks;
  ojson parts = ojson::array();
  for (const Participant& p : x.participants) {
    ojson j = RefJson(p.ref);
    j["host"] = JsonOpt(p.host);
    parts.push_back(j);
  }
  xr["participants"] = parts;
  ojson strag = ojson::array();
  for (const Straggling& rs : x.ranks) {
    ojson s = RefJson(rs.ref);
    s["times_last"] = rs.times_last;
    s["others_wait_ns"] = rs.others_wait_ns;
    s["own_wait_ns"] = rs.own_wait_ns;
    strag.push_back(s);
  }
  xr["ranks"] = strag;
  ojson top = ojson::array();
  for (const SkewedInstance& ci : x.top_skew)
    top.push_back({{"op", ci.op},
                   {"communicator", ci.communicator},
                   {"sequence", ci.sequence},
                   {"first_start_ns", ci.first_start_ns},
                   {"skew_ns", ci.skew_ns},
                   {"last_rank", ci.last_rank},
                   {"last", JsonOpt(ci.last)},
                   {"bus_time_ns", ci.bus_time_ns},
                   {"size_bytes", ci.size_bytes},
                   {"algbw_gbps", JsonOpt(ci.algbw_gbps)},
                   {"busbw_gbps", JsonOpt(ci.busbw_gbps)}});
  xr["top_skew"] = top;
  xr["instances"] = kInstancesToken;  // spliced in by RenderJson, one instance at a time
  return xr;
}

ojson ClockJson(const ClockAlignment& a) {
  ojson j;
  j["mode"] = a.mode;
  j["status"] = a.status;
  j["applied"] = a.applied;
  j["method"] = "median of collective end-time differences to the reference host";
  j["reference_host"] = JsonOpt(a.reference_host);
  j["min_instances"] = a.min_instances;
  j["matched_instances_used"] = a.matched_instances_used;
  j["residual_spread_ns"] = a.residual_spread_ns;
  j["summary"] = a.summary;
  ojson hosts = ojson::array();
  for (const HostClock& h : a.hosts)
    hosts.push_back({{"host", h.host},
                     {"pids", h.pids},
                     {"reference", h.reference},
                     {"aligned", h.aligned},
                     {"offset_ns", h.offset_ns},
                     {"instances", h.instances},
                     {"residual_spread_ns", h.residual_spread_ns},
                     {"reason", JsonOpt(h.reason)}});
  j["hosts"] = hosts;
  return j;
}

}  // namespace

// Writes the JSON array of n elements to `out`, at the nesting of a member whose line is
// indented by `indent` spaces, exactly as nlohmann's dump(2) writes it inside the whole document;
// element(i) is built and dumped one at a time, so neither the document's tree nor its text ever
// holds every rank at once (a tree costs several times the text: ~6x at 256 ranks).
// The "ranks" member's line is indented by 2 (a key of the document's top object), the
// "instances" member's by 4 (a key of collectives_across_ranks).
constexpr size_t kRanksIndent = 2;
constexpr size_t kInstancesIndent = 4;

// element_text(i): the element's text as Element writes it, or "" to dump element(i) here.
template <typename F, typename T>
void WriteArray(size_t indent, size_t n, F element, T element_text, size_t text_indent, const RenderSink& out) {
  if (n == 0) {
    out("[]");
    return;
  }
  out("[\n");
  for (size_t i = 0; i < n; ++i) {
    std::string text = indent == text_indent ? element_text(i) : std::string();
    if (text.empty()) text = Element(element(i), indent);
    text += i + 1 < n ? ",\n" : "\n";
    out(text);
  }
  out(std::string(indent, ' ') + "]");
}

// Replaces the member `"key": "TOKEN"` of the dumped skeleton (searched from *from) by the array.
template <typename F, typename T>
void Splice(const std::string& skeleton, const std::string& key, const char* token, size_t n, F element, T element_text,
            size_t text_indent, size_t* from, const RenderSink& out) {
  const std::string member = "\"" + key + "\": \"" + token + "\"";
  const size_t at = skeleton.find(member, *from);
  if (at == std::string::npos) return;  // not in the skeleton (cannot happen): nothing spliced
  const size_t line = skeleton.rfind('\n', at) + 1;
  out(std::string_view(skeleton).substr(*from, at - *from));
  out("\"" + key + "\": ");
  WriteArray(at - line, n, element, element_text, text_indent, out);
  *from = at + member.size();
}

std::string RankElementJson(const RankReport& rk) {
  DeferredArrays deferred(1);
  std::string text;
  deferred.Write(Element(RankJson(rk, &deferred), kRanksIndent), [&text](std::string_view s) { text.append(s); });
  return text;
}
std::string InstanceElementJson(const Instance& ci) { return Element(InstanceJson(ci), kInstancesIndent); }

std::string RankConcurrencyOfDocument(std::string_view doc) {
  // stream_concurrency is the document's last member and "devices" its last: its elements end
  // with the document's "\n    ]\n  }\n}\n".
  const size_t sc = doc.rfind("\n  \"stream_concurrency\": {");
  const std::string_view open = "\n    \"devices\": [\n", close = "\n    ]\n  }\n}";
  const size_t a = sc == std::string_view::npos ? sc : doc.find(open, sc);
  const size_t b = a == std::string_view::npos ? a : doc.rfind(close);
  if (b == std::string_view::npos || b < a + open.size()) return "";
  return std::string(doc.substr(a + open.size(), b - a - open.size()));
}

std::string RankElementOfDocument(std::string_view doc, const RankSummary& summary) {
  // The document's layout is dump(2)'s: the "ranks" member at indent 2, its element at 4, the
  // element's members at 6; the summary is a flat object (numbers and nulls), so its first
  // closing brace at indent 6 ends it.
  const std::string_view open = "\n  \"ranks\": [\n", close = "\n  ],\n  \"collectives_across_ranks\"";
  const size_t a = doc.find(open);
  const size_t b = a == std::string_view::npos ? a : doc.find(close, a);
  if (b == std::string_view::npos) return "";
  const std::string_view element = doc.substr(a + open.size(), b - a - open.size());
  const std::string_view key = "\n      \"summary\": {";
  const size_t s0 = element.find(key);
  const size_t s1 = s0 == std::string_view::npos ? s0 : element.find("\n      }", s0 + key.size());
  if (s1 == std::string_view::npos) return "";
  // Element() pads every line by indent + 2 = 6 for a member's value at the element's level:
  // the summary's value starts after `"summary": `, without the first pad.
  const std::string value = Element(SummaryJson(summary), 4);
  std::string out;
  out.reserve(element.size() + 64);
  out.append(element.substr(0, s0 + key.size() - 1));  // up to `"summary": `
  out.append(value, 6, std::string::npos);
  out.append(element.substr(s1 + std::string_view("\n      }").size()));
  return out;
}

ReportView ViewOf(const Report& r) {
  ReportView v;
  v.head = &r;
  v.rank = [&r](size_t i, RankReport*) -> const RankReport& { return r.ranks[i]; };
  const std::vector<Instance>& inst = r.collectives_across_ranks.instances;
  v.instance_count = inst.size();
  v.instance = [&inst](size_t k, Instance*) -> const Instance& { return inst[k]; };
  for (const Instance& ci : inst) v.instance_rows += static_cast<int64_t>(ci.ranks.size());
  return v;
}

void RenderJson(const ReportView& v, const RenderSink& sink) {
  const Report& r = *v.head;
  DeferredArrays deferred(v.threads);
  const RenderSink out = [&](std::string_view text) { deferred.Write(text, sink); };
  ojson j;
  j["schema"] = kSchema;
  j["schema_version"] = kSchemaVersion;
  ojson warnings = ojson::array();
  for (const ImportWarning& w : r.warnings)
    warnings.push_back(
        {{"source", w.source}, {"stat", w.stat}, {"severity", w.severity}, {"count", w.count}, {"message", w.message}});
  j["warnings"] = warnings;
  j["tool"] = r.tool;
  j["inputs"] = r.inputs;
  j["time_span"] = {{"start_ns", r.time_span.start_ns},
                    {"end_ns", r.time_span.end_ns},
                    {"duration_ns", Diff(r.time_span.end_ns, r.time_span.start_ns)}};
  j["options"] = {{"iteration_marker", r.options.iteration_marker},
                  {"min_gap_ns", r.options.min_gap_ns},
                  {"runtime_cutoff_ns", r.options.runtime_cutoff_ns},
                  {"launch_delay_cutoff_ns", r.options.launch_delay_cutoff_ns},
                  {"top_n", r.options.top_n},
                  {"align_clocks", r.options.align_clocks}};
  j["clock_note"] = r.clock_note;
  j["clock_alignment"] = ClockJson(r.clock_alignment);
  ojson rules = ojson::array();
  for (const ClassRule& rule : r.classes.rules) rules.push_back({{"rule", rule.rule}, {"origin", rule.origin}});
  ojson totals = ojson::object();
  for (const ClassTotal& c : r.classes.totals) totals[c.cls] = {{"count", c.count}, {"total_ns", c.total_ns}};
  j["classes"] = {{"rules", rules}, {"totals", totals}};
  j["iterations"] = {{"marker", r.iterations.marker},
                     {"count", r.iterations.count},
                     {"assigned_by_launch_call", r.iterations.assigned_by_launch_call},
                     {"assigned_by_own_start", r.iterations.assigned_by_own_start},
                     {"outside_iterations", r.iterations.outside_iterations}};
  ojson top = ojson::array();
  for (const KernelTotal& k : r.top_kernels) {
    ojson per = ojson::array();
    for (const IterationNs& v : k.per_iteration) per.push_back({{"iteration", v.iteration}, {"ns", v.ns}});
    top.push_back({{"class", k.cls},
                   {"kind", k.kind},
                   {"name", k.name},
                   {"count", k.count},
                   {"total_ns", k.total_ns},
                   {"max_ns", k.max_ns},
                   {"median_ns", k.median_ns},
                   {"per_iteration", per}});
  }
  j["top_kernels"] = top;
  j["job_overview"] = OverviewJson(r);  // 1.9: from the ranks' summaries (report/overview.h)
  ojson others = ojson::array();
  for (const ProcessWithoutGpu& p : r.processes_without_gpu_work) {
    ojson x = {{"pid", p.pid}, {"name", p.name}, {"host", p.host}};
    x["rank"] = p.rank ? ojson(*p.rank) : ojson(nullptr);
    others.push_back(std::move(x));
  }
  j["processes_without_gpu_work"] = others;  // 1.9
  j["ranks"] = kRanksToken;                  // spliced in below, one rank at a time
  j["collectives_across_ranks"] = CrossRankJson(r.collectives_across_ranks);
  AppendPathsJson(r, &j, &deferred);  // METRICS §8-9 (render_json_paths.cc)
  if (v.rank_concurrency_json) j["stream_concurrency"]["devices"] = kDevicesToken;
  const std::string skeleton = j.dump(2, ' ', false, ojson::error_handler_t::replace);
  j = ojson();
  size_t from = 0;
  RankReport rank;
  Splice(
      skeleton, "ranks", kRanksToken, r.ranks.size(), [&](size_t i) { return RankJson(v.rank(i, &rank), &deferred); },
      [&](size_t i) { return v.rank_json ? v.rank_json(i) : std::string(); }, kRanksIndent, &from, out);
  Instance instance;
  Splice(
      skeleton, "instances", kInstancesToken, v.instance_count,
      [&](size_t k) { return InstanceJson(v.instance(k, &instance)); },
      [&](size_t k) { return v.instance_json ? v.instance_json(k) : std::string(); }, kInstancesIndent, &from, out);
  if (v.rank_concurrency_json) {  // "devices": every rank's, in rank order
    const std::string member = std::string("\"devices\": \"") + kDevicesToken + "\"";
    const size_t at = skeleton.find(member, from);
    if (at != std::string::npos) {
      const size_t indent = at - (skeleton.rfind('\n', at) + 1);
      out(std::string_view(skeleton).substr(from, at - from));
      out("\"devices\": ");
      bool any = false;
      for (size_t i = 0; i < r.ranks.size(); ++i) {
        const std::string text = v.rank_concurrency_json(i);
        if (text.empty()) continue;
        out(any ? ",\n" : "[\n");
        out(text);
        any = true;
      }
      std::string tail = any ? std::string("\n") : std::string("[]");
      if (any) tail.append(indent, ' ').append("]");
      out(tail);
      from = at + member.size();
    }
  }
  out(std::string_view(skeleton).substr(from));
  out("\n");
}

std::string RenderJson(const Report& r, int threads) {
  std::string o;
  ReportView v = ViewOf(r);
  v.threads = threads;
  RenderJson(v, [&o](std::string_view s) { o.append(s); });
  return o;
}

}  // namespace overlapscope::report
