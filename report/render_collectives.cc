// Text and Markdown sections for multi-rank traces: collectives matched across ranks (METRICS
// §6), every matched instance with its bytes, sequence and per-rank start/arrival/wait/duration
// (skew and wait are measured from arrival).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report/render_internal.h"

namespace overlapscope::report {
namespace {

std::string Ident(const Instance& ci) {
  std::string s = absl::StrCat(ci.op, "  comm ", ci.communicator.empty() ? std::string("-") : ci.communicator);
  if (ci.sequence)
    absl::StrAppend(&s, "  seq ", *ci.sequence);
  else if (ci.order)
    absl::StrAppend(&s, "  #", *ci.order, " by order");
  return s;
}

std::string Algo(const Instance& ci) {
  std::string s;
  if (ci.algorithm) s = *ci.algorithm;
  if (ci.protocol) absl::StrAppend(&s, s.empty() ? "" : "/", *ci.protocol);
  if (ci.channels) absl::StrAppend(&s, s.empty() ? "" : " ", *ci.channels, " ch");
  if (ci.reduce_op) absl::StrAppend(&s, s.empty() ? "" : " ", *ci.reduce_op);
  if (ci.root_or_peer) absl::StrAppend(&s, s.empty() ? "" : " ", "root/peer ", *ci.root_or_peer);
  return s;
}

// Start relative to the trace start, exact to the ns (collective waits are often sub-µs).
std::string At(int64_t ns) { return absl::StrFormat("%.6f ms", static_cast<double>(ns) / 1e6); }

std::string Gbps(const std::optional<double>& v) { return v ? absl::StrFormat("%.1f GB/s", *v) : "-"; }

std::string Size(const Instance& ci, const char* unknown) { return ci.size_bytes ? Bytes(*ci.size_bytes) : unknown; }

void RanksAndSkewText(const CrossRank& x, int64_t participants, std::string* o) {
  absl::StrAppendFormat(o, "  %-14s %11s %14s %14s\n", "rank", "times last", "others waited", "own wait");
  for (const Straggling& rs : x.ranks)
    absl::StrAppendFormat(o, "  %-14s %11d %14s %14s\n", rs.ref.label, rs.times_last, Dur(rs.others_wait_ns),
                          Dur(rs.own_wait_ns));
  absl::StrAppendFormat(o, "  skew and wait are measured from arrival (when the stream reached the collective)%s\n",
                        x.arrival_fallbacks == 0 ? ""
                                                 : absl::StrFormat("; %d of %d arrivals fell back to the start",
                                                                   x.arrival_fallbacks, participants));
  absl::StrAppendFormat(o, "\n  most skewed\n  %12s %-14s %12s %10s %10s  %s\n", "skew", "last", "bus time", "algbw",
                        "busbw", "op");
  for (const SkewedInstance& ci : x.top_skew)
    absl::StrAppendFormat(o, "  %12s %-14s %12s %10s %10s  %s\n", Dur(ci.skew_ns), ci.last.value_or("-"),
                          Dur(ci.bus_time_ns), Gbps(ci.algbw_gbps), Gbps(ci.busbw_gbps), ci.op);
}

// Several ranks but nothing matched across them: why there are no cross-rank figures.
std::string NoneMatched(const Report& r) {
  const CrossRank& x = r.collectives_across_ranks;
  if (x.unmatched > 0)
    return absl::StrFormat(
        "%d ranks, no collective matched across them: %d collectives were seen on one rank only "
        "(ranks not in one communicator, or a rank's trace cut short), so no skew, wait or bandwidth across ranks",
        r.ranks.size(), x.unmatched);
  return absl::StrFormat(
      "%d ranks, but no collective records (communicator, op, sequence from Kineto's collective args or "
      "the NCCL profiler plugin) in their traces, so no skew, wait or bandwidth across ranks; "
      "communication kernels alone are counted per rank above",
      r.ranks.size());
}

}  // namespace

void AppendCollectivesText(const ReportView& v, const TextOptions& options, std::string* o) {
  const Report& r = *v.head;
  const CrossRank& x = r.collectives_across_ranks;
  if (x.matched_instances == 0) {
    if (r.ranks.size() > 1) absl::StrAppend(o, "\n== collectives across ranks ==\n  ", NoneMatched(r), "\n");
    return;
  }
  const int64_t t0 = r.time_span.start_ns;
  absl::StrAppendFormat(o,
                        "\n== collectives across ranks ==\n  %d instances matched by %s (%d seen on one rank "
                        "only); skew max %s, total %s\n  ranks identified by %s\n",
                        x.matched_instances, x.matched_by, x.unmatched, Dur(x.max_skew_ns), Dur(x.total_skew_ns),
                        x.identified_note);
  RanksAndSkewText(x, v.instance_rows, o);  // rows of all instances: the denominator of arrival_fallbacks
  const size_t shown = std::min(options.collectives_shown, v.instance_count);
  Instance scratch;
  absl::StrAppendFormat(
      o, "\n  every matched collective, in order (%s; start relative to the trace start)\n",
      shown == v.instance_count
          ? absl::StrFormat("all %d", shown)
          : absl::StrFormat("first %d of %d; --collectives N|all, all in --json", shown, v.instance_count));
  for (size_t k = 0; k < shown; ++k) {
    const Instance& ci = v.instance(k, &scratch);
    const std::string algo = Algo(ci);
    absl::StrAppendFormat(o, "  #%-4d %s | %s%s | skew %s%s, bus time %s, busbw %s\n", ci.index, Ident(ci),
                          Size(ci, "size ?"), algo.empty() ? "" : "  " + algo, Dur(ci.skew_ns),
                          ci.last ? " (last: " + *ci.last + ")" : "", Dur(ci.bus_time_ns), Gbps(ci.busbw_gbps));
    for (const InstanceRank& p : ci.ranks)
      absl::StrAppendFormat(o, "        %-14s start %12s  arrival %12s  wait %10s  duration %10s%s\n", p.ref.label,
                            At(Diff(p.start_ns, t0)), At(Diff(p.arrival_ns, t0)), Dur(p.wait_ns),
                            Dur(Diff(p.end_ns, p.start_ns)),
                            p.channel_span_ns ? "  channels span " + Dur(*p.channel_span_ns) : "");
  }
  if (shown < v.instance_count)
    absl::StrAppendFormat(o, "  ... %d more collectives (--collectives all, or --json)\n", v.instance_count - shown);
}

void AppendCollectivesMarkdown(const ReportView& v, const TextOptions& options, std::string* o) {
  const Report& r = *v.head;
  const CrossRank& x = r.collectives_across_ranks;
  if (x.matched_instances == 0) {
    if (r.ranks.size() > 1) absl::StrAppend(o, "\nCollectives across ranks: ", NoneMatched(r), ".\n");
    return;
  }
  std::string worst;
  int64_t worst_last = 0;
  for (const Straggling& rs : x.ranks)
    if (rs.times_last > worst_last) {
      worst_last = rs.times_last;
      worst = rs.ref.label;
    }
  absl::StrAppendFormat(o,
                        "\nCollectives across ranks: %d matched by %s, max skew %s, total %s%s (skew and wait "
                        "from arrival). Ranks identified by %s.\n",
                        x.matched_instances, x.matched_by, Dur(x.max_skew_ns), Dur(x.total_skew_ns),
                        worst.empty() ? "" : absl::StrFormat("; %s arrived last %d times", worst, worst_last),
                        x.identified_note);
  const int64_t t0 = r.time_span.start_ns;
  const size_t shown = std::min(options.collectives_shown, v.instance_count);
  Instance scratch;
  *o += "\n| # | collective | size | algorithm | skew | last | busbw | per rank: start / wait / duration |\n";
  *o += "|---:|---|---:|---|---:|---|---:|---|\n";
  for (size_t k = 0; k < shown; ++k) {
    const Instance& ci = v.instance(k, &scratch);
    std::string per;
    for (const InstanceRank& p : ci.ranks)
      absl::StrAppend(&per, per.empty() ? "" : "<br>", p.ref.label, ": ", At(Diff(p.start_ns, t0)), " / ",
                      Dur(p.wait_ns), " / ", Dur(Diff(p.end_ns, p.start_ns)));
    const std::string algo = Algo(ci);
    absl::StrAppendFormat(o, "| %d | `%s` | %s | %s | %s | %s | %s | %s |\n", ci.index, Ident(ci), Size(ci, "?"),
                          algo.empty() ? "-" : algo, Dur(ci.skew_ns), ci.last.value_or("-"), Gbps(ci.busbw_gbps), per);
  }
  if (shown < v.instance_count)
    absl::StrAppendFormat(o, "\n%d more collectives in `--json` (`collectives_across_ranks.instances`).\n",
                          v.instance_count - shown);
}

}  // namespace overlapscope::report
