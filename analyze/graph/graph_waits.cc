// Recorded event waits and host releases (graph.h kEventWait, kHostRelease).
//
// A recorded stream wait (Kineto cuda_sync "Stream Wait Event" with
// wait_on_cuda_event_record_corr_id and wait_on_stream, our captures' event records) names the
// waiting stream, the recording stream and the record's correlation id. What it waits for is the
// work the recording stream had enqueued before the record: of the activities enqueued there
// with a smaller correlation id (a process's correlation ids grow with enqueue order), the one
// that ends last. What waits is the first activity enqueued on the waiting stream after the
// wait call (by correlation id; by launch time for a wait without one).
#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "analyze/graph/graph_builder.h"
#include "base/run_all.h"

namespace overlapscope::analyze::graph {

using model::GpuRef;
using model::kNoCorrelation;
using model::kNone;

const GraphBuilder::ByCorr& GraphBuilder::Corr(model::StreamId s) {
  if (by_corr_.empty()) by_corr_.resize(g_.stream_off_.size() - 1);
  ByCorr& b = by_corr_[s];
  if (b.built) return b;
  b.built = true;
  // The correlations in ranges of the stream's nodes at once (each a lookup in its activity's
  // record), appended in node order.
  std::vector<std::pair<int64_t, NodeId>> ce;
  const NodeId first = g_.StreamBegin(s);
  base::ParallelAppend(in_.threads, static_cast<size_t>(g_.StreamEnd(s) - first),
                       static_cast<size_t>(std::max(1, in_.min_chunk)) * 32, &ce,
                       [&](size_t lo, size_t hi, std::vector<std::pair<int64_t, NodeId>>* out) {
                         for (NodeId n = first + static_cast<NodeId>(lo); n < first + static_cast<NodeId>(hi); ++n)
                           if (const int64_t c = t_.CorrelationOf(g_.Ref(n)); c != kNoCorrelation)
                             out->push_back({c, n});
                       });
  // A stream runs its work in enqueue order, so this is sorted already but for odd sources.
  auto by_first = [](const auto& a, const auto& b) { return a.first < b.first; };
  if (!std::is_sorted(ce.begin(), ce.end(), by_first)) std::stable_sort(ce.begin(), ce.end(), by_first);
  NodeId best = kNone;
  b.corr.reserve(ce.size()), b.node.reserve(ce.size()), b.last.reserve(ce.size());
  for (const auto& [c, n] : ce) {
    if (best == kNone || g_.end_[n] > g_.end_[best]) best = n;
    b.corr.push_back(c);
    b.node.push_back(n);
    b.last.push_back(best);
  }
  return b;
}

NodeId GraphBuilder::RecorderBefore(model::StreamId rs, int64_t rec_corr) {
  if (!StreamOk(rs)) return kNone;
  const ByCorr& b = Corr(rs);
  const size_t n = std::lower_bound(b.corr.begin(), b.corr.end(), rec_corr) - b.corr.begin();
  return n == 0 ? kNone : b.last[n - 1];
}

NodeId GraphBuilder::FirstAfterCorrelation(model::StreamId s, int64_t corr) {
  const ByCorr& b = Corr(s);
  const size_t n = std::upper_bound(b.corr.begin(), b.corr.end(), corr) - b.corr.begin();
  return n == b.corr.size() ? kNone : b.node[n];
}

NodeId GraphBuilder::FirstLaunchedAfter(model::StreamId s, int64_t t) {
  NodeId best = kNone;
  int64_t best_start = 0;
  for (NodeId n = g_.StreamBegin(s); n < g_.StreamEnd(s); ++n) {
    if (launch_[n] == kNone) continue;
    const int64_t ls = t_.api_calls()[launch_[n]].start_ns;
    if (ls >= t && (best == kNone || ls < best_start)) best = n, best_start = ls;
  }
  return best;
}

void GraphBuilder::FindRecordedCalls(std::vector<int32_t>* sync_call) {
  recorded_wait_.assign(g_.num_gpu(), 0);
  recorded_call_.assign(t_.api_calls().size(), 0);
  sync_call->clear();
  if (!in_.use_recorded_waits) return;
  // The lookups (a correlation index per process) only read the trace: in ranges of syncs at
  // once, the calls marked after.
  const auto& syncs = t_.syncs();
  sync_call->assign(syncs.size(), kNone);
  base::ParallelFor(in_.threads, syncs.size(), static_cast<size_t>(std::max(1, in_.min_chunk)),
                    [&](size_t b, size_t e) {
                      for (size_t i = b; i < e; ++i) {
                        const model::Sync& y = syncs[i];
                        if (y.kind != model::SyncKind::kStreamWaitEvent || !StreamOk(y.stream)) continue;
                        const model::ProcessId p = t_.ProcessOfDevice(t_.DeviceOfStream(y.stream));
                        if (y.correlation_id != kNoCorrelation)
                          (*sync_call)[i] = t_.ApiCallIndexByCorrelation(p, y.correlation_id);
                      }
                    });
  for (const int32_t call : *sync_call)
    if (call != kNone) recorded_call_[call] = 1;
}

void GraphBuilder::AddRecordedWaits(const std::vector<int32_t>& sync_call) {
  if (!in_.use_recorded_waits) return;
  // The lookups (the waiting and the awaited activity) only read the trace and the streams'
  // correlation lists, which are built first (the streams the waits name, at once): they are
  // made in ranges of syncs at once, the edges added in sync order after.
  const auto& syncs = t_.syncs();
  std::vector<uint8_t> named(g_.stream_off_.size() - 1, 0);
  for (const model::Sync& y : syncs) {
    if (y.kind != model::SyncKind::kStreamWaitEvent || !StreamOk(y.stream)) continue;
    named[y.stream] = 1;
    if (StreamOk(y.wait_on_stream)) named[y.wait_on_stream] = 1;
  }
  by_corr_.resize(named.size());
  base::ParallelFor(in_.threads, named.size(), 1, [&](size_t b, size_t e) {
    for (size_t s = b; s < e; ++s)
      if (named[s]) Corr(static_cast<model::StreamId>(s));
  });
  struct Found {
    NodeId to = kNone, from = kNone;
  };
  std::vector<Found> found(syncs.size());
  base::ParallelFor(
      in_.threads, syncs.size(), static_cast<size_t>(std::max(1, in_.min_chunk)), [&](size_t b, size_t e) {
        for (size_t i = b; i < e; ++i) {
          const model::Sync& y = syncs[i];
          if (y.kind != model::SyncKind::kStreamWaitEvent || !StreamOk(y.stream)) continue;
          Found& f = found[i];
          f.to = y.correlation_id != kNoCorrelation ? FirstAfterCorrelation(y.stream, y.correlation_id)
                                                    : FirstLaunchedAfter(y.stream, y.start_ns);
          if (f.to != kNone && y.event_record_correlation_id != kNoCorrelation && StreamOk(y.wait_on_stream))
            f.from = RecorderBefore(y.wait_on_stream, y.event_record_correlation_id);
        }
      });
  for (size_t i = 0; i < syncs.size(); ++i) AddRecordedWait(syncs[i], sync_call[i], found[i].to, found[i].from);
}

void GraphBuilder::AddRecordedWait(const model::Sync& y, int32_t call, NodeId to, NodeId from) {
  if (y.kind != model::SyncKind::kStreamWaitEvent || !StreamOk(y.stream)) return;
  if (to == kNone) return;  // nothing waited: the wait is the stream's last enqueued work
  recorded_wait_[to] |= 1;
  const int32_t index = static_cast<int32_t>(&y - t_.syncs().data());
  if (y.event_record_correlation_id == kNoCorrelation || !StreamOk(y.wait_on_stream)) {
    sourceless_.push_back({to, call, index});
    ++S(to).waits_recorded_without_source;
    return;
  }
  if (from == kNone) {
    ++S(to).waits_already_complete;
    return;
  }
  if (from == to || g_.Stream(from) == y.stream) return;  // same stream: stream order says it
  recorded_wait_[to] |= 2;
  if (!Add(from, to, EdgeKind::kEventWait, false)) return;
  ++S(to).waits_recorded;
  g_.waits_.push_back({from, to, call, index, false});
}

void GraphBuilder::AddHostReleases(const std::vector<HostRelease>& releases) {
  // Recording streams of event records, from the stream waits on the same record (Kineto's
  // Event Sync names only the record's correlation).
  absl::flat_hash_map<int64_t, model::StreamId> stream_of_record;
  for (const model::Sync& y : t_.syncs())
    if (y.kind == model::SyncKind::kStreamWaitEvent && StreamOk(y.wait_on_stream) &&
        y.event_record_correlation_id != kNoCorrelation)
      stream_of_record.emplace(y.event_record_correlation_id, y.wait_on_stream);
  const int32_t ncalls = static_cast<int32_t>(t_.api_calls().size());
  const int32_t nsyncs = static_cast<int32_t>(t_.syncs().size());
  for (const HostRelease& h : releases) {
    if (h.api_call == kNone || h.api_call < 0 || h.api_call >= ncalls) continue;
    const NodeId to = g_.ApiNode(h.api_call);
    NodeId from = kNone;
    if (h.sync != kNone && h.sync >= 0 && h.sync < nsyncs) {
      const model::Sync& y = t_.syncs()[h.sync];
      if (y.kind == model::SyncKind::kEventSync && y.event_record_correlation_id != kNoCorrelation) {
        model::StreamId rs = StreamOk(y.stream) ? y.stream : StreamOk(y.wait_on_stream) ? y.wait_on_stream : kNone;
        if (rs == kNone)
          if (auto it = stream_of_record.find(y.event_record_correlation_id); it != stream_of_record.end())
            rs = it->second;
        from = RecorderBefore(rs, y.event_record_correlation_id);
        if (from != kNone && g_.end_[from] > g_.EndNs(to)) from = kNone;
      }
    }
    if (from == kNone && h.released_by.index >= 0) {
      const auto& flat = g_.flat_[static_cast<int>(h.released_by.kind)];
      if (static_cast<size_t>(h.released_by.index) < flat.size()) from = flat[h.released_by.index];
    }
    if (from == kNone) {
      ++S(to).syncs_without_release;
      continue;
    }
    Add(from, to, EdgeKind::kHostRelease, false);
  }
}

}  // namespace overlapscope::analyze::graph
