#include "model/trace_builder.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"

namespace overlapscope::model {

ProcessId TraceBuilder::AddProcess(const Process& p) {
  d_.processes.push_back(p);
  return static_cast<ProcessId>(d_.processes.size() - 1);
}

ThreadId TraceBuilder::GetOrAddThread(ProcessId p, int64_t tid) {
  auto [it, inserted] = thread_ids_.try_emplace({p, tid}, static_cast<ThreadId>(d_.threads.size()));
  if (inserted) d_.threads.push_back(Thread{p, tid, 0});
  return it->second;
}

DeviceId TraceBuilder::GetOrAddDevice(ProcessId p, int32_t ordinal) {
  auto [it, inserted] = device_ids_.try_emplace({p, ordinal}, static_cast<DeviceId>(d_.devices.size()));
  if (inserted) d_.devices.push_back(Device{p, ordinal, 0});
  return it->second;
}

StreamId TraceBuilder::GetOrAddStream(DeviceId d, int64_t native_id) {
  auto [it, inserted] = stream_ids_.try_emplace({d, native_id}, static_cast<StreamId>(d_.streams.size()));
  if (inserted) d_.streams.push_back(Stream{d, native_id, 0});
  return it->second;
}

namespace {

bool InRange(int32_t id, size_t n, bool optional) {
  if (id == kNone) return optional;
  return id >= 0 && static_cast<size_t>(id) < n;
}

// Checks ids and time order of one event vector; `what` names the vector in the error.
template <typename T, typename Check>
absl::Status Validate(const std::vector<T>& v, const char* what, Check check) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i].end_ns < v[i].start_ns)
      return absl::InvalidArgumentError(absl::StrCat(what, "[", i, "]: end_ns < start_ns"));
    if (!check(v[i])) return absl::InvalidArgumentError(absl::StrCat(what, "[", i, "]: id out of range"));
  }
  return absl::OkStatus();
}

// Sorting key: start, then end, then insertion order (stable sort) so output is deterministic.
// Importers mostly deliver events in time order already, so check first: is_sorted is one
// cheap pass, stable_sort is several.
template <typename T>
void SortByTime(std::vector<T>& v) {
  auto less = [](const T& a, const T& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns < b.end_ns;
  };
  if (!std::is_sorted(v.begin(), v.end(), less)) std::stable_sort(v.begin(), v.end(), less);
}

// Builds a CSR index from (group, ref) pairs; refs keep the order in which they are given.
void BuildCsr(size_t groups, const std::vector<std::pair<int32_t, GpuRef>>& pairs, std::vector<int32_t>& offsets,
              std::vector<GpuRef>& refs) {
  offsets.assign(groups + 1, 0);
  for (const auto& [g, r] : pairs) ++offsets[g + 1];
  std::partial_sum(offsets.begin(), offsets.end(), offsets.begin());
  refs.resize(pairs.size());
  std::vector<int32_t> fill(offsets.begin(), offsets.end() - 1);
  for (const auto& [g, r] : pairs) refs[fill[g]++] = r;
}

}  // namespace

absl::StatusOr<Trace> TraceBuilder::Finalize() && {
  const size_t np = d_.processes.size(), nt = d_.threads.size(), nd = d_.devices.size(), ns = d_.streams.size(),
               nc = d_.collectives.size();
  for (const auto& t : d_.threads)
    if (!InRange(t.process, np, false)) return absl::InvalidArgumentError("thread without process");
  for (const auto& dev : d_.devices)
    if (!InRange(dev.process, np, false)) return absl::InvalidArgumentError("device without process");
  for (const auto& s : d_.streams)
    if (!InRange(s.device, nd, false)) return absl::InvalidArgumentError("stream without device");
  auto gpu_ok = [&](const auto& e) {
    return InRange(e.device, nd, false) && InRange(e.stream, ns, false) && d_.streams[e.stream].device == e.device;
  };
  if (auto s = Validate(d_.kernels, "kernels",
                        [&](const Kernel& k) { return gpu_ok(k) && InRange(k.collective, nc, true); });
      !s.ok())
    return s;
  if (auto s = Validate(d_.memcpys, "memcpys",
                        [&](const Memcpy& m) {
                          return gpu_ok(m) && InRange(m.collective, nc, true) && InRange(m.dst_device, nd, true);
                        });
      !s.ok())
    return s;
  if (auto s = Validate(d_.memsets, "memsets", gpu_ok); !s.ok()) return s;
  if (auto s = Validate(d_.gpu_ranges, "gpu_ranges", gpu_ok); !s.ok()) return s;
  if (auto s = Validate(d_.api_calls, "api_calls", [&](const ApiCall& a) { return InRange(a.thread, nt, false); });
      !s.ok())
    return s;
  if (auto s = Validate(d_.ranges, "ranges", [&](const Range& r) { return InRange(r.thread, nt, false); }); !s.ok())
    return s;
  if (auto s = Validate(d_.syncs, "syncs",
                        [&](const Sync& y) {
                          return InRange(y.thread, nt, true) && InRange(y.device, nd, true) &&
                                 InRange(y.stream, ns, true) && InRange(y.wait_on_stream, ns, true);
                        });
      !s.ok())
    return s;
  for (const auto& c : d_.collectives)
    if (!InRange(c.process, np, true) || !InRange(c.device, nd, true) || !InRange(c.stream, ns, true))
      return absl::InvalidArgumentError("collective id out of range");

  SortByTime(d_.kernels);
  SortByTime(d_.memcpys);
  SortByTime(d_.memsets);
  SortByTime(d_.api_calls);
  SortByTime(d_.syncs);
  SortByTime(d_.ranges);
  SortByTime(d_.gpu_ranges);

  // Collectives: derive spans from their carriers, sort by start, remap the carriers' ids.
  std::vector<int64_t> cstart(nc, INT64_MAX), cend(nc, INT64_MIN);
  for (size_t i = 0; i < d_.kernels.size(); ++i) {
    const Kernel& k = d_.kernels[i];
    if (k.collective == kNone) continue;
    cstart[k.collective] = std::min(cstart[k.collective], k.start_ns);
    cend[k.collective] = std::max(cend[k.collective], k.end_ns);
  }
  for (size_t i = 0; i < d_.memcpys.size(); ++i) {
    const Memcpy& m = d_.memcpys[i];
    if (m.collective == kNone) continue;
    cstart[m.collective] = std::min(cstart[m.collective], m.start_ns);
    cend[m.collective] = std::max(cend[m.collective], m.end_ns);
  }
  for (size_t c = 0; c < nc; ++c) {
    if (cstart[c] != INT64_MAX) {
      d_.collectives[c].start_ns = cstart[c];
      d_.collectives[c].end_ns = cend[c];
    }
    if (d_.collectives[c].end_ns < d_.collectives[c].start_ns)
      return absl::InvalidArgumentError(absl::StrCat("collectives[", c, "]: end_ns < start_ns"));
  }
  std::vector<int32_t> order(nc);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return d_.collectives[a].start_ns < d_.collectives[b].start_ns; });
  std::vector<int32_t> new_id(nc);
  std::vector<Collective> sorted(nc);
  for (size_t i = 0; i < nc; ++i) {
    new_id[order[i]] = static_cast<int32_t>(i);
    sorted[i] = d_.collectives[order[i]];
  }
  d_.collectives = std::move(sorted);
  for (auto& k : d_.kernels)
    if (k.collective != kNone) k.collective = new_id[k.collective];
  for (auto& m : d_.memcpys)
    if (m.collective != kNone) m.collective = new_id[m.collective];

  Trace t;
  // GPU activity indexes. All refs of all kinds, merged by start, feed the per-stream and
  // per-device CSR lists so both come out sorted by (start, end).
  // Each kind's vector is sorted already: two linear merges give all activities in time order
  // (ties: kernels, then memcpys, then memsets, as a stable sort would order them).
  t.d_ = std::move(d_);
  auto by_time = [&](GpuRef a, GpuRef b) {
    int64_t sa = t.StartNs(a), sb = t.StartNs(b);
    return sa != sb ? sa < sb : t.EndNs(a) < t.EndNs(b);
  };
  auto refs_of = [](GpuKind kind, size_t n) {
    std::vector<GpuRef> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = GpuRef{kind, static_cast<int32_t>(i)};
    return v;
  };
  std::vector<GpuRef> all;
  {
    std::vector<GpuRef> k = refs_of(GpuKind::kKernel, t.d_.kernels.size());
    std::vector<GpuRef> m = refs_of(GpuKind::kMemcpy, t.d_.memcpys.size());
    std::vector<GpuRef> s = refs_of(GpuKind::kMemset, t.d_.memsets.size());
    std::vector<GpuRef> km(k.size() + m.size());
    std::merge(k.begin(), k.end(), m.begin(), m.end(), km.begin(), by_time);
    all.resize(km.size() + s.size());
    std::merge(km.begin(), km.end(), s.begin(), s.end(), all.begin(), by_time);
  }
  std::vector<std::pair<int32_t, GpuRef>> by_stream, by_device, by_coll;
  by_stream.reserve(all.size());
  by_device.reserve(all.size());
  for (GpuRef r : all) {
    StreamId s = t.StreamOf(r);
    by_stream.push_back({s, r});
    by_device.push_back({t.d_.streams[s].device, r});
    CollectiveId c = r.kind == GpuKind::kKernel   ? t.d_.kernels[r.index].collective
                     : r.kind == GpuKind::kMemcpy ? t.d_.memcpys[r.index].collective
                                                  : kNone;
    if (c != kNone) by_coll.push_back({c, r});
  }
  BuildCsr(ns, by_stream, t.stream_offsets_, t.stream_refs_);
  BuildCsr(nd, by_device, t.device_offsets_, t.device_refs_);
  BuildCsr(nc, by_coll, t.collective_offsets_, t.collective_refs_);
  for (size_t c = 0; c < nc; ++c) {
    Collective& col = t.d_.collectives[c];
    auto refs = t.CollectiveActivities(static_cast<int32_t>(c));
    if (refs.empty()) continue;
    StreamId st = t.StreamOf(refs[0]);
    if (col.stream == kNone) col.stream = st;
    if (col.device == kNone) col.device = t.d_.streams[st].device;
    if (col.process == kNone) col.process = t.d_.devices[col.device].process;
  }

  // Correlation lookups, per process (correlation ids are unique only within a process).
  t.api_by_corr_.reserve(t.d_.api_calls.size());
  for (size_t i = 0; i < t.d_.api_calls.size(); ++i) {
    const ApiCall& a = t.d_.api_calls[i];
    if (a.correlation_id == kNoCorrelation) continue;
    auto key = std::make_pair(t.d_.threads[a.thread].process, a.correlation_id);
    if (!t.api_by_corr_.try_emplace(key, static_cast<int32_t>(i)).second) ++t.duplicate_api_correlations_;
  }
  std::vector<std::pair<std::pair<int32_t, int64_t>, GpuRef>> corr;
  corr.reserve(all.size());
  for (GpuRef r : all) {
    int64_t c = t.CorrelationOf(r);
    if (c == kNoCorrelation) continue;
    corr.push_back({{t.d_.devices[t.d_.streams[t.StreamOf(r)].device].process, c}, r});
  }
  auto by_key = [](const auto& a, const auto& b) { return a.first < b.first; };
  if (!std::is_sorted(corr.begin(), corr.end(), by_key)) std::stable_sort(corr.begin(), corr.end(), by_key);
  t.gpu_by_corr_keys_.reserve(corr.size());
  t.gpu_by_corr_refs_.reserve(corr.size());
  for (const auto& [k, r] : corr) {
    t.gpu_by_corr_keys_.push_back(k);
    t.gpu_by_corr_refs_.push_back(r);
  }

  // Time span over every event kind.
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  auto span = [&](const auto& v) {
    for (const auto& e : v) {
      lo = std::min(lo, e.start_ns);
      hi = std::max(hi, e.end_ns);
    }
  };
  span(t.d_.kernels);
  span(t.d_.memcpys);
  span(t.d_.memsets);
  span(t.d_.api_calls);
  span(t.d_.syncs);
  span(t.d_.ranges);
  span(t.d_.gpu_ranges);
  if (lo != INT64_MAX) {
    t.start_ns_ = lo;
    t.end_ns_ = hi;
  }
  return t;
}

}  // namespace overlapscope::model
