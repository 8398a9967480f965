// PathIndex: the lookups a critical-path walk needs, built once per trace in O(n) (plus sorts of
// the few stream waits and NCCL ranges).
#include <algorithm>
#include <atomic>
#include <climits>
#include <functional>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "analyze/graph_inputs.h"
#include "analyze/path_walker.h"
#include "analyze/per_thread_parts.h"
#include "analyze/strings.h"
#include "base/phase_log.h"
#include "base/run_all.h"

namespace overlapscope::analyze {

int64_t WindowStartAt(absl::Span<const WindowFigures> windows, model::ProcessId p, int64_t t, int64_t fallback) {
  int64_t best = fallback;
  bool found = false;
  for (const WindowFigures& w : windows) {
    if (w.process != p || w.start_ns > t) continue;
    if (!found || w.start_ns > best) best = w.start_ns;
    found = true;
  }
  return best;
}

using model::GpuRef;
using model::kNoCorrelation;
using model::kNone;

PathIndex::PathIndex(const model::Trace& t, const PathInputs& in) : t_(t), in_(in) {
  if (in_.graph == nullptr) {
    own_graph_.emplace(graph::BuildGraph(t, MakeGraphInputs(*in_.blocking, *in_.cross_rank)));
    graph_ = &*own_graph_;
  } else {
    graph_ = in_.graph;
  }
  // The graph gathered start, end, stream and launch in this flat order already.
  for (model::GpuKind k : {model::GpuKind::kKernel, model::GpuKind::kMemcpy, model::GpuKind::kMemset})
    flat_[static_cast<int>(k)] = graph_->FlatOfKind(k);
  off_ = graph_->StreamOffsets();
  start_ = graph_->GpuStarts(), end_ = graph_->GpuEnds();
  stream_ = graph_->GpuStreams(), ref_ = graph_->GpuRefs(), launch_ = graph_->LaunchCalls();
  const size_t ns = t.streams().size();
  const size_t n = ref_.size();
  name_ = graph_->GpuNames();
  cls_.resize(n), coll_.resize(n);
  stream_proc_.resize(ns);
  for (size_t s = 0; s < ns; ++s)
    stream_proc_[s] = t.ProcessOfDevice(t.DeviceOfStream(static_cast<model::StreamId>(s)));
  const absl::Span<const model::CollectiveId> coll = graph_->GpuCollectives();
  // The parts write their own members and read only the graph, the trace and the inputs.
  base::RunAll(in.threads, {[&] {
                              for (size_t g = 0; g < n; ++g) {
                                cls_[g] = in.gpu.Cls(ref_[g]);
                                coll_[g] = cls_[g] == ActivityClass::kComm ? coll[g] : kNone;
                              }
                            },
                            [&] { IndexWaits(); }, [&] { IndexBlocked(), IndexNccl(); },
                            [&] {
                              base::PhaseSpan s_("path calls");
                              IndexCalls();
                            },
                            [&] {
                              base::PhaseSpan s_("path ranges");
                              IndexRanges();
                            },
                            [&] { IndexCollectives(); }});
}

int32_t PathIndex::RecorderBefore(model::StreamId rs, int64_t rec_corr) const {
  if (rs == kNone || static_cast<size_t>(rs) >= recorded_.size()) return kNone;
  const Recorded& r = recorded_[rs];
  const size_t n = std::lower_bound(r.corr.begin(), r.corr.end(), rec_corr) - r.corr.begin();
  return n == 0 ? kNone : r.last[n - 1];
}

void PathIndex::IndexWaits() {
  const model::Trace& t = t_;
  // Most activities have no cross-stream wait: the walk reads the graph's edges only for those
  // that do.
  waits_into_.assign(start_.size(), 0);
  for (const graph::WaitEdge& w : graph_->waits())
    if (w.to >= 0 && static_cast<size_t>(w.to) < waits_into_.size()) waits_into_[w.to] = 1;
  if (graph_->stats().waits_unresolved + graph_->stats().waits_ambiguous > 0)
    for (size_t g = 0; g < waits_into_.size(); ++g)
      if (graph_->UnresolvedWaits(static_cast<graph::NodeId>(g)) > 0) waits_into_[g] = 1;
  // Event syncs: released by the work their record covered (better than the device-wide guess of
  // §3). Kineto's Event Sync names only the record's correlation, whose stream a stream wait on
  // the same record gives.
  const size_t ns = t.streams().size();
  auto stream_ok = [&](model::StreamId s) { return s != kNone && static_cast<size_t>(s) < ns; };
  absl::flat_hash_map<int64_t, model::StreamId> stream_of_record;
  for (const model::Sync& y : t.syncs())
    if (y.kind == model::SyncKind::kStreamWaitEvent && stream_ok(y.wait_on_stream) &&
        y.event_record_correlation_id != kNoCorrelation)
      stream_of_record.emplace(y.event_record_correlation_id, y.wait_on_stream);
  auto event_stream = [&](const model::Sync& y) -> model::StreamId {
    if (y.kind != model::SyncKind::kEventSync || y.event_record_correlation_id == kNoCorrelation) return kNone;
    if (stream_ok(y.stream)) return y.stream;
    if (stream_ok(y.wait_on_stream)) return y.wait_on_stream;  // Kineto names it on Event Sync too
    auto it = stream_of_record.find(y.event_record_correlation_id);
    return it == stream_of_record.end() ? kNone : it->second;
  };
  const auto& iv = in_.blocking->intervals;
  event_release_.assign(iv.size(), kNone);
  recorded_.resize(ns);
  std::vector<uint8_t> built(ns, 0);
  std::vector<std::pair<int64_t, int32_t>> ce;  // (correlation, flat index)
  for (size_t i = 0; i < iv.size(); ++i) {
    if (iv[i].sync == kNone) continue;
    const model::Sync& y = t.syncs()[iv[i].sync];
    const model::StreamId rs = event_stream(y);
    if (rs == kNone) continue;
    if (!built[rs]) {
      built[rs] = 1;
      ce.clear();
      for (GpuRef r : t.StreamActivities(rs))
        if (int64_t c = t.CorrelationOf(r); c != kNoCorrelation) ce.push_back({c, Flat(r)});
      // A stream runs its work in enqueue order, so this is sorted already but for odd sources.
      auto by_first = [](const auto& a, const auto& b) { return a.first < b.first; };
      if (!std::is_sorted(ce.begin(), ce.end(), by_first)) std::stable_sort(ce.begin(), ce.end(), by_first);
      Recorded& rec = recorded_[rs];
      int32_t best = kNone;
      for (const auto& [c, fg] : ce) {
        if (best == kNone || end_[fg] > end_[best]) best = fg;
        rec.corr.push_back(c);
        rec.last.push_back(best);
      }
    }
    const int32_t rec = RecorderBefore(rs, y.event_record_correlation_id);
    if (rec != kNone && end_[rec] <= iv[i].end_ns) event_release_[i] = rec;
  }
}

void PathIndex::IndexBlocked() {
  const size_t nt = t_.threads().size();
  blocked_.assign(nt, {});
  const auto& iv = in_.blocking->intervals;
  for (size_t i = 0; i < iv.size(); ++i)
    if (iv[i].thread != kNone) blocked_[iv[i].thread].push_back(static_cast<int32_t>(i));
}

// Intervals are sorted by start; per thread they are disjoint (nested calls were merged). A
// call is outermost when it ends after every call before it on its thread. In ranges of the
// calls: each range keeps, per thread, the calls ending after every call before them in the
// range (ends strictly growing); of those, a range keeps in the joined list the ones ending
// after every call of the ranges before it on the thread too (a suffix of its list).
void PathIndex::IndexCalls() {
  const auto& calls = t_.api_calls();
  PerThreadParts<int32_t> parts(t_.threads().size(), base::RangeBounds(in_.threads, calls.size(), in_.min_chunk));
  parts.Fill(in_.threads, [&](size_t lo, size_t hi, std::vector<std::vector<int32_t>>& per_thread) {
    for (size_t i = lo; i < hi; ++i) {
      const model::ApiCall& a = calls[i];
      if (a.thread == kNone) continue;
      std::vector<int32_t>& v = per_thread[a.thread];
      if (!v.empty() && a.end_ns <= calls[v.back()].end_ns) continue;  // nested in the previous call
      v.push_back(static_cast<int32_t>(i));
    }
  });
  auto end_of = [&](int32_t i) { return calls[i].end_ns; };
  parts.Join(in_.threads, &calls_, [&](size_t, const std::vector<int32_t>& v, bool any_before, int64_t& last_end) {
    size_t from = 0;
    if (any_before)
      from = std::partition_point(v.begin(), v.end(), [&](int32_t i) { return end_of(i) <= last_end; }) - v.begin();
    if (!v.empty() && (!any_before || end_of(v.back()) > last_end)) last_end = end_of(v.back());
    return from;
  });
}

// The host ranges naming something (not the iteration markers, not empty), per thread in
// ranges of Trace::ranges() joined in order; then per thread the enclosing range of each (one
// stack) beside their union.
void PathIndex::IndexRanges() {
  const model::Trace& t = t_;
  const size_t nt = t.threads().size();
  const std::string& marker = in_.iterations->marker;
  // Whether a name is the marker, found by the first range that meets it (a range meeting a
  // name another is testing tests it too: the same answer).
  std::unique_ptr<std::atomic<int8_t>[]> is_marker(new std::atomic<int8_t>[t.strings().size()]);
  for (size_t i = 0; i < t.strings().size(); ++i) is_marker[i].store(-1, std::memory_order_relaxed);
  const auto& ranges = t.ranges();
  PerThreadParts<int32_t> parts(nt, base::RangeBounds(in_.threads, ranges.size(), in_.min_chunk));
  parts.Fill(in_.threads, [&](size_t lo, size_t hi, std::vector<std::vector<int32_t>>& per_thread) {
    for (size_t i = lo; i < hi; ++i) {
      const model::Range& r = ranges[i];
      if (r.thread == kNone || r.end_ns <= r.start_ns) continue;
      std::atomic<int8_t>& slot = is_marker[r.name];
      int8_t m = slot.load(std::memory_order_relaxed);
      if (m < 0) {
        m = !marker.empty() && StartsWith(t.str(r.name), marker) ? 1 : 0;
        slot.store(m, std::memory_order_relaxed);
      }
      if (m) continue;  // the iteration range covers the whole step: it names nothing
      per_thread[r.thread].push_back(static_cast<int32_t>(i));
    }
  });
  std::vector<std::vector<int32_t>> idx;
  parts.Join(in_.threads, &idx, [](size_t, const std::vector<int32_t>&, bool, int64_t&) { return size_t{0}; });
  ranges_.assign(nt, {});
  std::vector<std::function<void()>> tasks;
  for (size_t th = 0; th < nt; ++th) {
    ranges_[th].idx = std::move(idx[th]);
    if (ranges_[th].idx.empty()) continue;
    tasks.emplace_back([this, th, &ranges] {
      ThreadRanges& tr = ranges_[th];
      tr.parent.assign(tr.idx.size(), kNone);
      std::vector<int32_t> stack;
      for (size_t k = 0; k < tr.idx.size(); ++k) {
        const model::Range& r = ranges[tr.idx[k]];
        while (!stack.empty() && ranges[tr.idx[stack.back()]].end_ns <= r.start_ns) stack.pop_back();
        tr.parent[k] = stack.empty() ? kNone : stack.back();
        stack.push_back(static_cast<int32_t>(k));
      }
    });
    tasks.emplace_back([this, th, &ranges] {
      ThreadRanges& tr = ranges_[th];
      std::vector<Interval> cover(tr.idx.size());
      for (size_t k = 0; k < tr.idx.size(); ++k) cover[k] = {ranges[tr.idx[k]].start_ns, ranges[tr.idx[k]].end_ns};
      tr.cover = IntervalSet::FromSortedByStart(cover);
    });
  }
  base::RunAll(in_.threads, tasks);
}

// NCCL's own ranges (own captures): a collective is called when its range starts.
void PathIndex::IndexNccl() {
  const model::StringId nccl = t_.FindString("NCCL");
  if (nccl == kNone) return;
  const size_t nt = t_.threads().size();
  for (const model::Range& r : t_.ranges()) {
    if (r.kind != model::RangeKind::kNvtx || r.domain != nccl || r.thread == kNone) continue;
    if (nccl_.empty()) nccl_.resize(nt);
    nccl_[r.thread].push_back({r.start_ns, r.end_ns});
  }
  for (auto& v : nccl_) std::sort(v.begin(), v.end());
}

std::string PathIndex::HostIndexText() const {
  std::string s;
  for (size_t th = 0; th < t_.threads().size(); ++th) {
    absl::StrAppend(&s, "thread ", th, " blocked");
    for (int32_t i : blocked_[th]) absl::StrAppend(&s, " ", i);
    s += " calls";
    for (int32_t i : calls_[th]) absl::StrAppend(&s, " ", i);
    s += " ranges";
    const ThreadRanges& tr = ranges_[th];
    for (size_t k = 0; k < tr.idx.size(); ++k) absl::StrAppend(&s, " ", tr.idx[k], "<", tr.parent[k]);
    s += " cover";
    for (const Interval& i : tr.cover.intervals()) absl::StrAppend(&s, " ", i.start_ns, "-", i.end_ns);
    s += " nccl";
    if (th < nccl_.size())
      for (const auto& [a, b] : nccl_[th]) absl::StrAppend(&s, " ", a, "-", b);
    s += "\n";
  }
  return s;
}

void PathIndex::IndexCollectives() {
  peer_.assign(t_.collectives().size(), {});
  for (const CollectiveInstance& inst : in_.cross_rank->instances) {
    if (inst.last == kNone) continue;  // nobody waited
    model::CollectiveId last = kNone;
    int64_t arrival = INT64_MIN;
    for (const CollectiveParticipant& p : inst.ranks)
      if (p.participant == inst.last) last = p.collective, arrival = p.arrival_ns;
    if (last == kNone) continue;
    for (const CollectiveParticipant& p : inst.ranks) {
      if (p.collective == kNone || static_cast<size_t>(p.collective) >= peer_.size()) continue;
      peer_[p.collective] = {arrival, last};
      any_peer_ |= p.collective != last;
    }
  }
}

}  // namespace overlapscope::analyze
