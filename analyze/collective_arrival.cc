#include "analyze/collective_arrival.h"

#include <algorithm>
#include <climits>

namespace overlapscope::analyze {

using model::kNoCorrelation;
using model::kNone;

std::string_view ToString(ArrivalSource s) {
  switch (s) {
    case ArrivalSource::kApiCall: return "api-call";
    case ArrivalSource::kStreamPredecessor: return "stream-predecessor";
    case ArrivalSource::kEventWait: return "event-wait";
    case ArrivalSource::kStart: return "clamped-to-start";
    case ArrivalSource::kFallbackNoCall: return "fallback-no-call";
    case ArrivalSource::kFallbackUnresolvedWait: return "fallback-unresolved-wait";
  }
  return "start";
}

ArrivalEstimator::ArrivalEstimator(const model::Trace& t) : t_(t) {
  if (const model::StringId nccl = t.strings().Find("NCCL"); nccl != kNone) {
    for (const model::Range& r : t.ranges()) {
      if (r.kind != model::RangeKind::kNvtx || r.domain != nccl || r.thread == kNone) continue;
      if (nccl_ranges_.empty()) nccl_ranges_.resize(t.threads().size());
      nccl_ranges_[r.thread].push_back({r.start_ns, r.end_ns});
    }
    for (auto& v : nccl_ranges_) std::sort(v.begin(), v.end());
  }
  const size_t ns = t.streams().size();
  waits_.resize(ns);
  done_.resize(ns);
  auto is_wait = [&](const model::Sync& y) {
    return y.kind == model::SyncKind::kStreamWaitEvent && y.stream != kNone && static_cast<size_t>(y.stream) < ns;
  };
  // Recording streams: their activities by correlation (enqueue order), with the running max of
  // ends, so "last activity enqueued before the record" is one binary search.
  std::vector<bool> recorder(ns, false);
  for (const model::Sync& y : t.syncs())
    if (is_wait(y) && y.wait_on_stream != kNone && static_cast<size_t>(y.wait_on_stream) < ns)
      recorder[y.wait_on_stream] = true;
  std::vector<std::pair<int64_t, int64_t>> ce;
  for (size_t s = 0; s < ns; ++s) {
    if (!recorder[s]) continue;
    ce.clear();
    for (model::GpuRef r : t.StreamActivities(static_cast<model::StreamId>(s))) {
      const int64_t c = t.CorrelationOf(r);
      if (c != kNoCorrelation) ce.push_back({c, t.EndNs(r)});
    }
    // Activities of a stream run in enqueue order, so this is normally sorted already.
    if (!std::is_sorted(ce.begin(), ce.end())) std::sort(ce.begin(), ce.end());
    Done& d = done_[s];
    int64_t m = INT64_MIN;
    for (const auto& [c, e] : ce) {
      m = std::max(m, e);
      d.corr.push_back(c);
      d.max_end.push_back(m);
    }
  }
  starts_.resize(ns);
  for (size_t c = 0; c < t.collectives().size(); ++c) {
    const auto refs = t.CollectiveActivities(static_cast<model::CollectiveId>(c));
    if (refs.empty()) continue;
    std::vector<int64_t>& st = starts_[t.StreamOf(refs.front())];
    if (!st.empty()) continue;
    const auto acts = t.StreamActivities(t.StreamOf(refs.front()));
    st.reserve(acts.size());
    for (model::GpuRef r : acts) st.push_back(t.StartNs(r));
  }
  for (const model::Sync& y : t.syncs()) {
    if (!is_wait(y)) continue;
    Wait w;
    if (y.event_record_correlation_id == kNoCorrelation || y.wait_on_stream == kNone ||
        static_cast<size_t>(y.wait_on_stream) >= ns)
      w.unresolved = true;
    else
      w.ready_ns = ReadyBefore(y.wait_on_stream, y.event_record_correlation_id);
    StreamWaits& sw = waits_[y.stream];
    if (y.correlation_id != kNoCorrelation) {
      w.key = y.correlation_id;
      sw.by_corr.push_back(w);
    } else {
      w.key = y.start_ns;
      sw.by_time.push_back(w);
    }
  }
  auto by_key = [](const Wait& a, const Wait& b) { return a.key < b.key; };
  for (StreamWaits& sw : waits_) {
    std::sort(sw.by_corr.begin(), sw.by_corr.end(), by_key);
    std::sort(sw.by_time.begin(), sw.by_time.end(), by_key);
    int64_t m = INT64_MIN;
    int32_t u = 0;
    for (const Wait& w : sw.by_corr) {
      m = std::max(m, w.ready_ns);
      u += w.unresolved ? 1 : 0;
      sw.prefix_ready.push_back(m);
      sw.prefix_unresolved.push_back(u);
    }
  }
}

int64_t ArrivalEstimator::ReadyBefore(model::StreamId s, int64_t record_corr) const {
  const Done& d = done_[s];
  auto it = std::lower_bound(d.corr.begin(), d.corr.end(), record_corr);
  if (it == d.corr.begin()) return INT64_MIN;  // nothing enqueued before the record: complete at once
  return d.max_end[static_cast<size_t>(it - d.corr.begin()) - 1];
}

CollectiveArrival ArrivalEstimator::Of(model::CollectiveId c) const {
  const model::Collective& coll = t_.collectives()[c];
  const auto refs = t_.CollectiveActivities(c);
  if (refs.empty()) return {coll.start_ns, ArrivalSource::kFallbackNoCall};
  const model::GpuRef first = refs.front();
  const int64_t start = t_.StartNs(first);
  const model::StreamId s = t_.StreamOf(first);
  const model::ProcessId p = t_.ProcessOfDevice(t_.DeviceOfStream(s));
  int64_t corr = t_.CorrelationOf(first);
  if (corr == kNoCorrelation) corr = coll.correlation_id;
  const model::ApiCall* api = corr == kNoCorrelation ? nullptr : t_.ApiCallByCorrelation(p, corr);
  if (api == nullptr) return {start, ArrivalSource::kFallbackNoCall};

  // (a): the start of the innermost NCCL range around the call (ranges of one thread do not
  // overlap except by nesting), else the call's own start.
  int64_t called = api->start_ns;
  if (api->thread != kNone && static_cast<size_t>(api->thread) < nccl_ranges_.size()) {
    const auto& v = nccl_ranges_[api->thread];
    auto it = std::upper_bound(v.begin(), v.end(), std::pair<int64_t, int64_t>{api->start_ns, INT64_MAX});
    while (it != v.begin()) {
      --it;
      if (it->second >= api->end_ns) {
        called = it->first;
        break;
      }
      if (api->start_ns - it->first > int64_t{1000} * 1000 * 1000) break;  // 1 s back: no enclosing range
    }
  }
  CollectiveArrival a{called, ArrivalSource::kApiCall};
  // (b): the activity just before the first carrier in the stream's (start, end) order.
  const std::vector<int64_t>& st = starts_[s];
  const size_t pos = std::lower_bound(st.begin(), st.end(), start) - st.begin();
  int64_t corr_b = kNoCorrelation;
  int64_t time_lo = INT64_MIN;  // lower bound of the window for waits placed by host time
  if (pos > 0) {
    const model::GpuRef b = t_.StreamActivities(s)[pos - 1];
    if (t_.EndNs(b) > a.arrival_ns) a = {t_.EndNs(b), ArrivalSource::kStreamPredecessor};
    corr_b = t_.CorrelationOf(b);
    // Only waits without a correlation id need (b)'s call time; the lookup is a cache miss.
    if (!waits_[s].by_time.empty())
      if (const model::ApiCall* bc = corr_b == kNoCorrelation ? nullptr : t_.ApiCallByCorrelation(p, corr_b))
        time_lo = bc->start_ns;
  }
  // (c): waits on this stream enqueued after (b) and before the collective's call. Without
  // (b)'s correlation every earlier wait counts (conservative: more waits, never fewer).
  const StreamWaits& sw = waits_[s];
  auto key_less = [](const Wait& w, int64_t v) { return w.key < v; };
  const size_t hi = std::lower_bound(sw.by_corr.begin(), sw.by_corr.end(), corr, key_less) - sw.by_corr.begin();
  size_t lo = 0;
  if (corr_b != kNoCorrelation)
    lo = std::upper_bound(sw.by_corr.begin(), sw.by_corr.end(), corr_b,
                          [](int64_t v, const Wait& w) { return v < w.key; }) -
         sw.by_corr.begin();
  int64_t ready = INT64_MIN;
  bool unresolved = false;
  if (lo == 0 && hi > 0) {  // a prefix: O(1) (the first collective of a stream, or (b) without correlation)
    ready = sw.prefix_ready[hi - 1];
    unresolved = sw.prefix_unresolved[hi - 1] > 0;
  } else {
    for (size_t i = lo; i < hi; ++i) {
      ready = std::max(ready, sw.by_corr[i].ready_ns);
      unresolved |= sw.by_corr[i].unresolved;
    }
  }
  for (auto it = std::lower_bound(sw.by_time.begin(), sw.by_time.end(), time_lo, key_less);
       it != sw.by_time.end() && it->key < api->start_ns; ++it) {
    ready = std::max(ready, it->ready_ns);
    unresolved |= it->unresolved;
  }
  if (unresolved) return {start, ArrivalSource::kFallbackUnresolvedWait};
  if (ready > a.arrival_ns) a = {ready, ArrivalSource::kEventWait};
  if (a.arrival_ns > start) a = {start, ArrivalSource::kStart};
  return a;
}

}  // namespace overlapscope::analyze
