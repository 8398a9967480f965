// Report sections for multi-rank traces: collectives matched across ranks (METRICS §6), every
// matched instance with its bytes, sequence and per-rank start/arrival/wait/duration (skew and
// wait are measured from arrival: analyze/collective_arrival.h), and how the clocks
// of several hosts were aligned (analyze/clock_align.h). JSON first; text and Markdown read it.
#include <algorithm>
#include <climits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report/report_internal.h"

namespace overlapscope::report {
namespace {

using namespace overlapscope::analyze;  // NOLINT: result types read better unqualified here

ojson Opt(const std::optional<double>& v) { return v ? ojson(*v) : ojson(nullptr); }
ojson NameOrNull(const model::Trace& t, model::StringId id) {
  return id == 0 ? ojson(nullptr) : ojson(std::string(t.str(id)));
}
ojson IntOrNull(int64_t v) { return v < 0 ? ojson(nullptr) : ojson(v); }
int64_t I(const ojson& j) { return j.is_null() ? 0 : j.get<int64_t>(); }
std::string S(const ojson& j) { return j.is_null() ? "-" : j.is_string() ? j.get<std::string>() : j.dump(); }

std::string IdentifiedNote(RankSource s) {
  switch (s) {
    case RankSource::kCollectiveRank:
      return "the rank recorded with each collective (rank in its communicator: NCCL profiler plugin or Kineto)";
    case RankSource::kProcessRank: return "the process rank (one GPU per process)";
    case RankSource::kDevice:
      return "GPU (process, device): no distinct rank is recorded, e.g. one process drives several GPUs; "
             "labelled by GPU ordinal, no rank number invented";
    case RankSource::kNone: break;
  }
  return "no collectives";
}

ojson ParticipantRef(const model::Trace& t, const CrossRankResult& x, int32_t part) {
  const Participant& p = x.participants[part];
  return {{"label", p.label},
          {"rank", p.rank == model::kNone ? ojson(nullptr) : ojson(p.rank)},
          {"gpu", p.gpu == model::kNone ? ojson(nullptr) : ojson(p.gpu)},
          {"pid", p.process == model::kNone ? ojson(nullptr) : ojson(t.processes()[p.process].pid)}};
}

ojson InstanceJson(const model::Trace& t, const CrossRankResult& x, const CollectiveInstance& ci, size_t index) {
  const model::Collective& c0 = t.collectives()[ci.ranks.front().collective];
  ojson j;
  j["index"] = index;
  j["op"] = std::string(t.str(ci.op));
  j["communicator"] = std::string(t.str(ci.communicator));
  j["sequence"] = IntOrNull(ci.sequence);
  j["order"] = ci.by_sequence ? ojson(nullptr) : ojson(ci.ordinal + 1);
  j["dtype"] = NameOrNull(t, c0.dtype);
  j["in_elements"] = IntOrNull(c0.in_elements);
  j["out_elements"] = IntOrNull(c0.out_elements);
  j["bytes"] = IntOrNull(c0.bytes);
  j["size_bytes"] = IntOrNull(ci.size_bytes);
  j["nranks"] = c0.nranks > 0 ? ojson(c0.nranks) : ojson(nullptr);
  // Plugin fields: the first participant that has them (ranks normally agree).
  model::StringId algo = 0, proto = 0;
  int32_t channels = model::kNone;
  for (const CollectiveParticipant& p : ci.ranks) {
    const model::Collective& c = t.collectives()[p.collective];
    if (algo == 0) algo = c.algorithm;
    if (proto == 0) proto = c.protocol;
    if (channels == model::kNone) channels = c.channels;
  }
  j["algorithm"] = NameOrNull(t, algo);
  j["protocol"] = NameOrNull(t, proto);
  j["channels"] = channels == model::kNone ? ojson(nullptr) : ojson(channels);
  // NVTX payload fields (own captures): the root or peer of the first participant, the reduction.
  j["root_or_peer"] = c0.root_or_peer == model::kNone ? ojson(nullptr) : ojson(c0.root_or_peer);
  j["reduce_op"] = NameOrNull(t, c0.reduce_op);
  j["first_start_ns"] = ci.first_start_ns;
  j["skew_ns"] = ci.skew_ns;
  j["last"] = ci.last == model::kNone ? ojson(nullptr) : ojson(x.participants[ci.last].label);
  j["last_rank"] = ci.last_rank;
  j["bus_time_ns"] = ci.bus_time_ns;
  j["algbw_gbps"] = Opt(ci.algbw_gbps);
  j["busbw_gbps"] = Opt(ci.busbw_gbps);
  ojson ranks = ojson::array();
  for (const CollectiveParticipant& p : ci.ranks) {
    const model::Collective& c = t.collectives()[p.collective];
    ojson jp = ParticipantRef(t, x, p.participant);
    jp["comm_rank"] = c.rank == model::kNone ? ojson(nullptr) : ojson(c.rank);
    jp["start_ns"] = p.start_ns;
    jp["arrival_ns"] = p.arrival_ns;
    jp["arrival_source"] = std::string(ToString(p.arrival_source));
    jp["end_ns"] = p.end_ns;
    jp["duration_ns"] = p.end_ns - p.start_ns;
    jp["wait_ns"] = p.wait_ns;
    jp["stream"] = c.stream == model::kNone ? ojson(nullptr) : ojson(t.streams()[c.stream].native_id);
    jp["channels"] = c.channels == model::kNone ? ojson(nullptr) : ojson(c.channels);
    jp["channel_span_ns"] = IntOrNull(c.channel_span_ns);
    ranks.push_back(jp);
  }
  j["ranks"] = ranks;
  return j;
}

std::string Ident(const ojson& ci) {
  std::string s = absl::StrCat(
      S(ci["op"]), "  comm ",
      ci["communicator"].get<std::string>().empty() ? std::string("-") : ci["communicator"].get<std::string>());
  if (!ci["sequence"].is_null())
    absl::StrAppend(&s, "  seq ", I(ci["sequence"]));
  else if (!ci["order"].is_null())
    absl::StrAppend(&s, "  #", I(ci["order"]), " by order");
  return s;
}

std::string Algo(const ojson& ci) {
  std::string s;
  if (!ci["algorithm"].is_null()) s = S(ci["algorithm"]);
  if (!ci["protocol"].is_null()) absl::StrAppend(&s, s.empty() ? "" : "/", S(ci["protocol"]));
  if (!ci["channels"].is_null()) absl::StrAppend(&s, s.empty() ? "" : " ", I(ci["channels"]), " ch");
  if (ci.contains("reduce_op") && !ci["reduce_op"].is_null())
    absl::StrAppend(&s, s.empty() ? "" : " ", S(ci["reduce_op"]));
  if (ci.contains("root_or_peer") && !ci["root_or_peer"].is_null())
    absl::StrAppend(&s, s.empty() ? "" : " ", "root/peer ", I(ci["root_or_peer"]));
  return s;
}

// Start relative to the trace start, exact to the ns (collective waits are often sub-µs).
std::string At(int64_t ns) { return absl::StrFormat("%.6f ms", static_cast<double>(ns) / 1e6); }

// Participants over all matched instances (the denominator of arrival_fallbacks).
int64_t CountRanks(const ojson& x) {
  int64_t n = 0;
  for (const ojson& ci : x["instances"]) n += static_cast<int64_t>(ci["ranks"].size());
  return n;
}

std::string Gbps(const ojson& v) { return v.is_null() ? "-" : absl::StrFormat("%.1f GB/s", v.get<double>()); }

}  // namespace

std::string Bytes(int64_t b) {
  if (b < 1000) return absl::StrFormat("%d B", b);
  if (b < 1000000) return absl::StrFormat("%.1f kB", static_cast<double>(b) / 1e3);
  if (b < 1000000000) return absl::StrFormat("%.2f MB", static_cast<double>(b) / 1e6);
  return absl::StrFormat("%.2f GB", static_cast<double>(b) / 1e9);
}

std::string RankLabel(const ojson& jr) {
  if (!jr["rank"].is_null()) return absl::StrCat("rank ", jr["rank"].get<int>());
  std::string gpus;
  for (const ojson& d : jr["devices"]) absl::StrAppend(&gpus, gpus.empty() ? "" : ", ", "GPU ", d["device"].get<int>());
  return absl::StrCat("pid ", jr["pid"].get<int64_t>(), gpus.empty() ? "" : " (" + gpus + ")");
}

ojson ClockAlignmentJson(const model::Trace& t, const ClockAlignment& a) {
  ojson j;
  j["mode"] = std::string(ToString(a.mode));
  j["status"] = std::string(ToString(a.status));
  j["applied"] = a.applied();
  j["method"] = "median of collective end-time differences to the reference host";
  j["reference_host"] = a.hosts.empty() || !a.hosts.front().reference ? ojson(nullptr) : ojson(a.hosts.front().host);
  j["min_instances"] = a.min_instances;
  j["matched_instances_used"] = a.matched_instances_used;
  j["residual_spread_ns"] = a.residual_spread_ns;
  j["summary"] = DescribeClockAlignment(a);
  ojson hosts = ojson::array();
  for (const HostClock& h : a.hosts) {
    ojson pids = ojson::array();
    for (model::ProcessId p : h.processes) pids.push_back(t.processes()[p].pid);
    hosts.push_back({{"host", h.host},
                     {"pids", pids},
                     {"reference", h.reference},
                     {"aligned", h.aligned},
                     {"offset_ns", h.offset_ns},
                     {"instances", h.instances},
                     {"residual_spread_ns", h.residual_spread_ns},
                     {"reason", h.reason.empty() ? ojson(nullptr) : ojson(h.reason)}});
  }
  j["hosts"] = hosts;
  return j;
}

ojson CrossRankJson(const model::Trace& t, const AnalysisResult& r, const ReportInfo& info) {
  const CrossRankResult& x = r.cross_rank;
  ojson xr;
  xr["matched_instances"] = x.instances.size();
  xr["matched_by"] = x.matched_by_sequence                                            ? "sequence"
                     : x.matched_by_order == static_cast<int64_t>(x.instances.size()) ? "order"
                                                                                      : "sequence and order";
  xr["matched_by_order"] = x.matched_by_order;
  xr["identified_by"] = std::string(ToString(x.identified_by));
  xr["identified_note"] = IdentifiedNote(x.identified_by);
  xr["unmatched"] = x.unmatched;
  xr["without_rank"] = x.without_rank;
  xr["duplicates"] = x.duplicates;
  xr["max_skew_ns"] = x.max_skew_ns;
  xr["total_skew_ns"] = x.total_skew_ns;
  xr["skew_from"] = "arrival";
  xr["arrival_fallbacks"] = x.arrival_fallbacks;
  ojson parts = ojson::array();
  for (size_t k = 0; k < x.participants.size(); ++k) {
    ojson p = ParticipantRef(t, x, static_cast<int32_t>(k));
    const model::ProcessId proc = x.participants[k].process;
    p["host"] = proc == model::kNone ? ojson(nullptr) : NameOrNull(t, t.processes()[proc].host);
    parts.push_back(p);
  }
  xr["participants"] = parts;
  ojson strag = ojson::array();
  for (const RankStraggling& rs : x.ranks) {
    ojson s = ParticipantRef(t, x, rs.participant);
    s["times_last"] = rs.times_last;
    s["others_wait_ns"] = rs.others_wait_ns;
    s["own_wait_ns"] = rs.own_wait_ns;
    strag.push_back(s);
  }
  xr["ranks"] = strag;
  std::vector<const CollectiveInstance*> inst;
  for (const CollectiveInstance& ci : x.instances) inst.push_back(&ci);
  std::stable_sort(inst.begin(), inst.end(),
                   [](const CollectiveInstance* a, const CollectiveInstance* b) { return a->skew_ns > b->skew_ns; });
  ojson top_skew = ojson::array();
  for (size_t k = 0; k < inst.size() && k < info.top_n; ++k) {
    const CollectiveInstance& ci = *inst[k];
    top_skew.push_back({{"op", std::string(t.str(ci.op))},
                        {"communicator", std::string(t.str(ci.communicator))},
                        {"sequence", ci.sequence},
                        {"first_start_ns", ci.first_start_ns},
                        {"skew_ns", ci.skew_ns},
                        {"last_rank", ci.last_rank},
                        {"last", ci.last == model::kNone ? ojson(nullptr) : ojson(x.participants[ci.last].label)},
                        {"bus_time_ns", ci.bus_time_ns},
                        {"size_bytes", ci.size_bytes},
                        {"algbw_gbps", Opt(ci.algbw_gbps)},
                        {"busbw_gbps", Opt(ci.busbw_gbps)}});
  }
  xr["top_skew"] = top_skew;
  ojson all = ojson::array();
  for (size_t k = 0; k < x.instances.size(); ++k) all.push_back(InstanceJson(t, x, x.instances[k], k + 1));
  xr["instances"] = all;
  return xr;
}

void AppendCollectivesText(const ojson& j, const ReportInfo& info, std::string* o) {
  const ojson& x = j["collectives_across_ranks"];
  const int64_t n = x["matched_instances"].get<int64_t>();
  if (n == 0) return;
  const int64_t t0 = j["time_span"]["start_ns"].get<int64_t>();
  absl::StrAppendFormat(o,
                        "\n== collectives across ranks ==\n  %d instances matched by %s (%d seen on one rank "
                        "only); skew max %s, total %s\n  ranks identified by %s\n",
                        n, x["matched_by"].get<std::string>(), x["unmatched"].get<int64_t>(),
                        Dur(x["max_skew_ns"].get<int64_t>()), Dur(x["total_skew_ns"].get<int64_t>()),
                        x["identified_note"].get<std::string>());
  absl::StrAppendFormat(o, "  %-14s %11s %14s %14s\n", "rank", "times last", "others waited", "own wait");
  for (const ojson& rs : x["ranks"])
    absl::StrAppendFormat(o, "  %-14s %11d %14s %14s\n", S(rs["label"]), I(rs["times_last"]),
                          Dur(I(rs["others_wait_ns"])), Dur(I(rs["own_wait_ns"])));
  const int64_t fallbacks = x["arrival_fallbacks"].get<int64_t>();
  absl::StrAppendFormat(
      o, "  skew and wait are measured from arrival (when the stream reached the collective)%s\n",
      fallbacks == 0 ? "" : absl::StrFormat("; %d of %d arrivals fell back to the start", fallbacks, CountRanks(x)));
  absl::StrAppendFormat(o, "\n  most skewed\n  %12s %-14s %12s %10s %10s  %s\n", "skew", "last", "bus time", "algbw",
                        "busbw", "op");
  for (const ojson& ci : x["top_skew"])
    absl::StrAppendFormat(o, "  %12s %-14s %12s %10s %10s  %s\n", Dur(I(ci["skew_ns"])), S(ci["last"]),
                          Dur(I(ci["bus_time_ns"])), Gbps(ci["algbw_gbps"]), Gbps(ci["busbw_gbps"]), S(ci["op"]));

  const size_t shown = std::min<size_t>(info.collectives_shown, x["instances"].size());
  absl::StrAppendFormat(
      o, "\n  every matched collective, in order (%s; start relative to the trace start)\n",
      shown == x["instances"].size()
          ? absl::StrFormat("all %d", shown)
          : absl::StrFormat("first %d of %d; --collectives N|all, all in --json", shown, x["instances"].size()));
  for (size_t k = 0; k < shown; ++k) {
    const ojson& ci = x["instances"][k];
    std::string size = ci["size_bytes"].is_null() ? "size ?" : Bytes(I(ci["size_bytes"]));
    std::string algo = Algo(ci);
    absl::StrAppendFormat(o, "  #%-4d %s | %s%s | skew %s%s, bus time %s, busbw %s\n", I(ci["index"]), Ident(ci), size,
                          algo.empty() ? "" : "  " + algo, Dur(I(ci["skew_ns"])),
                          ci["last"].is_null() ? "" : " (last: " + S(ci["last"]) + ")", Dur(I(ci["bus_time_ns"])),
                          Gbps(ci["busbw_gbps"]));
    for (const ojson& p : ci["ranks"])
      absl::StrAppendFormat(o, "        %-14s start %12s  arrival %12s  wait %10s  duration %10s%s\n", S(p["label"]),
                            At(I(p["start_ns"]) - t0), At(I(p["arrival_ns"]) - t0), Dur(I(p["wait_ns"])),
                            Dur(I(p["duration_ns"])),
                            p["channel_span_ns"].is_null() ? "" : "  channels span " + Dur(I(p["channel_span_ns"])));
  }
  if (shown < x["instances"].size())
    absl::StrAppendFormat(o, "  ... %d more collectives (--collectives all, or --json)\n",
                          x["instances"].size() - shown);
}

void AppendCollectivesMarkdown(const ojson& j, const ReportInfo& info, std::string* o) {
  const ojson& x = j["collectives_across_ranks"];
  const int64_t n = x["matched_instances"].get<int64_t>();
  if (n == 0) return;
  std::string worst;
  int64_t worst_last = 0;
  for (const ojson& rs : x["ranks"])
    if (rs["times_last"].get<int64_t>() > worst_last) {
      worst_last = rs["times_last"].get<int64_t>();
      worst = S(rs["label"]);
    }
  absl::StrAppendFormat(o,
                        "\nCollectives across ranks: %d matched by %s, max skew %s, total %s%s (skew and wait "
                        "from arrival). Ranks identified by %s.\n",
                        n, x["matched_by"].get<std::string>(), Dur(x["max_skew_ns"].get<int64_t>()),
                        Dur(x["total_skew_ns"].get<int64_t>()),
                        worst.empty() ? "" : absl::StrFormat("; %s arrived last %d times", worst, worst_last),
                        x["identified_note"].get<std::string>());
  const int64_t t0 = j["time_span"]["start_ns"].get<int64_t>();
  const size_t shown = std::min<size_t>(info.collectives_shown, x["instances"].size());
  *o += "\n| # | collective | size | algorithm | skew | last | busbw | per rank: start / wait / duration |\n";
  *o += "|---:|---|---:|---|---:|---|---:|---|\n";
  for (size_t k = 0; k < shown; ++k) {
    const ojson& ci = x["instances"][k];
    std::string per;
    for (const ojson& p : ci["ranks"])
      absl::StrAppend(&per, per.empty() ? "" : "<br>", S(p["label"]), ": ", At(I(p["start_ns"]) - t0), " / ",
                      Dur(I(p["wait_ns"])), " / ", Dur(I(p["duration_ns"])));
    std::string algo = Algo(ci);
    absl::StrAppendFormat(o, "| %d | `%s` | %s | %s | %s | %s | %s | %s |\n", I(ci["index"]), Ident(ci),
                          ci["size_bytes"].is_null() ? "?" : Bytes(I(ci["size_bytes"])), algo.empty() ? "-" : algo,
                          Dur(I(ci["skew_ns"])), S(ci["last"]), Gbps(ci["busbw_gbps"]), per);
  }
  if (shown < x["instances"].size())
    absl::StrAppendFormat(o, "\n%d more collectives in `--json` (`collectives_across_ranks.instances`).\n",
                          x["instances"].size() - shown);
}

}  // namespace overlapscope::report
