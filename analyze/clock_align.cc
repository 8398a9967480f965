#include "analyze/clock_align.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analyze/cross_rank.h"

namespace overlapscope::analyze {

absl::StatusOr<ClockAlignMode> ParseClockAlignMode(std::string_view s) {
  if (s == "off") return ClockAlignMode::kOff;
  if (s == "auto") return ClockAlignMode::kAuto;
  if (s == "on") return ClockAlignMode::kOn;
  return absl::InvalidArgumentError(absl::StrCat("--align-clocks '", std::string(s), "': expected off, auto or on"));
}

std::string_view ToString(ClockAlignMode m) {
  switch (m) {
    case ClockAlignMode::kOff: return "off";
    case ClockAlignMode::kOn: return "on";
    case ClockAlignMode::kAuto: break;
  }
  return "auto";
}

std::string_view ToString(ClockAlignStatus s) {
  switch (s) {
    case ClockAlignStatus::kOff: return "off";
    case ClockAlignStatus::kOneHost: return "one-host";
    case ClockAlignStatus::kHostsUnknown: return "hosts-unknown";
    case ClockAlignStatus::kAligned: return "aligned";
    case ClockAlignStatus::kPartial: return "partial";
    case ClockAlignStatus::kNotAligned: return "not-aligned";
    case ClockAlignStatus::kNotEvaluated: break;
  }
  return "not-evaluated";
}

bool ClockAlignment::applied() const {
  for (const HostClock& h : hosts)
    if (h.aligned && h.offset_ns != 0) return true;
  return false;
}

namespace {

// Median of v (sorted here); even count: floor of the mean of the two middle values.
int64_t Median(std::vector<int64_t>& v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  if (n % 2 == 1) return v[n / 2];
  const int64_t s = v[n / 2 - 1] + v[n / 2];
  return s / 2 - ((s % 2 != 0 && s < 0) ? 1 : 0);
}

}  // namespace

ClockAlignment EstimateClockAlignment(const model::Trace& t, ClockAlignMode mode, int64_t min_instances) {
  ClockAlignment a;
  a.mode = mode;
  a.min_instances = min_instances;
  const auto& procs = t.processes();

  // Clock domains: named hosts, and one per process without a host name.
  std::vector<int32_t> domain_of(procs.size(), model::kNone);
  std::map<std::string, int32_t> by_name;
  std::set<std::string> named_hosts;
  for (size_t p = 0; p < procs.size(); ++p) {
    std::string host(t.str(procs[p].host));
    if (!host.empty()) named_hosts.insert(host);
    std::string key = host.empty() ? absl::StrCat("pid ", procs[p].pid) : host;
    auto [it, added] = by_name.try_emplace(key, static_cast<int32_t>(a.hosts.size()));
    if (added) {
      HostClock h;
      h.host = key;
      h.named = !host.empty();
      a.hosts.push_back(std::move(h));
    }
    a.hosts[it->second].processes.push_back(static_cast<model::ProcessId>(p));
    domain_of[p] = it->second;
  }
  if (mode == ClockAlignMode::kOff) {
    a.status = ClockAlignStatus::kOff;
    return a;
  }
  if (a.hosts.size() < 2) {
    a.status = ClockAlignStatus::kOneHost;
    return a;
  }
  if (mode == ClockAlignMode::kAuto && named_hosts.size() < 2) {
    a.status = ClockAlignStatus::kHostsUnknown;
    return a;
  }

  // Matching does not look at times, so it is the same before and after alignment.
  const CrossRankResult x = AnalyzeCrossRank(t);
  int32_t ref = 0;
  if (!x.participants.empty() && x.participants.front().process != model::kNone)
    ref = domain_of[x.participants.front().process];
  a.hosts[ref].reference = true;
  std::stable_partition(a.hosts.begin(), a.hosts.end(), [](const HostClock& h) { return h.reference; });
  for (size_t h = 0; h < a.hosts.size(); ++h)
    for (model::ProcessId p : a.hosts[h].processes) domain_of[p] = static_cast<int32_t>(h);

  // Per instance and domain: the earliest end of the domain's participants.
  const size_t nd = a.hosts.size();
  std::vector<std::vector<int64_t>> diffs(nd);
  std::vector<std::vector<int64_t>> pairs_ref(nd), pairs_h(nd);  // kept for the residual
  std::vector<std::vector<int32_t>> used(nd);
  std::vector<int64_t> end_of(nd);
  for (size_t i = 0; i < x.instances.size(); ++i) {
    std::fill(end_of.begin(), end_of.end(), INT64_MAX);
    for (const CollectiveParticipant& p : x.instances[i].ranks) {
      const model::ProcessId proc = x.participants[p.participant].process;
      if (proc == model::kNone) continue;
      int64_t& e = end_of[domain_of[proc]];
      e = std::min(e, p.end_ns);
    }
    if (end_of[0] == INT64_MAX) continue;
    for (size_t h = 1; h < nd; ++h) {
      if (end_of[h] == INT64_MAX) continue;
      diffs[h].push_back(end_of[0] - end_of[h]);
      pairs_ref[h].push_back(end_of[0]);
      pairs_h[h].push_back(end_of[h]);
      used[h].push_back(static_cast<int32_t>(i));
    }
  }
  std::set<int32_t> used_all;
  int64_t aligned = 0;
  for (size_t h = 1; h < nd; ++h) {
    HostClock& hc = a.hosts[h];
    hc.instances = static_cast<int64_t>(diffs[h].size());
    if (hc.instances < min_instances) {
      hc.reason = absl::StrFormat("too few matched collectives (%d with %s%s, need %d)", hc.instances,
                                  a.hosts[0].named ? "host " : "", a.hosts[0].host, min_instances);
      continue;
    }
    hc.offset_ns = Median(diffs[h]);
    hc.aligned = true;
    ++aligned;
    for (size_t k = 0; k < pairs_h[h].size(); ++k) {
      const int64_t d = pairs_ref[h][k] - (pairs_h[h][k] + hc.offset_ns);
      hc.residual_spread_ns = std::max(hc.residual_spread_ns, d < 0 ? -d : d);
    }
    a.residual_spread_ns = std::max(a.residual_spread_ns, hc.residual_spread_ns);
    used_all.insert(used[h].begin(), used[h].end());
  }
  a.matched_instances_used = static_cast<int64_t>(used_all.size());
  a.status = aligned == static_cast<int64_t>(nd) - 1 ? ClockAlignStatus::kAligned
             : aligned > 0                           ? ClockAlignStatus::kPartial
                                                     : ClockAlignStatus::kNotAligned;
  return a;
}

model::ClockShiftFn ClockAlignmentShift(ClockAlignMode mode, ClockAlignment* alignment, int64_t min_instances) {
  return [=](const model::Trace& view) -> absl::StatusOr<model::ClockShift> {
    ClockAlignment a = EstimateClockAlignment(view, mode, min_instances);
    model::ClockShift shift;
    shift.process_offset_ns.assign(view.processes().size(), 0);
    for (const HostClock& h : a.hosts) {
      if (!h.aligned) continue;
      for (model::ProcessId p : h.processes) shift.process_offset_ns[p] = h.offset_ns;
      absl::StrAppend(&shift.note, shift.note.empty() ? "" : "; ", "host ", h.host, " shifted by ", h.offset_ns,
                      " ns to host ", a.hosts.front().host, " (median of collective end differences)");
    }
    if (alignment != nullptr) *alignment = std::move(a);
    return shift;
  };
}

std::string DescribeClockAlignment(const ClockAlignment& a) {
  switch (a.status) {
    case ClockAlignStatus::kNotEvaluated: return "clock alignment not evaluated";
    case ClockAlignStatus::kOff: return "clock alignment off (--align-clocks=off): timestamps as recorded";
    case ClockAlignStatus::kOneHost: return "one host: clocks shared, not aligned";
    case ClockAlignStatus::kHostsUnknown:
      return "host names not recorded: clocks assumed shared, not aligned (--align-clocks=on aligns each process "
             "to the lowest rank)";
    default: break;
  }
  std::string o;
  int64_t aligned = 0;
  bool all_named = true;
  for (const HostClock& h : a.hosts) {
    aligned += h.aligned;
    all_named &= h.named;
  }
  // "host b", or "pid 629" for a process whose host is unknown (aligned only when forced).
  auto name = [](const HostClock& h) { return h.named ? "host " + h.host : h.host; };
  if (aligned == 0) {
    o = "not aligned: too few matched collectives";
  } else {
    o = absl::StrFormat("clocks of %d %s aligned by %d matched collectives (reference %s)", aligned + 1,
                        all_named ? "hosts" : "clock domains", a.matched_instances_used, name(a.hosts.front()));
  }
  for (const HostClock& h : a.hosts) {
    if (h.reference) continue;
    if (h.aligned)
      absl::StrAppendFormat(&o, "; %s shifted by %+.3f µs (residual spread %.3f µs)", name(h),
                            static_cast<double>(h.offset_ns) / 1e3, static_cast<double>(h.residual_spread_ns) / 1e3);
    else
      absl::StrAppendFormat(&o, "; %s not aligned: %s", name(h), h.reason);
  }
  return o;
}

}  // namespace overlapscope::analyze
