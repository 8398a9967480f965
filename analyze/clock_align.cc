#include "analyze/clock_align.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analyze/cross_rank.h"
#include "model/trace_builder.h"

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

// `in` is sorted by (start, end). Events sharing an offset stay sorted after the shift, so the
// shifted vector is a merge of one sorted run per distinct offset: linear per run, where a
// re-sort in TraceBuilder::Finalize would be a full stable sort of a shuffled vector (its
// is_sorted check then passes).
template <typename T, typename OffsetOf>
std::vector<T> ShiftSorted(const std::vector<T>& in, OffsetOf offset_of) {
  // Pass 1: the run of each event (distinct offsets: one per host, a handful) and run sizes,
  // so that every vector is allocated once.
  std::vector<int64_t> offsets;
  std::vector<size_t> sizes;
  std::vector<uint8_t> run_of(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const int64_t o = offset_of(in[i]);
    size_t g = std::find(offsets.begin(), offsets.end(), o) - offsets.begin();
    if (g == offsets.size()) {
      if (g == 255) return {};  // unreachable (one offset per host); the caller re-sorts anyway
      offsets.push_back(o);
      sizes.push_back(0);
    }
    ++sizes[g];
    run_of[i] = static_cast<uint8_t>(g);
  }
  auto shifted = [&](size_t i) {
    T s = in[i];
    s.start_ns += offsets[run_of[i]];
    s.end_ns += offsets[run_of[i]];
    return s;
  };
  std::vector<T> out;
  out.reserve(in.size());
  if (offsets.size() <= 1) {
    for (size_t i = 0; i < in.size(); ++i) out.push_back(shifted(i));
    return out;
  }
  std::vector<std::vector<T>> runs(offsets.size());
  for (size_t g = 0; g < runs.size(); ++g) runs[g].reserve(sizes[g]);
  for (size_t i = 0; i < in.size(); ++i) runs[run_of[i]].push_back(shifted(i));
  auto less = [](const T& a, const T& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns < b.end_ns;
  };
  while (runs.size() > 2) {
    std::vector<T> merged;
    merged.reserve(runs[runs.size() - 2].size() + runs.back().size());
    std::merge(runs[runs.size() - 2].begin(), runs[runs.size() - 2].end(), runs.back().begin(), runs.back().end(),
               std::back_inserter(merged), less);
    runs.pop_back();
    runs.back() = std::move(merged);
  }
  std::merge(runs[0].begin(), runs[0].end(), runs[1].begin(), runs[1].end(), std::back_inserter(out), less);
  return out;
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

absl::StatusOr<model::Trace> ApplyClockAlignment(const model::Trace& t, const ClockAlignment& a) {
  std::vector<int64_t> off(t.processes().size(), 0);
  for (const HostClock& h : a.hosts)
    if (h.aligned)
      for (model::ProcessId p : h.processes) off[p] = h.offset_ns;

  model::TraceBuilder b;
  model::TraceData& d = b.data();
  // Re-interning in id order reproduces the ids (the table is dense and deduplicated).
  for (size_t i = 1; i < t.strings().size(); ++i)
    if (d.strings.Intern(t.str(static_cast<model::StringId>(i))) != static_cast<model::StringId>(i))
      return absl::InternalError("string table of the trace is not dense");
  d.processes = t.processes();
  d.threads = t.threads();
  d.devices = t.devices();
  d.streams = t.streams();
  d.sources = t.sources();
  auto of_device = [&](model::DeviceId dev) { return dev == model::kNone ? 0 : off[t.ProcessOfDevice(dev)]; };
  auto of_thread = [&](model::ThreadId th) { return th == model::kNone ? 0 : off[t.ProcessOfThread(th)]; };
  d.kernels = ShiftSorted(t.kernels(), [&](const auto& e) { return of_device(e.device); });
  d.memcpys = ShiftSorted(t.memcpys(), [&](const auto& e) { return of_device(e.device); });
  d.memsets = ShiftSorted(t.memsets(), [&](const auto& e) { return of_device(e.device); });
  d.gpu_ranges = ShiftSorted(t.gpu_ranges(), [&](const auto& e) { return of_device(e.device); });
  d.api_calls = ShiftSorted(t.api_calls(), [&](const auto& e) { return of_thread(e.thread); });
  d.ranges = ShiftSorted(t.ranges(), [&](const auto& e) { return of_thread(e.thread); });
  d.syncs = ShiftSorted(
      t.syncs(), [&](const auto& e) { return e.device != model::kNone ? of_device(e.device) : of_thread(e.thread); });
  // Collectives keep their order: kernels and copies point at them by index. Finalize re-sorts
  // them (and remaps those indexes); they are few.
  d.collectives = t.collectives();
  for (model::Collective& c : d.collectives) {
    const int64_t o = c.process != model::kNone ? off[c.process] : of_device(c.device);
    c.start_ns += o;
    c.end_ns += o;
  }
  d.clock_note = t.clock_note();
  for (const HostClock& h : a.hosts)
    if (h.aligned)
      absl::StrAppend(&d.clock_note, d.clock_note.empty() ? "" : "; ", "host ", h.host, " shifted by ", h.offset_ns,
                      " ns to host ", a.hosts.front().host, " (median of collective end differences)");
  return std::move(b).Finalize();
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
